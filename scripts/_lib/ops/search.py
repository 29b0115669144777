"""Keyword search: BM25 over the catalog's postings, with snippets around the match."""

from __future__ import annotations

import re

from ..base import text
from ..catalog import bm25
from ..catalog.catalog import Catalog, Entry

SNIPPET_WIDTH = 160
VERIFIED = 20  # results whose files an unlimited ranking checks (the caller shows the first ones)


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
    ranked = bm25.rank(catalog, terms, limit=limit, max_df=max_df)
    if catalog.verify_slugs([slug for slug, _ in ranked[:limit or VERIFIED]]):  # one was edited by hand
        ranked = bm25.rank(catalog, terms, limit=limit, max_df=max_df)
    return ranked


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
