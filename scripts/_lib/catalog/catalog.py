"""The index of one scope: a SQLite catalog kept in step with the memory files, and index.json.

The memory files are the source of truth. Every operation first compares each
file's (inode, mtime, size) stamp with the catalog's record (one directory scan,
no file parsing), re-reads only what changed, and rewrites index.json and
graph.json when the catalog changed or someone else touched them. So a file that
was added, edited or deleted by hand, or a deleted or corrupted index, is repaired
on the next operation and no command answers from stale data.

The catalog (`.cache/catalog.sqlite3`) also holds the keyword-search postings,
tags and link declarations, so list, search and graph queries never parse all
memories. It is derived data: delete it and the next command rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import zlib
from collections import namedtuple
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

from ..base import clock, errors, fsutil, jsontext, stamps, text
from ..base.stamps import file_stamp
from ..model import graph, memory
from ..workspace import layout
from . import bm25, edges as edge_tables, freshness, gotcharules, postings, words
from .derived import GRAPH_NAME, INDEX_NAME, encode_json  # noqa: F401  (the names: part of the catalog's API)
from .exports import Exports
from .foreign import ForeignFiles
from .journal import of as journal_of
from ..workspace.config import Config
from ..workspace.scopes import Scope

if TYPE_CHECKING:
    from ..workspace.scopes import Workspace

SCHEMA_VERSION = 14  # a new layout, or a new way of reading files: every catalog is rebuilt
DB_NAME = "catalog.sqlite3"
DISK_KEY = "disk"  # meta: fingerprint of the file stamps the catalog reflects
ROOT_KEY = "root"  # meta: stamp of the scope directory itself when we last held the lock
HOOK_CATCH_UP_FILES = 100  # changed files a hook takes in itself: about 200 ms of reading and recording
STAGE_FILES = 200  # files recorded at once from which postings are stored in key order at the end
READ_BATCH = 500  # files parsed and held in memory at once while recording many
INDEX_CHANGES_HELD = 2000  # changed index.json lines held for a patch; more: the file is rendered whole
PROGRESS_FILES = 300  # a catch-up of more files than this takes over a second: say so
NODES_DIR = layout.NODES_DIR  # memory-graph layout: nodes/<kind>/<id>.md
# generated entry point, docs, the earlier plugin's Mermaid rendering and settings: not memories
NOT_MEMORIES = frozenset({"index.md", "readme.md", "graph.md", "memory.local.md", "memory.example.md"})
EXTRA_FIELDS = ("paths", "supersedes", "path", "session_id", "source", "id", "scope", "anchors", "previous-slugs",
                "promoted-from")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, relpath TEXT UNIQUE, stamp TEXT NOT NULL,
  type TEXT NOT NULL, title TEXT NOT NULL, tags TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
  status TEXT NOT NULL, links TEXT NOT NULL, extra TEXT NOT NULL, hash BLOB NOT NULL,
  length INTEGER NOT NULL, words BLOB NOT NULL, has_embedding INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS words(id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS tags(tag TEXT NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY(tag, doc)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tags_doc ON tags(doc);
CREATE INDEX IF NOT EXISTS docs_updated ON docs(updated);
CREATE INDEX IF NOT EXISTS docs_type_updated ON docs(type, updated);
CREATE TABLE IF NOT EXISTS problems(relpath TEXT PRIMARY KEY, stamp TEXT NOT NULL, message TEXT NOT NULL)
  WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
""" + postings.SCHEMA + edge_tables.SCHEMA + gotcharules.SCHEMA

# A memory's file is most often <slug>.md: then relpath is NULL (no second copy of the slug, nor
# an index entry for it) and read back as this expression; lookups by path go through _AT_PATH.
_RELPATH = "COALESCE(relpath, slug || '.md')"
_AT_PATH = "(relpath = ? OR (relpath IS NULL AND slug = ?))"
_SLUG_BATCH = 500  # slugs per `IN (...)` query
# A memory's links are kept as the ids of their slugs in `nodes`, in the file's order, and read back
# as a JSON list of slugs.
_LINKS = ("(SELECT json_group_array(slug) FROM (SELECT n.slug AS slug FROM json_each(docs.links) j "
          "JOIN nodes n ON n.id = j.value ORDER BY j.key))")
_ENTRY_COLUMNS = (f"slug, {_RELPATH}, type, title, tags, created, updated, status, {_LINKS}, extra, hash, "
                  "has_embedding, stamp")


class Entry:
    """What the catalog knows of one memory without reading its file.

    A plain class with lazily decoded fields: `memory list` builds 10,000 of these.
    """

    __slots__ = ("slug", "scope", "root", "relpath", "type", "title", "tags", "created", "updated", "status",
                 "content_hash", "has_embedding", "stamp", "_links", "_extra")

    def __init__(self, slug: str, scope: str, root: Path, relpath: str, type: str, title: str, tags: list[str],
                 created: str, updated: str, status: str, links: list[str] | str, extra: dict[str, Any] | str,
                 content_hash: str = "", has_embedding: bool = False, stamp: str = "") -> None:
        self.slug, self.scope, self.root, self.relpath = slug, scope, root, relpath
        self.stamp = stamp  # the file's "inode:mtime:size" when it was recorded
        self.type, self.title, self.tags, self.created, self.updated = type, title, tags, created, updated
        self.status, self.content_hash, self.has_embedding = status, content_hash, has_embedding
        self._links, self._extra = links, extra  # JSON text until first used

    @property
    def path(self) -> Path:
        return self.root / self.relpath

    @property
    def links(self) -> list[str]:
        if isinstance(self._links, str):
            self._links = jsontext.loads(self._links)  # (health decodes 100,000 of these)
        return self._links  # type: ignore[return-value]  # decoded above

    @property
    def extra(self) -> dict[str, Any]:
        if isinstance(self._extra, str):
            self._extra = jsontext.loads(self._extra)
        return self._extra  # type: ignore[return-value]  # decoded above

    def __repr__(self) -> str:
        return f"Entry({self.scope}:{self.slug})"

    def as_json(self) -> dict[str, Any]:
        """The stable JSON shape used by --json outputs."""
        return {"slug": self.slug, "scope": self.scope, "title": self.title, "type": self.type,
                "tags": self.tags, "created": self.created, "updated": self.updated, "status": self.status,
                "links": self.links, "filePath": f"{self.root}/{self.relpath}", "hasEmbedding": self.has_embedding}

    def index_entry(self) -> dict[str, Any]:
        """The entry as index.json stores it (the data model's IndexEntry)."""
        title = self.title if len(self.title) <= memory.MAX_TITLE else self.title[: memory.MAX_TITLE - 3] + "..."
        return {"slug": self.slug, "title": title, "type": self.type, "tags": self.tags,
                "created": self.created, "updated": self.updated, "filePath": f"{self.root}/{self.relpath}",
                "hasEmbedding": self.has_embedding}

    def index_line(self) -> str:
        """This entry's line of index.json (kept in the catalog so exports need no rendering)."""
        return json.dumps(self.slug) + ": " + encode_json(self.index_entry())


