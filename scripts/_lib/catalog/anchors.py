"""The catalog side of code anchors: which memories have them, and a stat cache of file blob ids.

The blob id of a project file is cached by its stat (device, inode, size, mtime_ns) in
`<project cache>/anchor-stats.sqlite3`, derived data like the catalog: deleting it costs one
re-hash per file. Small files are hashed directly (reading and hashing 64 KB takes less than
opening the cache); a file modified within the last seconds is not cached, since a change in
the same clock tick would keep its stat (git's "racy" files).
"""

from __future__ import annotations

import os
import sqlite3
import time

from ..model import anchors as anchor_model
from .catalog import _ENTRY_COLUMNS, Catalog, Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ..workspace.scopes import Workspace

CACHE_NAME = "anchor-stats.sqlite3"
CACHED_FROM_BYTES = 64 * 1024
RACY_SECONDS = 3


def anchored(catalog: Catalog, status: str | None = "active") -> list[Entry]:
    """The memories of the catalog's scope that carry anchors, by slug."""
    sql = f"SELECT {_ENTRY_COLUMNS} FROM docs WHERE json_extract(extra, '$.anchors') IS NOT NULL"
    params: tuple[str, ...] = ()
    if status is not None:
        sql, params = sql + " AND status=?", (status,)
    return [catalog._entry(row) for row in catalog.conn.execute(sql + " ORDER BY slug", params)]


class StatCache:
    """Blob ids of project files by stat; every failure of the cache falls back to hashing."""

    def __init__(self, project_dir: Path, cache_dir: Path | None) -> None:
        self.project_dir, self.cache_dir = project_dir, cache_dir
        self._conn: sqlite3.Connection | None = None
        self._failed = cache_dir is None

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is None and not self._failed:
            try:
                assert self.cache_dir is not None
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.cache_dir / CACHE_NAME), timeout=0.05, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=OFF")  # derived data: a lost write costs one re-hash
                conn.execute("CREATE TABLE IF NOT EXISTS stats(path TEXT PRIMARY KEY, stamp TEXT NOT NULL, "
                             "blob TEXT NOT NULL) WITHOUT ROWID")
                self._conn = conn
            except (OSError, sqlite3.Error):
                self._failed = True
        return self._conn

    def blob(self, relpath: str, stat: os.stat_result) -> str | None:
        """The blob id of the project file `relpath` whose stat is `stat`."""
        path = self.project_dir / relpath
        if stat.st_size < CACHED_FROM_BYTES or stat.st_size > anchor_model.MAX_HASHED_BYTES:
            return anchor_model.file_blob(path)
        stamp = f"{stat.st_dev}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"
        conn = self._open()
        if conn is not None:
            try:
                row = conn.execute("SELECT blob FROM stats WHERE path=? AND stamp=?", (relpath, stamp)).fetchone()
                if row is not None:
                    return str(row[0])
            except sqlite3.Error:
                conn = None
        blob = anchor_model.file_blob(path)
        if conn is not None and blob is not None and time.time() - stat.st_mtime > RACY_SECONDS:
            try:
                conn.execute("INSERT OR REPLACE INTO stats VALUES (?, ?, ?)", (relpath, stamp, blob))
            except sqlite3.Error:
                pass
        return blob

    def checker(self) -> anchor_model.Checker:
        return anchor_model.Checker(self.project_dir, self.blob)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def stat_cache(workspace: Workspace) -> StatCache:
    """The stat cache of the workspace's project files, kept with the project scope's derived data."""
    cache_dir = None if workspace.project_is_global else workspace.scope("project").cache_dir
    return StatCache(workspace.project_dir, cache_dir)
