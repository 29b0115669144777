"""SessionEnd: finish the session memory and clean up (within SessionEnd's ~1.5 s budget).

The notes were gathered during the session by the other hooks, so this only writes one
memory file and removes the session's state.
"""

from __future__ import annotations

from _hook import run_hook, session_of, workspace_for

from _lib.session import capture


def handle(payload: dict) -> dict | None:
    session = session_of(payload)
    if session is None:
        return None
    workspace, _ = workspace_for(payload)
    capture.write_session_memory(workspace, session.id, session.load())
    if payload.get("reason") not in ("resume",):  # a resumed session keeps counting
        session.remove()
    return None


run_hook(handle)
