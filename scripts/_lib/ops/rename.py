"""`memory rename OLD NEW`: a memory changes its slug and every link to it follows.

Rewritten, holding the scope lock: the memory's file (now `NEW.md`, with OLD appended to its
`previous-slugs`), and in every memory of the scope that declares a link to it: `links`,
`link-labels`, `related:`, `supersedes`/`superseded-by` and wiki links `[[OLD]]`,
`[[OLD|text]]`, `[[OLD#section]]`. graph.json and index.json follow from the files. Tasks of
the project that mention OLD are rewritten too.

Order, so that a process killed at any moment loses nothing: NEW.md is written first, then
the memories linking to it, and OLD.md is removed last. Running the same rename again
finishes a rename that was interrupted (NEW already names OLD among its previous slugs).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from . import lookup
from ..base import errors
from ..catalog import maintenance as queries
from ..catalog import rollback
from ..catalog.catalog import NOT_MEMORIES, Catalog, open_catalog
from ..model import memory, predecessor
from ..workspace.scopes import Workspace
from . import links, relink
from .lookup import locate
from .plan import Plan, rendered

PREVIOUS_FIELD = "previous-slugs"


class Renamed:
    """What `memory rename` did (or, with dry_run, would do)."""

    def __init__(self, old: str, new: str, scope: str, plan: Plan, referrers: list[str], tasks: list[str],
                 dry_run: bool) -> None:
        self.old, self.new, self.scope, self.plan = old, new, scope, plan
        self.referrers, self.tasks, self.dry_run = referrers, tasks, dry_run

    def as_json(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "scope": self.scope, "dryRun": self.dry_run,
                "rewritten": self.referrers, "tasks": self.tasks,
                "files": [str(change.path) for change in self.plan.changes]}


def check_new_slug(new: str) -> str:
    new = memory.check_slug(new.strip() if isinstance(new, str) else new)
    if f"{new}.md" in NOT_MEMORIES:
        raise errors.InvalidInput(f"slug {new!r} is reserved: {new}.md is not read as a memory",
                                  "choose another name, e.g. learning-" + new)
    return new


def rename(workspace: Workspace, old: str, new: str, *, scope: str | None = None,
           dry_run: bool = False) -> Renamed:
    """Rename memory `old` to `new` in its scope; refused when `new` is invalid or taken."""
    from ..vectors import backfill  # only after a change: embedding needs a model
    from .store import refresh_entrypoint

    memory.check_lookup_slug(old)
    new = check_new_slug(new)
    if new == old:
        raise errors.InvalidInput(f"{old!r} already has that name", "give a different NEW slug")
    found, _ = locate(workspace, old, scope)
    with open_catalog(workspace, found, refresh=False) as catalog:
        assert catalog is not None
        with catalog.locked(), rollback.all_or_nothing(catalog):
            plan, referrers, memory_type = _plan(catalog, old, new)
            if not dry_run:
                stored_edges = catalog.edges(old) if catalog.edges_in_graph_file else []
                plan.apply()
                if catalog.edges_in_graph_file:
                    _rename_in_graph_file(catalog, old, new, stored_edges)
                links.drop_embedding(catalog, old)
                catalog.export()
        if not dry_run:
            backfill.after_change(workspace, catalog, [new])
    tasks = rename_in_tasks(workspace, old, new, dry_run=dry_run) if found.name == "project" else []
    if not dry_run:
        refresh_entrypoint(workspace, found.name, {memory_type})
    return Renamed(old, new, found.name, plan, referrers, tasks, dry_run)


def _plan(catalog: Catalog, old: str, new: str) -> tuple[Plan, list[str], str]:
    scope = catalog.scope
    entry = catalog.get(old)
    if entry is None:
        raise lookup.absent(scope, old)
    item = memory.read_file(entry.path, scope.name, root=scope.root)
    target = entry.path.parent / f"{new}.md"
    plan = Plan(catalog)
    holder = catalog.get(new)
    if holder is not None or target.exists():
        if holder is None or old not in _previous(holder.path, scope) or \
                not _renamed_copy(holder.path, item, scope.root):
            raise errors.Conflict(f"a memory {new!r} already exists in {scope.name} scope",
                                  f"choose another name, or rename that one first (memory rename {new} ...)")
        # an interrupted rename: NEW.md is written; finish the links and remove OLD.md
    else:
        previous = [slug for slug in _previous(entry.path, scope) if slug != new]
        changes: dict[str, Any] = {PREVIOUS_FIELD: [*previous, old] if old not in previous else previous}
        if "id" in item.fields:
            changes["id"] = new
        plan.write(target, new, rendered(item, changes))
    referrers = [slug for slug in queries.declarers(catalog, old) if slug != new]
    for slug in referrers:
        holder_entry = catalog.get(slug)
        if holder_entry is None:
            continue
        referrer = memory.read_file(holder_entry.path, scope.name, root=scope.root)
        body = relink.rename_in_text(referrer.body, old, new)
        fields = relink.field_changes(referrer.fields, old, new)
        if fields or body != referrer.body:
            plan.rewrite(referrer, fields, body)
    if entry.path != target:
        plan.remove(entry.path, old)
    return plan, referrers, entry.type


def _renamed_copy(path: Any, item: memory.Memory, root: Any) -> bool:
    """Whether the file at `path` is `item` as a rename writes it (only its name fields differ):
    a memory written later under a slug a rename freed is not the rename's unfinished half."""
    renamed = memory.read_file(path, item.scope, root=root)
    name_fields = {PREVIOUS_FIELD, "id", "updated"}
    return renamed.body == item.body and \
        {key: value for key, value in renamed.fields.items() if key not in name_fields} == \
        {key: value for key, value in item.fields.items() if key not in name_fields}


