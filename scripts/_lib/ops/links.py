"""Linking memories: `memory link` / `unlink`, and the link edits that write and delete need.

A link is written into both memory files (`links`, plus `link-labels` for any label
other than relates-to) and the catalog rebuilds both graph.json entries from them,
all while holding the scope lock.
"""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

from . import lookup
from ..base import clock, errors, fsutil
from ..model import frontmatter, graph, memory, predecessor
from ..catalog import rollback
from ..catalog import queries
from ..catalog.catalog import Catalog, Entry, open_catalog
from .lookup import locate
from ..workspace.scopes import Workspace

DEFAULT_LABEL = graph.DEFAULT_LABEL
MAX_LABEL = 50


def check_label(label: str, what: str = "label") -> str:
    if not isinstance(label, str) or not graph.LABEL_RE.fullmatch(label) or len(label) > MAX_LABEL:
        raise errors.InvalidInput(f"invalid {what} {label!r}: labels are lowercase words joined by hyphens, "
                                  f"1-{MAX_LABEL} characters", 'e.g. --label implements or --label "part-of"')
    return label


def require_same_scope(workspace: Workspace, catalog: Catalog, slug: str) -> None:
    """Refuse a link to a memory that is missing here or lives in another scope (links join
    memories of one scope only)."""
    if not catalog.has_slug(slug):
        refuse_missing(workspace, catalog.scope.name, slug)


def refuse_missing(workspace: Workspace, scope_name: str, slug: str) -> None:
    """Raise the error for a link target absent from `scope_name`: cross-scope or not found."""

    for other in workspace.readable_scopes():
        if other.name == scope_name:
            continue
        with open_catalog(workspace, other) as elsewhere:
            if elsewhere is not None and elsewhere.has_slug(slug):
                raise errors.InvalidInput(
                    f"cannot link across scopes: {slug!r} is in the {other.name} scope, not {scope_name}",
                    "links join memories of one scope only; move or copy one of them")
    raise lookup.not_found(workspace, slug, [workspace.scope(scope_name)])


def current_labels(catalog: Catalog, source: str, target: str) -> list[str]:
    """Labels of the edges source -> target as graph.json holds them."""
    return [edge.label for edge in catalog.edges(source) if edge.target == target]


def set_link_labels(catalog: Catalog, slug: str, target: str, labels: list[str], *,
                    touch: bool = True) -> memory.Memory:
    """Set the labels of `slug`'s link to `target` in its file (an empty list removes the link);
    `touch` bumps its `updated` (an import carrying links over leaves it as it was)."""
    entry = catalog.get(slug)
    if entry is None:
        raise errors.NotFound(f"no memory {slug!r} in {catalog.scope.name} scope")
    item = memory.read_file(entry.path, catalog.scope.name, root=catalog.scope.root)
    link_list = list(item.links)
    mapping: dict[str, Any] = {key: (value[0] if len(value) == 1 else value)
                               for key, value in item.link_labels.items() if value}
    labels = list(dict.fromkeys(labels))
    if labels:
        if target not in link_list:
            link_list.append(target)
        if labels == [DEFAULT_LABEL]:
            mapping.pop(target, None)
        else:
            mapping[target] = labels[0] if len(labels) == 1 else labels
    else:
        link_list = [link for link in link_list if link != target]
        mapping.pop(target, None)
    changes: dict[str, Any] = {
        "links": link_list if link_list or "links" in item.fields else frontmatter.DELETE,
        memory.LABELS_FIELD: mapping if mapping else frontmatter.DELETE,
    }
    if touch:
        changes["updated"] = clock.now_iso()
    return rollback.rewrite(catalog, item, changes)


