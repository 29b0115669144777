"""PreCompact: save what this session learned so it survives compaction.

The session memory is written now (not only at the end), and a short note is kept for
the SessionStart(compact) hook to put back into the fresh context.
"""

from __future__ import annotations

from _hook import run_hook, session_of, workspace_for

from _lib.session import capture


def handle(payload: dict) -> dict | None:
    session = session_of(payload)
    if session is None:
        return None
    workspace, _ = workspace_for(payload)
    state = session.load()
    slug = capture.write_session_memory(workspace, session.id, state)
    summary = capture.compact_notes(state, slug)
    session.update(lambda current: current.update(compact_notes=summary, session_memory=slug))
    return None


run_hook(handle)
