"""index.json and graph.json as found: files another tool wrote (the earlier plugin's formats, or
ones nobody here knows) are read, kept in their format, patched, or set aside before a rewrite.

A mixin of Catalog: it works on the catalog's connection, scope and meta marks.
"""

from __future__ import annotations

import os

from ..base import clock, jsontext
from ..base.stamps import file_stamp
from ..workspace import layout
from . import edges as edge_tables
from .derived import FOREIGN, GRAPH_NAME, INDEX_NAME, PENDING, LineObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any, ContextManager

    from ..model import graph, predecessor
    from ..workspace.scopes import Scope


class ForeignFiles:
    """What the catalog knows of derived files someone else wrote."""

    if TYPE_CHECKING:  # provided by Catalog
        conn: sqlite3.Connection
        scope: Scope
        may_replace: bool
        labels: graph.Labels
        warnings: list[str]
        _graph_changes: dict[str, str | None]

        def _meta(self, key: str) -> str | None: ...
        def _set_meta(self, key: str, value: str) -> None: ...
        def transaction(self) -> ContextManager[sqlite3.Connection]: ...

    @property
    def predecessor_layout(self) -> bool:
        """The scope is laid out by the earlier plugin (its folders, or its index.json or graph.json):
        this plugin then keeps that plugin's files in their format and writes none of its own."""
        return bool(layout.memory_subdirs(self.scope.root)) or any(
            self._foreign_format(name) == layout.FORMAT_PREDECESSOR for name in (INDEX_NAME, GRAPH_NAME))

    def _foreign_format(self, name: str) -> str | None:
        """The format of index.json or graph.json when another tool wrote it and we read it as it is now."""
        recorded = self._meta(FOREIGN + name)
        if recorded is None:
            return None
        stamp, _, fmt = recorded.rpartition(" ")
        return fmt if stamp == (file_stamp(self.scope.root / name) or "") else None

    def _ours(self, name: str, stamp: str | None) -> bool:
        recorded = self._meta(name)
        return stamp is not None and recorded in (stamp, PENDING + stamp)

    def _look_again(self, name: str) -> bool:
        """Whether a derived file someone else wrote must be read: it changed since we last did, or
        it is one a command may now set aside (a hook left it alone)."""
        known = self._foreign_format(name)
        return known is None or (self.may_replace and known in layout.REPLACEABLE and not self.predecessor_layout)

    def _read_foreign(self, name: str, classify: Any) -> tuple[str, Any]:
        """(format, content) of a derived file someone else wrote; remembered by its stamp.
        A symbolic link is never followed: what it leads to is not ours to read."""
        path = self.scope.root / name
        stamp = file_stamp(path) or ""
        if os.path.islink(path):
            data, fmt = None, layout.FORMAT_LINK
        elif name == GRAPH_NAME and (lines := LineObject.of(path, list)) is not None:
            data, fmt = lines, layout.FORMAT_OURS  # read a line at a time: never held whole
        else:
            try:
                data = jsontext.loads(path.read_bytes())
                fmt = classify(data)
            except (OSError, UnicodeDecodeError, ValueError):
                data, fmt = None, layout.FORMAT_BROKEN
        if fmt != layout.FORMAT_OURS:
            self._set_meta(FOREIGN + name, f"{stamp} {fmt}")
        return fmt, data

    def _changed_graph(self) -> tuple[Any | None, Any | None]:
        """What graph.json holds when someone other than us wrote it since we last looked:
        (content in our format to adopt labels from, edges of the earlier plugin's format)."""
        path = self.scope.root / GRAPH_NAME
        stamp = file_stamp(path)
        if stamp is None and not os.path.islink(path):
            if self._meta(FOREIGN + GRAPH_NAME) is not None:  # the earlier plugin's graph.json is gone
                self.conn.execute("DELETE FROM meta WHERE key=?", (FOREIGN + GRAPH_NAME,))
                return None, []
            return None, None
        if self._ours(GRAPH_NAME, stamp) or not self._look_again(GRAPH_NAME):
            return None, None  # ours (perhaps behind the catalog: then it is rewritten, never imported)
        fmt, data = self._read_foreign(GRAPH_NAME, layout.graph_format)
        if fmt == layout.FORMAT_OURS:
            return data, None
        if fmt == layout.FORMAT_PREDECESSOR:
            from ..model import predecessor  # here: only the earlier plugin's stores need it

            return None, predecessor.graph_edges(data)
        self._set_aside(GRAPH_NAME, fmt)
        return None, None

    def _adopt_index(self) -> None:
        """Notice an index.json someone else wrote: ours is rewritten, another tool's kept (or set aside)."""
        path = self.scope.root / INDEX_NAME
        stamp = file_stamp(path)
        if (stamp is None and not os.path.islink(path)) or self._ours(INDEX_NAME, stamp) \
                or not self._look_again(INDEX_NAME):
            return
        fmt, _ = self._read_foreign(INDEX_NAME, layout.index_format)
        if fmt not in (layout.FORMAT_OURS, layout.FORMAT_PREDECESSOR):
            self._set_aside(INDEX_NAME, fmt)

    def _set_aside(self, name: str, fmt: str) -> None:
        """A derived file in a format nobody here knows (or not JSON at all): a command keeps a copy
        beside it and lets it be rewritten; a hook, or a store of the earlier plugin, leaves it alone."""
        if not self.may_replace or not self.scope.root_writable or self.predecessor_layout:
            return
        path = self.scope.root / name
        stem = f"{name}.{clock.now_iso().replace(':', '').replace('-', '')}"
        kept = next(candidate for number in range(1, 1000) if not os.path.lexists(
            candidate := path.with_name(f"{stem}.orig" if number == 1 else f"{stem}-{number}.orig")))
        try:
            os.rename(path, kept)  # the original (or the link itself) stays, under another name
        except OSError:
            return  # cannot keep it: then it is not replaced either
        self.conn.execute("DELETE FROM meta WHERE key=?", (FOREIGN + name,))
        self._set_meta(name, "replaced")  # neither ours nor foreign: rewritten by export()
        what = {layout.FORMAT_BROKEN: "not valid JSON", layout.FORMAT_LINK: "a symbolic link (never followed)"}.get(
            fmt, "in a format this plugin does not know")
        self.warnings.append(f"{name} was {what}; the original is kept as {kept.name} and {name} is rebuilt "
                             "from the memory files")

    def _graph_timestamp(self) -> str:
        """When the earlier plugin's edges were made, as far as we can tell: its graph.json's mtime."""
        try:
            return clock.from_epoch((self.scope.root / GRAPH_NAME).stat().st_mtime)
        except OSError:
            return clock.now_iso()

    def patch_graph_file(self, edits: predecessor.GraphEdits) -> None:
        """Apply link changes to the earlier plugin's graph.json (holding the lock), and to what the
        catalog took from it. Creates the file in that format when the store has none yet."""
        if not edits:
            return
        path = self.scope.root / GRAPH_NAME
        if self._foreign_format(GRAPH_NAME) not in (None, layout.FORMAT_PREDECESSOR) or (
                file_stamp(path) is not None and self._foreign_format(GRAPH_NAME) is None):
            return  # a file we cannot patch: the memory files alone hold the change
        from ..model import predecessor
        from . import rollback  # here: reading commands and hooks never patch

        rollback.keep(path)  # it holds the edges: a command that fails puts it back with the memory files
        data = edits.apply(path, create=True)
        if data is None:
            return
        with self.transaction() as conn:
            self._set_meta(FOREIGN + GRAPH_NAME, f"{file_stamp(path) or ''} {layout.FORMAT_PREDECESSOR}")
            touched = edge_tables.import_edges(conn, predecessor.graph_edges(data), clock.now_iso())
            self._graph_changes.update(edge_tables.refresh(conn, touched, self.labels))

    @property
    def edges_in_graph_file(self) -> bool:
        """Whether links are recorded in the earlier plugin's graph.json (its format, kept)."""
        return self.predecessor_layout and self._foreign_format(GRAPH_NAME) in (None, layout.FORMAT_PREDECESSOR) \
            and (file_stamp(self.scope.root / GRAPH_NAME) is None or
                 self._foreign_format(GRAPH_NAME) == layout.FORMAT_PREDECESSOR)
