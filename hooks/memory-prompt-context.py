"""UserPromptSubmit: the memories most relevant to the prompt, each once per session unless changed."""

from __future__ import annotations

from _hook import context, run_hook, session_of, workspace_for

from _lib.session import injection as memory_context


def handle(payload: dict) -> dict | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or prompt.lstrip().startswith("<task-notification>"):
        return None
    workspace, _ = workspace_for(payload, notices=True)
    session = session_of(payload)

    def pick(state: dict) -> str:
        seen = state.setdefault("injected", {})
        text, shown = memory_context.prompt_context(workspace, prompt, seen, state)
        seen.update(shown)
        return text

    text = session.update(pick) if session else pick({})
    return context("UserPromptSubmit", text, workspace)


run_hook(handle)
