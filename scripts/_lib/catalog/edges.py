"""The link graph in the catalog: declarations of each file (table `declared`), and a digest of
each node's graph.json line (table `adjacency`) to tell which lines a change alters. The lines
themselves are computed from the declarations when read: storing them took more space than
the memory files.

The rules of the graph itself (labels, inverses, what a file declares) are model.graph; this
module stores them and derives the symmetric edges from what is stored.
"""

from __future__ import annotations

import itertools
import json
import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator

    from .catalog import Catalog

from ..base import digests
from .derived import encode_json
from ..model.graph import (DEFAULT_LABEL, Edge, LABEL_RE, Labels, ORIGIN_IMPORTED, ORIGIN_LINKS, ORIGIN_REFS, UNLABELLED)

# Slugs are stored once (`nodes`) and the declarations and digests refer to them by id: a link's
# two slugs repeated in the rows and again in the index by target took most of the catalog.
# The views `declared` and `adjacency` show the rows with their slugs; the triggers behind them
# give a slug its id on first use. (A node is added only when missing, never replaced: an outer
# INSERT OR REPLACE would otherwise delete and renumber it under the rows that refer to it.)
SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes(id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS links(src INTEGER NOT NULL, dst INTEGER NOT NULL, label TEXT NOT NULL,
  origin TEXT NOT NULL, ts TEXT NOT NULL, PRIMARY KEY(src, dst, label, origin)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
CREATE TABLE IF NOT EXISTS line_digests(node INTEGER PRIMARY KEY, digest INTEGER NOT NULL);
CREATE VIEW IF NOT EXISTS declared(src, dst, label, origin, ts) AS
  SELECT s.slug, t.slug, l.label, l.origin, l.ts FROM links l JOIN nodes s ON s.id = l.src JOIN nodes t ON t.id = l.dst;
CREATE VIEW IF NOT EXISTS adjacency(slug, digest) AS
  SELECT n.slug, g.digest FROM line_digests g JOIN nodes n ON n.id = g.node;
CREATE TRIGGER IF NOT EXISTS declared_insert INSTEAD OF INSERT ON declared BEGIN
  INSERT INTO nodes(slug) SELECT NEW.src WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE slug = NEW.src);
  INSERT INTO nodes(slug) SELECT NEW.dst WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE slug = NEW.dst);
  INSERT INTO links VALUES ((SELECT id FROM nodes WHERE slug = NEW.src), (SELECT id FROM nodes WHERE slug = NEW.dst),
    NEW.label, NEW.origin, NEW.ts);
END;
CREATE TRIGGER IF NOT EXISTS declared_delete INSTEAD OF DELETE ON declared BEGIN
  DELETE FROM links WHERE src = (SELECT id FROM nodes WHERE slug = OLD.src)
    AND dst = (SELECT id FROM nodes WHERE slug = OLD.dst) AND label = OLD.label AND origin = OLD.origin;
END;
CREATE TRIGGER IF NOT EXISTS adjacency_insert INSTEAD OF INSERT ON adjacency BEGIN
  INSERT INTO nodes(slug) SELECT NEW.slug WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE slug = NEW.slug);
  INSERT INTO line_digests VALUES ((SELECT id FROM nodes WHERE slug = NEW.slug), NEW.digest);
END;
CREATE TRIGGER IF NOT EXISTS adjacency_delete INSTEAD OF DELETE ON adjacency BEGIN
  DELETE FROM line_digests WHERE node = (SELECT id FROM nodes WHERE slug = OLD.slug);
