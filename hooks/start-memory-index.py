"""SessionStart (startup, resume, clear, compact): a compact summary of what memory holds."""

from __future__ import annotations

import os

from _hook import context, log, run_hook, session_of, workspace_for

from _lib.base import clock
from _lib.ops import entrypoint
from _lib.session import injection as memory_context, state as session_mod
from _lib.workspace import runtime


def handle(payload: dict) -> dict | None:
    _export_interpreter()
    workspace, _ = workspace_for(payload, notices=True)
    state = {}
    session = session_of(payload)
    if session:
        state = session.update(lambda current: current.setdefault("started", clock.now_iso()) and current)
    extra = ""
    if payload.get("source") == "compact" and state.get("compact_notes"):
        extra = "## Before compaction this session\n" + state["compact_notes"]
    summary = memory_context.session_start(workspace, open_tasks=entrypoint.open_tasks(workspace), extra=extra)
    return context("SessionStart", summary, workspace)


def _export_interpreter() -> None:
    """Let `memory` in the Bash tool use the interpreter the bootstrap hook records: bin/memory reads
    it from the data directory when called, so one the bootstrap records later in the session counts."""
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    try:
        with open(env_file, "a", encoding="utf-8") as handle:
            handle.write(f"export {runtime.DATA_ENV}={runtime.quote(str(session_mod.data_dir()))}\n")
    except OSError as exc:
        log(f"cannot write CLAUDE_ENV_FILE: {exc}")


run_hook(handle)
