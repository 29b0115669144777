"""The catalog's answer to "which gotchas could apply here": their globs and the tags that could match.

A hook on every tool call asks it, so the lookup is by key in one table of gotchas only, its
cost bounded by what matches rather than by the number of gotchas. A gotcha's tag can match a
path or command only when it is one of the words the caller offers, or, holding hyphens, one of
its parts longer than three letters is (each such part is a key); a glob can match a path only
when its key (base.globs.glob_key) is one the path has, or when it has none (always tried).
"""

from __future__ import annotations

import json

from ..base.globs import glob_key
from . import postings

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any, Iterable, Iterator

    from .catalog import Catalog

TABLE = "gotcha_keys"
SCHEMA = """
CREATE TABLE IF NOT EXISTS gotcha_keys(key TEXT, doc INTEGER NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS gotcha_keys_key ON gotcha_keys(key);
CREATE INDEX IF NOT EXISTS gotcha_keys_doc ON gotcha_keys(doc);
"""
TAG_KEY = "tag:"  # keys of tags (glob keys start `seg:` or `ext:`)
_HITS = ("SELECT doc, kind, value FROM gotcha_keys WHERE key IN (SELECT value FROM json_each(?)) "
         "UNION SELECT doc, kind, value FROM gotcha_keys WHERE key IS NULL")
_ACTIVE = ("SELECT id, json_extract(extra, '$.severity') FROM docs "
           "WHERE id IN (SELECT value FROM json_each(?)) AND type = 'gotcha' AND status = 'active'")


def record(conn: sqlite3.Connection, doc: int, tags: list[str], patterns: Any) -> None:
    """Keep the keys of a gotcha's tags and `paths:` globs."""
    rows: set[tuple[str | None, int, str, str]] = set()
    for tag in tags:
        rows.add((TAG_KEY + tag, doc, "tag", tag))
        rows.update((TAG_KEY + part, doc, "tag", tag) for part in tag.split("-") if len(part) > 3)
    for pattern in patterns if isinstance(patterns, list) else []:
        if isinstance(pattern, str) and pattern:
            rows.add((glob_key(pattern), doc, "glob", pattern))
    conn.executemany("INSERT INTO gotcha_keys VALUES (?, ?, ?, ?)", list(rows))


def forget(conn: sqlite3.Connection, doc: int) -> None:
    conn.execute("DELETE FROM gotcha_keys WHERE doc=?", (doc,))


def gotcha_rules(catalog: Catalog, words: Iterable[str],
                 path_keys: Iterable[str]) -> Iterator[tuple[int, str, str, str | None]]:
    """(doc, "tag" or "glob", value, severity) for the active gotchas: those of their globs that could
    match a path with `path_keys`, and those of their tags that `words` could match."""
    keys = sorted({TAG_KEY + word for word in words} | set(path_keys))
    hits = catalog.conn.execute(_HITS, (json.dumps(keys),)).fetchall()
    hits.sort()  # each gotcha's rules in a stable order
    severity = _active(catalog, {doc for doc, _, _ in hits})
    for doc, kind, value in hits:
        if doc in severity:
            yield doc, kind, value, severity[doc]


def gotcha_terms(catalog: Catalog, words: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(doc, term) for each of `words` in the keyword postings of an active gotcha."""
    known = catalog.conn.execute("SELECT word, id FROM words WHERE word IN (SELECT value FROM json_each(?)) "
                                 "ORDER BY word", (json.dumps(sorted(set(words))),)).fetchall()
    if not known:
        return iter(())
    gotchas = {row[0] for row in catalog.conn.execute("SELECT id FROM docs WHERE type = 'gotcha'")}
    hits = [(doc, term) for term, word in known for doc in postings.holding(catalog.conn, word, gotchas)]
    active = _active(catalog, {doc for doc, _ in hits})
    return ((doc, term) for doc, term in hits if doc in active)


def _active(catalog: Catalog, docs: set[int]) -> dict[int, str | None]:
    """{doc: severity} for those of `docs` that are active gotchas (their rows are read only here)."""
    if not docs:
        return {}
    return dict(catalog.conn.execute(_ACTIVE, (json.dumps(sorted(docs)),)))