END;
"""
TABLES = ("nodes", "links", "line_digests")  # what a rebuild empties
_BATCH = 500  # slugs per `IN (...)` lookup
REFRESH_BATCH = 500  # graph lines recomputed per read of their declarations
IMPORT_BATCH = 2000  # graph.json nodes adopted per read of the declarations touching them


def graph_text(catalog: Catalog) -> str:
    """The graph.json text the catalog holds now."""
    return "".join(render_file(catalog.conn, catalog.labels))


def node_ids(conn: sqlite3.Connection, slugs: Iterable[str], every: dict[str, int] | None = None) -> dict[str, int]:
    """slug -> its id in `nodes`, given to the slugs that have none yet. `every`, when given, holds
    every node (a rebuild keeps it): nothing is looked up, and new nodes are added to it."""
    wanted = list(dict.fromkeys(slugs))
    found = {slug: every[slug] for slug in wanted if slug in every} if every is not None else {}
    if every is None:
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start:start + _BATCH]
            found.update(conn.execute(f"SELECT slug, id FROM nodes WHERE slug IN ({', '.join('?' * len(chunk))})",
                                      chunk))
    for slug in wanted:
        if slug not in found:
            found[slug] = conn.execute("INSERT INTO nodes(slug) VALUES (?)", (slug,)).lastrowid  # type: ignore[assignment]
            if every is not None:
                every[slug] = found[slug]
    return found


def replace_declarations(conn: sqlite3.Connection, slug: str, declared: Iterable[tuple[str, str, str]],
                         default_ts: str, known: dict[str, int] | None = None) -> set[str]:
    """Store what `slug`'s file declares, keeping the timestamps of links that stay; returns touched
    slugs. (`known`: node ids already looked up, slug -> id.)"""
    old: dict[tuple[str, str, str], str] = {}
    imported: dict[tuple[str, str], str] = {}
    for dst, label, origin, ts in conn.execute("SELECT dst, label, origin, ts FROM declared WHERE src=?", (slug,)):
        if origin == ORIGIN_IMPORTED:
            imported[(dst, label)] = ts
        else:
            old[(dst, label, origin)] = ts
    declared = list(declared)
    ids = dict(known or {})
    ids.update(node_ids(conn, [end for end in (slug, *(dst for dst, _, _ in declared)) if end not in ids]))
    conn.execute("DELETE FROM links WHERE src=? AND origin IN (?, ?)", (ids[slug], ORIGIN_LINKS, ORIGIN_REFS))
    conn.executemany("INSERT OR REPLACE INTO links VALUES (?, ?, ?, ?, ?)", [
        (ids[slug], ids[dst], label, origin, old.get((dst, label, origin)) or imported.get((dst, label)) or default_ts)
        for dst, label, origin in declared])
    return {slug} | {dst for dst, _, _ in old} | {dst for dst, _, _ in declared}


def forget(conn: sqlite3.Connection, slug: str) -> set[str]:
    """Drop every declaration from `slug` (and imported ones to it); returns touched slugs."""
    touched = {row[0] for row in conn.execute("SELECT dst FROM declared WHERE src=?", (slug,))}
    touched |= {row[0] for row in conn.execute("SELECT src FROM declared WHERE dst=?", (slug,))}
    conn.execute("DELETE FROM links WHERE src=(SELECT id FROM nodes WHERE slug=?)", (slug,))
    conn.execute("DELETE FROM links WHERE dst=(SELECT id FROM nodes WHERE slug=?) AND origin=?", (slug, ORIGIN_IMPORTED))
    return touched | {slug}  # refresh() drops its adjacency line


def node_edges(conn: sqlite3.Connection, slug: str, labels: Labels) -> list[Edge]:
    """The edges leaving `slug` in the symmetric graph, sorted by time then target.

    Each memory is authoritative for the labels of its own outgoing links; a pair
    declared from one side only gets the inverse label on the other side, and an
    unlabelled link or wiki link is `relates-to` unless a labelled edge joins the pair.
    """
    rows = conn.execute(
        "SELECT d.dst, d.label, d.ts, 1 FROM declared d JOIN docs x ON x.slug = d.dst WHERE d.src=? "
        "UNION ALL SELECT d.src, d.label, d.ts, 0 FROM declared d JOIN docs x ON x.slug = d.src WHERE d.dst=?",
        (slug, slug)).fetchall()
    return _symmetric(slug, rows, labels)


def _symmetric(slug: str, rows: Iterable[tuple[str, str, str, int]], labels: Labels) -> list[Edge]:
    """`node_edges` from the declarations that join `slug` to an existing memory:
    (other end, label, timestamp, 1 when `slug` declares it else 0). (Run for every memory by
    health and by a catch-up of many files: written for speed, the earliest timestamp kept by
    comparison and the edges sorted as plain tuples.)"""
    own: dict[str, dict[str, str]] = {}
    theirs: dict[str, dict[str, str]] = {}
    plain: dict[str, str] = {}
    inverse = labels.inverse
    for other, label, ts, outgoing in rows:
        if other == slug:
            continue
        if label == UNLABELLED:
            if other not in plain or ts < plain[other]:
                plain[other] = ts
            continue
        if outgoing:
            found = own.setdefault(other, {})
        else:
            found = theirs.setdefault(other, {})
            label = inverse(label)
        if label not in found or ts < found[label]:
            found[label] = ts
    ordered: list[tuple[str, str, str]] = []  # (timestamp, target, label): the order of the edges
    for other in own.keys() | theirs.keys() | plain.keys():
        chosen = own.get(other) or theirs.get(other) or {DEFAULT_LABEL: plain[other]}
        ordered.extend([(ts, other, label) for label, ts in chosen.items()])
    ordered.sort()
    make = tuple.__new__  # Edge(...) without the namedtuple's Python-level __new__
    return [make(Edge, (slug, other, label, ts)) for ts, other, label in ordered]


def refresh(conn: sqlite3.Connection, slugs: Iterable[str], labels: Labels) -> dict[str, str | None]:
    """Recompute the graph.json lines of `slugs` (inside the write transaction); returns those that changed.

    Read a batch of slugs at a time, three statements per batch: a catch-up of 1,000 files
    touches the lines of thousands of memories, and three statements for each cost more
    than computing their lines."""
    changed: dict[str, str | None] = {}
    wanted = sorted(set(slugs))
    for start in range(0, len(wanted), REFRESH_BATCH):
        batch = wanted[start:start + REFRESH_BATCH]
        names = json.dumps(batch)
        existing = {row[0] for row in conn.execute(
            "SELECT slug FROM docs WHERE slug IN (SELECT value FROM json_each(?))", (names,))}
        old: dict[str, int] = dict(conn.execute(
            "SELECT slug, digest FROM adjacency WHERE slug IN (SELECT value FROM json_each(?))", (names,)))
        around: dict[str, list[tuple[str, str, str, int]]] = {}
        for slug, other, label, ts, outgoing in conn.execute(  # the rows of `node_edges` for each slug
                "SELECT d.src, d.dst, d.label, d.ts, 1 FROM declared d JOIN docs x ON x.slug = d.dst "
                "WHERE d.src IN (SELECT value FROM json_each(?1)) UNION ALL "
                "SELECT d.dst, d.src, d.label, d.ts, 0 FROM declared d JOIN docs x ON x.slug = d.src "
                "WHERE d.dst IN (SELECT value FROM json_each(?1))", (names,)):
            around.setdefault(slug, []).append((other, label, ts, outgoing))
        stored: list[tuple[str, int]] = []
        dropped: list[tuple[str]] = []
        for slug in batch:
            edges = _symmetric(slug, around.get(slug, ()), labels) if slug in existing else []
            line = _line(slug, edges) if edges else None
            digest = _digest(line) if line is not None else None
            if old.get(slug) == digest:
                continue
            changed[slug] = line
            if digest is None:
                dropped.append((slug,))
            else:
                stored.append((slug, digest))
        conn.executemany("DELETE FROM adjacency WHERE slug=?", dropped)
        conn.executemany("INSERT OR REPLACE INTO adjacency VALUES (?, ?)", stored)
    return changed


_RENDERED = "temp.rendered_graph"  # graph.json's lines as refresh_all computed them, until render_file writes them


def refresh_all(conn: sqlite3.Connection, labels: Labels) -> None:
    """Recompute the digest of every graph.json line (a rebuild, an import). The lines are kept
    aside, in a temporary table rather than in memory, for the next `render_file`: rendering them
    twice would cost a rebuild of 100,000 memories seconds."""
    conn.execute("DELETE FROM line_digests")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {_RENDERED}(slug TEXT PRIMARY KEY, line TEXT NOT NULL)")
    conn.execute(f"DELETE FROM {_RENDERED}")
    for slug, line in lines(conn, labels):
        conn.execute("INSERT INTO adjacency VALUES (?, ?)", (slug, _digest(line)))
        conn.execute(f"INSERT INTO {_RENDERED} VALUES (?, ?)", (slug, line))


def lines(conn: sqlite3.Connection, labels: Labels) -> Iterator[tuple[str, str]]:
    """(slug, graph.json line) of every memory with an edge, by slug, from one read of the declarations."""
    for slug, edges in every_node(conn, labels):
        yield slug, _line(slug, edges)


_EVERY_END = ("SELECT d.src, d.dst, d.label, d.ts, 1 FROM declared d WHERE EXISTS (SELECT 1 FROM docs WHERE slug=d.src) "
              "AND EXISTS (SELECT 1 FROM docs WHERE slug=d.dst) UNION ALL "
              "SELECT d.dst, d.src, d.label, d.ts, 0 FROM declared d WHERE EXISTS (SELECT 1 FROM docs WHERE slug=d.src) "
              "AND EXISTS (SELECT 1 FROM docs WHERE slug=d.dst) ORDER BY 1")  # (two IN lists: joined as a product)


def every_node(conn: sqlite3.Connection, labels: Labels) -> Iterator[tuple[str, list[Edge]]]:
    """(slug, `node_edges`) of every memory with an edge, by slug, from one read of the declarations
    seen from both ends and sorted by SQLite: one node's declarations held at a time, however many."""
    for slug, rows in itertools.groupby(conn.execute(_EVERY_END), key=lambda row: row[0]):
        edges = _symmetric(slug, (row[1:] for row in rows), labels)
        if edges:
            yield slug, edges