def record_in_graph_file(catalog: Catalog, source: str, target: str, label: str, inverse: str | None = None) -> None:
    """In a store of the earlier plugin, a link is an edge of its graph.json (stored once, with
    its label) and an entry in the source's `links`, as that plugin records it."""
    edits = predecessor.GraphEdits()
    edits.add_edge(source, target, label)
    if inverse is not None and inverse != catalog.labels.inverse(label):
        edits.add_edge(target, source, inverse)  # a custom inverse: stored explicitly
    for slug in (source, target):
        entry = catalog.get(slug)
        if entry is not None:
            edits.set_node(slug, type=entry.extra.get("declared-type") or entry.type, title=entry.title)
    catalog.patch_graph_file(edits)
    set_links(catalog, source, add=target)


def set_links(catalog: Catalog, slug: str, *, add: str | None = None, remove: str | None = None) -> None:
    """Add or remove one slug in a memory's `links` (and drop its `link-labels` entry on removal)."""
    entry = catalog.get(slug)
    if entry is None:
        return
    item = memory.read_file(entry.path, catalog.scope.name, root=catalog.scope.root)
    links = list(item.links)
    if add is not None and add not in links:
        links.append(add)
    if remove is not None:
        links = [link for link in links if link != remove]
    labels = {key: value for key, value in (item.fields.get(memory.LABELS_FIELD) or {}).items()
              if key != remove} if isinstance(item.fields.get(memory.LABELS_FIELD), dict) else None
    if links == item.links and (labels is None or labels == item.fields.get(memory.LABELS_FIELD)):
        return
    changes: dict[str, Any] = {"links": links if links or "links" in item.fields else frontmatter.DELETE,
                               "updated": clock.now_iso()}
    if labels is not None:
        changes[memory.LABELS_FIELD] = labels or frontmatter.DELETE
    rollback.rewrite(catalog, item, changes)


def add_back_link(catalog: Catalog, target: str, source: str, *, graph_label: str) -> None:
    """After `source` was written linking to `target`, make `target` link back (inverse label)."""
    inverse = catalog.labels.inverse(graph_label)
    labels = current_labels(catalog, target, source)
    explicit = [label for label in labels if label != DEFAULT_LABEL or inverse == DEFAULT_LABEL]
    set_link_labels(catalog, target, source, list(dict.fromkeys(explicit + [inverse])))


def remove_all_links_to(catalog: Catalog, slug: str) -> list[str]:
    """Remove `slug` from the `links` of every memory naming it (and, in a store of the earlier
    plugin, its node and edges from that plugin's graph.json); returns the memories changed."""
    holders = queries.linking_to(catalog, slug)
    in_graph_file = catalog.edges_in_graph_file
    if in_graph_file:
        edits = predecessor.GraphEdits()
        edits.remove_node(slug)
        catalog.patch_graph_file(edits)
    for holder in holders:
        if holder != slug and catalog.has_slug(holder):
            if in_graph_file:
                set_links(catalog, holder, remove=slug)
            else:
                set_link_labels(catalog, holder, slug, [])
    return [holder for holder in holders if holder != slug]


def drop_embedding(catalog: Catalog, slug: str) -> None:
    """Delete a memory's embedding cache file (it no longer matches the content)."""
    if fsutil.remove_file(catalog.embedding_dir / f"{slug}.json"):
        catalog.set_has_embedding([slug], False)


class LinkResult:
    """What `memory link` or `unlink` did."""

    def __init__(self, source: str, target: str, scope: str, label: str, inverse: str, created: bool,
                 notes: list[str] | None = None) -> None:
        self.source, self.target, self.scope, self.label, self.inverse = source, target, scope, label, inverse
        self.created = created
        self.notes = notes or []

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "scope": self.scope, "label": self.label,
                "inverse": self.inverse, "changed": self.created, "notes": self.notes}


def slug_aliases(slug: str) -> list[str]:
    """Type-prefixed slugs (slugs begin with their type) that `slug` may mean: auth-hub or auth -> hub-auth, ..."""
    words = slug.split("-")
    found: dict[str, None] = {}
    for memory_type in memory.TYPES:
        type_words = memory_type.split("-")
        if words[:len(type_words)] == type_words:
            continue
        kept = [word for word in words if word not in type_words]
        if kept and all(kept):
            found.setdefault(f"{memory_type}-{'-'.join(kept)}", None)
    return list(found)


