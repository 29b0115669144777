"""BM25 ranking over the catalog's postings, reading only what can change the top k (MaxScore).

Query words are taken rarest first. A word can add at most idf * (K1 + 1) to a memory's score;
once the scores found so far put the k-th best above what all the words not yet read could
add together, no memory outside the candidates can still enter the top k. The remaining
(common) words are then read only in the blocks of doc ids of the candidates that can still
make it, instead of in full. The top k is exactly that of
scoring every matching memory, at a cost bounded by the rare words' postings and k.
"""

from __future__ import annotations

import heapq
import math

from . import postings, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from .catalog import Catalog

K1 = 1.5   # term-frequency saturation; tuned on the ADR evaluation set (bench/search_quality.py)
B = 0.75   # document-length normalisation
PREFIX_WEIGHT = 0.5  # a query word unknown to the scope also matches words it begins ("auth" -> "authentication")
_BATCH = 500  # doc ids per `IN (...)` lookup


STATS_KEY = "bm25"  # meta: "<memories> <sum of their lengths>", kept by every transaction that changes docs


def collection(conn: sqlite3.Connection) -> tuple[int, float]:
    """(number of memories, average length in terms) of the scope, without reading every row."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (STATS_KEY,)).fetchone()
    if row is not None:
        count, total = map(int, row[0].split())
    else:
        count, total = conn.execute("SELECT COUNT(*), COALESCE(SUM(length), 0) FROM docs").fetchone()
    return count, max(total / count, 1.0) if count else 1.0


def count_changes(conn: sqlite3.Connection, memories: int, length: int) -> None:
    """Add a transaction's change in memories and their total length to the kept figures
    (counted afresh when there are none yet: then the rows already hold the change)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (STATS_KEY,)).fetchone()
    if row is not None:
        count, total = map(int, row[0].split())
        count, total = count + memories, total + length
    else:
        count, total = conn.execute("SELECT COUNT(*), COALESCE(SUM(length), 0) FROM docs").fetchone()
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (STATS_KEY, f"{count} {total}"))


def document_frequency(conn: sqlite3.Connection, term: str) -> int:
    word = words.id_of(conn, term)
    return postings.frequency(conn, word) if word is not None else 0


def _weighted_terms(conn: sqlite3.Connection, terms: list[str]) -> list[tuple[int, float, int]]:
    """(word id, weight, document frequency) of each query word, or of the known words it begins."""
    found = []
    for term in terms:
        word = words.id_of(conn, term)
        df = postings.frequency(conn, word) if word is not None else 0
        if word is not None and df:
            found.append((word, 1.0, df))
        elif len(term) >= 3:  # (words no memory holds any more stay in the table: skipped)
            for (other,) in conn.execute(
                    "SELECT id FROM words w WHERE word > ? AND word < ? "
                    "AND EXISTS (SELECT 1 FROM postings p WHERE p.word = w.id) ORDER BY word LIMIT 50",
                    (term, term + "\uffff")).fetchall():
                found.append((other, PREFIX_WEIGHT, postings.frequency(conn, other)))
    return found


def rank(catalog: Catalog, terms: list[str], *, limit: int | None = None,
         max_df: float | None = None) -> list[tuple[str, float]]:
    """(slug, BM25 score) of the catalog's memories matching any of `terms`, best first.

    `limit` keeps the best ones only (and lets common words be read for candidates only);
    `max_df` (a share of the scope's memories) skips words so common they cannot tell memories apart.
    """
    if not terms:
        return []
    conn = catalog.conn
    count, average = collection(conn)
    if not count:
        return []
    weighted = []
    for word, weight, df in _weighted_terms(conn, terms):
        if max_df is None or df <= max_df * count:
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            weighted.append((weight * idf, word))
    if not weighted:
        return []
    weighted.sort(key=lambda item: -item[0])  # rarest (highest bound) first
    norm, scale = K1 * (1 - B), K1 * B / average
    bounds = [weight * (K1 + 1) for weight, _ in weighted]
    remaining = sum(bounds)
    scores: dict[int, float] = {}
    lengths: dict[int, int] = {}
    position = 0
    for position, (weight, word) in enumerate(weighted):
        if limit is not None and len(scores) >= limit and _kth(scores, limit) > remaining:
            break  # no memory outside the candidates can reach the top `limit` any more
        for doc, tf, length in postings.read(conn, word):
            scores[doc] = scores.get(doc, 0.0) + weight * tf * (K1 + 1) / (tf + norm + scale * length)
            lengths[doc] = length
        remaining -= bounds[position]
    else:
        position = len(weighted)
    if position < len(weighted):  # the common words: only for candidates that can still make the top
        threshold = _kth(scores, limit)  # type: ignore[arg-type]
        survivors = [doc for doc, score in scores.items() if score + remaining >= threshold]
        wanted = set(survivors)
        blocks = {doc >> postings.SHIFT for doc in survivors}
        for weight, word in weighted[position:]:
            for doc, tf, _ in postings.read(conn, word, blocks):
                if doc in wanted:
                    scores[doc] += weight * tf * (K1 + 1) / (tf + norm + scale * lengths[doc])
        scores = {doc: scores[doc] for doc in survivors}
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    if limit is not None:
        ordered = ordered[:limit]
    slugs: dict[int, str] = {}
    for start in range(0, len(ordered), _BATCH):
        batch = [doc for doc, _ in ordered[start:start + _BATCH]]
        slugs.update(conn.execute(f"SELECT id, slug FROM docs WHERE id IN ({', '.join('?' * len(batch))})", batch))
    return [(slugs[doc], score) for doc, score in ordered if doc in slugs]


def _kth(scores: dict[int, float], k: int) -> float:
    return heapq.nlargest(k, scores.values())[-1]
