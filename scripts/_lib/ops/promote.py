"""`memory move`: a memory leaves its scope and arrives in another, with its provenance.

The arriving file carries `promoted-from: <scope>:<slug>` and `promoted-at`. Links join
memories of one scope, so a link to a memory that stays behind cannot come along: it is
reported, kept as a sentence in the moved memory's body (label and slug, nothing lost), and
removed from the memories left behind (their `links`, `link-labels`, `related:`; their wiki
links become plain text), so both graphs stay symmetric. Memories moved together keep the
links between them. `copy` leaves the original and its links untouched.

Both scopes are locked, in scope order (no two movers wait on each other). The new file is
written first and the original removed last, so a process killed in between leaves a copy in
each scope, never none; running the move again finishes it (the target's copy names its
origin in `promoted-from`).
"""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

    from ..catalog.catalog import Catalog, Entry

from . import lookup
from ..base import clock, errors, redact
from ..catalog import maintenance as queries
from ..catalog import rollback
from ..catalog.catalog import open_catalog
from ..model import memory, predecessor
from ..workspace.scopes import SCOPE_ORDER, Scope, Workspace
from . import links, relink
from .lookup import locate
from .plan import Plan, rendered

PROMOTED_FROM, PROMOTED_AT = "promoted-from", "promoted-at"


class Moved:
    """One memory moved (or, in a dry run, that would be)."""

    def __init__(self, slug: str, type: str, source: str, target: str, path: str, left: list[tuple[str, str]],
                 unlinked: list[str], resumed: bool = False) -> None:
        self.slug, self.type, self.source, self.target, self.path = slug, type, source, target, path
        self.left = left            # (slug, label) links that stayed behind as text
        self.unlinked = unlinked    # memories of the source scope whose links to it were removed
        self.resumed = resumed      # an interrupted move finished

    def as_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "from": self.source, "to": self.target, "path": self.path,
                "linksLeftBehind": [{"slug": slug, "label": label} for slug, label in self.left],
                "unlinked": self.unlinked, "resumed": self.resumed}


class Moves:
    """What one `memory move` did: the memories and the plans of both scopes."""

    def __init__(self, target: str, copy: bool, dry_run: bool) -> None:
        self.target, self.copy, self.dry_run = target, copy, dry_run
        self.moved: list[Moved] = []
        self.plans: list[Plan] = []

    def diff(self) -> str:
        return "".join(plan.diff() for plan in self.plans)

    def as_json(self) -> dict[str, Any]:
        return {"to": self.target, "copy": self.copy, "dryRun": self.dry_run, "count": len(self.moved),
                "moved": [item.as_json() for item in self.moved]}


def check_target(workspace: Workspace, to: str) -> Scope:
    if to not in SCOPE_ORDER:
        raise errors.InvalidInput(f"unknown scope {to!r}", "use one of: " + ", ".join(SCOPE_ORDER))
    target = workspace.scope(to)
    if not target.root_writable:
        raise errors.ScopeUnavailable(f"the {to} scope ({target.root}) is read-only for you",
                                      "ask its administrator to add the memory, or move it elsewhere")
    return target


def move(workspace: Workspace, slug: str, to: str, *, scope: str | None = None, copy: bool = False,
         dry_run: bool = False) -> Moves:
    """Move (or copy) one memory into scope `to`."""
    memory.check_lookup_slug(slug)
    target = check_target(workspace, to)
    found, _ = locate(workspace, slug, scope)
    if found.name == target.name:
        raise errors.InvalidInput(f"{slug!r} is already in the {to} scope",
                                  "give another --to, or --scope to pick the copy in another scope")
    result = Moves(to, copy, dry_run)
    _move_group(workspace, found, [slug], target, result)
    return result


def move_many(workspace: Workspace, entries: Iterable[Entry], to: str, *, copy: bool = False,
              dry_run: bool = False) -> Moves:
    """Move the given memories (several scopes possible) into scope `to`; those already there stay."""
    target = check_target(workspace, to)
    by_scope: dict[str, list[str]] = {}
    for entry in entries:
        if entry.scope != target.name:
            by_scope.setdefault(entry.scope, []).append(entry.slug)
    result = Moves(to, copy, dry_run)
    for name in SCOPE_ORDER:
        if by_scope.get(name):
            _move_group(workspace, workspace.scope(name), by_scope[name], target, result)
    return result


def _move_group(workspace: Workspace, source: Scope, slugs: list[str], target: Scope, result: Moves) -> None:
    """Move `slugs` of one source scope together (links among them come along)."""
    from ..vectors import backfill  # only after a change: embedding needs a model
    from .store import refresh_entrypoint

    dry_run = result.dry_run
    with contextlib.ExitStack() as stack:
        source_catalog = stack.enter_context(open_catalog(workspace, source, refresh=False))
        if source_catalog is None:
            raise errors.NotFound(f"no memory {slugs[0]!r} in {source.name} scope")
        opened = open_catalog(workspace, target, refresh=False) if dry_run else \
            open_catalog(workspace, target, create=True, refresh=False)
        target_catalog = stack.enter_context(opened)
        ordered = sorted([(source.name, source_catalog), (target.name, target_catalog)],
                         key=lambda pair: SCOPE_ORDER.index(pair[0]))
        with contextlib.ExitStack() as locks:
            for _, catalog in ordered:
                if catalog is not None:
                    locks.enter_context(catalog.locked())
            target_plan = Plan(target_catalog, target.root)
            source_plan = Plan(source_catalog)
            moved = _plan(workspace, source_catalog, target_catalog, target, slugs, target_plan,
                          None if result.copy else source_plan)
            result.moved += moved
            result.plans += [target_plan, source_plan]
            if dry_run:
                return
            assert target_catalog is not None
            with rollback.all_or_nothing(target_catalog):
                target_plan.apply()
                target_catalog.export()
                if not result.copy:
                    with rollback.all_or_nothing(source_catalog):
                        _leave(source_catalog, source_plan, [item.slug for item in moved])
        backfill.after_change(workspace, target_catalog, [item.slug for item in moved if not item.resumed])
    types = {item.type for item in result.moved}
    for name in (source.name, target.name):
        refresh_entrypoint(workspace, name, types)


