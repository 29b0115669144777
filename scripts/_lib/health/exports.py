"""The derived files: index.json and graph.json as found on disk against the files, and graph.json
edges no file declares.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

from ..base import jsontext
from ..model import graph
from ..catalog import queries
from ..catalog.catalog import GRAPH_NAME, INDEX_NAME
from . import quality
from .facts import WARNING, ScopeFacts, explicit_labels, links_editable

INDEX_MISSING = "index-missing"
INDEX_UNREADABLE = "index-unreadable"
INDEX_DRIFT = "index-drift"
GRAPH_MISSING = "graph-missing"
GRAPH_UNREADABLE = "graph-unreadable"
GRAPH_BROKEN_EDGE = "graph-broken-edge"
GRAPH_CROSS_SCOPE_EDGE = "graph-cross-scope-edge"
GRAPH_SELF_EDGE = "graph-self-edge"
GRAPH_DUPLICATE_EDGE = "graph-duplicate-edge"
GRAPH_MISSING_INVERSE = "graph-missing-inverse"
GRAPH_LABEL_MISMATCH = "graph-label-mismatch"
GRAPH_DRIFT = "graph-drift"
GRAPH_UNBACKED_EDGE = "graph-unbacked-edge"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    INDEX_MISSING: WARNING,
    INDEX_UNREADABLE: WARNING,
    INDEX_DRIFT: WARNING,  # index.json or the catalog out of step with a file
    GRAPH_MISSING: WARNING,
    GRAPH_UNREADABLE: WARNING,
    GRAPH_BROKEN_EDGE: WARNING,  # graph.json edge to or from a missing memory
    GRAPH_CROSS_SCOPE_EDGE: WARNING,
    GRAPH_SELF_EDGE: WARNING,
    GRAPH_DUPLICATE_EDGE: WARNING,
    GRAPH_MISSING_INVERSE: WARNING,
    GRAPH_LABEL_MISMATCH: WARNING,  # both directions present, labels not inverses
    GRAPH_DRIFT: WARNING,  # graph.json differs from what the files declare
    GRAPH_UNBACKED_EDGE: WARNING,  # kept from a hand-edited graph.json, declared by no file
}


def check(facts: ScopeFacts) -> None:
    """Add the problems of this family to `facts`."""
    _index(facts)
    _graph(facts)
    _unbacked(facts)


def _index(facts: ScopeFacts) -> None:
    if facts.adopted:
        return  # the earlier plugin's index.json: its own, kept as found (see predecessor.py)
    drift: dict[str, list[str]] = defaultdict(list)
    stale: dict[str, list[str]] = defaultdict(list)
    path = facts.scope.root / INDEX_NAME
    if facts.snapshot.index is None:
        if facts.entries:
            facts.add(INDEX_MISSING, None, "index.json is missing", _derived_hint(facts, "index.json"),
                      path=path, fixable=facts.scope.root_writable)
    else:
        raw = _json_object(facts.snapshot.index, "memories")
        if raw is None:
            facts.add(INDEX_UNREADABLE, None, "index.json is not valid JSON with a `memories` object",
                      _derived_hint(facts, "index.json"), path=path, fixable=facts.scope.root_writable)
        else:
            for slug, entry in facts.entries.items():
                if slug not in raw:
                    drift[slug].append(f"index.json lacks {slug}")
                elif raw[slug] != entry.index_entry():
                    fields = sorted(key for key, value in entry.index_entry().items()
                                    if not isinstance(raw[slug], dict) or raw[slug].get(key) != value)
                    drift[slug].append(f"index.json's entry for {slug} is out of date ({', '.join(fields)})")
            for slug in raw:
                if slug not in facts.entries:
                    drift[slug].append(f"index.json lists {slug}, but there is no such memory file")
    cached = facts.cache_listing()
    for slug, item in facts.memories.items():
        entry = facts.entries[slug]
        fields = [name for name, known, actual in (
            ("title", entry.title, item.title), ("type", entry.type, item.type), ("tags", entry.tags, item.tags),
            ("content", entry.content_hash, facts.hashes[slug]),
            ("created", entry.created, item.created or entry.created),
            ("updated", entry.updated, item.updated or entry.updated),
            ("hasEmbedding", entry.has_embedding, slug in cached)) if known != actual]
        if fields:
            stale[slug].append(f"the catalog is out of step with the file ({', '.join(fields)})")
    facts.stale = set(stale)
    for slug in sorted(set(drift) | set(stale)):
        hint = "memory repair re-reads the file" if stale.get(slug) else _derived_hint(facts, "index.json")
        facts.add(INDEX_DRIFT, slug, "; ".join(drift[slug] + stale[slug]), hint,
                  path=facts.entries[slug].path if slug in facts.entries else path,
                  fixable=facts.scope.root_writable)


def _graph(facts: ScopeFacts) -> None:
    if facts.adopted:
        _earlier_graph(facts)
        return
    if facts.snapshot.graph is not None and quality.entries_digest(facts.snapshot.graph) == facts.view.graph_text_digest():
        return  # what the files declare, line for line: no edge to compare
    path = facts.scope.root / GRAPH_NAME
    derived: dict[tuple[str, str], set[str]] = defaultdict(set)
    for source, edges in facts.view.neighbours.items():
        for target, label in edges:
            derived[(source, target)].add(label)
    if facts.snapshot.graph is None:
        if derived:
            facts.add(GRAPH_MISSING, None, "graph.json is missing", _derived_hint(facts, "graph.json"),
                      path=path, fixable=facts.scope.root_writable)
        return
    raw_data = _json_object(facts.snapshot.graph, None)
    if raw_data is None:
        facts.add(GRAPH_UNREADABLE, None, "graph.json is not a valid JSON object",
                  _derived_hint(facts, "graph.json"), path=path, fixable=facts.scope.root_writable)
        return
    raw, malformed = _raw_edges(facts, raw_data, path)
    if malformed:
        facts.add(GRAPH_UNREADABLE, None, f"graph.json has {len(malformed)} malformed entr"
                  f"{'y' if len(malformed) == 1 else 'ies'}, e.g. {malformed[0]}",
                  _derived_hint(facts, "graph.json"), path=path, fixable=facts.scope.root_writable)
    for a, b in sorted({tuple(sorted(pair)) for pair in set(raw) | set(derived)}):
        _compare_pair(facts, a, b, raw, derived, path)


def _unbacked(facts: ScopeFacts) -> None:
    """Edges (or labels) the catalog kept from a hand-edited graph.json that no memory file declares."""
    if facts.adopted:
        return  # the earlier plugin's graph.json is where its edges are recorded
    # what the files declare; a link a file leaves unlabelled is the catalog's link of the default label
    declared = {(slug, target, graph.DEFAULT_LABEL if label == graph.UNLABELLED else label)
                for slug, item in facts.memories.items() for target, label, _ in item.declarations}
    declared |= {(slug, target, label) for slug, item in facts.memories.items()
                 for target, label, _ in item.declarations if label == graph.UNLABELLED}
    pairs: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    for source, target, label, _origin in queries.declared_links_except(facts.catalog, declared):
        if source not in facts.memories or target not in facts.entries or source == target:
            continue
        pairs[(min(source, target), max(source, target))].append((source, target, label))
    facts.unbacked = dict(pairs)
    for (a, b), edges in sorted(pairs.items()):
        shown = "; ".join(f"{source} -{label or graph.DEFAULT_LABEL}-> {target}"
                          for source, target, label in sorted(edges))
        facts.add(GRAPH_UNBACKED_EDGE, a, f"graph.json holds {shown}, which no memory file declares "
                  "(kept from a graph.json edited by hand)",
                  f"memory repair writes it into the files' `links`; or remove it with memory unlink {a} {b}",
                  fixable=adoptable(facts, edges), target=b)


def _derived_hint(facts: ScopeFacts, name: str) -> str:
    if facts.scope.root_writable:
        return f"none needed: every command rewrites {name} from the files (this check just did)"
    return f"this scope is read-only for you: an administrator can run `memory reindex --scope {facts.scope.name}`"


def _raw_edges(facts: ScopeFacts, data: dict[str, Any], path: Path) -> tuple[dict[tuple[str, str], set[str]], list[str]]:
    """Well-formed edges between existing memories; reports self, duplicate and broken edges."""
    raw: dict[tuple[str, str], set[str]] = defaultdict(set)
    malformed: list[str] = []
    fixable = facts.scope.root_writable
    hint = _derived_hint(facts, "graph.json")
    for source, edges in data.items():
        if not isinstance(edges, list):
            malformed.append(f"{source}: not a list of edges")
            continue
        seen: set[tuple[str, str]] = set()
        for edge in edges:
            target = edge.get("target") if isinstance(edge, dict) else None
            label = edge.get("label") if isinstance(edge, dict) else None
            if not isinstance(target, str) or not isinstance(label, str):
                malformed.append(f"{source}: {json.dumps(edge)[:60]}")
                continue
            where = path if source not in facts.entries else None
            if target == source:
                facts.add(GRAPH_SELF_EDGE, source, f"graph.json has an edge from {source} to itself ({label})",
                          hint, path=where, fixable=fixable, target=target)
                continue
            missing = [slug for slug in (source, target) if slug not in facts.entries]
            if missing:
                kind = (GRAPH_CROSS_SCOPE_EDGE if all(slug in facts.elsewhere for slug in missing)
                        else GRAPH_BROKEN_EDGE)
                facts.add(kind, source, f"graph.json has an edge {source} -{label}-> {target}, but "
                          f"{facts.where(missing[-1])}", hint, path=where, fixable=fixable, target=target)
                continue
            if (target, label) in seen:
                facts.add(GRAPH_DUPLICATE_EDGE, source, f"graph.json lists the edge {source} -{label}-> "
                          f"{target} more than once", hint, fixable=fixable, target=target)
                continue
            seen.add((target, label))
            raw[(source, target)].add(label)
    return raw, malformed


def _compare_pair(facts: ScopeFacts, a: str, b: str, raw: dict[tuple[str, str], set[str]],
                  derived: dict[tuple[str, str], set[str]], path: Path) -> None:
    ab, ba = raw.get((a, b), set()), raw.get((b, a), set())
    want_ab, want_ba = derived.get((a, b), set()), derived.get((b, a), set())
    if ab == want_ab and ba == want_ba:
        return
    fixable, hint = facts.scope.root_writable, _derived_hint(facts, "graph.json")
    if ab and not ba and want_ba:
        facts.add(GRAPH_MISSING_INVERSE, b, f"graph.json has {a} -{_labels(ab)}-> {b} but no edge back "
                  f"from {b} to {a}", hint, fixable=fixable, target=a)
    elif ba and not ab and want_ab:
        facts.add(GRAPH_MISSING_INVERSE, a, f"graph.json has {b} -{_labels(ba)}-> {a} but no edge back "
                  f"from {a} to {b}", hint, fixable=fixable, target=b)
    elif ab and ba and {facts.labels.inverse(label) for label in ab} != ba:
        facts.add(GRAPH_LABEL_MISMATCH, a, f"graph.json labels {a} -{_labels(ab)}-> {b} but {b} "
                  f"-{_labels(ba)}-> {a}; the files say {a} -{_labels(want_ab)}-> {b}", hint,
                  fixable=fixable, target=b)
    else:
        facts.add(GRAPH_DRIFT, a, f"graph.json joins {a} and {b} with "
                  f"{_describe(ab, ba) or 'no edge'}; the files declare {_describe(want_ab, want_ba) or 'none'}",
                  hint, fixable=fixable, target=b)


def _earlier_graph(facts: ScopeFacts) -> None:
    """The earlier plugin's graph.json: edges stored once, in its format; only broken ones are reported."""
    data = _json_object(facts.snapshot.graph, None) if facts.snapshot.graph is not None else None
    if data is None:
        if facts.snapshot.graph is not None:
            facts.add(GRAPH_UNREADABLE, None, "graph.json is not a valid JSON object", "restore it from git "
                      "(it holds the edges and labels of the earlier plugin)", path=facts.scope.root / GRAPH_NAME)
        return
    from ..model import predecessor

    seen: set[tuple[str, str, str]] = set()
    for source, target, label in predecessor.graph_edges(data):
        missing = [slug for slug in (source, target) if slug not in facts.entries]
        hint = f"remove it: memory unlink {source} {target}" if not missing else \
            "memory repair removes edges to memories that no longer exist"
        if source == target:
            facts.add(GRAPH_SELF_EDGE, source, f"graph.json has an edge from {source} to itself ({label})",
                      hint, target=target)
        elif missing:
            facts.add(GRAPH_BROKEN_EDGE, source if source in facts.entries else None,
                      f"graph.json has an edge {source} -{label}-> {target}, but {facts.where(missing[-1])}",
                      hint, path=None if source in facts.entries else facts.scope.root / GRAPH_NAME,
                      fixable=facts.scope.root_writable, target=target)
        elif (source, target, label) in seen:
            facts.add(GRAPH_DUPLICATE_EDGE, source, f"graph.json lists the edge {source} -{label}-> {target} "
                      "more than once", hint, target=target)
        seen.add((source, target, label))


def adoptable(facts: ScopeFacts, edges: list[tuple[str, str, str]]) -> bool:
    """Whether repair can write these edges into the files without contradicting a label there."""
    for source, target, label in edges:
        if not (links_editable(facts.memories[source]) and target in facts.memories
                and links_editable(facts.memories[target])):
            return False
        theirs = explicit_labels(facts.memories[target], source)
        if label not in (graph.UNLABELLED, graph.DEFAULT_LABEL) and theirs and \
                facts.labels.inverse(label) not in theirs:
            return False
    return True


def _json_object(data: bytes, key: str | None) -> dict[str, Any] | None:
    """The JSON object in `data` (or its `key` member), None when it is not one."""
    try:
        value = jsontext.loads(data)
    except ValueError:
        return None
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else None


def _labels(labels: Iterable[str]) -> str:
    return "/".join(sorted(labels)) or "?"


def _describe(forward: set[str], backward: set[str]) -> str:
    parts = []
    if forward:
        parts.append(f"-{_labels(forward)}->")
    if backward:
        parts.append(f"<-{_labels(backward)}-")
    return " and ".join(parts)
