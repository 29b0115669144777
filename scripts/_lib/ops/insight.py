"""`memory stats` and `memory impact`: what the memory stores hold, and what depends on one memory.

Read-only: both work from the catalogs (no memory file is parsed), so they stay fast at
tens of thousands of memories.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..base import errors
from ..catalog import maintenance as queries, readable
from ..workspace.scopes import Workspace

TOP = 5  # how many hubs, oldest and stalest memories are listed


def stats(workspace: Workspace, scope: str | None = None, *, top: int = TOP) -> dict[str, Any]:
    """Counts by type and scope, hubs, sinks, orphans, links per memory, oldest and stalest."""
    by_scope: dict[str, int] = {}
    by_type: dict[str, int] = {}
    by_status: dict[str, int] = {}
    degrees: list[tuple[int, str, str]] = []  # (neighbours, scope, slug)
    sinks: list[dict[str, str]] = []
    orphans: list[dict[str, str]] = []
    dated: list[tuple[str, str, str, str]] = []  # (created, updated, scope, slug)
    for target, catalog in readable.catalogs(workspace, scope, report=True):
        entries = catalog.entries()
        by_scope[target.name] = len(entries)
        neighbours: dict[str, set[str]] = {}
        declaring: set[str] = set()
        for source, destination in queries.declared_pairs(catalog):
            declaring.add(source)
            neighbours.setdefault(source, set()).add(destination)
            neighbours.setdefault(destination, set()).add(source)
        for entry in entries:
            by_type[entry.type] = by_type.get(entry.type, 0) + 1
            by_status[entry.status] = by_status.get(entry.status, 0) + 1
            count = len(neighbours.get(entry.slug, ()))
            degrees.append((count, target.name, entry.slug))
            where = {"scope": target.name, "slug": entry.slug}
            if count == 0:
                orphans.append(where)
            elif entry.slug not in declaring:
                sinks.append(where)
            dated.append((entry.created, entry.updated, target.name, entry.slug))
    counts = sorted(count for count, _, _ in degrees)
    hubs = sorted(degrees, key=lambda item: (-item[0], item[2]))[:top]
    return {
        "total": len(degrees), "byScope": by_scope, "byType": dict(sorted(by_type.items())),
        "byStatus": dict(sorted(by_status.items())),
        "links": {"total": sum(counts) // 2, "perMemory": round(sum(counts) / len(counts), 2) if counts else 0,
                  "median": counts[len(counts) // 2] if counts else 0, "max": counts[-1] if counts else 0},
        "hubs": [{"scope": name, "slug": slug, "links": count} for count, name, slug in hubs if count],
        "sinks": sinks, "orphans": orphans,
        "oldest": [{"scope": name, "slug": slug, "created": created}
                   for created, _, name, slug in sorted(dated)[:top]],
        "stalest": [{"scope": name, "slug": slug, "updated": updated}
                    for _, updated, name, slug in sorted(dated, key=lambda item: (item[1], item[3]))[:top]],
    }


def impact(workspace: Workspace, slug: str, *, scope: str | None = None, depth: int = 3) -> dict[str, Any]:
    """What links to `slug` (transitively, to `depth`), and what would break if it went."""
    from .links import opened
    from .rename import mention_pattern

    if depth < 1:
        raise errors.InvalidInput(f"--depth {depth} is too small", "give 1 or more (1: direct links only)")
    with opened(workspace, slug, scope) as (found, catalog, entry):
        slug = entry.slug
        levels: list[list[str]] = []
        seen = {slug}
        frontier = [slug]
        for _ in range(depth):
            reached = queries.declarers_of_any(catalog, frontier)
            # with the graph's edges too: a store of the earlier plugin keeps its links in graph.json
            level = sorted({holder for holders in reached.values() for holder in holders}
                           .union(edge.target for done in frontier for edge in catalog.edges(done)
                                  if catalog.has_slug(edge.target)) - seen)
            if not level:
                break
            levels.append(level)
            seen.update(level)
            frontier = level
        # each dangling link is the holder's own, under the label it gives the edge towards `slug`
        dangling = [{"slug": holder, "label": next((edge.label for edge in catalog.edges(holder)
                                                    if edge.target == slug), "relates-to")}
                    for holder in (levels[0] if levels else [])]
        emptied = []
        for edge in catalog.edges(slug):
            neighbour = catalog.get(edge.target)
            if neighbour is not None and neighbour.type == "hub" and \
                    {other.target for other in catalog.edges(edge.target)} == {slug}:
                emptied.append(edge.target)
    tasks = []
    if found.name == "project":
        from ..tasks import taskstore

        pattern = mention_pattern(slug)
        try:
            store = taskstore.TaskStore(workspace)
            for task_id, task in store.entries.items():
                if pattern.search(str(task.get("title", ""))) or pattern.search(str(store.task(task_id))):
                    tasks.append(task_id)
        except (errors.Error, OSError) as exc:
            workspace.warn(f"tasks not checked: {getattr(exc, 'message', exc)}")
    return {"slug": slug, "scope": found.name, "title": entry.title, "type": entry.type,
            "linkedFrom": [{"depth": number, "slugs": level} for number, level in enumerate(levels, 1)],
            "wouldBreak": {"danglingLinks": dangling, "emptiedHubs": sorted(emptied), "tasks": tasks}}