class Problem(namedtuple("Problem", "path message")):
    """A file in the scope that could not be read as a memory."""

    __slots__ = ()


class Scan(dict):  # type: ignore[type-arg]  # relpath -> stamp
    """The memory files of a scope and their stamps; `leftovers` tells of interrupted writes' temp
    files; `misnamed` lists the files left out for a name that is not UTF-8."""

    leftovers = False
    misnamed: tuple[str, ...] = ()


def scan(root: Path) -> Scan:
    """Stamps of every memory file under `root`: flat `*.md`, the earlier plugin's `permanent/`,
    `temporary/` and `archive/` folders, and `nodes/**/*.md`."""
    found = Scan()
    _scan_dir(root, "", found, nested=False)
    for name in layout.memory_subdirs(root):
        _scan_dir(root / name, name + "/", found, nested=False)
    if layout.real_subdir(root, NODES_DIR):
        _scan_dir(root / NODES_DIR, NODES_DIR + "/", found, nested=True)
    return found


_CLAIM_ORDER = {"": 0, "permanent": 1, "temporary": 2, NODES_DIR: 3, layout.ARCHIVE_DIR: 4}


def claim_order(relpath: str) -> tuple[int, str]:
    """Which of two files declaring one slug keeps it: flat files, then the earlier plugin's
    permanent/ and temporary/, then nodes/, then archived copies."""
    folder = relpath.split("/", 1)[0] if "/" in relpath else ""
    return _CLAIM_ORDER.get(folder, 3), relpath


def directory_stamp(root: Path) -> str:
    """Stamps of the directories memory files live in: a file that comes, goes or is replaced
    (renamed over) changes one of them."""
    stamp = file_stamp(root) or ""
    for name in layout.PREDECESSOR_DIRS:
        sub = file_stamp(root / name)
        if sub is not None:
            stamp += f"|{name}={sub}"
    return stamp


def _scan_dir(directory: Path, prefix: str, found: Scan, *, nested: bool) -> None:
    # listdir + stat(dir_fd=...) is ~30% faster than scandir + DirEntry.stat() for 10,000 files.
    try:
        names = os.listdir(directory)
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        stat = os.stat
        for name in names:
            if name[0] == ".":
                if name.endswith(fsutil.TEMP_SUFFIX):
                    found.leftovers = True
                continue
            if name.endswith(".md"):
                if not nested and name.lower() in NOT_MEMORIES:
                    continue
                if not fsutil.from_utf8(prefix + name):
                    found.misnamed += (prefix + name,)
                    continue
                try:
                    info = stat(name, dir_fd=fd)  # follows symlinks: the stamp of what would be read
                except OSError:
                    continue
                if info.st_mode & 0o170000 == 0o100000:  # a regular file
                    found[prefix + name] = stamps.of(info)
            elif nested and os.path.isdir(os.path.join(directory, name)) and not os.path.islink(
                    os.path.join(directory, name)):
                _scan_dir(directory / name, prefix + name + "/", found, nested=True)
    finally:
        os.close(fd)


