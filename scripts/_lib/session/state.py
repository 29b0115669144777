"""Per-session state shared by the hooks of one Claude Code session.

One small JSON file per session id under the plugin data directory: which gotchas and
memories were already shown, what the session changed and learned (for the session
memory written at the end), and the reminder counters. Hooks of one event run in
parallel, so every change is a locked read-modify-write.
"""

from __future__ import annotations

import os
import time

from ..base import fsutil, jsontext
from ..base.paths import data_dir, data_directory  # noqa: F401  (data_dir: where the hooks keep their files)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

# (no regular expressions, pathlib or json package here: the hooks that only count and remember
# load this module on every prompt and edit)
_ID_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
STALE_AFTER = 14 * 24 * 3600  # seconds: state of sessions idle this long is removed


def safe_id(session_id: object) -> str | None:
    """The session id if it is safe to use in a file name: 1-128 letters, digits, `_`, `.`, `-`."""
    if (isinstance(session_id, str) and 0 < len(session_id) <= 128 and _ID_CHARACTERS.issuperset(session_id)
            and session_id not in (".", "..")):
        return session_id
    return None


class Session:
    """The state file of one session; use `update()` for changes and `state` for reads."""

    def __init__(self, session_id: str, env: Mapping[str, str] | None = None) -> None:
        self.id = session_id
        self.directory = os.path.join(data_directory(env), "sessions")
        self.path = os.path.join(self.directory, f"{session_id}.json")

    def load(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as handle:
                data = jsontext.loads(handle.read())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        """Apply `change` to the state under the session lock and save; returns what it returns."""
        with fsutil.exclusive_lock(os.path.join(self.directory, f"{self.id}.lock"),
                                   timeout=fsutil.HOOK_LOCK_SECONDS, what="session"):
            state = self.load()
            result = change(state)
            state["touched"] = time.time()
            fsutil.write_atomically(self.path, jsontext.encoded(state), durable=False)
        return result

    def remove(self) -> None:
        fsutil.remove_file(self.path)
        fsutil.remove_file(os.path.join(self.directory, f"{self.id}.lock"))


def sessions(env: Mapping[str, str] | None = None) -> Iterator[Session]:
    directory = os.path.join(data_directory(env), "sessions")
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
            if now - os.stat(item.path).st_mtime > STALE_AFTER:
                item.remove()
                removed += 1
        except OSError:
            continue
    return removed