def _previous(path: Any, scope: Any) -> list[str]:
    try:
        value = memory.read_file(path, scope.name, root=scope.root).fields.get(PREVIOUS_FIELD)
    except (errors.Error, OSError):
        return []
    return [slug for slug in value if isinstance(slug, str)] if isinstance(value, list) else []


def _rename_in_graph_file(catalog: Catalog, old: str, new: str, stored: list[Any]) -> None:
    """In a store whose links live in the earlier plugin's graph.json, the node and its edges
    take the new name (each edge stored from the renamed node; the graph derives the inverse)."""
    edits = predecessor.GraphEdits()
    edits.remove_node(old)
    for edge in stored:
        edits.add_edge(new, edge.target, edge.label)
    entry = catalog.get(new)
    if entry is not None:
        edits.set_node(new, type=entry.extra.get("declared-type") or entry.type, title=entry.title)
    catalog.patch_graph_file(edits)


def mention_pattern(slug: str) -> re.Pattern[str]:
    """`slug` as a whole word of a text (not part of a longer slug)."""
    return re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(slug) + r"(?![A-Za-z0-9_]|-[A-Za-z0-9])")


def rename_in_tasks(workspace: Workspace, old: str, new: str, *, dry_run: bool = False) -> list[str]:
    """Rewrite the project's tasks whose text mentions `old`; returns their ids."""
    from ..tasks import taskstore

    store = taskstore.TaskStore(workspace)
    if not store.tasks_dir.is_dir():
        return []
    pattern = mention_pattern(old)
    changed = []
    try:
        with store.mutation():
            for task_id in list(store.entries):
                task = store.task(task_id)
                patch = {}
                for key in taskstore.PATCHABLE:
                    value = task.get(key)
                    rewritten = _replace_strings(value, pattern, new)
                    if rewritten != value:
                        patch[key] = rewritten
                if patch:
                    changed.append(task_id)
                    if not dry_run:
                        store.update(task_id, patch)
    except (errors.Error, OSError) as exc:
        workspace.warn(f"tasks mentioning {old} were not rewritten: {getattr(exc, 'message', exc)}")
    return changed


def _replace_strings(value: Any, pattern: re.Pattern[str], new: str) -> Any:
    if isinstance(value, str):
        return pattern.sub(new, value)
    if isinstance(value, list):
        return [_replace_strings(item, pattern, new) for item in value]
    return value
