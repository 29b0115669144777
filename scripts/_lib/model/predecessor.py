"""The earlier plugin's derived files: its graph.json (`nodes`/`edges`) and its index.json (an array).

In a store that plugin wrote, graph.json is the only record of most edges and of every edge
label, and the team's other members may still run that plugin. So its files are read for what
they hold and kept in its own format: a change made here (a link, a new memory, a deletion)
is patched into them, every other entry and field is kept as found, and nothing else ever
rewrites them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

from ..base import clock, fsutil

DEFAULT_LABEL = "relates-to"
LABEL_KEYS = ("label", "relation")  # the bash era wrote `relation`


def edge_label(edge: dict[str, Any]) -> str:
    for key in LABEL_KEYS:
        value = edge.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return DEFAULT_LABEL


def graph_edges(data: Any) -> list[tuple[str, str, str]]:
    """(source, target, label) of every well-formed edge of a predecessor graph.json, in file order."""
    edges = data.get("edges") if isinstance(data, dict) else None
    found = []
    for edge in edges if isinstance(edges, list) else []:
        if not isinstance(edge, dict):
            continue
        source, target = edge.get("source"), edge.get("target")
        if isinstance(source, str) and isinstance(target, str) and source and target:
            found.append((source, target, edge_label(edge)))
    return found


def _dump(data: Any) -> str:
    # The earlier plugin writes JSON.stringify(data, null, 2): keep its look, so a diff shows the change only.
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class GraphEdits:
    """Changes to a predecessor graph.json, applied together by `apply`."""

    def __init__(self) -> None:
        self.added: list[tuple[str, str, str]] = []
        self.removed: list[tuple[str, str, frozenset[str] | None]] = []  # pair (either direction), labels
        self.gone: set[str] = set()                  # nodes removed with all their edges
        self.nodes: dict[str, dict[str, Any]] = {}   # id -> fields to set on its node

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.gone or self.nodes)

    def add_edge(self, source: str, target: str, label: str) -> None:
        self.added.append((source, target, label))

    def remove_edges(self, a: str, b: str, labels: Iterable[str] | None = None) -> None:
        """Edges between a and b in either direction (only those with one of `labels`, if given)."""
        self.removed.append((a, b, frozenset(labels) if labels is not None else None))

    def remove_node(self, slug: str) -> None:
        self.gone.add(slug)

    def set_node(self, slug: str, **fields: Any) -> None:
        self.nodes.setdefault(slug, {}).update(fields)

    def apply(self, path: Path, *, create: bool) -> Any | None:
        """Patch the file (creating it when `create` and it is missing); returns the new content."""
        original: str | None
        data: Any
        try:
            original = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if not create:
                return None
            original, data = None, {"version": 1, "nodes": [], "edges": []}
        else:
            data = json.loads(original)
        if not isinstance(data, dict) or not isinstance(data.get("edges"), list):
            return None  # not (or no longer) in the predecessor format: never rewritten here
        edges = data["edges"]
        kept = []
        for edge in edges:
            if isinstance(edge, dict) and self._removes(edge):
                continue
            kept.append(edge)
        present = {(source, target, label) for source, target, label in graph_edges({"edges": kept})}
        for source, target, label in self.added:
            if (source, target, label) not in present:
                kept.append({"source": source, "target": target, "label": label})
                present.add((source, target, label))
        appended = {"edges": kept[len(edges):]} if len(kept) >= len(edges) and kept[:len(edges)] == edges else None
        data["edges"] = kept
        nodes = data.get("nodes")
        if isinstance(nodes, list):
            known = {node.get("id"): node for node in nodes if isinstance(node, dict)}
            if appended is not None and not self.gone and all(
                    slug not in known or all(known[slug].get(key) == value for key, value in fields.items())
                    for slug, fields in self.nodes.items()):  # new nodes only: the others stay as they are
                appended["nodes"] = [{"id": slug, **fields} for slug, fields in self.nodes.items() if slug not in known]
            else:
                appended = None
            data["nodes"] = nodes = [node for node in nodes
                                     if not (isinstance(node, dict) and node.get("id") in self.gone)]
            by_id = {node.get("id"): node for node in nodes if isinstance(node, dict)}
            for slug, fields in self.nodes.items():
                if slug in self.gone:
                    continue
                if slug in by_id:
                    by_id[slug].update(fields)
                else:
                    nodes.append({"id": slug, **fields})
        text = _spliced(original, data, appended) if appended is not None and original is not None else None
        fsutil.write_atomically(path, text if text is not None else _dump(data))
        return data

    def _removes(self, edge: dict[str, Any]) -> bool:
        source, target = edge.get("source"), edge.get("target")
        if source in self.gone or target in self.gone:
            return True
        label = edge_label(edge)
        for a, b, labels in self.removed:
            if {source, target} == {a, b} and (labels is None or label in labels):
                return True
        return False


def index_entry(entry: Any, shape: dict[str, Any] | None) -> dict[str, Any]:
    """A predecessor index.json entry for a catalog entry, shaped like the file's other entries."""
    fields = entry.extra
    data: dict[str, Any] = {"id": entry.slug, "type": fields.get("declared-type") or entry.type,
                            "title": entry.title, "tags": entry.tags, "created": entry.created,
                            "updated": entry.updated, "scope": fields.get("scope") or entry.scope}
    if shape is not None and "file" in shape and "relativePath" not in shape:
        data["file"] = str(entry.path)  # the oldest files name the absolute path
    else:
        data["relativePath"] = entry.relpath
    if fields.get("severity"):
        data["severity"] = fields["severity"]
    return data


