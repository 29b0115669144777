"""index.json and graph.json written from the catalog: a change writes the lines it alters into
the file in place (`patch_in_place`), or splices them into a new copy (`splice_lines`), or
rewrites the file whole when it is missing or written by someone else; a store of the earlier
plugin gets its own index.json patched instead.

A mixin of Catalog, beside the functions that splice lines into a file.
"""

from __future__ import annotations

import contextlib
import json
import os

from ..base import clock, fsutil
from ..base.stamps import file_stamp
from ..workspace import layout
from . import edges as edge_tables
from .derived import FOREIGN, GRAPH_NAME, INDEX_NAME, PENDING, SLACK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    import sqlite3
    from pathlib import Path
    from typing import Any, Iterator

    from ..model import graph
    from ..workspace.scopes import Scope

INDEX_VERSION = "1.0.0"
SPLICE_SEARCHES = 64  # changed entries up to which each is searched for; more: the file is split once
MAX_SLACK = 0.25  # share of a file that may be padding left by patches in place before it is rewritten


class Exports:
    """Keeping index.json and graph.json in step with the catalog."""

    if TYPE_CHECKING:  # provided by Catalog and ForeignFiles
        conn: sqlite3.Connection
        scope: Scope
        labels: graph.Labels
        unwritable: Any
        _pending: bool
        _inherited: bool
        _mutated: set[str]
        _disk: Any
        _index_changes: dict[str, Any]  # slug -> its Entry (None: deleted)
        _index_full: bool
        _graph_changes: dict[str, str | None]
        _graph_full: bool

        def _meta(self, key: str) -> str | None: ...
        def _set_meta(self, key: str, value: str) -> None: ...
        @property
        def predecessor_layout(self) -> bool: ...
        def _foreign_format(self, name: str) -> str | None: ...
        def _ours(self, name: str, stamp: str | None) -> bool: ...
        def get(self, slug: str) -> Any: ...
        def _every_entry(self) -> Iterator[Any]: ...

    def _mark_exports_pending(self) -> None:
        """Record, in the transaction about to change the catalog, that index.json and graph.json
        will need this change: if the process dies before `export`, the next one notices."""
        if self._pending:
            return
        for name in (INDEX_NAME, GRAPH_NAME):
            value = self._meta(name) or ""
            if value.startswith(PENDING):
                self._inherited = True
            else:
                self._set_meta(name, PENDING + value)
        self._pending = True

    def _exports_current(self) -> bool:
        if not self.scope.root_writable:
            return True
        for name in (INDEX_NAME, GRAPH_NAME):
            if (self._meta(name) or "").startswith(PENDING) and not self._pending:
                return False  # a process died between recording a change and exporting it
            stamp = file_stamp(self.scope.root / name)
            if self._ours(name, stamp) or self._foreign_format(name) is not None:
                continue
            if stamp is not None or (self._meta(name) is not None and not self.predecessor_layout):
                return False  # touched by someone else, or ours and deleted
        return True

    def export(self) -> None:
        """Bring index.json and graph.json up to date: splice changed lines, or rewrite them whole
        when they are missing or were written by someone else. Ends every mutation: it also
        makes the renames of the memory files written under the lock durable.

        A store of the earlier plugin keeps that plugin's files: its index.json gets the entries
        of the memories this process wrote or deleted, and no file of ours is written."""
        try:
            if not self.scope.root_writable or not self.scope.root.is_dir() or self.unwritable is not None:
                return
            if self._disk is not None and self._disk.dirty:
                for directory in {os.path.dirname(relpath) for relpath in self._disk.touched}:
                    fsutil.sync_directory(self.scope.root / directory)
            if self.predecessor_layout:
                self._export_predecessor_index()
            else:
                head = json.dumps({"version": INDEX_VERSION, "lastUpdated": clock.now_iso()})[:-1] + ', "memories": {'
                self._export_file(INDEX_NAME, self._index_changes, self._index_full, head, "}}", self.render_index)
                self._export_file(GRAPH_NAME, self._graph_changes, self._graph_full, "{", "}",
                                  lambda: edge_tables.render_file(self.conn, self.labels))
            self._index_changes, self._graph_changes, self._index_full, self._graph_full = {}, {}, False, False
            self._pending = self._inherited = False
            self._mutated = set()
        finally:
            edge_tables.forget_rendered(self.conn)  # the lines refresh_all kept, used or not

    def _export_predecessor_index(self) -> None:
        for name in (INDEX_NAME, GRAPH_NAME):  # exports of ours never happen here: clear their marks
            if (self._meta(name) or "").startswith(PENDING):
                self.conn.execute("DELETE FROM meta WHERE key=?", (name,))
        changed = [slug for slug in self._index_changes if slug in self._mutated]
        if not changed or self._foreign_format(INDEX_NAME) != layout.FORMAT_PREDECESSOR:
            return
        from ..model import predecessor

        path = self.scope.root / INDEX_NAME
        upserts = {slug: entry for slug in changed if (entry := self.get(slug)) is not None}
        if predecessor.patch_index(path, upserts, [slug for slug in changed if slug not in upserts]):
            self._set_meta(FOREIGN + INDEX_NAME, f"{file_stamp(path) or ''} {layout.FORMAT_PREDECESSOR}")

    def _export_file(self, name: str, changes: dict[str, Any], full: bool, head: str, closing: str,
                     render: Any) -> None:
        path = self.scope.root / name
        stamp, recorded = file_stamp(path), self._meta(name) or ""
        if self._foreign_format(name) is not None:
            return  # another tool's file that may not be replaced here (see _set_aside)
        if recorded.startswith(PENDING):  # splice only our own changes into our own last export
            ours = self._pending and not self._inherited and recorded == PENDING + (stamp or "")
        else:
            ours = stamp == (recorded or None)
        if ours and not full and not changes:
            if recorded.startswith(PENDING):  # as it was: the file's stamp, or no entry for no file
                if stamp is None:
                    self.conn.execute("DELETE FROM meta WHERE key=?", (name,))
                else:
                    self._set_meta(name, stamp)
            return
        text = None
        slack = int(self._meta(SLACK + name) or 0)  # padding in the file (a spliced copy keeps it)
        if ours and not full:
            lines = {key: value if value is None or isinstance(value, str) else value.index_line()
                     for key, value in changes.items()}
            with contextlib.suppress(OSError, ValueError):
                added = patch_in_place(path, head.encode("utf-8"), closing.encode("utf-8"), lines, slack)
                if added is not None:
                    self._set_meta(SLACK + name, str(slack + added))
                    self._set_meta(name, file_stamp(path) or "")
                    return
            with contextlib.suppress(OSError):
                text = splice_lines(path.read_bytes(), head.encode("utf-8"), closing.encode("utf-8"), lines)
        # Derived files need no fsync: a file lost in a crash no longer matches its recorded stamp
        # and is rebuilt by the next command.
        fsutil.write_atomically(path, text if text is not None else render(), durable=False)
        self._set_meta(SLACK + name, str(slack if text is not None else 0))
        self._set_meta(name, file_stamp(path) or "")

    def render_index(self) -> Iterator[str]:
        """index.json text, in pieces: one memory per line so a change rewrites little and diffs stay small."""
        head = json.dumps({"version": INDEX_VERSION, "lastUpdated": clock.now_iso()})[:-1]
        separator = ', "memories": {\n'
        for entry in self._every_entry():
            yield head + separator + entry.index_line()
            head, separator = "", ",\n"
        yield head + ', "memories": {}}\n' if head else "\n}}\n"


