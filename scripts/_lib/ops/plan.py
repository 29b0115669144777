"""A planned change to the memory files of one scope: shown as a diff (`--dry-run`) or applied.

The maintenance verbs (rename, move, archive, tag, bulk forms) first compute every file they
would write or remove, holding the scope lock, then either print the plan or apply it in
order inside `rollback.all_or_nothing`: a failure puts every file back. The order is chosen by
the caller so that a process killed between two steps leaves nothing lost: a new file is
written before the old one is removed.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..catalog.catalog import Catalog

from ..base import fsutil
from ..catalog import rollback
from ..model import frontmatter, memory


BATCH = 16  # above this many files, a plan's writes are made durable together (os.sync) at the end


class FileChange:
    """One memory file written (`after`) or removed (`after` None); `before` None: a new file."""

    __slots__ = ("path", "slug", "before", "after")

    def __init__(self, path: Path, slug: str, before: str | None, after: str | None) -> None:
        self.path, self.slug, self.before, self.after = path, slug, before, after

    def diff(self, root: Path) -> str:
        import difflib

        name = self.path.relative_to(root).as_posix() if self.path.is_relative_to(root) else str(self.path)
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), (self.after or "").splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{name}",
            tofile="/dev/null" if self.after is None else f"b/{name}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def rendered(item: memory.Memory, changes: dict[str, Any], body: str | None = None, *, touch: bool = True) -> str:
    """The text of `item` with its frontmatter changed (lossless or refused) and, given, a new body."""
    from ..base import clock

    if touch:
        changes = {**changes, "updated": clock.now_iso()}
    return frontmatter.rewrite(item.document, changes, body=body, quoted=memory.TIMESTAMP_FIELDS,
                               name=f"memory file {item.path}")


class Plan:
    """The file changes of one command in one scope, in the order they are applied."""

    def __init__(self, catalog: Catalog | None, root: Path | None = None) -> None:
        self.catalog = catalog  # None: a scope with no directory yet (a dry run only shows the plan)
        self.root = root if root is not None else catalog.scope.root  # type: ignore[union-attr]
        self.changes: list[FileChange] = []
        self._pending: dict[Path, FileChange] = {}

    def __bool__(self) -> bool:
        return bool(self.changes)

    def current(self, item: memory.Memory) -> memory.Memory:
        """`item` as this plan has it so far (a file changed twice is rewritten from its planned text)."""
        planned = self._pending.get(item.path)
        if planned is None or planned.after is None:
            return item
        return memory.parse(planned.after, item.path, item.scope)

    def rewrite(self, item: memory.Memory, changes: dict[str, Any], body: str | None = None, *,
                touch: bool = True) -> None:
        """Change `item`'s frontmatter (and body) in place; `touch` bumps `updated`."""
        item = self.current(item)
        self.write(item.path, item.slug, rendered(item, changes, body, touch=touch))

    def write(self, path: Path, slug: str, text: str) -> None:
        planned = self._pending.get(path)
        if planned is not None:
            planned.after = text
            return
        before = path.read_text(encoding="utf-8") if path.exists() else None
        if before == text:
            return
        change = FileChange(path, slug, before, text)
        self.changes.append(change)
        self._pending[path] = change

    def remove(self, path: Path, slug: str) -> None:
        planned = self._pending.get(path)
        if planned is not None:
            planned.after = None
            return
        change = FileChange(path, slug, path.read_text(encoding="utf-8"), None)
        self.changes.append(change)
        self._pending[path] = change

    def diff(self) -> str:
        return "".join(change.diff(self.root) for change in self.changes)

    def apply(self) -> None:
        """Write and remove the files in order, then tell the catalog (holding the lock, inside
        `rollback.all_or_nothing`): removals first, so a file that moves within the scope (into
        archive/) is recorded under its slug once the old path is forgotten."""
        catalog = self.catalog
        assert catalog is not None
        batched = len(self.changes) > BATCH  # one sync for the batch instead of an fsync per file
        for change in self.changes:
            if change.after is None:
                rollback.remove(change.path)
            elif batched:
                rollback.keep(change.path)
                fsutil.write_atomically(change.path, change.after, durable=False)
            else:
                rollback.write(change.path, change.after)
        if batched:
            os.sync()
        for change in self.changes:
            if change.after is None:
                catalog.forget(change.slug)
        catalog.record_all([memory.read_file(change.path, catalog.scope.name, root=catalog.scope.root)
                            for change in self.changes if change.after is not None])
