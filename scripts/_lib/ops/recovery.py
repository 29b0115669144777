"""`memory restore` and `memory trash`: bring back what the journal keeps (see journal.py).

A restored memory is the file exactly as it was last seen, at the path it had; a memory that
`memory delete` removed also gets its links back (to the memories still there).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..catalog.journal import Kept
    from ..workspace.scopes import Scope, Workspace

from ..base import errors, fsutil
from ..model import memory
from ..catalog.journal import CHANGED, DELETED, TRASHED
from ..catalog.journal import of as journal_of


class Restored:
    """One memory brought back."""

    def __init__(self, scope: str, item: Kept, path: str, relinked: list[str]) -> None:
        self.scope, self.item, self.path, self.relinked = scope, item, path, relinked

    def as_json(self) -> dict[str, Any]:
        return {"slug": self.item.slug, "scope": self.scope, "kind": self.item.kind, "path": self.path,
                "relinked": self.relinked}


def _scopes(workspace: Workspace, scope: str | None) -> list[Scope]:
    return [target for target in workspace.readable_scopes(scope) if target.root_writable]


def kept(workspace: Workspace, scope: str | None = None) -> list[tuple[str, Kept]]:
    """(scope, kept memory) for everything the journal keeps: the trash and what went missing."""
    journal = journal_of(workspace)
    return [(target.name, item) for target in _scopes(workspace, scope) for item in journal.kept(target.root)]


def restore(workspace: Workspace, slug: str | None = None, *, scope: str | None = None,
            dry_run: bool = False) -> list[Restored]:
    """Bring back `slug` (the newest copy the journal keeps: trashed, deleted or changed outside the
    tool), or with no slug every memory deleted outside the tool whose place is free."""
    journal = journal_of(workspace)
    chosen: list[tuple[Scope, Kept]] = []
    for target in _scopes(workspace, scope):
        if slug is not None:
            chosen += [(target, item) for item in journal.kept(target.root, slug=memory.check_lookup_slug(slug))[:1]]
        else:
            latest: dict[str, Kept] = {}
            for item in journal.kept(target.root, kinds=(DELETED,)):
                latest.setdefault(item.relpath, item)
            chosen += [(target, item) for item in latest.values() if not (target.root / item.relpath).exists()]
    if slug is not None and not chosen:
        raise errors.NotFound(f"the journal keeps no earlier copy of {slug!r}",
                              "`memory trash` lists what can be restored")
    if slug is not None:
        chosen = sorted(chosen, key=lambda pair: -pair[1].at)[:1]
    if dry_run:
        return [Restored(target.name, item, str(target.root / item.relpath), []) for target, item in chosen]
    return [_restore_one(workspace, journal, target, item) for target, item in chosen]


def _restore_one(workspace: Workspace, journal: Any, target: Scope, item: Kept) -> Restored:
    from . import links
    from ..catalog.catalog import open_catalog

    path = target.root / item.relpath
    if fsutil.escapes(path, target.root) is not None or ".." in item.relpath.split("/"):
        raise errors.InvalidInput(f"{item.relpath} would lead out of the {target.name} memory directory",
                                  "restore it by hand from `memory trash --json`")
    data = journal.content(item)
    with open_catalog(workspace, target, create=True) as catalog:
        assert catalog is not None
        with catalog.locked():
            holder = catalog.get(item.slug)
            if holder is not None and holder.relpath != item.relpath:
                raise errors.Conflict(f"another memory now has the slug {item.slug!r} ({holder.relpath})",
                                      f"rename or delete it first, then `memory restore {item.slug}`")
            if path.exists():
                if item.kind != CHANGED:
                    raise errors.Conflict(f"{item.relpath} exists again",
                                          f"delete it first (`memory delete {item.slug}`: it goes to the trash)")
                # what is there now is kept too: restoring twice brings it back
                journal.gone(target.root, [item.relpath], ours=True, replaced=True)
            fsutil.write_atomically(path, data)
            catalog.record(memory.read_file(path, target.name, root=target.root))
            catalog.export()
    relinked = []
    if item.kind == TRASHED:
        for other, label in item.edges:
            try:
                links.link(workspace, item.slug, other, label=label, scope=target.name)
                relinked.append(f"{label} {other}")
            except errors.Error:
                continue  # that memory is gone too, or the link is back already
    journal.discard([item])
    return Restored(target.name, item, str(path), relinked)


def purge(workspace: Workspace, slugs: list[str], *, scope: str | None = None) -> int:
    """Forget trashed memories for good: the given slugs, or with none the whole trash."""
    journal = journal_of(workspace)
    gone = []
    for target in _scopes(workspace, scope):
        for item in journal.kept(target.root, kinds=(TRASHED,)):
            if not slugs or item.slug in slugs:
                gone.append(item)
    return journal.discard(gone)