def patch_in_place(path: Path, head: bytes, closing: bytes, changes: dict[str, str | None], slack: int) -> int | None:
    """Write per-key line changes into a one-entry-per-line JSON object file (see `splice_lines`)
    where it lies, without copying it: a changed entry that still fits is overwritten and padded
    with spaces, a removed one is blanked together with the separator before it, a new one (or one
    that grew) is added before the closing brace. Each write is one system call that leaves the
    file valid JSON, so a process killed between two leaves valid JSON behind (and its pending mark
    has the next command rewrite the file). Returns the bytes of padding added; None, having
    written nothing, when the file is not in that shape, the head changed length, the first entry
    must go or grow, or padding would pass MAX_SLACK of the file: then the caller copies it."""
    import mmap

    tail = b"\n" + closing + b"\n"
    with open(path, "r+b") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0 or len(changes) > SPLICE_SEARCHES:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as text:
            body = _body(text, size, tail)
            if body is None or body[0] != len(head) + 1:
                return None
            body_start, body_end = body
            writes: list[tuple[int, bytes]] = [] if text[:len(head)] == head else [(0, head)]
            appended: list[bytes] = []
            added = 0
            for span, new in _changed_entries(text, body_start, body_end, changes):
                if span is None:
                    if new is not None:
                        appended.append(new)
                    continue
                start, end = span
                if new is not None and len(new) <= end - start:
                    writes.append((start, new.ljust(end - start)))
                    added += end - start - len(new)
                    continue
                if start == body_start:
                    return None  # the first entry has no separator before it to take with it
                writes.append((start - 2, b" " * (end - start + 2)))  # ",\n<entry>": the entry before stays valid
                added += end - start + 2
                if new is not None:
                    appended.append(new)
        if slack + added > MAX_SLACK * size:
            return None
        descriptor = handle.fileno()
        for offset, data in writes:
            os.pwrite(descriptor, data, offset)
        if appended:
            os.pwrite(descriptor, b"".join(b",\n" + line for line in appended) + tail, body_end)
    return added


