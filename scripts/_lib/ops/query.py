"""`memory query`: the query engine of the memory graph over every readable scope.

Filters (--type, --tag, --status, --since) combine with one selector: --id (one node),
--related (links, backlinks and tag overlap, ranked), --search (BM25 full text) or
--recent N (newest first; the default: the 5 newest, or every match when filters are given).
"""

from __future__ import annotations

import time

from ..base import errors
from ..model import memory
from . import store
from ..catalog.catalog import Entry, open_catalog
from ..catalog import queries
from ..workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("summary", "json", "full")
DEFAULT_RECENT = 5
LINK_WEIGHT = 3.0  # a direct link counts like three shared tags


class Node:
    """A query result: the entry, its score for ranked queries, and why it matched."""

    __slots__ = ("entry", "score", "reason")

    def __init__(self, entry: Entry, score: float = 0.0, reason: str = "") -> None:
        self.entry, self.score, self.reason = entry, score, reason

    def as_json(self, *, full: bool = False) -> dict[str, Any]:
        entry = self.entry
        data: dict[str, Any] = {"id": entry.slug, "type": entry.type, "title": entry.title, "scope": entry.scope,
                                "status": entry.status, "tags": entry.tags, "created": entry.created,
                                "updated": entry.updated, "summary": memory.summary_of_file(entry.path, width=200),
                                "path": str(entry.path)}
        if self.score:
            data["score"] = round(self.score, 3)
        if self.reason:
            data["reason"] = self.reason
        if full:
            try:
                data["content"] = memory.read_file(entry.path, entry.scope, root=entry.root).content
            except errors.Error:
                data["content"] = None
        return data


class Result:
    def __init__(self, nodes: list[Node], elapsed_ms: float) -> None:
        self.nodes, self.elapsed_ms = nodes, elapsed_ms


def run(workspace: Workspace, *, node_id: str | None = None, related: str | None = None, text: str | None = None,
        recent: int | None = None, filters: store.Filters | None = None, limit: int | None = None) -> Result:
    """Answer one query; `filters` narrow every selector."""
    started = time.perf_counter()
    filters = store.check_filters(filters or store.Filters(), workspace)
    chosen = [name for name, value in (("--id", node_id), ("--related", related), ("--search", text)) if value]
    if len(chosen) > 1:
        raise errors.InvalidInput(f"use one of {', '.join(chosen)} at a time", "combine one of them with filters")
    if node_id:
        nodes = [_by_id(workspace, node_id)]
    elif related:
        nodes = _related(workspace, related, filters)
    elif text:
        nodes = [Node(hit.entry, hit.score, "matches the search")
                 for hit in store.search_memories(workspace, text, filters, limit=limit or 20)]
    else:
        narrowed = filters.types or filters.tag or filters.status or filters.since or filters.scope
        # --recent N caps; filters alone (`--tag auth`, `--type decision`) list every match, newest first
        count = recent if recent is not None else (limit if (limit or narrowed) else DEFAULT_RECENT)
        nodes = [Node(entry) for entry in store.list_memories(workspace, filters, sort="updated", limit=count)]
    if limit is not None:
        nodes = nodes[:limit]
    return Result(nodes, (time.perf_counter() - started) * 1000)


def _by_id(workspace: Workspace, slug: str) -> Node:
    found_scope, _ = store.locate(workspace, slug)
    with open_catalog(workspace, found_scope) as catalog:
        entry = catalog.get(slug) if catalog else None
    if entry is None:
        raise errors.NotFound(f"no memory {slug!r}", "run `memory list` to see what exists")
    return Node(entry)


def _related(workspace: Workspace, slug: str, filters: store.Filters) -> list[Node]:
    """Linked memories first (both directions), then memories sharing tags, ranked."""
    found_scope, _ = store.locate(workspace, slug)
    scores: dict[str, tuple[float, list[str]]] = {}
    with open_catalog(workspace, found_scope) as catalog:
        assert catalog is not None
        origin = catalog.get(slug)
        if origin is None:
            raise errors.NotFound(f"no memory {slug!r}")
        for edge in catalog.edges(slug):
            score, reasons = scores.get(edge.target, (0.0, []))
            scores[edge.target] = (score + LINK_WEIGHT, reasons + [edge.label])
        for tag in origin.tags:
            for other in queries.tagged(catalog, tag, 500):
                if other != slug:
                    score, reasons = scores.get(other, (0.0, []))
                    scores[other] = (score + 1.0, reasons + [f"#{tag}"])
        nodes = []
        for other, (score, reasons) in scores.items():
            entry = catalog.get(other)
            if entry is not None and filters.accepts(entry):
                nodes.append(Node(entry, score, ", ".join(dict.fromkeys(reasons))))
    return sorted(nodes, key=lambda node: (-node.score, node.entry.slug))


def summary_line(node: Node) -> str:
    """`[type] title - first sentence`: how query results summarise a memory."""
    entry = node.entry
    gist = memory.summary_of_file(entry.path, width=140)
    return f"[{entry.type}] {entry.title}" + (f" - {gist}" if gist else "") + f"  ({entry.slug}, {entry.scope})"