def resolve(workspace: Workspace, slug: str, scope: str | None = None) -> tuple[Any, str]:
    """The scope holding `slug` and the slug to use there.

    A memory named without its type prefix or with the type word last (`auth-hub`,
    `auth` for the hub `hub-auth`) is found under its type-prefixed slug when exactly
    one memory matches (with a warning); otherwise the usual not-found error stands.
    """

    try:
        found, _ = locate(workspace, slug, scope)
        return found, slug
    except errors.NotFound as missing:
        matches: list[tuple[Any, str]] = []
        candidates = slug_aliases(slug)
        for candidate_scope in workspace.readable_scopes(scope):
            with open_catalog(workspace, candidate_scope, refresh=False) as catalog:
                if catalog is not None:
                    matches.extend((candidate_scope, alias) for alias in candidates if catalog.has_slug(alias))
        if len({alias for _, alias in matches}) != 1:
            if matches:
                missing.hint = "did you mean: " + ", ".join(dict.fromkeys(alias for _, alias in matches))
            raise
    found, alias = matches[0]
    workspace.warn(f"no memory {slug!r}; using {alias!r}")
    return found, alias


@contextlib.contextmanager
def opened(workspace: Workspace, slug: str, scope: str | None = None) -> Iterator[tuple[Any, Catalog, Entry]]:
    """The memory `slug`, found as `resolve` finds it, with its scope's catalog open:
    (scope, catalog, entry)."""
    found, slug = resolve(workspace, slug, scope)
    with open_catalog(workspace, found) as catalog:
        entry = catalog.get(slug) if catalog is not None else None
        if catalog is None or entry is None:
            raise errors.NotFound(f"no memory {slug!r} in {found.name} scope")
        yield found, catalog, entry


def _link_scope(workspace: Workspace, source: str, target: str, scope: str | None) -> tuple[Any, str, str]:
    """The scope of a link (the one holding `source`) and both slugs as that scope names them."""
    memory.check_lookup_slug(source)
    memory.check_lookup_slug(target)
    if source == target:
        raise errors.InvalidInput(f"cannot link {source!r} to itself", "a link joins two different memories")
    found, source = resolve(workspace, source, scope)
    try:
        target = resolve(workspace, target, found.name)[1]
    except errors.NotFound:
        pass  # require_same_scope explains: missing, or in another scope
    if source == target:
        raise errors.InvalidInput(f"cannot link {source!r} to itself", "a link joins two different memories")
    return found, source, target


def link(workspace: Workspace, source: str, target: str, *, label: str = DEFAULT_LABEL,
         inverse: str | None = None, scope: str | None = None) -> LinkResult:
    """Create source -label-> target and target -inverse-> source, in both files and graph.json."""

    check_label(label)
    if inverse is not None:
        check_label(inverse, "inverse label")
    found, source, target = _link_scope(workspace, source, target, scope)
    with open_catalog(workspace, found, refresh=False) as catalog:
        assert catalog is not None
        with catalog.locked(touching=(source, target)), rollback.all_or_nothing(catalog):
            for slug in (source, target):
                require_same_scope(workspace, catalog, slug)
            inverse_label = inverse or catalog.labels.inverse(label)
            forward = current_labels(catalog, source, target)
            backward = current_labels(catalog, target, source)
            if label in forward and inverse_label in backward:
                return LinkResult(source, target, found.name, label, inverse_label, False,
                                  ["already linked; nothing changed"])
            if catalog.edges_in_graph_file:
                record_in_graph_file(catalog, source, target, label, inverse)
            else:
                set_link_labels(catalog, source, target, _with(forward, label))
                set_link_labels(catalog, target, source, _with(backward, inverse_label))
            catalog.export()
    return LinkResult(source, target, found.name, label, inverse_label, True)


