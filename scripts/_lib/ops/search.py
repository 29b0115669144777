"""Keyword search: BM25 over the catalog's postings, with snippets around the match."""

from __future__ import annotations

import math
import re
from collections import defaultdict

from ..base import text
from ..catalog.catalog import Catalog, Entry

K1 = 1.5   # term-frequency saturation; tuned on the ADR evaluation set (bench/search_quality.py)
B = 0.75   # document-length normalisation
PREFIX_WEIGHT = 0.5  # a query word unknown to the scope also matches words it begins ("auth" -> "authentication")
SNIPPET_WIDTH = 160


class Hit:
    """One search result."""

    __slots__ = ("entry", "score", "snippet")

    def __init__(self, entry: Entry, score: float, snippet: str = "") -> None:
        self.entry, self.score, self.snippet = entry, score, snippet

    def as_json(self) -> dict[str, object]:
        data = self.entry.as_json()
        data.update(score=round(self.score, 4), snippet=self.snippet)
        return data


def rank(catalog: Catalog, query: str, *, limit: int | None = None,
         max_df: float | None = None) -> list[tuple[str, float]]:
    """(slug, BM25 score) of the memories matching any query word, best first.

    `limit` keeps the best ones only; `max_df` (a share of the scope's memories) skips words
    so common they cannot tell memories apart, which keeps per-prompt lookups fast.
    """
    terms = text.query_terms(query)
    if not terms:
        return []
    conn = catalog.conn
    count, total = conn.execute("SELECT COUNT(*), COALESCE(SUM(length), 0) FROM docs").fetchone()
    if not count:
        return []
    average = max(total / count, 1.0)
    postings: list[tuple[float, list[tuple[int, int]]]] = []
    for term in terms:
        weighted = [(term, 1.0)]
        if not conn.execute("SELECT 1 FROM postings WHERE term=? LIMIT 1", (term,)).fetchone() and len(term) >= 3:
            weighted = [(row[0], PREFIX_WEIGHT) for row in conn.execute(
                "SELECT DISTINCT term FROM postings WHERE term > ? AND term < ? LIMIT 50", (term, term + "\uffff"))]
        for word, weight in weighted:
            rows = conn.execute("SELECT doc, tf FROM postings WHERE term=?", (word,)).fetchall()
            if rows and (max_df is None or len(rows) <= max_df * count):
                idf = math.log(1 + (count - len(rows) + 0.5) / (len(rows) + 0.5))
                postings.append((weight * idf, rows))
    if not postings:
        return []
    lengths = dict(conn.execute("SELECT id, length FROM docs")) if sum(len(rows) for _, rows in postings) > 200 \
        else dict(conn.execute(f"SELECT id, length FROM docs WHERE id IN "
                               f"({', '.join(str(doc) for _, rows in postings for doc, _ in rows)})"))
    scores: dict[int, float] = defaultdict(float)
    norm = K1 * (1 - B)
    scale = K1 * B / average
    for weight, rows in postings:
        for doc, tf in rows:
            scores[doc] += weight * tf * (K1 + 1) / (tf + norm + scale * lengths.get(doc, average))
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    if limit is not None:
        ordered = ordered[:limit]
    slugs = dict(conn.execute(
        f"SELECT id, slug FROM docs WHERE id IN ({', '.join(str(doc) for doc, _ in ordered)})"))
    return [(slugs[doc], score) for doc, score in ordered if doc in slugs]


def snippet(content: str, query: str, width: int = SNIPPET_WIDTH) -> str:
    """A one-line excerpt of `content` around the first query word it contains."""
    flat = " ".join(content.split())
    if not flat:
        return ""
    position = -1
    for term in text.query_terms(query) or query.lower().split():
        match = re.search(r"(?<![^\W_])" + re.escape(term), flat, re.IGNORECASE)
        if match and (position < 0 or match.start() < position):
            position = match.start()
    if position < 0:
        return flat[:width] + ("..." if len(flat) > width else "")
    start = max(0, position - width // 3)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < position else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > position else end
    return ("..." if start else "") + flat[start:end] + ("..." if end < len(flat) else "")
