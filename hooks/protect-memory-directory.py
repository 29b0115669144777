"""PreToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash): deny direct changes to memory directories.

Also shell commands that would remove, move or overwrite a directory holding one (the rules:
_lib/guard.py, _lib/bashguard.py). The reason names what is protected and what to use instead.
"""

from __future__ import annotations

from _hook import run_hook, workspace_for

from _lib.session import guard


def handle(payload: dict) -> dict | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    workspace, cwd = workspace_for(payload)
    reason = guard.check(workspace, str(payload.get("tool_name") or ""), tool_input, cwd)
    if not reason:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


run_hook(handle)