def _with(labels: list[str], label: str) -> list[str]:
    """Labels after adding `label`: an implicit relates-to gives way to a real label."""
    kept = [existing for existing in labels if existing != DEFAULT_LABEL or label == DEFAULT_LABEL]
    return list(dict.fromkeys(kept + [label]))


def unlink(workspace: Workspace, source: str, target: str, *, label: str | None = None,
           scope: str | None = None) -> LinkResult:
    """Remove the link(s) between two memories in both directions (one label, or all)."""

    if label is not None:
        check_label(label)
    found, source, target = _link_scope(workspace, source, target, scope)
    with open_catalog(workspace, found, refresh=False) as catalog:
        assert catalog is not None
        with catalog.locked(touching=(source, target)), rollback.all_or_nothing(catalog):
            for slug in (source, target):
                require_same_scope(workspace, catalog, slug)
            forward = current_labels(catalog, source, target)
            backward = current_labels(catalog, target, source)
            if not forward and not backward or (label is not None and label not in forward):
                what = f"{label!r} link" if label else "link"
                raise errors.NotFound(f"there is no {what} from {source!r} to {target!r}",
                                      f"see the existing links with `memory edges {source}`")
            inverse_label = catalog.labels.inverse(label) if label else ""
            keep_forward = [existing for existing in forward if label is not None and existing != label]
            keep_backward = [existing for existing in backward if label is not None and existing != inverse_label]
            if label is not None and not keep_forward and keep_backward == backward and len(backward) == 1:
                keep_backward = []  # a custom label whose inverse is not configured: drop the lone reverse edge
            if catalog.edges_in_graph_file:
                edits = predecessor.GraphEdits()
                edits.remove_edges(source, target, (label, inverse_label) if label else None)
                catalog.patch_graph_file(edits)
                if not keep_forward:
                    set_links(catalog, source, remove=target)
                if not keep_backward:
                    set_links(catalog, target, remove=source)
            else:
                with catalog.transaction():
                    queries.forget_imported_edges(catalog, source, target, (label, inverse_label) if label else None)
                set_link_labels(catalog, source, target, keep_forward)
                set_link_labels(catalog, target, source, keep_backward)
            notes = []
            remaining = current_labels(catalog, source, target)
            if not keep_forward and remaining:
                notes.append(f"{source} or {target} still refers to the other with a [[wiki link]] or `related:` "
                             "entry; edit that text to remove the link completely")
            catalog.export()
    return LinkResult(source, target, found.name, label or "*", inverse_label or "*", True, notes)


def edges(workspace: Workspace, slug: str, *, scope: str | None = None) -> dict[str, Any]:
    """Every outgoing and incoming edge of `slug` with label, direction and neighbour details."""

    with opened(workspace, slug, scope) as (found, catalog, entry):
        slug = entry.slug
        rows: list[dict[str, Any]] = []
        outgoing = catalog.edges(slug)
        for edge in outgoing:
            rows.append({"direction": "outgoing", "label": edge.label, "neighbour": edge.target,
                         "timestamp": edge.timestamp})
            for back in catalog.edges(edge.target):
                if back.target == slug:
                    rows.append({"direction": "incoming", "label": back.label, "neighbour": edge.target,
                                 "timestamp": back.timestamp})
        unique = {(row["direction"], row["label"], row["neighbour"]): row for row in rows}
        result = []
        for row in unique.values():
            neighbour = catalog.get(row["neighbour"])
            row.update(title=neighbour.title if neighbour else None, type=neighbour.type if neighbour else None,
                       scope=found.name)
            result.append(row)
    result.sort(key=lambda row: (row["neighbour"], row["direction"] != "outgoing", row["label"]))
    return {"slug": slug, "scope": found.name, "title": entry.title, "type": entry.type, "edges": result}