def _line(slug: str, edges: list[Edge]) -> str:
    return json.dumps(slug) + ": " + encode_json([edge.as_json() for edge in edges])


def _digest(line: str) -> int:
    return digests.digest64(line.encode("utf-8"))


def render_file(conn: sqlite3.Connection, labels: Labels) -> Iterator[str]:
    """graph.json text, in pieces: one node per line so each change rewrites little and diffs stay small."""
    kept = conn.execute("SELECT name FROM temp.sqlite_master WHERE name='rendered_graph'").fetchone()
    if kept is None:
        return _file_pieces(line for _, line in lines(conn, labels))
    return _file_pieces(_kept_lines(conn))


def _kept_lines(conn: sqlite3.Connection) -> Iterator[str]:
    yield from (line for (line,) in conn.execute(f"SELECT line FROM {_RENDERED} ORDER BY slug"))


def forget_rendered(conn: sqlite3.Connection) -> None:
    """Drop the lines refresh_all kept (after the export that wanted them, used or not)."""
    conn.execute(f"DROP TABLE IF EXISTS {_RENDERED}")


def nodes_text(nodes: Iterable[tuple[str, list[Edge]]]) -> str:
    """The graph.json text of `every_node`'s answer (`render_file` without reading it again)."""
    return _file_text([_line(slug, edges) for slug, edges in nodes])


