"""UserPromptSubmit: after significant edits with no memory captured, a short nudge to capture one."""

from __future__ import annotations

from _hook import context, run_hook, session_of

EDITS_BEFORE_REMINDER = 5
PROMPTS_BETWEEN_REMINDERS = 6
REMINDER = ("Memory: {edits} file edits since the last memory was saved. If this work settled a decision, "
            "taught a lesson or hit a pitfall worth knowing next time, record it: "
            '`memory write "<title>" --type decision|learning|gotcha --tags <a,b> --content "<what and why>"`.')


def handle(payload: dict) -> dict | None:
    prompt = payload.get("prompt")
    session = session_of(payload)
    if session is None or not isinstance(prompt, str) or prompt.lstrip().startswith("<task-notification>"):
        return None

    def decide(state: dict) -> int:
        state["prompts"] = int(state.get("prompts") or 0) + 1
        edits = int(state.get("edits_since_capture") or 0)
        last = int(state.get("skill_reminded_at") or -PROMPTS_BETWEEN_REMINDERS)
        if edits >= EDITS_BEFORE_REMINDER and state["prompts"] - last >= PROMPTS_BETWEEN_REMINDERS:
            state["skill_reminded_at"] = state["prompts"]
            return edits
        return 0

    edits = session.update(decide)
    return context("UserPromptSubmit", REMINDER.format(edits=edits)) if edits else None


run_hook(handle)
