"""Selecting many memories by filter, and the bulk forms of link and delete.

(Bulk move, archive and tag are in promote and curate, which plan whole scopes at once.)"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..catalog.catalog import Entry
    from ..workspace.scopes import Workspace
    from .store import Filters

from ..base import errors
from ..catalog.catalog import open_catalog


def select(workspace: Workspace, filters: Filters) -> list[Entry]:
    """The memories matching `filters` in every readable scope (or one), each once per scope."""
    from .store import check_filters, visible_entries

    return visible_entries(workspace, check_filters(filters, workspace))


class Outcome:
    """What a bulk link or delete did (or would do) to each selected memory."""

    def __init__(self, action: str, dry_run: bool) -> None:
        self.action, self.dry_run = action, dry_run
        self.changed: list[tuple[str, str]] = []    # (scope, slug)
        self.unchanged: list[tuple[str, str]] = []

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "dryRun": self.dry_run, "count": len(self.changed),
                "changed": [{"scope": scope, "slug": slug} for scope, slug in self.changed],
                "unchanged": [{"scope": scope, "slug": slug} for scope, slug in self.unchanged]}


def link_many(workspace: Workspace, entries: list[Entry], target: str, *, label: str, inverse: str | None = None,
              dry_run: bool = False) -> Outcome:
    """Link every selected memory to `target` (each in its own locked step, both directions).
    Refused before any change when `target` is missing from a selected memory's scope."""
    from . import links

    links.check_label(label)
    if inverse is not None:
        links.check_label(inverse, "inverse label")
    result = Outcome("link", dry_run)
    for name in dict.fromkeys(entry.scope for entry in entries):
        with open_catalog(workspace, workspace.scope(name)) as catalog:
            if catalog is None or not catalog.has_slug(target):
                raise errors.NotFound(f"no memory {target!r} in the {name} scope, where selected memories are",
                                      f"links join memories of one scope: add --scope for the scope of {target}")
            for entry in entries:
                if entry.scope == name and entry.slug != target:
                    already = label in links.current_labels(catalog, entry.slug, target)
                    (result.unchanged if already else result.changed).append((name, entry.slug))
    if not dry_run:
        for name, slug in list(result.changed):
            links.link(workspace, slug, target, label=label, inverse=inverse, scope=name)
    return result


def delete_many(workspace: Workspace, entries: list[Entry], *, dry_run: bool = False) -> Outcome:
    """Delete every selected memory (each as `memory delete` does: into the trash, links removed)."""
    from .store import delete

    result = Outcome("delete", dry_run)
    for entry in entries:
        if not dry_run:
            delete(workspace, entry.slug, scope=entry.scope)
        result.changed.append((entry.scope, entry.slug))
    return result
