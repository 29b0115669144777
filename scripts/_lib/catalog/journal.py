"""Every memory's last known content, a trash, and what went missing: loss made recoverable.

No deny list can stop every shell command that deletes or changes a memory file (`git checkout .`
is normal work), so instead nothing is lost for good:

- every memory file the catalog records is kept, compressed, as it was last seen (one copy per
  distinct content, shared between files; bounded in size by `journal.maxMegabytes`);
- `memory delete` moves a memory to the trash (with the links it had), from which
  `memory restore SLUG` brings it back;
- a file deleted, or changed, outside the tool is noticed by the next command or hook (the
  catalog's check of the files compares their content with what was last seen), kept as lost,
  reported once with the command that restores it (`memory restore SLUG|--all`).

The journal lives outside every memory directory (`$XDG_CACHE_HOME/claude-memory`, else
`~/.cache/claude-memory`), so that even `rm -rf .claude` loses nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from pathlib import Path

from ..base import digests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

DB_NAME = "journal.sqlite3"
DEFAULT_MEGABYTES = 200
RECENT_SECONDS = 3600  # kept copies younger than this outlive the size bound
DELETED, CHANGED, TRASHED = "deleted", "changed", "trashed"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs(hash TEXT PRIMARY KEY, data BLOB NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seen(root TEXT NOT NULL, relpath TEXT NOT NULL, slug TEXT NOT NULL, hash TEXT NOT NULL,
  PRIMARY KEY(root, relpath)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kept(id INTEGER PRIMARY KEY AUTOINCREMENT, root TEXT NOT NULL, relpath TEXT NOT NULL, slug TEXT NOT NULL,
  hash TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL, reported INTEGER NOT NULL DEFAULT 0,
  edges TEXT NOT NULL DEFAULT '[]');
CREATE INDEX IF NOT EXISTS kept_root ON kept(root, slug);
CREATE INDEX IF NOT EXISTS kept_path ON kept(root, relpath);
CREATE INDEX IF NOT EXISTS seen_hash ON seen(hash);
CREATE INDEX IF NOT EXISTS kept_hash ON kept(hash);
"""


def directory(env: Mapping[str, str]) -> Path:
    """Where the journal lives: outside every memory directory."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "claude-memory"


class Kept:
    """A memory the journal holds: trashed by `memory delete`, or deleted or changed outside the tool."""

    __slots__ = ("id", "root", "relpath", "slug", "hash", "kind", "at", "edges")

    def __init__(self, id: int, root: str, relpath: str, slug: str, hash: str, kind: str, at: float,
                 edges: str) -> None:
        self.id, self.root, self.relpath, self.slug, self.hash, self.kind, self.at = (
            id, root, relpath, slug, hash, kind, at)
        self.edges: list[list[str]] = json.loads(edges or "[]")  # [target, label] the memory had

    def as_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "kind": self.kind, "path": os.path.join(self.root, self.relpath),
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at)), "edges": self.edges}

    def describe(self) -> str:
        what = {DELETED: "was deleted outside the memory tool", CHANGED: "was changed outside the memory tool",
                TRASHED: "was deleted with `memory delete`"}[self.kind]
        again = "its previous version" if self.kind == CHANGED else "it"
        return f"{self.relpath} {what}; `memory restore {self.slug}` brings {again} back"


def of(workspace: Any) -> Journal:
    """The user's journal for a workspace (its env and config), opened on first use and kept on it."""
    if workspace.opened_journal is None:
        workspace.opened_journal = Journal(workspace.env, workspace.config)
    return workspace.opened_journal