def _file_text(lines: list[str]) -> str:
    return "".join(_file_pieces(lines))


def _file_pieces(lines: Iterable[str]) -> Iterator[str]:
    first = True
    for line in lines:
        yield ("{\n" if first else ",\n") + line
        first = False
    yield "{}\n" if first else "\n}\n"


def import_edges(conn: sqlite3.Connection, edges: Iterable[tuple[str, str, str]], ts: str) -> set[str]:
    """Make the edges declared by the earlier plugin's graph.json exactly `edges` (labels kept as
    written); returns the slugs whose neighbourhood changed. Edges that stay keep their timestamp."""
    old = {(src, dst, label): stamp for src, dst, label, stamp in conn.execute(
        "SELECT src, dst, label, ts FROM declared WHERE origin=?", (ORIGIN_IMPORTED,))}
    new = {(src, dst, label) for src, dst, label in edges if src != dst}
    gone = [key for key in old if key not in new]
    added = [key for key in new if key not in old]
    conn.executemany("DELETE FROM declared WHERE src=? AND dst=? AND label=? AND origin=?",
                     [(src, dst, label, ORIGIN_IMPORTED) for src, dst, label in gone])
    conn.executemany("INSERT OR REPLACE INTO declared VALUES (?, ?, ?, ?, ?)",
                     [(src, dst, label, ORIGIN_IMPORTED, ts) for src, dst, label in added])
    return {slug for src, dst, _ in gone + added for slug in (src, dst)}


