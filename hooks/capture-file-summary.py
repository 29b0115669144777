"""PostToolUse (Read): create or refresh a file-summary memory when a large source file is read."""

from __future__ import annotations

from _hook import run_hook, workspace_for

from _lib.session import capture, guard


def handle(payload: dict) -> dict | None:
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        return None
    workspace, cwd = workspace_for(payload)
    if not guard.protected_scope(workspace, path, cwd):
        capture.refresh_file_summary(workspace, path)
    return None


run_hook(handle)