class Journal:
    """The journal of one user (every scope, every project). Opened lazily; never raises for its
    own failures (a read-only HOME only switches it off)."""

    def __init__(self, env: Mapping[str, str], config: Any = None) -> None:
        self.directory = directory(env)
        self.limit = int(float((config.get("journal.maxMegabytes") if config else None) or DEFAULT_MEGABYTES)
                         * 1024 * 1024)
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    def _db(self) -> sqlite3.Connection | None:
        if self._conn is None and not self._broken:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.directory / DB_NAME), timeout=10.0, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                conn.execute("PRAGMA synchronous=NORMAL")
                self._conn = conn
            except (OSError, sqlite3.Error):
                self._broken = True
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- marks: is anything pending for a scope, without opening the database ----------------

    def _mark(self, root: str, kind: str) -> Path:
        return self.directory / f"{kind}-{digests.sha256_hex(root.encode())[:20]}"

    def knows(self, root: Path) -> bool:
        """Whether the journal has seen memories under `root` (a cheap stat)."""
        return self._mark(str(root), "seen").exists()

    def has_news(self, root: Path) -> bool:
        """Whether something went missing under `root` that no one has reported yet (a cheap stat)."""
        return self._mark(str(root), "news").exists()

    def _touch(self, root: str, kind: str) -> None:
        try:
            self._mark(root, kind).touch()
        except OSError:
            pass

    # -- what the catalog sees ------------------------------------------------------------

    def saw(self, root: Path, files: Iterable[tuple[str, str, bytes]], *, ours: bool) -> None:
        """Files the catalog recorded, as (relpath, slug, bytes). Not `ours` (found by a check of the
        files): a content other than the one last seen is a change made outside the tool."""
        conn = self._db()
        if conn is None:
            return
        key = str(root)
        changed = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            for relpath, slug, data in files:
                digest = digests.sha256_hex(data)
                row = conn.execute("SELECT hash, slug FROM seen WHERE root=? AND relpath=?", (key, relpath)).fetchone()
                if row is not None and row[0] == digest:
                    continue
                if row is not None and not ours:
                    self._keep(conn, key, relpath, row[1], row[0], CHANGED)
                    changed = True
                conn.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", (digest, zlib.compress(data, 6), len(data)))
                conn.execute("INSERT OR REPLACE INTO seen VALUES (?, ?, ?, ?)", (key, relpath, slug, digest))
                if row is not None:
                    self._drop_blob(conn, row[0])
            conn.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(conn)
            return
        self._touch(key, "seen")
        if changed:
            self._touch(key, "news")

    def gone(self, root: Path, relpaths: Iterable[str], *, ours: bool, edges: Mapping[str, list] | None = None,
             replaced: bool = False) -> None:
        """Files no longer there: deleted by `memory delete` (`ours`: trashed, with the links the memory
        had) or outside the tool (kept as lost). `replaced`: a restore is about to overwrite the file;
        what it held is kept as a changed version (restoring again brings it back)."""
        conn = self._db()
        if conn is None:
            return
        key = str(root)
        found = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            for relpath in relpaths:
                row = conn.execute("SELECT slug, hash FROM seen WHERE root=? AND relpath=?", (key, relpath)).fetchone()
                if row is None:
                    continue
                conn.execute("DELETE FROM seen WHERE root=? AND relpath=?", (key, relpath))
                kind = CHANGED if replaced else TRASHED if ours else DELETED
                self._keep(conn, key, relpath, row[0], row[1], kind, (edges or {}).get(relpath), reported=ours)
                found = True
            if found:
                self._bound(conn)
            conn.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(conn)
            return
        if found and not ours:
            self._touch(key, "news")

    def missing(self, root: Path, present: Iterable[str]) -> None:
        """After a catalog was built afresh: what was seen under `root` but is not there now."""
        conn = self._db()
        if conn is None:
            return
        there = set(present)
        lost = [relpath for (relpath,) in conn.execute("SELECT relpath FROM seen WHERE root=?", (str(root),))
                if relpath not in there]
        if lost:
            self.gone(root, lost, ours=False)

    def _keep(self, conn: sqlite3.Connection, root: str, relpath: str, slug: str, digest: str, kind: str,
              edges: list | None = None, *, reported: bool = False) -> None:
        conn.execute("DELETE FROM kept WHERE root=? AND relpath=? AND kind != ?", (root, relpath, TRASHED))
        conn.execute("INSERT INTO kept(root, relpath, slug, hash, kind, at, reported, edges) VALUES (?, ?, ?, ?, ?, ?, "
                     "?, ?)", (root, relpath, slug, digest, kind, time.time(), int(reported),
                               json.dumps(edges or [])))

    def _drop_blob(self, conn: sqlite3.Connection, digest: str) -> None:
        """Forget a content no longer seen, trashed or lost anywhere."""
        if not conn.execute("SELECT 1 FROM seen WHERE hash=? UNION ALL SELECT 1 FROM kept WHERE hash=? LIMIT 1",
                            (digest, digest)).fetchone():
            conn.execute("DELETE FROM blobs WHERE hash=?", (digest,))

    def _bound(self, conn: sqlite3.Connection) -> None:
        """Keep the journal under its limit: the oldest trashed and lost memories go first (what is
        seen now is always kept)."""
        total = conn.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()[0]
        while total > self.limit:
            # never what went within the last hour: a loss just noticed stays restorable
            row = conn.execute("SELECT id, hash FROM kept WHERE at < ? ORDER BY at LIMIT 1",
                               (time.time() - RECENT_SECONDS,)).fetchone()
            if row is None:
                return
            conn.execute("DELETE FROM kept WHERE id=?", (row[0],))
            size = conn.execute("SELECT LENGTH(data) FROM blobs WHERE hash=?", (row[1],)).fetchone()
            self._drop_blob(conn, row[1])
            if size and not conn.execute("SELECT 1 FROM blobs WHERE hash=?", (row[1],)).fetchone():
                total -= size[0]

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # -- what users ask for -----------------------------------------------------------------

    def kept(self, root: Path, *, kinds: Iterable[str] = (DELETED, CHANGED, TRASHED), slug: str | None = None,
             unreported: bool = False) -> list[Kept]:
        """What the journal keeps for `root`, newest first."""
        conn = self._db()
        if conn is None:
            return []
        kinds = list(kinds)
        sql = (f"SELECT id, root, relpath, slug, hash, kind, at, edges FROM kept WHERE root=? "
               f"AND kind IN ({', '.join('?' * len(kinds))})")
        params: list[Any] = [str(root), *kinds]
        if slug is not None:
            sql += " AND slug=?"
            params.append(slug)
        if unreported:
            sql += " AND reported=0"
        return [Kept(*row) for row in conn.execute(sql + " ORDER BY at DESC, id DESC", params)]

    def news(self, root: Path) -> list[Kept]:
        """What went missing under `root` since the last report; reported now (once)."""
        found = self.kept(root, kinds=(DELETED, CHANGED), unreported=True)
        conn = self._db()
        if conn is not None and found:
            conn.execute(f"UPDATE kept SET reported=1 WHERE id IN ({', '.join(str(item.id) for item in found)})")
        try:
            self._mark(str(root), "news").unlink()
        except OSError:
            pass
        return found

    def content(self, item: Kept) -> bytes:
        conn = self._db()
        row = conn.execute("SELECT data FROM blobs WHERE hash=?", (item.hash,)).fetchone() if conn else None
        if row is None:
            raise LookupError(item.hash)
        return zlib.decompress(row[0])

    def seen_content(self, root: Path, relpath: str) -> bytes | None:
        """The last seen content of a file (None when the journal has none)."""
        conn = self._db()
        if conn is None:
            return None
        row = conn.execute("SELECT b.data FROM seen s JOIN blobs b ON b.hash = s.hash WHERE s.root=? AND s.relpath=?",
                           (str(root), relpath)).fetchone()
        return zlib.decompress(row[0]) if row else None

    def discard(self, items: Iterable[Kept]) -> int:
        """Forget kept memories (restored, or purged from the trash); returns how many."""
        conn = self._db()
        if conn is None:
            return 0
        count = 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            for item in items:
                conn.execute("DELETE FROM kept WHERE id=?", (item.id,))
                self._drop_blob(conn, item.hash)
                count += 1
            conn.execute("COMMIT")
        except sqlite3.Error:
            self._rollback(conn)
            raise
        return count
