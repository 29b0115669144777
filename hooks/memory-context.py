"""PostToolUse (Read): warn about gotchas relevant to the file just read, each once per session."""

from __future__ import annotations

from _hook import context, run_hook, session_of, workspace_for

from _lib.session import gotchas, guard
from _lib.session.output import shell_quote


def handle(payload: dict) -> dict | None:
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        return None
    workspace, cwd = workspace_for(payload, notices=True)
    if guard.protected_scope(workspace, path, cwd):
        return None  # reading a memory file itself
    limit = int(workspace.config.get("injection.gotchas_per_read", 3))
    session = session_of(payload)

    subject = gotchas.relative_path(path, str(workspace.project_dir))

    def pick(state: dict) -> str:
        return gotchas.warnings_once(workspace, state, lambda shown: gotchas.for_path(
            workspace, path, limit=limit, exclude=shown), subject, f"memory gotchas --path {shell_quote(subject)}")

    return context("PostToolUse", session.update(pick) if session else pick({}), workspace)


run_hook(handle)
