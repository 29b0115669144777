"""Named reads of the catalog for the operations above it (search helpers, health, hooks).

Every statement the code outside the catalog package needs lives here or in edges.py, so
a change to the tables touches this package only. Each function takes an open Catalog.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Iterator

    from ..model.graph import Edge
    from .catalog import Catalog

from ..model.graph import ORIGIN_IMPORTED, ORIGIN_LINKS
from . import bm25, edges, postings, words

DATABASE_ERRORS = (sqlite3.Error,)  # what a damaged or locked catalog raises besides OSError
_BATCH = 500  # doc ids per `IN (...)` lookup


def _placeholders(values: Iterable[object]) -> str:
    return ", ".join("?" for _ in values)


# -- documents, terms and tags --------------------------------------------------------------

def count(catalog: Catalog) -> int:
    """How many memories the catalog holds (as BM25 keeps the figure: counting 100,000 rows takes milliseconds)."""
    return bm25.collection(catalog.conn)[0]


def counts_by_type(catalog: Catalog) -> list[tuple[str, int]]:
    """(type, number of memories), most common first."""
    return catalog.conn.execute("SELECT type, COUNT(*) FROM docs GROUP BY type ORDER BY COUNT(*) DESC").fetchall()


def types(catalog: Catalog) -> dict[str, str]:
    """slug -> type of every memory."""
    return dict(catalog.conn.execute("SELECT slug, type FROM docs"))


def terms(catalog: Catalog) -> Iterator[tuple[str, str]]:
    """(slug, its indexed words separated by spaces) for every memory."""
    spelled = words.vocabulary(catalog.conn)
    for slug, ids in catalog.conn.execute("SELECT slug, words FROM docs"):
        yield slug, " ".join([spelled[ident] for ident in words.unpack(ids)])


def terms_held_by(catalog: Catalog, slugs: list[str], terms: Iterable[str]) -> dict[str, set[str]]:
    """slug -> those of `terms` that are indexed words of it, for those of `slugs` catalogued."""
    ids = words.lookup(catalog.conn, list(terms))
    held: dict[str, set[str]] = {}
    for start in range(0, len(slugs), _BATCH):
        batch = slugs[start:start + _BATCH]
        for slug, packed in catalog.conn.execute(
                f"SELECT slug, words FROM docs WHERE slug IN ({', '.join('?' * len(batch))})", batch):
            present = set(words.unpack(packed))
            held[slug] = {term for term, ident in ids.items() if ident in present}
    return held


def document_frequency(catalog: Catalog, term: str) -> int:
    """In how many memories a word occurs."""
    return bm25.document_frequency(catalog.conn, term)


def term_frequencies(catalog: Catalog, slug: str) -> list[tuple[str, int, int]] | None:
    """(word, times in this memory, memories holding it) for each indexed word of `slug`, in the
    order of its terms; None when it is not catalogued."""
    row = catalog.conn.execute("SELECT id, words FROM docs WHERE slug=?", (slug,)).fetchone()
    if row is None:
        return None
    doc, ids = row
    ids = words.unpack(ids)
    found = []
    for term, ident in zip(words.spelled(catalog.conn, ids), ids):
        tf = next((tf for other, tf, _ in postings.read(catalog.conn, ident, [doc >> postings.SHIFT]) if other == doc), 0)
        found.append((term, tf, postings.frequency(catalog.conn, ident)))
    return found


def active_holding(catalog: Catalog, term: str, limit: int) -> list[str]:
    """Up to `limit` active memories (sessions aside) whose text holds the word."""
    word = words.id_of(catalog.conn, term)
    holders = [doc for doc, _, _ in postings.read(catalog.conn, word)] if word is not None else []
    found: list[str] = []
    for start in range(0, len(holders), _BATCH):
        batch = holders[start:start + _BATCH]
        slugs = dict(catalog.conn.execute(f"SELECT id, slug FROM docs WHERE id IN ({_placeholders(batch)}) "
                                          "AND status='active' AND type != 'session'", batch))
        found += [slugs[doc] for doc in batch if doc in slugs]
        if len(found) >= limit:
            break
    return found[:limit]


def tagged(catalog: Catalog, tag: str, limit: int) -> list[str]:
    """Up to `limit` memories carrying the tag."""
    return [row[0] for row in catalog.conn.execute(
        "SELECT d.slug FROM tags t JOIN docs d ON d.id = t.doc WHERE t.tag=? LIMIT ?", (tag, limit))]


def hub_sharing_most_tags(catalog: Catalog, slug: str, tags: list[str]) -> str | None:
    """The hub (other than `slug`) sharing most of the tags, ties by slug; None when none shares one."""
    if not tags:
        return None
    row = catalog.conn.execute(
        f"SELECT d.slug FROM docs d JOIN tags t ON t.doc = d.id WHERE d.type = 'hub' AND d.slug != ? "
        f"AND t.tag IN ({_placeholders(tags)}) GROUP BY d.slug ORDER BY COUNT(*) DESC, d.slug LIMIT 1",
        (slug, *tags)).fetchone()
    return row[0] if row else None


def any_embedding(catalog: Catalog) -> bool:
    """Whether some memory has a cached embedding."""
    return catalog.conn.execute("SELECT 1 FROM docs WHERE has_embedding=1 LIMIT 1").fetchone() is not None


def content_hashes(catalog: Catalog) -> dict[str, str]:
    """slug -> content hash of every memory of the scope."""
    return {slug: digest.hex() for slug, digest in catalog.conn.execute("SELECT slug, hash FROM docs")}


def updated_times(catalog: Catalog) -> dict[str, str]:
    """slug -> when each memory was last updated."""
    return dict(catalog.conn.execute("SELECT slug, updated FROM docs"))


# -- links --------------------------------------------------------------------------------------

def declared_links(catalog: Catalog) -> Iterator[tuple[str, str, str, str]]:
    """(source, target, label, origin) of every link a record declares (files, graph.json imports)."""
    return iter(catalog.conn.execute("SELECT src, dst, label, origin FROM declared"))


def declared_links_except(catalog: Catalog, known: set[tuple[str, str, str]]) -> list[tuple[str, str, str, str]]:
    """`declared_links` whose (source, target, label) is not in `known`. The catalog's links come back as
    one string compared with `known` as a set: 600,000 rows read one by one took a second. Only when
    some are not known (or a value holds a separator, or is NULL) are the rows read."""
    text, rows = catalog.conn.execute(
        "SELECT group_concat(src || char(31) || dst || char(31) || label, char(30)), COUNT(*) FROM declared").fetchone()
    if not rows:
        return []
    lines = (text or "").split("\x1e")
    if len(lines) == rows and text.count("\x1f") == 2 * rows and \
            set(lines) <= {f"{source}\x1f{target}\x1f{label}" for source, target, label in known}:
        return []
    return [row for row in declared_links(catalog) if row[:3] not in known]


def linking_to(catalog: Catalog, slug: str) -> list[str]:
    """The memories whose `links` name `slug`, sorted."""
    return sorted({src for (src,) in catalog.conn.execute(
        "SELECT DISTINCT src FROM declared WHERE dst=? AND origin=?", (slug, ORIGIN_LINKS))})


def forget_imported_edges(catalog: Catalog, source: str, target: str, labels: tuple[str, str] | None) -> None:
    """Drop the graph.json-imported edges between two memories (either way; only these labels when
    given). Inside the caller's `catalog.transaction()`."""
    catalog.conn.execute("DELETE FROM declared WHERE origin=? AND ((src=? AND dst=?) OR (src=? AND dst=?))"
                         + (" AND label IN (?, ?)" if labels else ""),
                         (ORIGIN_IMPORTED, source, target, target, source) + (labels or ()))


