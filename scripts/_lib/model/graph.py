"""The labelled, bidirectional link graph of one scope (graph.json).

Links are declared by the memory files: `links` (with optional `link-labels`),
`related:` lists and `[[wiki links]]` in bodies. graph.json is derived from those
declarations plus labels and timestamps it already held; every edge is stored in
both directions, the reverse one with the inverse label.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

from ..base.text import LazyPattern
from .memory import Memory

DEFAULT_LABEL = "relates-to"
LABEL_RE = LazyPattern(r"^[a-z0-9]+(-[a-z0-9]+)*$")
INVERSE_LABELS = {
    "implements": "implemented-by",
    "part-of": "contains",
    "builds-on": "foundation-for",
    "relates-to": "relates-to",
    "similar-to": "similar-to",
    "supersedes": "superseded-by",
    "depends-on": "dependency-of",
    "deliberated-in": "concluded-in",
}
_REVERSED = {inverse: label for label, inverse in INVERSE_LABELS.items()}

UNLABELLED = ""  # a link declared without a label: relates-to unless a labelled edge joins the pair
ORIGIN_LINKS, ORIGIN_REFS, ORIGIN_IMPORTED = "links", "refs", "graph"


class Edge(namedtuple("Edge", "source target label timestamp")):
    """A directed edge as graph.json stores it."""

    __slots__ = ()

    def as_json(self) -> dict[str, str]:
        return {"target": self.target, "label": self.label, "timestamp": self.timestamp}


class Labels:
    """Inverse-label lookup: the data model's table, config additions, else the label itself."""

    def __init__(self, custom: Mapping[str, str] | None = None) -> None:
        self.inverse_of = dict(INVERSE_LABELS)
        self.inverse_of.update(_REVERSED)
        for label, inverse in (custom or {}).items():
            self.inverse_of[label] = inverse
            self.inverse_of.setdefault(inverse, label)

    def inverse(self, label: str) -> str:
        return self.inverse_of.get(label, label)


def declarations(memory: Memory) -> list[tuple[str, str, str]]:
    """(target, label, origin) for every link a memory file declares."""
    found: dict[tuple[str, str, str], None] = {}
    labels = memory.link_labels
    for target in memory.links:
        if target == memory.slug:
            continue
        named = [label for label in labels.get(target, []) if LABEL_RE.fullmatch(label)]
        for label in named or [UNLABELLED]:
            found.setdefault((target, label, ORIGIN_LINKS), None)
    for target in memory.references:
        if target not in memory.links:
            found.setdefault((target, UNLABELLED, ORIGIN_REFS), None)
    return list(found)
