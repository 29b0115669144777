"""PostToolUse hook on TodoWrite: mirror Claude's todo list into the project's task store.

The list (`tool_input.todos`: [{content, status, activeForm}]) becomes one task per
todo under the epic "Claude sessions" > feature "Session <date> <session id>", matched
by text on later calls, with statuses mapped (pending, in_progress -> in-progress,
completed -> done) and rolled up, so the plan survives the session. Runs only in a
project (a git repository or one with .claude/memory) and when the config's
`capture.capture_todos` is true. Prints nothing; fails open (see _hook.py).
"""

from __future__ import annotations

from _hook import run_hook, session_of, workspace_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    if payload.get("tool_name") != "TodoWrite":
        return None
    tool_input = payload.get("tool_input")
    todos = tool_input.get("todos") if isinstance(tool_input, dict) else None
    session_id = payload.get("session_id")
    if not isinstance(todos, list) or not isinstance(session_id, str) or not session_id.strip():
        return None
    from _lib.session import capture
    from _lib.tasks import validation as taskhooks

    session = session_of(payload)
    if session is not None:  # for the session memory's tasks done and open threads
        session.update(lambda state: capture.note_todos(state, todos))
    workspace, _ = workspace_for(payload)  # an invalid config falls back to the defaults
    if workspace.project_is_global or not (workspace.in_git_repo or workspace.project_root.is_dir()):
        return None  # not a project: nothing of the session belongs in a project's task store
    if workspace.config.get("capture.capture_todos", True) is False:
        return None
    taskhooks.capture_todos(workspace, session_id.strip(), todos)
    return None


if __name__ == "__main__":
    run_hook(handle)
