"""UserPromptSubmit: when the prompt asks for a design decision, suggest `memory think` (rarely)."""

from __future__ import annotations

from _hook import context, run_hook, session_of

from _lib.session import injection as memory_context

PROMPTS_BETWEEN_REMINDERS = 10
REMINDER = ("Memory: this looks like a design decision. `memory think \"<question>\" --option \"A: pros/cons\" "
            "--option \"B: ...\" --conclusion \"...\"` records the deliberation and its conclusion as a decision "
            "memory; `memory search <topic>` shows what was decided before.")


def handle(payload: dict) -> dict | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or prompt.lstrip().startswith("<task-notification>") \
            or not memory_context.is_design_question(prompt):
        return None
    session = session_of(payload)
    if session is None:
        return context("UserPromptSubmit", REMINDER)

    def decide(state: dict) -> bool:
        prompts = int(state.get("think_prompts") or 0) + 1
        state["think_prompts"] = prompts
        last = state.get("think_reminded_at")
        if last is None or prompts - int(last) >= PROMPTS_BETWEEN_REMINDERS:
            state["think_reminded_at"] = prompts
            return True
        return False

    return context("UserPromptSubmit", REMINDER) if session.update(decide) else None


run_hook(handle)