def _leave(catalog: Catalog, plan: Plan, slugs: list[str]) -> None:
    """The source side of a move: links to the moved memories removed, their files last."""
    stored_in_graph_file = catalog.edges_in_graph_file
    plan.apply()
    if stored_in_graph_file:
        edits = predecessor.GraphEdits()
        for slug in slugs:
            edits.remove_node(slug)
        catalog.patch_graph_file(edits)
    for slug in slugs:
        links.drop_embedding(catalog, slug)
    catalog.export()


def _plan(workspace: Workspace, source: Catalog, target: Catalog | None, target_scope: Scope, slugs: list[str],
          target_plan: Plan, source_plan: Plan | None) -> list[Moved]:
    from .store import new_memory_path

    moving = set(slugs)
    now = clock.now_iso()
    moved = []
    for slug in slugs:
        entry = source.get(slug)
        if entry is None:
            raise lookup.absent(source.scope, slug)
        origin = f"{source.scope.name}:{slug}"
        item = memory.read_file(entry.path, source.scope.name, root=source.scope.root)
        left = [(edge.target, edge.label) for edge in source.edges(slug) if edge.target not in moving]
        left += [(ref, relink.MENTION) for ref in item.references
                 if ref not in moving and ref not in {slug for slug, _ in left}]
        resumed = False
        if target is not None and target.has_slug(slug):
            arrived = target.get(slug)
            # an interrupted move (the copy arrived, the original is still here) is finished only
            # when the copy is what this move would write: a copy taken with --copy and changed
            # since, or an original changed since, is a conflict, never silently replaced
            if arrived is None or arrived.extra.get(PROMOTED_FROM) != origin or source_plan is None or \
                    not _is_arrival_of(workspace, arrived.path, item, left, origin, target_scope.name):
                raise errors.Conflict(
                    f"a memory {slug!r} already exists in the {target_scope.name} scope",
                    f"rename one of them first: memory rename {slug} NEW --scope {source.scope.name}")
            resumed = True
        path = (new_memory_path(target, slug, item.type) if target is not None
                else target_scope.root / f"{slug}.md")
        if not resumed:
            if path.exists():
                raise errors.Conflict(f"{path} already exists in the {target_scope.name} scope",
                                      f"rename it, or the memory: memory rename {slug} NEW --scope {source.scope.name}")
            target_plan.write(path, slug, _arriving_text(workspace, item, left, origin, now, target_scope.name))
        unlinked = []
        if source_plan is not None:
            for holder in queries.declarers(source, slug):
                if holder in moving:
                    continue
                holder_entry = source.get(holder)
                if holder_entry is None:
                    continue
                other = source_plan.current(memory.read_file(holder_entry.path, source.scope.name,
                                                             root=source.scope.root))
                changes, body = relink.drop_links(other.fields, other.body, [slug])
                if changes or body != other.body:
                    source_plan.rewrite(other, changes, body)
                    unlinked.append(holder)
        moved.append(Moved(slug, item.type, source.scope.name, target_scope.name, str(path), left, unlinked, resumed))
    if source_plan is not None:
        for done in moved:  # originals last: a kill before this leaves a copy in each scope
            entry = source.get(done.slug)
            assert entry is not None
            source_plan.remove(entry.path, done.slug)
    return moved


def _is_arrival_of(workspace: Workspace, path: Any, item: memory.Memory, left: list[tuple[str, str]],
                   origin: str, target_name: str) -> bool:
    """Whether the file at `path` is exactly what moving `item` wrote (at its `promoted-at`)."""
    text = path.read_text(encoding="utf-8")
    promoted_at = memory.parse(text, path, target_name).fields.get(PROMOTED_AT)
    return isinstance(promoted_at, str) and \
        text == _arriving_text(workspace, item, left, origin, promoted_at, target_name)


def _arriving_text(workspace: Workspace, item: memory.Memory, left: list[tuple[str, str]], origin: str, now: str,
                   target_name: str) -> str:
    """The moved memory's file in its new scope: provenance added, links that stay behind
    turned into a sentence of the body, secrets redacted (a project memory is shared through git)."""
    changes, body = relink.drop_links(item.fields, item.body, [slug for slug, _ in left])
    if left:
        note = relink.left_behind_note(left, item.scope, target_name)
        newline = item.document.newline
        body = body.rstrip("\r\n") + newline + newline + note + newline
    body = redact.clean(workspace, body)
    cleaned = redact.clean_values(workspace, item.fields)
    for key, value in cleaned.items():
        if key not in changes and value != item.fields.get(key):
            changes[key] = value
    if "scope" in item.fields:  # the earlier plugin's files name their scope
        changes["scope"] = target_name
    if not item.fields.get("updated"):  # the earlier plugin's files may lack it; ours never do
        changes["updated"] = item.updated or now
    if item.archived and item.fields.get("status") != "archived":
        changes["status"] = "archived"  # archived by its folder, which it leaves
    changes.update({PROMOTED_FROM: origin, PROMOTED_AT: now})
    return rendered(item, changes, body, touch=False)