def splice_lines(text: bytes, head: bytes, closing: bytes, changes: dict[str, str | None]) -> bytes | None:
    """Apply per-key line changes to a one-entry-per-line JSON object file (index.json, graph.json).

    The file is `head`, then entries separated by ",\\n" (each `"key": value` on one line: JSON
    escapes newlines inside strings), then `closing`. A changed key's entry is replaced in
    place, a removed one cut out, a new one appended (key order carries no meaning in JSON).
    Works on bytes and copies the 4 MB of a 10,000-memory index once. Returns None when
    `text` is not in that shape; the caller then renders the file whole.
    """
    tail = b"\n" + closing + b"\n"
    body = _body(text, len(text), tail)
    if body is None:
        return None
    body_start, body_end = body
    if len(changes) > SPLICE_SEARCHES:
        entries = _spliced_entries(text[body_start:body_end], changes)
    else:
        entries = _searched_entries(text, body_start, body_end, changes)
    if not entries:
        return None
    parts: list[bytes | memoryview] = [head, b"\n"]
    for entry in entries:
        parts += (entry, b",\n")
    parts[-1] = tail
    return b"".join(parts)  # one copy of the whole file


def _body(text: bytes | mmap.mmap, size: int, tail: bytes) -> tuple[int, int] | None:
    """(start, end) of the entries of a one-entry-per-line JSON object file: after the head's line,
    before `tail`; None when the file is not in that shape (or holds no entry)."""
    first = text.find(b"\n")
    body_start, body_end = first + 1, size - len(tail)
    if first < 0 or text[body_end:] != tail or body_end <= body_start or text[body_start:body_start + 1] != b'"':
        return None
    return body_start, body_end


def _entry(text: bytes | mmap.mmap, body_start: int, body_end: int, key: str) -> tuple[int, int] | None:
    """(start, end) of `key`'s entry among the entries, its separator excluded; None when absent."""
    marker = json.dumps(key).encode() + b": "
    if text[body_start:body_start + len(marker)] == marker:
        start = body_start
    else:
        found = text.find(b",\n" + marker, body_start, body_end)
        if found < 0:
            return None
        start = found + 2
    end = text.find(b",\n", start, body_end)
    return start, body_end if end < 0 else end


def _changed_entries(text: bytes | mmap.mmap, body_start: int, body_end: int,
                     changes: dict[str, str | None]) -> Iterator[tuple[tuple[int, int] | None, bytes | None]]:
    """((start, end) of its entry in the file, None when absent; its new line, None when removed)
    of each changed key, in order."""
    for key, line in changes.items():
        yield _entry(text, body_start, body_end, key), None if line is None else line.encode("utf-8")


def _searched_entries(text: bytes, body_start: int, body_end: int,
                      changes: dict[str, str | None]) -> list[bytes | memoryview]:
    """The kept and new entries, in order, each changed key found by a search of the file."""
    edits: list[tuple[int, int, bytes | None]] = []
    appended: list[bytes | memoryview] = []
    for span, new in _changed_entries(text, body_start, body_end, changes):
        if span is not None:
            edits.append((*span, new))
        elif new is not None:
            appended.append(new)
    view = memoryview(text)
    entries: list[bytes | memoryview] = []
    cursor = body_start
    for start, end, new in sorted(edits):
        if start > cursor:
            entries.append(view[cursor:start - 2])  # the untouched entries before this one
        if new is not None:
            entries.append(new)
        cursor = end + 2
    if cursor < body_end:
        entries.append(view[cursor:body_end])
    return entries + appended


def _spliced_entries(body: bytes, changes: dict[str, str | None]) -> list[bytes | memoryview]:
    """The kept and new entries, in order, from one split of the file's entries (many changes)."""
    markers = {json.dumps(key).encode(): line for key, line in changes.items()}
    entries: list[bytes | memoryview] = []
    for entry in body.split(b",\n"):
        marker = entry[:entry.find(b'": ') + 1]
        if marker in markers:
            line = markers.pop(marker)
            if line is not None:
                entries.append(line.encode("utf-8"))
        else:
            entries.append(entry)
    entries += [line.encode("utf-8") for line in markers.values() if line is not None]
    return entries