def linked_slugs(catalog: Catalog) -> list[str]:
    """The memories with at least one edge in graph.json, sorted."""
    return [row[0] for row in catalog.conn.execute("SELECT slug FROM adjacency ORDER BY slug")]


def linked_or_hubs(catalog: Catalog) -> list[str]:
    """The memories with an edge, and every hub, sorted."""
    return [row[0] for row in catalog.conn.execute(
        "SELECT slug FROM docs WHERE slug IN (SELECT slug FROM adjacency) OR type='hub' ORDER BY slug")]


def graph_edges(catalog: Catalog) -> Iterator[tuple[str, list[Edge]]]:
    """(slug, its edges as graph.json holds them) for every memory with an edge."""
    return edges.every_node(catalog.conn, catalog.labels)


def graph_fingerprint(catalog: Catalog) -> str:
    """A digest of all `graph_edges` is computed from: every declaration, which memories exist and
    the inverse labels. (Concatenated by SQLite: one string back instead of 300,000 rows. The links
    are read by node id, in the order of their primary key, and the nodes' slugs apart: joining
    them and sorting by slug took seconds. A node renumbered changes the digest, which costs one
    computation of the edges, never a wrong answer.)"""
    import hashlib

    declared = catalog.conn.execute(
        "SELECT group_concat(src || ' ' || dst || ' ' || label || ' ' || origin || ' ' || ts, char(10)) FROM links"
    ).fetchone()[0] or ""
    nodes = catalog.conn.execute("SELECT group_concat(id || ' ' || slug, char(10)) FROM nodes").fetchone()[0] or ""
    slugs = catalog.conn.execute(
        "SELECT group_concat(slug, char(10)) FROM (SELECT slug FROM docs ORDER BY slug)").fetchone()[0] or ""
    labels = repr(sorted(catalog.labels.inverse_of.items()))
    return hashlib.blake2b("\0".join((declared, nodes, slugs, labels)).encode("utf-8", "surrogatepass"),
                           digest_size=20).hexdigest()


def graph_text_of(nodes: Iterable[tuple[str, list[Edge]]]) -> str:
    """The graph.json text of `graph_edges`' answer."""
    return edges.nodes_text(nodes)


def least_linked(catalog: Catalog, limit: int) -> list[str]:
    """Up to `limit` memories, fewest declared links first, then the most recently updated."""
    return [row[0] for row in catalog.conn.execute(
        "SELECT d.slug FROM docs d LEFT JOIN (SELECT src, COUNT(*) AS n FROM declared GROUP BY src) c "
        "ON c.src = d.slug ORDER BY COALESCE(c.n, 0), d.updated DESC LIMIT ?", (limit,))]
