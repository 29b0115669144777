"""Per-session state shared by the hooks of one Claude Code session.

One small JSON file per session id under the plugin data directory: which gotchas and
memories were already shown, what the session changed and learned (for the session
memory written at the end), and the reminder counters. Hooks of one event run in
parallel, so every change is a locked read-modify-write.
"""

from __future__ import annotations

import json
import os
import time

from ..base import fsutil
from ..base.paths import data_dir
from ..base.text import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

_SESSION_ID = LazyPattern(r"[A-Za-z0-9_.-]{1,128}")
STALE_AFTER = 14 * 24 * 3600  # seconds: state of sessions idle this long is removed


def safe_id(session_id: object) -> str | None:
    """The session id if it is safe to use in a file name."""
    if isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) and session_id not in (".", ".."):
        return session_id
    return None


class Session:
    """The state file of one session; use `update()` for changes and `state` for reads."""

    def __init__(self, session_id: str, env: Mapping[str, str] | None = None) -> None:
        self.id = session_id
        self.directory = data_dir(env) / "sessions"
        self.path = self.directory / f"{session_id}.json"

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        """Apply `change` to the state under the session lock and save; returns what it returns."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with fsutil.exclusive_lock(self.directory / f"{self.id}.lock", timeout=fsutil.HOOK_LOCK_SECONDS,
                                   what="session"):
            state = self.load()
            result = change(state)
            state["touched"] = time.time()
            fsutil.write_atomically(self.path, json.dumps(state, ensure_ascii=False), durable=False)
        return result

    def remove(self) -> None:
        fsutil.remove_file(self.path)
        fsutil.remove_file(self.directory / f"{self.id}.lock")


def sessions(env: Mapping[str, str] | None = None) -> Iterator[Session]:
    directory = data_dir(env) / "sessions"
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.endswith(".json") and safe_id(name[:-5]):
            yield Session(name[:-5], env)


def prune_stale(env: Mapping[str, str] | None = None, now: float | None = None) -> int:
    """Delete the state of sessions untouched for STALE_AFTER; returns how many."""
    now = time.time() if now is None else now
    removed = 0
    for item in sessions(env):
        try:
            if now - item.path.stat().st_mtime > STALE_AFTER:
                item.remove()
                removed += 1
        except OSError:
            continue
    return removed
