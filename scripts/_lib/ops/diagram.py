"""A memory's neighbourhood in the link graph, drawn as Mermaid, Graphviz DOT or JSON.

Mermaid labels are escaped by the rules verified against the real Mermaid toolchain
(tests/mermaid/README.md): every label quoted, risky characters as `#<code>;` entities,
newlines kept raw, the words `style` and `classDef` broken, generated node ids.
"""

from __future__ import annotations

import json

from ..base import errors
from ..model import graph
from ..catalog import queries
from ..catalog.catalog import Catalog, Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("mermaid", "json", "dot")
MAX_DEPTH = 10

# Node shape per memory type: (opening, closing) around the quoted label.
SHAPES = {
    "decision": ("[", "]"), "learning": ("(", ")"), "gotcha": ("{", "}"), "hub": ("{{", "}}"),
    "artifact": ("[[", "]]"), "breadcrumb": ("([", "])"), "file-summary": ("[/", "/]"),
    "discovery": ("((", "))"), "session": ("[(", ")]"), "task": (">", "]"), "error": ("{", "}"),
}
COLOURS = {
    "decision": "#dbeafe,stroke:#1d4ed8", "learning": "#dcfce7,stroke:#15803d", "gotcha": "#fee2e2,stroke:#b91c1c",
    "hub": "#fef3c7,stroke:#b45309", "artifact": "#ede9fe,stroke:#6d28d9", "breadcrumb": "#f1f5f9,stroke:#475569",
    "file-summary": "#e0f2fe,stroke:#0369a1", "discovery": "#fce7f3,stroke:#be185d", "session": "#f5f5f4,stroke:#57534e",
    "task": "#ecfccb,stroke:#4d7c0f", "error": "#ffedd5,stroke:#c2410c",
}
SYMMETRIC = {label for label, inverse in graph.INVERSE_LABELS.items() if label == inverse}

CRLF = "\r\n"  # stripped from the ends of a title: Mermaid drops the blank line they would make
_UNSAFE = frozenset('"#&<>%\\`$|')
_PLACEHOLDER_PAIRS = (("\ufb02\xb0", "\ufb02\u200b\xb0"), ("\xb6\xdf", "\xb6\u200b\xdf"))
_TRIGGER_WORDS = (("style", "#115;tyle"), ("classDef", "#99;lassDef"))


class Subgraph:
    """Nodes and edges around a root (or a whole scope), in discovery order."""

    def __init__(self, root: str | None, depth: int, nodes: list[Entry], edges: list[graph.Edge],
                 missing: list[str]) -> None:
        self.root, self.depth, self.nodes, self.edges, self.missing = root, depth, nodes, edges, missing


def neighbourhood(catalog: Catalog, slug: str | None, depth: int = 1) -> Subgraph:
    """Breadth-first neighbourhood of `slug` up to `depth` hops; None means every linked memory."""
    if depth < 0 or depth > MAX_DEPTH:
        raise errors.InvalidInput(f"--depth must be between 0 and {MAX_DEPTH}", "e.g. --depth 2")
    if slug is None:
        order = queries.linked_or_hubs(catalog)
        reached = set(order)
    else:
        if not catalog.has_slug(slug):
            raise errors.NotFound(f"no memory {slug!r} in {catalog.scope.name} scope")
        order, reached, frontier = [slug], {slug}, [slug]
        for _ in range(depth):
            following = []
            for node in frontier:
                for edge in catalog.edges(node):
                    if edge.target not in reached:
                        reached.add(edge.target)
                        order.append(edge.target)
                        following.append(edge.target)
            frontier = following
    entries = {entry.slug: entry for entry in (catalog.get(node) for node in order) if entry is not None}
    edges = [edge for node in order for edge in catalog.edges(node) if edge.target in reached]
    missing = [node for node in order if node not in entries]
    return Subgraph(slug, depth, [entries[node] for node in order if node in entries], edges, missing)


def _drawn_edges(subgraph: Subgraph, labels: graph.Labels) -> list[graph.Edge]:
    """Each relationship once: graph.json stores both directions, a diagram shows one."""
    position = {entry.slug: index for index, entry in enumerate(subgraph.nodes)}
    drawn: list[graph.Edge] = []
    seen: set[tuple[str, str, str]] = set()
    for edge in subgraph.edges:
        if edge.source not in position or edge.target not in position:
            continue
        reverse = (edge.target, edge.source, labels.inverse(edge.label))
        if reverse in seen or (edge.source, edge.target, edge.label) in seen:
            continue
        seen.add((edge.source, edge.target, edge.label))
        drawn.append(edge)
    return drawn