def patch_index(path: Path, upserts: dict[str, Any], removed: Iterable[str]) -> bool:
    """Apply entry changes to a predecessor index.json ({"memories": [entries], ...})."""
    try:
        original = path.read_text(encoding="utf-8")
        data = json.loads(original)
    except (OSError, ValueError):
        return False
    entries = data.get("memories") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return False
    removed = set(removed) - set(upserts)
    shape = next((item for item in entries if isinstance(item, dict)), None)
    kept, done, changed = [], set(), {}
    for item in entries:
        slug = item.get("id") if isinstance(item, dict) else None
        if slug in removed:
            continue
        if slug in upserts and slug not in done:
            item = {**item, **index_entry(upserts[slug], shape)}  # keep fields this plugin does not know
            done.add(slug)
            changed[slug] = item
        elif slug in done:
            continue  # a second entry for the same id
        kept.append(item)
    added = [index_entry(entry, shape) for slug, entry in upserts.items() if slug not in done]
    in_place = len(kept) == len(entries)  # nothing removed: each change is one entry's lines
    kept += added
    data["memories"] = kept
    if "lastUpdated" in data:
        data["lastUpdated"] = clock.now_iso()
    text = _spliced(original, data, {"memories": added}, changed) if in_place else None
    fsutil.write_atomically(path, text if text is not None else _dump(data))
    return True


def _entry_text(item: Any) -> str:
    """An array element at the depth of the earlier plugin's entries, as JSON.stringify(data, null, 2)."""
    return "\n".join("    " + line for line in json.dumps(item, indent=2, ensure_ascii=False).split("\n"))


def _spliced(text: str, data: dict[str, Any], added: dict[str, list[Any]],
             changed: dict[str, dict[str, Any]] | None = None) -> str | None:
    """The file's `text` with the items of `added` spliced in at the end of its top-level arrays of those
    names and the entries of `changed` (by id) rewritten where they stand, as `_dump(data)` would
    write it, without encoding what stays (Python's indenting encoder takes a third of a second for
    10,000 entries); None when the file does not have the layout this relies on (then it is
    written whole). Checked: the text must read back as `data`."""
    for slug, item in (changed or {}).items():
        start = text.find("\n    {\n      \"id\": " + json.dumps(slug, ensure_ascii=False) + ",\n")
        end = text.find("\n    }", start + 1) if start >= 0 else -1
        if end < 0:
            return None
        text = text[:start + 1] + _entry_text(item) + text[end + len("\n    }"):]
    for key, items in added.items():
        if not items:
            continue
        start = text.find(f'\n  "{key}": [\n')
        end = text.find("\n  ]", start + 1) if start >= 0 else -1
        if end < 0 or text[end - 1] != "}":
            return None  # not JSON.stringify(data, null, 2) with a non-empty array of objects there
        text = text[:end] + "".join(",\n" + _entry_text(item) for item in items) + text[end:]
    if "lastUpdated" in data:
        text, count = re.subn(r'(?m)^  "lastUpdated": "[^"\n]*"',
                              lambda _: '  "lastUpdated": ' + json.dumps(data["lastUpdated"]), text, count=1)
        if count != 1:
            return None
    try:
        return text if json.loads(text) == data else None
    except ValueError:
        return None