def import_file(conn: sqlite3.Connection, data: Any) -> int:
    """Adopt labels and timestamps from a graph.json we did not write (hand-made, older tool, merge).

    Edges between existing memories that no file explains are kept as imported
    declarations, so nothing in graph.json is lost; the rest only lend their label
    and timestamp. Returns the number of edges adopted.
    """
    conn.execute("DELETE FROM links WHERE origin=?", (ORIGIN_IMPORTED,))
    if not hasattr(data, "items"):  # (a dict, or a derived.LineObject read a line at a time)
        return 0
    ids = dict(conn.execute("SELECT slug, id FROM nodes"))
    existing = {row[0] for row in conn.execute("SELECT slug FROM docs")}
    adopted = 0
    batch: list[tuple[str, Any]] = []
    for source, edges in data.items():
        if source in existing and isinstance(edges, list):
            batch.append((source, edges))
        if len(batch) >= IMPORT_BATCH:
            adopted += _import_sources(conn, batch, ids, existing)
            batch = []
    return adopted + _import_sources(conn, batch, ids, existing)


def _import_sources(conn: sqlite3.Connection, batch: list[tuple[str, Any]], ids: dict[str, int],
                    existing: set[str]) -> int:
    """import_file for a batch of graph.json's nodes: the declarations touching them are read for
    the batch only, so memory stays bounded however large the file."""
    sources = json.dumps([source for source, _ in batch])
    explained: dict[frozenset[str], list[tuple[str, str, str, str, str]]] = {}
    for src, dst, label, origin, ts in conn.execute(  # what the files declare (not what earlier batches imported)
            "SELECT src, dst, label, origin, ts FROM declared WHERE src IN (SELECT value FROM json_each(?)) "
            "AND origin<>? UNION SELECT src, dst, label, origin, ts FROM declared "
            "WHERE dst IN (SELECT value FROM json_each(?)) AND origin<>?",
            (sources, ORIGIN_IMPORTED, sources, ORIGIN_IMPORTED)):
        explained.setdefault(frozenset((src, dst)), []).append((src, dst, label, origin, ts))
    adopted = 0
    earlier: list[tuple[str, int, int, str, str]] = []  # timestamps to take where older than the file's
    for source, edges in batch:
        for edge in edges:
            if not isinstance(edge, dict):
                continue
            target, label, ts = edge.get("target"), edge.get("label"), edge.get("timestamp")
            if (not isinstance(target, str) or target not in existing or target == source
                    or not isinstance(label, str) or not LABEL_RE.fullmatch(label) or len(label) > 50):
                continue
            ts = ts if isinstance(ts, str) and ts else "1970-01-01T00:00:00Z"
            pair = explained.get(frozenset((source, target)), [])
            if pair:
                # A file declares this pair: take the label for an unlabelled `links` entry, and the timestamp.
                for declared in pair:
                    src, dst, old_label, origin, _ = declared
                    if src == source and old_label == UNLABELLED and origin == ORIGIN_LINKS:
                        conn.execute("DELETE FROM links WHERE src=? AND dst=? AND label=? AND origin=?",
                                     (ids[src], ids[dst], UNLABELLED, origin))
                        conn.execute("INSERT OR REPLACE INTO links VALUES (?, ?, ?, ?, ?)",
                                     (ids[src], ids[dst], label, origin, ts))
                        pair.remove(declared)
                        pair.append((src, dst, label, origin, ts))
                        adopted += 1
                        break
                if any(src == source and dst == target and old_label == label and old_ts > ts
                       for src, dst, old_label, _, old_ts in pair):  # (else the update would change nothing)
                    earlier.append((ts, ids[source], ids[target], label, ts))
                continue
            ids.update(node_ids(conn, (source, target)))
            conn.execute("INSERT OR REPLACE INTO links VALUES (?, ?, ?, ?, ?)",
                         (ids[source], ids[target], label, ORIGIN_IMPORTED, ts))
            adopted += 1
    conn.executemany("UPDATE links SET ts=? WHERE src=? AND dst=? AND label=? AND ts>?", earlier)
    return adopted