def mermaid_label(text: str) -> str:
    """Escape arbitrary text for a quoted Mermaid label (`["..."]`, `|"..."|`)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    for pair, broken in _PLACEHOLDER_PAIRS:
        text = text.replace(pair, broken)
    out = "".join(char if char == "\n" or (char not in _UNSAFE and char.isprintable()) else f"#{ord(char)};"
                  for char in text)
    for word, escaped in _TRIGGER_WORDS:
        out = out.replace(word, escaped)
    return out if out.strip() else " "


def to_mermaid(subgraph: Subgraph, labels: graph.Labels) -> str:
    """A Mermaid flowchart: node shape and colour by type, the root highlighted, labelled edges."""
    ids = {entry.slug: f"n{index}" for index, entry in enumerate(subgraph.nodes)}
    lines = ["flowchart LR"]
    for entry in subgraph.nodes:
        opening, closing = SHAPES.get(entry.type, ("[", "]"))
        label = mermaid_label(f"{entry.title.strip(CRLF)}\n{entry.slug}")
        lines.append(f'  {ids[entry.slug]}{opening}"{label}"{closing}')
    for edge in _drawn_edges(subgraph, labels):
        arrow = "---" if edge.label in SYMMETRIC else "-->"
        lines.append(f'  {ids[edge.source]} {arrow}|"{mermaid_label(edge.label)}"| {ids[edge.target]}')
    used = sorted({entry.type for entry in subgraph.nodes})
    for memory_type in used:
        lines.append(f"  classDef t_{memory_type.replace('-', '_')} fill:{COLOURS.get(memory_type, '#ffffff,stroke:#333')}")
    for memory_type in used:
        members = ",".join(ids[entry.slug] for entry in subgraph.nodes if entry.type == memory_type)
        lines.append(f"  class {members} t_{memory_type.replace('-', '_')}")
    if subgraph.root in ids:
        lines.append("  classDef focus stroke-width:4px")
        lines.append(f"  class {ids[subgraph.root]} focus")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r\n", "\\n").replace("\n", "\\n") + '"'


def to_dot(subgraph: Subgraph, labels: graph.Labels) -> str:
    """A Graphviz digraph with the same nodes and edges."""
    shapes = {"decision": "box", "hub": "hexagon", "gotcha": "diamond", "learning": "ellipse", "artifact": "component"}
    lines = ["digraph memory {", "  rankdir=LR;"]
    for entry in subgraph.nodes:
        width = ", penwidth=3" if entry.slug == subgraph.root else ""
        lines.append(f"  {_dot_string(entry.slug)} [label={_dot_string(entry.title + chr(10) + entry.slug)}, "
                     f"shape={shapes.get(entry.type, 'box')}{width}];")
    for edge in _drawn_edges(subgraph, labels):
        direction = ", dir=none" if edge.label in SYMMETRIC else ""
        lines.append(f"  {_dot_string(edge.source)} -> {_dot_string(edge.target)} "
                     f"[label={_dot_string(edge.label)}{direction}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_json(subgraph: Subgraph) -> dict[str, Any]:
    return {"root": subgraph.root, "depth": subgraph.depth,
            "nodes": [{"slug": entry.slug, "title": entry.title, "type": entry.type, "scope": entry.scope,
                       "tags": entry.tags} for entry in subgraph.nodes],
            "edges": [{"source": edge.source, "target": edge.target, "label": edge.label,
                       "timestamp": edge.timestamp} for edge in subgraph.edges],
            "missing": subgraph.missing}


def render(subgraph: Subgraph, labels: graph.Labels, output: str) -> str:
    if output == "mermaid":
        return to_mermaid(subgraph, labels)
    if output == "dot":
        return to_dot(subgraph, labels)
    if output == "json":
        return json.dumps(to_json(subgraph), indent=2, ensure_ascii=False) + "\n"
    raise errors.InvalidInput(f"unknown format {output!r}", "use one of: " + ", ".join(FORMATS))
