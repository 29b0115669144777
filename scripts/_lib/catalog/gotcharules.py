"""The catalog's answer to "which gotchas could apply here": their globs and the tags that could match.

A hook on every tool call asks it, so the filtering happens in SQLite: a gotcha's tag can match a
path or command only when it is one of the words the caller offers, or holds a hyphen (its parts
are matched one by one); a glob can match only when its key (base.globs.glob_key) is one the
caller's paths have, or it has none.
"""

from __future__ import annotations

import json

from . import postings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Iterator

    from .catalog import Catalog

_HITS = ("SELECT x.doc, 'tag', x.tag FROM docs g JOIN tags x ON x.doc = g.id WHERE g.type = 'gotcha' "
         "AND (x.tag IN (SELECT value FROM json_each(?)) OR instr(x.tag, '-') > 0) "
         "UNION ALL SELECT doc, 'glob', pattern FROM globs WHERE key IN (SELECT value FROM json_each(?)) "
         "UNION ALL SELECT doc, 'glob', pattern FROM globs WHERE key IS NULL")  # indexes only: no memory's row is read
_ACTIVE = ("SELECT id, json_extract(extra, '$.severity') FROM docs "
           "WHERE id IN (SELECT value FROM json_each(?)) AND type = 'gotcha' AND status = 'active'")


def gotcha_rules(catalog: Catalog, words: Iterable[str],
                 path_keys: Iterable[str]) -> Iterator[tuple[int, str, str, str | None]]:
    """(doc, "tag" or "glob", value, severity) for the active gotchas: those of their globs that could
    match a path with `path_keys`, and those of their tags that are in `words` or hold a hyphen."""
    hits = catalog.conn.execute(_HITS, (json.dumps(sorted(set(words))), json.dumps(sorted(set(path_keys))))).fetchall()
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
