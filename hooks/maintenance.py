"""SessionStart (async): housekeeping that must not delay the session.

Takes in memory files edited by hand in place (every file's stamp is checked), applies
retention to automatically captured memories, refreshes the project's index.md, and forgets
the hook state of sessions idle for two weeks.
"""

from __future__ import annotations

from _hook import log, run_hook, workspace_for

from _lib.ops import entrypoint, retention
from _lib.base import errors
from _lib.catalog import catalog
from _lib.session import state as session


def handle(payload: dict) -> dict | None:
    if payload.get("source") not in (None, "startup"):
        return None
    workspace, _ = workspace_for(payload)
    try:
        catalog.catch_up(workspace, full=True)
        done = retention.apply(workspace, retention.plan(workspace))
        if done:
            log(f"retention: {len(done)} captured memories archived or removed")
        entrypoint.refresh(workspace)
    except errors.Error as exc:
        log(f"maintenance skipped: {exc.message}")
    session.prune_stale()
    return None


run_hook(handle)
