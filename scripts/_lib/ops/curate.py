"""`memory archive` / `--undo`, `memory tag` / `untag`: one memory, or many selected by filter.

Each scope's memories are changed under one hold of its lock, planned first (a bad tag, or an
untag that would leave a memory with none, refuses the whole command before anything is
written) and applied inside `rollback.all_or_nothing`, with one export at the end.

Archiving sets `status: archived` (undo: active). In a store of the earlier plugin that has an
archive/ folder, a memory is archived by moving its file there unchanged, as that plugin does
(undo: back to permanent/, or temporary/ for a breadcrumb).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

    from ..catalog.catalog import Catalog, Entry

from . import lookup
from ..base import errors, redact
from ..catalog import rollback
from ..catalog.catalog import open_catalog
from ..model import frontmatter, memory
from ..workspace import layout
from ..workspace.scopes import SCOPE_ORDER, Workspace
from .lookup import locate
from .plan import Plan, rendered

ARCHIVED, ACTIVE = "archived", "active"


class Curated:
    """What a curation command changed (or would), per memory."""

    def __init__(self, action: str, dry_run: bool) -> None:
        self.action, self.dry_run = action, dry_run
        self.changed: list[tuple[str, str]] = []    # (scope, slug)
        self.unchanged: list[tuple[str, str]] = []  # already as asked
        self.plans: list[Plan] = []

    def diff(self) -> str:
        return "".join(plan.diff() for plan in self.plans)

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "dryRun": self.dry_run, "count": len(self.changed),
                "changed": [{"scope": scope, "slug": slug} for scope, slug in self.changed],
                "unchanged": [{"scope": scope, "slug": slug} for scope, slug in self.unchanged]}


def one(workspace: Workspace, slug: str, scope: str | None = None) -> dict[str, list[str]]:
    """The selection of a single memory: {scope: [slug]}."""
    found, _ = locate(workspace, slug, scope)
    return {found.name: [slug]}


def grouped(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """A filter's selection as {scope: [slugs]}."""
    selection: dict[str, list[str]] = {}
    for entry in entries:
        selection.setdefault(entry.scope, []).append(entry.slug)
    return selection


def archive(workspace: Workspace, selection: dict[str, list[str]], *, undo: bool = False,
            dry_run: bool = False) -> Curated:
    """Archive the selected memories (or, with `undo`, make them active again)."""
    def edit(plan: Plan, item: memory.Memory, catalog: Catalog) -> bool:
        if (item.status == ARCHIVED) != undo:
            return False  # already as asked
        status_change = {"status": frontmatter.DELETE if undo else ARCHIVED}
        if catalog.predecessor_layout and layout.ARCHIVE_DIR in layout.memory_subdirs(catalog.scope.root):
            if not undo:  # the earlier plugin archives by folder, the file unchanged
                _move_within(plan, item, catalog.scope.root / layout.ARCHIVE_DIR / item.path.name,
                             item.document.text())
                return True
            if item.archived:
                from .store import new_memory_path

                text = rendered(item, status_change) if item.fields.get("status") == ARCHIVED \
                    else item.document.text()
                _move_within(plan, item, new_memory_path(catalog, item.slug, item.type), text)
                return True
        plan.rewrite(item, status_change)
        return True

    return _curate(workspace, "unarchive" if undo else "archive", selection, edit, dry_run)


def _move_within(plan: Plan, item: memory.Memory, destination: Any, text: str) -> None:
    if destination.exists():
        raise errors.Conflict(f"{destination} already exists", "move or remove that file first, then retry")
    plan.write(destination, item.slug, text)
    plan.remove(item.path, item.slug)


def tag(workspace: Workspace, selection: dict[str, list[str]], tags: str | list[str], *, remove: bool = False,
        dry_run: bool = False) -> Curated:
    """Add (or, with `remove`, take away) tags, checked and normalised as `memory write` does."""
    # a tag to remove is matched as written, ignoring case: stores of the earlier plugin hold
    # free-form tags (`UX`, `node.js`) that no longer pass the check for a tag to add
    wanted = _removal_names(tags) if remove else memory.parse_tags(tags)
    if not wanted:
        raise errors.InvalidInput("no tags given", "e.g. memory tag SLUG auth,api")
    for name in wanted:
        redact.require_clean(name, "tag", "tags name topics: remove the credential")

    def edit(plan: Plan, item: memory.Memory, catalog: Catalog) -> bool:
        current = list(item.tags)
        if remove:
            kept = [name for name in current if name.casefold() not in wanted]
            if kept == current:
                return False
            if not kept:
                raise errors.InvalidInput(f"{item.slug} would have no tags left",
                                          "a memory needs at least one tag: add another first (memory tag)")
            plan.rewrite(item, {"tags": kept})
            return True
        present = {name.casefold() for name in current}
        added = current + [name for name in wanted if name not in present]
        if added == current:
            return False
        plan.rewrite(item, {"tags": added})
        return True

    return _curate(workspace, "untag" if remove else "tag", selection, edit, dry_run)


def _removal_names(tags: str | list[str]) -> list[str]:
    """The tags named for removal, casefolded: split on commas, blanks dropped."""
    names = [part.strip().casefold() for piece in ([tags] if isinstance(tags, str) else tags)
             for part in piece.split(",")]
    if not any(names):
        raise errors.InvalidInput("empty tags", "give at least one tag, e.g. --tags auth,api")
    return [name for name in dict.fromkeys(names) if name]


def _curate(workspace: Workspace, action: str, selection: dict[str, list[str]], edit: Any,
            dry_run: bool) -> Curated:
    result = Curated(action, dry_run)
    scopes = [workspace.scope(name) for name in SCOPE_ORDER if selection.get(name)]
    for scope in scopes if len(scopes) > 1 or dry_run else []:  # a refusal anywhere changes nothing anywhere
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is None:
                continue
            with catalog.locked():
                result.plans.append(_plan(catalog, selection[scope.name], edit, result))
    if dry_run or (result.plans and not any(result.plans)):
        return result
    result.changed, result.unchanged, result.plans = [], [], []
    for scope in scopes:
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is None:
                continue
            with catalog.locked(), rollback.all_or_nothing(catalog):
                plan = _plan(catalog, selection[scope.name], edit, result)
                result.plans.append(plan)
                if plan:
                    plan.apply()
                    catalog.export()
    return result


def _plan(catalog: Catalog, slugs: list[str], edit: Any, result: Curated) -> Plan:
    plan = Plan(catalog)
    scope = catalog.scope
    for slug in slugs:
        entry = catalog.get(slug)
        if entry is None:
            raise lookup.absent(scope, slug)
        item = memory.read_file(entry.path, scope.name, root=scope.root)
        (result.changed if edit(plan, item, catalog) else result.unchanged).append((scope.name, slug))
    return plan