class Catalog(ForeignFiles, Exports):
    """The derived catalog of one scope. Open with `Catalog.open`, close with `close()`."""

    def __init__(self, scope: Scope, conn: sqlite3.Connection, config: Config, *, may_replace: bool = True) -> None:
        self.scope = scope
        self.conn = conn
        self.command_lock_seconds = float(config.get("locks.waitSeconds", 30))
        # Hooks pass False: they never replace an index.json or graph.json they did not write.
        self.may_replace = may_replace
        self.warnings: list[str] = []   # for the command's output (e.g. where a replaced file was kept)
        self._mutated: set[str] = set()  # slugs this process wrote or deleted (for the earlier plugin's index)
        self.unwritable: errors.Error | None = None  # the storage refuses writes: catalog read-only or in memory
        self.journal: Any = None  # journal.Journal: last known contents, trash, losses (set by open_catalog)
        self.labels = graph.Labels(config.get("graph.inverseLabels") or {})
        self.embedding_dir = scope.derived_dir(config.get("embedding.cacheDirectory") or ".embedding-cache")
        self._lock_depth = 0
        self._disk: DiskState | None = None  # file stamps the catalog reflects (set while locked)
        # slug -> the entry for its new index.json line (None: removed), rendered only to patch the file
        self._index_changes: dict[str, Entry | None] = {}
        self._index_full = False  # index.json must be rendered whole (_index_changes keep slugs only)
        self._graph_changes: dict[str, str | None] = {}  # slug -> new graph.json line (None: removed)
        self._graph_full = False  # graph.json must be rendered whole
        self._pending = False     # this process marked the exports pending (see PENDING)
        self._inherited = False   # a killed process left them pending: rewrite them whole
        self._counted = [0, 0]    # memories and total length this transaction added (see bm25.collection)
        self.verifying = False    # queries check the files of what they return (open_catalog with refresh)
        self.scanned: Scan | None = None  # every memory file's stamp as the last full refresh found it
        # Hooks take in at most this many changed files; more and they answer from the catalog as it
        # is (`partial`) and leave the rest to a detached catch-up (`background`, set by open_catalog).
        self.catch_up_limit: int | None = None if may_replace else HOOK_CATCH_UP_FILES
        self.partial = False
        self.background: Callable[[], None] | None = None
        self.progress: Callable[[str], None] | None = None  # told of a catch-up of many files
        self._staged: postings.Staged | None = None  # postings of many files recorded at once
        self._leaving: list[tuple[int, bytes]] | None = None  # (doc, packed word ids) of many files forgotten at once
        # word -> id of every word the files being recorded hold (while rebuilding: of all), or None
        self._vocabulary: dict[str, int] | None = None
        self._nodes: dict[str, int] | None = None  # slug -> node id of every node, while rebuilding

    # -- opening ------------------------------------------------------------------------

    @classmethod
    def open(cls, scope: Scope, config: Config, *, may_replace: bool = True) -> "Catalog":
        """Open (creating or rebuilding if needed) the catalog of an existing scope directory.

        When the storage refuses writes (disk full, read-only), the catalog is opened read-only
        as it is, or kept in memory: reading commands still answer, and a mutation writes what
        the storage takes (a delete frees space)."""
        path = scope.cache_dir / DB_NAME
        seconds = float(config.get("locks.waitSeconds", 30)) if may_replace else fsutil.HOOK_LOCK_SECONDS

        def scope_lock() -> Any:
            return fsutil.exclusive_lock(scope.lock_path, timeout=seconds, what=f"{scope.name} memory")

        try:
            scope.cache_dir.mkdir(parents=True, exist_ok=True)
            conn = _connect(path, scope_lock)
        except (OSError, sqlite3.Error) as exc:
            problem = errors.storage_error(exc, scope.cache_dir)
            if problem is None:
                raise
            catalog = cls(scope, _read_only_connection(path), config, may_replace=False)
            catalog.unwritable = problem
            return catalog
        return cls(scope, conn, config, may_replace=may_replace)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- locking and transactions -----------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, *, touching: Iterable[str] | None = None, files: Iterable[str] = (),
               catch_up: bool = True) -> Iterator["Catalog"]:
        """Hold the scope's write lock (re-entrant) and bring the catalog up to date first.

        `touching`: the slugs of the only memories the caller reads from the catalog (`files`:
        relpaths of more). Then only files that came, went or were replaced (the directory
        stamps tell) and those are checked, not every file (see freshness); None: every file.
        `catch_up` False: none (the caller re-reads everything itself).
        """
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield self
            finally:
                self._lock_depth -= 1
            return
        if self.unwritable is not None and not _in_memory(self.conn):
            self.conn.close()  # a mutation on storage that refuses writes: work from the files, in memory
            self.conn = _read_only_connection(None)
            self.warnings.append(f"{self.scope.name} scope: the catalog cannot be saved ({self.unwritable.message}); "
                                 "working from the files")
        with self._scope_lock():
            self._lock_depth = 1
            try:
                if catch_up and (touching is None or not self._catch_up(touching, files)):
                    self._sync(scan(self.scope.root))
                yield self
            finally:
                self._lock_depth = 0
                if self._disk is not None and self._disk.dirty:
                    self._set_meta(DISK_KEY, self._disk.digest())
                self._disk = None
                if not self.partial:  # else the next hook or command still sees the directory changed
                    self._set_meta(ROOT_KEY, directory_stamp(self.scope.root))

    def _scope_lock(self) -> Any:
        """The scope's lock; on storage that refuses writes, none when its file cannot even be made
        (a catalog in memory shares nothing, and every writer is refused by the storage anyway)."""
        lock = fsutil.exclusive_lock(self.scope.lock_path, timeout=self.lock_timeout, what=f"{self.scope.name} memory")
        if self.unwritable is None or self.scope.lock_path.exists():
            return lock
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def replacing_beside(self) -> Iterator[None]:
        """Hold the scope lock while a file beside the memories (index.md) is replaced.

        Replacing a file changes the directory's stamp; when the recorded stamp was current
        before, it is recorded again after, so the next hook does not rescan every file."""
        if self._lock_depth:
            yield  # locked() records the stamp when it ends
            return
        with fsutil.exclusive_lock(self.scope.lock_path, timeout=self.lock_timeout, what=f"{self.scope.name} memory"):
            current = directory_stamp(self.scope.root) == self._meta(ROOT_KEY)
            yield
            if current:
                self._set_meta(ROOT_KEY, directory_stamp(self.scope.root))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (call while holding the lock)."""
        self.conn.execute("BEGIN IMMEDIATE")
        self._counted = [0, 0]
        try:
            self._mark_exports_pending()
            yield self.conn
            if self._counted != [0, 0]:
                bm25.count_changes(self.conn, *self._counted)
        except BaseException:
            self.conn.execute("ROLLBACK")
            self._staged = None  # what it held went with the transaction
            raise
        self.conn.execute("COMMIT")

    # -- keeping in step with the files -----------------------------------------------------

    @property
    def lock_timeout(self) -> float:
        """Seconds to wait for the scope lock: a command waits for a slow writer; a hook answers
        from the catalog as it is rather than stall Claude."""
        return self.command_lock_seconds if self.may_replace else fsutil.HOOK_LOCK_SECONDS

    def refresh(self, *, full: bool = False) -> None:
        """Make the catalog and exported files match the memory files: those that came, went or
        were replaced (directory stamps), or with `full` every file's stamp. Cheap when they match.
        In a hook, a lock held elsewhere means answering from the catalog as it is."""
        if self.unwritable is not None and not _in_memory(self.conn):
            self.warnings.append(f"{self.scope.name} scope: answered from the catalog as it was "
                                 f"({self.unwritable.message})")
            return
        if self._lock_depth:
            self._sync(scan(self.scope.root))
            return
        root_stamp = directory_stamp(self.scope.root)
        if full or (self.scope.root / NODES_DIR).exists():
            disk = scan(self.scope.root)
            self._tell_misnamed(disk)
            if full:
                self.scanned = disk
            stale = disk.leftovers or not (self._meta(DISK_KEY) == DiskState(disk).digest() and self._exports_current())
        else:
            disk = None
            stale = self._meta(DISK_KEY) is None or self._meta(ROOT_KEY) != root_stamp or not self._exports_current()
        if stale and self.catch_up_limit is not None and catch_up_running(self.scope.cache_dir):
            self.partial = True  # a hook does not queue behind the catch-up for the lock
            self.warnings.append(f"{self.scope.name} scope: partial answer: a background catch-up is under way")
        elif stale:
            try:
                with self.locked(touching=None if disk is not None else ()):
                    pass  # locked() syncs
            except errors.Busy:
                if self.may_replace:
                    raise
                self.warnings.append(f"{self.scope.name} scope: answered from the catalog as it was (its lock is busy)")
        elif self._meta(ROOT_KEY) != root_stamp:
            self._set_meta(ROOT_KEY, root_stamp)  # e.g. a non-memory file came or went

    def refresh_if_moved(self) -> None:
        """The hooks' check: sync only when the scope directory itself changed since the last
        command (files added, removed or replaced by rename)."""
        if directory_stamp(self.scope.root) != self._meta(ROOT_KEY):
            self.refresh()

    def refresh_if_stale(self, relpath: str) -> None:
        """The check of a read: sync (and so repair index.json / graph.json) when files came or
        went, an export is missing or was touched by someone else, or the file being read
        (`relpath`) changed since it was indexed. A few stats when nothing changed."""
        recorded = self._recorded_stamp(relpath)
        if recorded is None or recorded != file_stamp(self.scope.root / relpath):
            if self.unwritable is None:
                with self.locked(touching=(), files=[relpath]):
                    pass  # locked() takes it in
                return
        self.refresh()

    def rescan(self) -> None:
        """Take in files this process changed in bulk under the lock (one pass, one transaction)."""
        assert self._lock_depth, "rescan() needs the lock"
        self._sync(scan(self.scope.root))

    def rebuild(self) -> None:
        """Forget everything derived and re-read every file (labels in graph.json are kept).

        One transaction with a large page cache; postings are stored in key order at the end
        (see _apply). In WAL mode the commit costs a single sync, at the checkpoint."""
        with self.locked(catch_up=False):  # every file is read once, below
            with self.transaction() as conn:
                for table in ("docs", "words", *postings.TABLES, "tags", gotcharules.TABLE, "problems",
                              *edge_tables.TABLES, "meta"):
                    conn.execute(f"DELETE FROM {table}")
            with _bulk_settings(self.conn):
                self._vocabulary = {}  # the words table is empty: all it will hold is known here
                self._nodes = {}  # and so is nodes
                try:
                    self._sync(scan(self.scope.root))
                finally:
                    self._vocabulary = self._nodes = None

    def _tell_misnamed(self, disk: Scan) -> None:
        """Warn (once) of the files a scan left out for a name that is not UTF-8: a catalog holds
        text, so such a name can be neither recorded nor given as a slug."""
        for relpath in disk.misnamed:
            warning = (f"{self.scope.name} scope: {fsutil.printable(relpath)} is not indexed: its name is not "
                       "UTF-8; rename it (memory names are lowercase words and hyphens)")
            if warning not in self.warnings:
                self.warnings.append(warning)

    def _known(self) -> dict[str, str]:
        known = dict(self.conn.execute(f"SELECT {_RELPATH}, stamp FROM docs"))
        known.update(self.conn.execute("SELECT relpath, stamp FROM problems"))
        return known

    def _sync(self, disk: Scan) -> None:
        if disk.leftovers and self.scope.root_writable:  # we hold the lock: no write of ours is under way
            fsutil.remove_stale_temps(self.scope.root)
        self._tell_misnamed(disk)
        state = DiskState(disk)
        graph_import, earlier_graph = self._changed_graph()
        self._adopt_index()
        self._disk = state
        if (self._meta(DISK_KEY) == state.digest() and graph_import is None and earlier_graph is None
                and self._exports_current()):
            return
        known = self._known()
        changed = {path: stamp for path, stamp in disk.items() if known.get(path) != stamp}
        removed = [path for path in known if path not in disk]
        if self._over_budget(len(changed) + len(removed)):
            digest = self._meta(DISK_KEY)
            self._disk = DiskState.resumed(digest, self._recorded_stamp) if digest else None
            return
        if self.journal is not None and self.scope.root_writable and not known and self.journal.knows(self.scope.root):
            self.journal.missing(self.scope.root, disk)  # a catalog built afresh: what went meanwhile
        self._apply(changed, removed, graph_import, earlier_graph)

    def _apply(self, changed: dict[str, str], removed: list[str], graph_import: Any = None,
               earlier_graph: Any = None) -> None:
        """Record the files that changed (relpath -> stamp) and forget the removed ones, in one
        transaction; then export. Callers keep `self._disk` in step.

        Files are read and recorded a batch at a time, so memory stays bounded however many changed."""
        journal = self.journal if self.journal is not None and self.scope.root_writable else None
        if journal is not None:
            journal.gone(self.scope.root, removed, ours=False)  # deleted outside the tool
        touched: set[str] = set()
        ordered = sorted(changed, key=claim_order)
        with self.transaction() as conn:
            self._leaving = [] if len(removed) >= STAGE_FILES else None
            try:
                for relpath in removed:
                    touched |= self._forget_path(relpath)
                if self._leaving:
                    postings.remove_many(conn, ((doc, words.unpack(ids)) for doc, ids in sorted(self._leaving)))
            finally:
                self._leaving = None
            # Many files: their postings are gathered a block of doc ids at a time, each block
            # written once instead of by thousands of scattered changes.
            if len(ordered) >= STAGE_FILES:
                self._staged = postings.Staged(conn)
            for start in range(0, len(ordered), READ_BATCH):
                parsed: list[tuple[str, str, memory.Memory | str]] = []
                for relpath in ordered[start:start + READ_BATCH]:
                    try:
                        parsed.append((relpath, changed[relpath], memory.read_file(
                            self.scope.root / relpath, self.scope.name, root=self.scope.root)))
                    except errors.Error as exc:
                        parsed.append((relpath, changed[relpath], exc.message))
                if journal is not None:
                    journal.saw(self.scope.root, [(relpath, item.slug, item.document.text().encode("utf-8"))
                                                  for relpath, _, item in parsed if not isinstance(item, str)],
                                ours=False)
                terms = {relpath: _terms(item) for relpath, _, item in parsed if not isinstance(item, str)}
                prefetched = self._vocabulary is None
                if prefetched:  # the ids of the batch's words in one read, not one read per file
                    self._vocabulary = words.lookup(conn, list({word for counts in terms.values() for word in counts}))
                try:
                    for relpath, stamp, item in parsed:
                        if isinstance(item, str):
                            touched |= self._forget_path(relpath)
                            conn.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?)", (relpath, stamp, item))
                        else:
                            touched |= self._record(item, relpath, stamp, terms[relpath])
                finally:
                    if prefetched:
                        self._vocabulary = None
            if self._staged is not None:
                self._staged.flush()
                self._staged = None
            if earlier_graph is not None:
                touched |= edge_tables.import_edges(conn, earlier_graph, self._graph_timestamp())
            if graph_import is not None:
                edge_tables.import_file(conn, graph_import)
                edge_tables.refresh_all(conn, self.labels)
                self._graph_full = True
            else:
                self._graph_changes.update(edge_tables.refresh(conn, touched, self.labels))
            if self._disk is not None:
                self._set_meta(DISK_KEY, self._disk.digest())
        self.export()

    def _catch_up(self, slugs: Iterable[str], files: Iterable[str] = ()) -> bool:
        """Bring the catalog up to date from what the directory stamps and the files of `slugs`
        tell, without a stat of every file (see freshness). False: only a full scan will do
        (no catalog yet, the memory-graph layout, an export someone else touched, a temp file left)."""
        root = self.scope.root
        digest = self._meta(DISK_KEY)
        if digest is None or (root / NODES_DIR).exists() or not self._exports_current():
            return False
        stale: dict[str, str | None] = {}
        if directory_stamp(root) != self._meta(ROOT_KEY):
            names = freshness.listing(root, NOT_MEMORIES)
            if names is None:
                return False
            stale = freshness.differences(root, names, self._known())
        relpaths = set(files)
        for slug in slugs:
            row = self.conn.execute(f"SELECT {_RELPATH} FROM docs WHERE slug=?", (slug,)).fetchone()
            if row is not None:
                relpaths.add(row[0])
        for relpath in relpaths - set(stale):
            now = freshness.regular_file_stamp(root / relpath)
            if now != self._recorded_stamp(relpath):
                stale[relpath] = now
        self._disk = DiskState.resumed(digest, self._recorded_stamp)
        if self._over_budget(len(stale)):
            return True
        if stale:
            for relpath, stamp in stale.items():
                self._disk.recall(relpath)
                self._disk.note(relpath, stamp)
            self._apply({relpath: stamp for relpath, stamp in stale.items() if stamp is not None},
                        [relpath for relpath, stamp in stale.items() if stamp is None])
        return True

    def _over_budget(self, count: int) -> bool:
        """Whether `count` changed files are more than this process may take in now: then it answers
        from the catalog as it is, marked partial, and a detached process catches up. Else a catch-up
        that takes over a second is announced."""
        if self.catch_up_limit is not None and count > self.catch_up_limit:
            self.partial = True
            self.warnings.append(f"{self.scope.name} scope: partial answer: {count} memory files changed outside "
                                 "the tool are left to a background catch-up")
            if self.background is not None:
                self.background()
            return True
        if count > PROGRESS_FILES and self.progress is not None:
            self.progress(f"{self.scope.name} scope: reading {count} memory files changed since the catalog last saw them...")
        return False

    def verify_slugs(self, slugs: list[str]) -> bool:
        """`verify` for memories known by slug (e.g. a ranking's results)."""
        if self._lock_depth or not self.verifying or not slugs:
            return False
        return self.verify(self._entries_of(slugs))

    def verify(self, entries: list[Entry]) -> bool:
        """Check the files of entries a reading command is about to return against their recorded
        stamps, and take in those edited by hand (under the lock). True when any was stale: the
        caller queries again. Not while locked: a mutation checks what it touches itself."""
        if self._lock_depth or not self.verifying or not entries:
            return False
        root = self.scope.root
        if all(freshness.regular_file_stamp(root / entry.relpath) == entry.stamp for entry in entries):
            return False
        try:
            with self.locked(touching=[entry.slug for entry in entries]):
                pass  # locked() takes the stale ones in
        except errors.Busy:
            if self.may_replace:
                raise
            return False
        return True

    def _recorded_stamp(self, relpath: str) -> str | None:
        row = self.conn.execute(f"SELECT stamp FROM docs WHERE {_AT_PATH} UNION ALL "
                                "SELECT stamp FROM problems WHERE relpath = ?", (*_path_key(relpath), relpath)).fetchone()
        return row[0] if row else None

    # -- recording changes (holding the lock) -----------------------------------------------

    def record(self, item: memory.Memory) -> None:
        """Index a memory file we just wrote, and refresh the graph lines it touches."""
        relpath = item.path.relative_to(self.scope.root).as_posix()
        stamp = file_stamp(item.path) or ""
        self._mutated.add(item.slug)
        if self._disk is not None:
            self._disk.recall(relpath)
        with self.transaction() as conn:
            conn.execute("DELETE FROM problems WHERE relpath=?", (relpath,))
            self._graph_changes.update(edge_tables.refresh(conn, self._record(item, relpath, stamp), self.labels))
        self._note_disk(relpath, stamp)
        if self.journal is not None:
            self.journal.saw(self.scope.root, [(relpath, item.slug, item.document.text().encode("utf-8"))], ours=True)

    def record_all(self, items: list[memory.Memory]) -> None:
        """`record` for many files in one transaction, each touched graph line rebuilt once: a
        rename of a memory linked from 1,000 others rewrites its line once, not 1,000 times."""
        touched: set[str] = set()
        placed = []
        for item in items:
            relpath = item.path.relative_to(self.scope.root).as_posix()
            placed.append((item, relpath, file_stamp(item.path) or ""))
            self._mutated.add(item.slug)
            if self._disk is not None:
                self._disk.recall(relpath)
        with self.transaction() as conn:
            for item, relpath, stamp in placed:
                conn.execute("DELETE FROM problems WHERE relpath=?", (relpath,))
                touched |= self._record(item, relpath, stamp)
            self._graph_changes.update(edge_tables.refresh(conn, touched, self.labels))
        for _, relpath, stamp in placed:
            self._note_disk(relpath, stamp)
        if self.journal is not None:
            self.journal.saw(self.scope.root, [(relpath, item.slug, item.document.text().encode("utf-8"))
                                               for item, relpath, _ in placed], ours=True)

    def forget(self, slug: str) -> None:
        """Remove a memory whose file we just deleted (into the journal's trash, with its links)."""
        row = self.conn.execute(f"SELECT {_RELPATH} FROM docs WHERE slug=?", (slug,)).fetchone()
        if row is None:
            return
        if self.journal is not None:
            edges = [[edge.target, edge.label] for edge in self.edges(slug)]
            self.journal.gone(self.scope.root, [row[0]], ours=True, edges={row[0]: edges})
        self._mutated.add(slug)
        if self._disk is not None:
            self._disk.recall(row[0])
        with self.transaction() as conn:
            self._graph_changes.update(edge_tables.refresh(conn, self._forget_path(row[0]), self.labels))
        self._note_disk(row[0], None)

    def _note_disk(self, relpath: str, stamp: str | None) -> None:
        """Keep the remembered directory state in step with a file we wrote or removed."""
        if self._disk is not None:
            self._disk.note(relpath, stamp)

    def _record(self, item: memory.Memory, relpath: str, stamp: str, counts: dict[str, int] | None = None) -> set[str]:
        """Index one file (`counts`: its `_terms`, when the caller has them)."""
        conn = self.conn
        previous = conn.execute(f"SELECT slug FROM docs WHERE {_AT_PATH}", _path_key(relpath)).fetchone()
        same_node = previous is not None and previous[0] == item.slug
        touched = self._forget_path(relpath, keep_node=same_node)
        holder = conn.execute(f"SELECT {_RELPATH}, stamp FROM docs WHERE slug=?", (item.slug,)).fetchone()
        if holder is not None and item.path.stem == item.slug:  # a file named after the slug owns it
            conflict = memory.id_conflict(self.scope.root / holder[0], item.slug)
            if conflict is not None:  # the holder only claimed it by `id`: as a fresh read would find
                touched |= self._forget_path(holder[0])
                conn.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?)", (holder[0], holder[1],
                                                                                  conflict.message))
                holder = None
        if holder is not None:
            conn.execute("INSERT OR REPLACE INTO problems VALUES (?, ?, ?)",
                         (relpath, stamp, f"duplicate slug {item.slug!r}, already used by {holder[0]}"))
            return touched
        created = item.created or clock.from_epoch(item.path.stat().st_mtime)
        updated = item.updated or created
        tags = _tags(item)
        counts = counts if counts is not None else _terms(item)
        extra = {key: item.fields[key] for key in EXTRA_FIELDS if key in item.fields}
        if item.severity:
            extra["severity"] = item.severity
        declared_type = item.fields.get("type")
        if isinstance(declared_type, str) and declared_type.strip() != item.type:
            extra["declared-type"] = declared_type.strip()  # e.g. the bash era's `permanent`
        has_embedding = (self.embedding_dir / f"{item.slug}.json").exists()
        status = "archived" if relpath.startswith(layout.ARCHIVE_DIR + "/") else item.status
        entry = Entry(item.slug, self.scope.name, self.scope.root, relpath, item.type, item.title, tags, created,
                      updated, status, item.links, extra, item.content_hash(), has_embedding)
        ids = self._word_ids(counts)
        length = sum(counts.values())
        declared = graph.declarations(item)
        nodes = edge_tables.node_ids(conn, [item.slug, *item.links, *(dst for dst, _, _ in declared)], self._nodes)
        cursor = conn.execute(
            "INSERT INTO docs(slug, relpath, stamp, type, title, tags, created, updated, status, links, extra, hash,"
            " length, words, has_embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item.slug, None if relpath == f"{item.slug}.md" else relpath, stamp, item.type, item.title,
             encode_json(tags), created, updated, status, json.dumps([nodes[link] for link in item.links]),
             json.dumps(extra, ensure_ascii=False, default=str), bytes.fromhex(entry.content_hash), length,
             words.pack(ids), int(has_embedding)))
        doc: int = cursor.lastrowid  # type: ignore[assignment]  # (an INSERT's row id)
        self._counted[0] += 1
        self._counted[1] += length
        if self._staged is not None:
            self._staged.add(doc, length, zip(ids, counts.values()))
        else:
            postings.add(conn, doc, length, zip(ids, counts.values()))
        conn.executemany("INSERT OR IGNORE INTO tags VALUES (?, ?)", [(tag, doc) for tag in tags])
        if item.type == "gotcha":
            gotcharules.record(conn, doc, tags, extra.get("paths"))
        self._index_changed(item.slug, entry)
        touched |= edge_tables.replace_declarations(conn, item.slug, declared, updated, nodes)
        if not same_node:  # a memory that appears changes the edges of those already pointing at it
            touched |= {row[0] for row in conn.execute("SELECT src FROM declared WHERE dst=?", (item.slug,))}
        return touched

    def _forget_path(self, relpath: str, *, keep_node: bool = False) -> set[str]:
        """Drop a file's catalog rows. With `keep_node` (the file is re-recorded under the same
        slug) its link declarations stay for `replace_declarations` to update in place."""
        conn = self.conn
        conn.execute("DELETE FROM problems WHERE relpath=?", (relpath,))
        row = conn.execute(f"SELECT id, slug, words, tags, length FROM docs WHERE {_AT_PATH}", _path_key(relpath)).fetchone()
        if row is None:
            return set()
        doc, slug, ids, tags, length = row
        self._counted[0] -= 1
        self._counted[1] -= length
        if self._staged is not None:  # (a doc staged earlier may lose its slug to a file read after it)
            self._staged.remove(doc, words.unpack(ids))
        elif self._leaving is not None:
            self._leaving.append((doc, ids))  # their postings go together (see _apply)
        else:
            postings.remove(conn, doc, words.unpack(ids))
        conn.executemany("DELETE FROM tags WHERE tag=? AND doc=?", [(tag, doc) for tag in json.loads(tags)])
        gotcharules.forget(conn, doc)
        conn.execute("DELETE FROM docs WHERE id=?", (doc,))
        self._index_changes[slug] = None
        return {slug} if keep_node else edge_tables.forget(conn, slug)

    def _word_ids(self, counts: dict[str, int]) -> list[int]:
        """The ids of a memory's words in the words table, in the order of `counts`; new words added."""
        known = self._vocabulary
        if known is None:  # look up only this memory's words
            known = words.lookup(self.conn, list(counts))
        new = [word for word in counts if word not in known]
        if new:
            known.update(words.add(self.conn, new))
        return [known[word] for word in counts]

    def set_has_embedding(self, slugs: Iterable[str], value: bool) -> None:
        """Record that embedding cache files were written or removed (holding the lock)."""
        with self.transaction() as conn:
            for slug in slugs:
                entry = self.get(slug)
                if entry is not None:
                    entry.has_embedding = value
                    conn.execute("UPDATE docs SET has_embedding=? WHERE slug=?", (int(value), slug))
                    self._index_changed(slug, entry)

    def _index_changed(self, slug: str, entry: Entry) -> None:
        """Note a memory's new index.json line; past INDEX_CHANGES_HELD of them, index.json will be
        rendered whole and only the slugs are kept (a rebuild of 100,000 must not hold every entry)."""
        self._index_changes[slug] = None if self._index_full else entry
        if not self._index_full and len(self._index_changes) > INDEX_CHANGES_HELD:
            self._index_full = True
            self._index_changes = dict.fromkeys(self._index_changes)

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- queries ----------------------------------------------------------------------------

    def get(self, slug: str) -> Entry | None:
        return self._verified_one("slug", slug)

    def get_many(self, slugs: Iterable[str]) -> dict[str, Entry]:
        """slug -> entry of those of `slugs` catalogued, checked as get() checks one (in one pass)."""
        slugs = list(dict.fromkeys(slugs))
        found = self._entries_of(slugs)
        if self.verify(found):
            found = self._entries_of(slugs)
        return {entry.slug: entry for entry in found}

    def _entries_of(self, slugs: list[str]) -> list[Entry]:
        found = []
        for start in range(0, len(slugs), _SLUG_BATCH):
            batch = slugs[start:start + _SLUG_BATCH]
            found += [self._entry(row) for row in self.conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM docs WHERE slug IN ({', '.join('?' * len(batch))})", batch)]
        return found

    def get_by_id(self, doc: int) -> Entry | None:
        return self._verified_one("id", doc)

    def _verified_one(self, column: str, value: Any) -> Entry | None:
        sql = f"SELECT {_ENTRY_COLUMNS} FROM docs WHERE {column}=?"
        row = self.conn.execute(sql, (value,)).fetchone()
        if row and self.verify([self._entry(row)]):
            row = self.conn.execute(sql, (value,)).fetchone()
        return self._entry(row) if row else None

    def entries(self, *, types: Iterable[str] | None = None, tag: str | None = None, status: str | None = None,
                since: str | None = None, order: str = "slug", descending: bool = False,
                limit: int | None = None) -> list[Entry]:
        """Memories of the scope, filtered and ordered by the database (`since`: an ISO UTC string)."""
        sql = f"SELECT {_ENTRY_COLUMNS} FROM docs"
        params: list[Any] = []
        clauses = []
        if types:
            types = list(types)
            clauses.append(f"type IN ({', '.join('?' * len(types))})")
            params += types
        if tag:
            clauses.append("id IN (SELECT doc FROM tags WHERE tag=?)")
            params.append(tag)
        if status:
            clauses.append("status=?")
            params.append(status)
        if since:
            clauses.append("updated >= ?")
            params.append(since)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        column = {"title": "title COLLATE NOCASE"}.get(order, order)
        if column not in ("slug", "type", "created", "updated", "title COLLATE NOCASE"):
            raise ValueError(f"unknown order {order!r}")
        sql += f" ORDER BY {column} {'DESC' if descending else 'ASC'}, slug {'DESC' if descending else 'ASC'}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        found = [self._entry(row) for row in self.conn.execute(sql, params)]
        if self.verify(found):  # a returned file was edited by hand: ask again
            found = [self._entry(row) for row in self.conn.execute(sql, params)]
        return found

    def slugs(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT slug FROM docs")}

    def declares(self, source: str, target: str, label: str, *, by_graph_file: bool = False) -> bool:
        """Whether a memory file or a graph.json (only a graph.json: `by_graph_file`) declares
        the edge source -label-> target."""
        labels = (label, graph.UNLABELLED) if label == graph.DEFAULT_LABEL else (label,)
        origins = (graph.ORIGIN_IMPORTED,) if by_graph_file else (graph.ORIGIN_IMPORTED, graph.ORIGIN_LINKS,
                                                                   graph.ORIGIN_REFS)
        return self.conn.execute(
            f"SELECT 1 FROM declared WHERE src=? AND dst=? AND label IN ({', '.join('?' * len(labels))}) "
            f"AND origin IN ({', '.join('?' * len(origins))}) LIMIT 1", (source, target, *labels, *origins)
        ).fetchone() is not None

    def has_type(self, memory_type: str) -> bool:
        return self.conn.execute("SELECT 1 FROM docs WHERE type=? LIMIT 1", (memory_type,)).fetchone() is not None

    def has_slug(self, slug: str) -> bool:
        return self.conn.execute("SELECT 1 FROM docs WHERE slug=?", (slug,)).fetchone() is not None

    def problems(self) -> list[Problem]:
        return [Problem(self.scope.root / relpath, message)
                for relpath, message in self.conn.execute("SELECT relpath, message FROM problems ORDER BY relpath")]

    def edges(self, slug: str) -> list[graph.Edge]:
        """Outgoing edges of `slug` as graph.json holds them."""
        if not self.conn.execute("SELECT 1 FROM adjacency WHERE slug=?", (slug,)).fetchone():
            return []
        return edge_tables.node_edges(self.conn, slug, self.labels)

    def _every_entry(self) -> Iterator[Entry]:
        """Every memory's entry, in slug order (as index.json lists them)."""
        return (self._entry(row) for row in self.conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM docs ORDER BY slug"))

    def _entry(self, row: tuple[Any, ...]) -> Entry:
        slug, relpath, type_, title, tags, created, updated, status, links, extra, hash_, has_embedding, stamp = row
        return Entry(slug, self.scope.name, self.scope.root, relpath, type_, title, json.loads(tags), created,
                     updated, status, links, extra, hash_.hex(), bool(has_embedding), stamp)


def _path_key(relpath: str) -> tuple[str, str]:
    """The parameters of _AT_PATH for a file: its path, and the slug it has when named after it."""
    return relpath, relpath[:-3] if relpath.endswith(".md") and "/" not in relpath else ""


def _tags(item: memory.Memory) -> list[str]:
    return [tag for tag in item.tags if isinstance(tag, str)]


def _terms(item: memory.Memory) -> dict[str, int]:
    """How often each indexed word occurs in a memory (title, tags, content)."""
    return text.document_terms(item.title, _tags(item), item.content)


def _connect(path: Path, scope_lock: Callable[[], Any]) -> sqlite3.Connection:
    """The catalog at `path`, created (or, damaged or of an older layout, made afresh: it is
    derived data) under the scope lock, so that no process ever removes a catalog another has open."""
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
    if _version(conn) != SCHEMA_VERSION:
        conn.close()
        with scope_lock():  # (a connection opened before another process made the file is stale)
            conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            version = _version(conn)
            if version != SCHEMA_VERSION:
                if version != 0:
                    conn.close()
                    _discard_database(path)
                    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


BULK_CACHE_KIB = 65536  # page cache of a rebuild: the postings index of 100,000 memories sorts within it


@contextlib.contextmanager
def _bulk_settings(conn: sqlite3.Connection) -> Iterator[None]:
    """A page cache for re-deriving the whole catalog, the normal one restored after. (Durability
    stays as it is: in WAL mode with synchronous=NORMAL one big transaction syncs once anyway.)"""
    conn.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute("PRAGMA cache_size=-2000")


def _version(conn: sqlite3.Connection) -> int | None:
    """The catalog's layout version; None when the file is not a database at all (damaged)."""
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        if errors.storage_error(exc, "the catalog") is not None or "locked" in str(exc) or "busy" in str(exc):
            raise
        return None


def _read_only_connection(path: Path | None) -> sqlite3.Connection:
    """The catalog at `path` opened read-only as it is (nothing created beside it), or, when there
    is none (or `path` is None), an empty one in memory that a sync fills from the files."""
    if path is not None and path.exists():
        from urllib.parse import quote

        try:
            conn = sqlite3.connect(f"file:{quote(str(path))}?immutable=1", uri=True, isolation_level=None)
            if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return conn
            conn.close()
        except sqlite3.Error:
            pass
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(_SCHEMA)
    return conn


def _in_memory(conn: sqlite3.Connection) -> bool:
    return any(name == "main" and not file for _, name, file in conn.execute("PRAGMA database_list"))


def _discard_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        fsutil.remove_file(Path(str(path) + suffix))


class DiskState:
    """The stamps of a scope's memory files, with a fingerprint that is cheap to keep current.

    The fingerprint is the count of files and the sums of two checksums (CRC-32, Adler-32) of
    each "relpath stamp" line, so an operation that writes a file adjusts it in O(1) instead
    of re-hashing 10,000 lines.
    """

    def __init__(self, disk: dict[str, str]) -> None:
        self.stamps = disk
        self.count = len(disk)
        lines = [f"{path} {stamp}".encode("utf-8", "surrogateescape") for path, stamp in disk.items()]
        self.crc_total = sum(map(zlib.crc32, lines))  # map over C functions: no Python call per file
        self.adler_total = sum(map(zlib.adler32, lines))
        self.dirty = False
        self.touched: set[str] = set()  # relpaths written or removed since the scan
        self.lookup: Callable[[str], str | None] | None = None  # stamps not in `stamps` (a resumed state)

    @classmethod
    def resumed(cls, digest: str, lookup: Callable[[str], str | None]) -> "DiskState":
        """A state known only by its recorded digest; `lookup` gives a file's recorded stamp."""
        state = cls({})
        count, crc_total, adler_total = digest.split(":")
        state.count, state.crc_total, state.adler_total = int(count), int(crc_total, 16), int(adler_total, 16)
        state.lookup = lookup
        return state

    def recall(self, relpath: str) -> None:
        """Before a file's recorded stamp changes: a resumed state learns it (note() subtracts it)."""
        if self.lookup is not None and relpath not in self.stamps and relpath not in self.touched:
            stamp = self.lookup(relpath)
            if stamp is not None:
                self.stamps[relpath] = stamp

    def digest(self) -> str:
        return f"{self.count}:{self.crc_total:x}:{self.adler_total:x}"

    def note(self, relpath: str, stamp: str | None) -> None:
        old = self.stamps.pop(relpath, None)
        if old is not None:
            self.count -= 1
            line = f"{relpath} {old}".encode("utf-8", "surrogateescape")
            self.crc_total -= zlib.crc32(line)
            self.adler_total -= zlib.adler32(line)
        if stamp is not None:
            self.stamps[relpath] = stamp
            self.count += 1
            line = f"{relpath} {stamp}".encode("utf-8", "surrogateescape")
            self.crc_total += zlib.crc32(line)
            self.adler_total += zlib.adler32(line)
        self.dirty = True
        self.touched.add(relpath)




def replace_beside(workspace: Workspace, scope: Scope, path: Path, text: str, *, durable: bool = True) -> None:
    """Replace a file beside the scope's memories (index.md, task-index.json) without making the
    next command rescan every memory file (see `Catalog.replacing_beside`)."""
    with open_catalog(workspace, scope, refresh=False) as catalog:
        if catalog is None:
            fsutil.write_atomically(path, text, durable=durable)
            return
        with catalog.replacing_beside():
            fsutil.write_atomically(path, text, durable=durable)


@contextlib.contextmanager
def open_catalog(workspace: Workspace, scope: Scope, *, create: bool = False, refresh: bool = True,
                 full: bool = False) -> Iterator[Catalog | None]:
    """The scope's catalog; None when the scope has no directory yet. `create` makes the directory
    first, for a write. With `refresh` (the default) files that came, went or were replaced are
    taken in first and every query checks the files it returns (see freshness); `full` checks
    every file's stamp (health, maintenance)."""
    journal = journal_of(workspace)
    if create:
        from ..workspace.scopes import scaffolded

        with scaffolded(workspace, scope), open_catalog(workspace, scope, refresh=refresh, full=full) as catalog:
            yield catalog
        return
    if not scope.root.is_dir():
        if journal is not None and journal.knows(scope.root):  # the whole directory went
            journal.missing(scope.root, [])
            report_losses(workspace, journal, scope)
        yield None
        return
    catalog = Catalog.open(scope, workspace.config, may_replace=not workspace.in_hook)
    catalog.journal = journal if scope.root_writable else None
    catalog.progress = getattr(workspace, "progress", None)
    if workspace.in_hook:
        catalog.background = lambda: spawn_catch_up(workspace.cwd, scope.cache_dir)
    try:
        if refresh:
            catalog.refresh(full=full)
            catalog.verifying = not full  # a full refresh has just compared every file's stamp
        yield catalog
    finally:
        for warning in catalog.warnings:
            workspace.warn(warning)
        if journal is not None and journal.has_news(scope.root):
            report_losses(workspace, journal, scope)
        catalog.close()


LOSSES_NAMED = 10  # losses reported one by one; past them, how many more


def report_losses(workspace: Workspace, journal: Any, scope: Scope) -> None:
    """Say once what went missing in a scope, and how to bring it back (commands: a warning;
    hooks that inject context: a line for Claude)."""
    if not workspace.reports_losses:
        return
    news = journal.news(scope.root)
    for item in news[:LOSSES_NAMED]:
        workspace.warn(f"{scope.name} scope: {item.describe()}")
        workspace.notices.append(f"Memory {item.describe()} (the {scope.name} scope).")
    if len(news) > LOSSES_NAMED:  # a folder cleaned out or a branch switch: not a line per file
        more = (f"{len(news) - LOSSES_NAMED} more memories were deleted or changed outside the memory tool; "
                "`memory trash` lists them, `memory restore --all` brings back the deleted ones")
        workspace.warn(f"{scope.name} scope: {more}")
        workspace.notices.append(f"Memory: {more} (the {scope.name} scope).")


CATCH_UP_MARK = "catch-up.started"  # in the scope's cache directory while a catch-up runs
CATCH_UP_SECONDS = 120  # a mark older than this is from a catch-up that died: start another


def catch_up_running(cache_dir: Path) -> bool:
    import time

    try:
        return time.time() - (cache_dir / CATCH_UP_MARK).stat().st_mtime < CATCH_UP_SECONDS
    except OSError:
        return False


def spawn_catch_up(cwd: Path, cache_dir: Path) -> None:
    """Start `catch_up_main` for the workspace at `cwd` in a detached process (once at a time per
    scope): it outlives the hook that found the work, and its lock waits delay no one."""
    import subprocess
    import sys

    if catch_up_running(cache_dir):
        return
    with contextlib.suppress(OSError):
        (cache_dir / CATCH_UP_MARK).write_text(clock.now_iso() + "\n")
        scripts = str(Path(__file__).resolve().parent.parent.parent)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from _lib.catalog.catalog import catch_up_main; catch_up_main(sys.argv[2], sys.argv[3])")
        subprocess.Popen([sys.executable, "-S", "-X", "utf8", "-c", code, scripts, str(cwd), str(cache_dir)],
                         cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)


def catch_up_main(cwd: str, cache_dir: str) -> None:
    """The detached catch-up: take in every changed file of each scope of the workspace at `cwd`,
    leaving other tools' files alone as a hook does."""
    from ..workspace.scopes import Workspace

    try:
        workspace = Workspace(cwd)
        workspace.in_hook = True
        workspace.reports_losses = False
        catch_up(workspace)
    except Exception:  # noqa: BLE001 - nobody to tell: the next command catches up itself
        pass
    finally:
        fsutil.remove_file(Path(cache_dir) / CATCH_UP_MARK)


def catch_up(workspace: Workspace, *, full: bool = False) -> None:
    """Take in every file of each readable scope that came, went or was replaced (`full`: also
    those edited in place), however many: the background steps of hooks."""
    for scope in workspace.readable_scopes():
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is not None:
                catalog.catch_up_limit = None
                catalog.refresh(full=full)
