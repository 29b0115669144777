"""BM25 ranking over the catalog's postings, decoding only what can change the top k (block-max MaxScore).

Each postings row (a word in a block of 256 doc ids) keeps its highest frequency and shortest
length, which bound what the word adds to the score of any memory of the block. Query words
are taken rarest first and each memory is scored once, with the first of them it holds: it can
gain at most the bounds of the block's words from that one on. Once the top k is full, a block
whose bounds add up below the k-th score is passed over undecoded, a word without whose bound
the k-th score is out of reach narrows the block to the memories holding it (a set intersection
of low bytes), and a memory is dropped as soon as what it holds cannot reach the k-th score.
The top k, its scores and the order of equal scores are exactly those of scoring every
matching memory (tests/test_index.py checks it on random corpora).
"""

from __future__ import annotations

import heapq
import math
from itertools import accumulate

from . import postings, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from array import array

    from .catalog import Catalog
    from .postings import Row

K1 = 1.5   # term-frequency saturation; tuned on the ADR evaluation set (bench/search_quality.py)
B = 0.75   # document-length normalisation
PREFIX_WEIGHT = 0.5  # a query word unknown to the scope also matches words it begins ("auth" -> "authentication")
_BATCH = 500  # doc ids per `IN (...)` lookup
_SLACK = 1e-9  # (relative) a score and the bounds above it are sums in different orders: a rounding apart


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


def _weighted_terms(conn: sqlite3.Connection, terms: list[str]) -> list[tuple[float, int, list[Row]]]:
    """(weight, word id, postings rows) of each query word, or of the known words it begins."""
    found = []
    for term in terms:
        word = words.id_of(conn, term)
        rows = postings.blocks_of(conn, word) if word is not None else []
        if word is not None and rows:
            found.append((1.0, word, rows))
        elif len(term) >= 3:  # (words no memory holds any more stay in the table: skipped)
            for (other,) in conn.execute(
                    "SELECT id FROM words w WHERE word > ? AND word < ? "
                    "AND EXISTS (SELECT 1 FROM postings p WHERE p.word = w.id) ORDER BY word LIMIT 50",
                    (term, term + "\uffff")).fetchall():
                found.append((PREFIX_WEIGHT, other, postings.blocks_of(conn, other)))
    return found


def rank(catalog: Catalog, terms: list[str], *, limit: int | None = None,
         max_df: float | None = None) -> list[tuple[str, float]]:
    """(slug, BM25 score) of the catalog's memories matching any of `terms`, best first.

    `limit` keeps the best ones only (and lets blocks and memories that cannot reach them go unread);
    `max_df` (a share of the scope's memories) skips words so common they cannot tell memories apart.
    """
    if not terms or limit == 0:
        return []
    conn = catalog.conn
    count, average = collection(conn)
    if not count:
        return []
    weighted = []
    for weight, word, rows in _weighted_terms(conn, terms):
        df = sum(len(row[1]) for row in rows) // 2
        if max_df is None or df <= max_df * count:
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            weighted.append((weight * idf, word, rows))
    if not weighted:
        return []
    weighted.sort(key=lambda item: -item[0])  # rarest first: the order scores are summed and ties broken in
    ordered = _best(conn, weighted, limit, K1 * (1 - B), K1 * B / average)
    slugs: dict[int, str] = {}
    for start in range(0, len(ordered), _BATCH):
        batch = [doc for _, _, doc in ordered[start:start + _BATCH]]
        slugs.update(conn.execute(f"SELECT id, slug FROM docs WHERE id IN ({', '.join('?' * len(batch))})", batch))
    return [(slugs[doc], score) for score, _, doc in ordered if doc in slugs]


def _best(conn: sqlite3.Connection, weighted: list[tuple[float, int, list[Row]]], limit: int | None,
          norm: float, scale: float) -> list[tuple[float, int, int]]:
    """(score, first query word held, doc) of the best `limit` memories (all when None), best first;
    equal scores go by the first (rarest) query word a memory holds, then by doc id (the order
    scoring every memory word by word gives them). See the module's docstring for the pruning."""
    ceiling = K1 + 1
    found, bounds, places, highest, exact = _postings(conn, weighted, norm, scale)
    reach = list(accumulate(reversed(highest), initial=0.0))[::-1]  # the most the words from the i-th on add
    heap: list[tuple[float, int, int]] = []  # (score, -place, -doc), the worst of the best at heap[0]
    threshold = -math.inf  # the worst of the best once there are `limit`, less a rounding error
    seen: set[int] = set()  # memories taken up with a rarer word (scored, or found out of reach)
    gains: dict[int, list[float]] = {}  # block -> the most its words from the i-th on add together
    lengths: dict[int, array[int]] = {}
    for place, held in enumerate(places):
        if reach[place] < threshold:
            break  # no memory holding none of the rarer words can reach the best any more
        chosen = []
        for block, index in held:
            gain = gains.get(block)
            if gain is None:
                gain = gains[block] = list(accumulate(reversed(bounds[block]), initial=0.0))[::-1]
            if gain[index] >= threshold:
                chosen.append((block, index))
        lengths.update(postings.lengths_in(conn, [block for block, _ in chosen if block not in lengths]))
        for block, index in chosen:
            gain, present, sizes = gains[block], found[block], lengths[block]
            if gain[index] < threshold:
                continue  # (the threshold rose since)
            wanted = _needed(present, bounds[block], gain, index, threshold)
            if wanted is not None and not wanted:
                continue
            weight, lows, data = present[index][1:]
            base = block << postings.SHIFT
            for at, low in enumerate(lows):
                doc = base + low
                if doc in seen or (wanted is not None and low not in wanted):
                    continue
                seen.add(doc)
                length = sizes[low]
                tf = data[2 * at + 1]
                if tf == postings.HEAVY:
                    tf = exact.get((place, doc), tf)
                score = weight * tf * ceiling / (tf + norm + scale * length)
                for later in range(index + 1, len(present)):
                    if score + gain[later] < threshold:
                        break
                    other_place, other, other_lows, other_data = present[later]
                    at = other_lows.find(low)
                    if at >= 0:
                        tf = other_data[2 * at + 1]
                        if tf == postings.HEAVY:
                            tf = exact.get((other_place, doc), tf)
                        score += other * tf * ceiling / (tf + norm + scale * length)
                else:
                    entry = (score, -place, -doc)
                    if limit is None or len(heap) < limit:
                        heap.append(entry)
                        if len(heap) == limit:
                            heapq.heapify(heap)
                            threshold = heap[0][0] - _SLACK * abs(heap[0][0])
                    elif entry > heap[0]:
                        heapq.heapreplace(heap, entry)
                        threshold = heap[0][0] - _SLACK * abs(heap[0][0])
    heap.sort(reverse=True)
    return [(score, -place, -doc) for score, place, doc in heap]


def _postings(conn: sqlite3.Connection, weighted: list[tuple[float, int, list[Row]]], norm: float, scale: float) -> tuple[
        dict[int, list[tuple[int, float, bytes, bytes]]], dict[int, list[float]], list[list[tuple[int, int]]],
        list[float], dict[tuple[int, int], int]]:
    """The query words' postings, not decoded, by block: (word's place, weight, low bytes, packed
    postings) by place; the most each adds to a score there; for each place, (block, index in the
    block's lists); the most each word adds in any block; and (place, doc) -> tf of frequencies
    past a byte."""
    ceiling = K1 + 1
    found: dict[int, list[tuple[int, float, bytes, bytes]]] = {}
    bounds: dict[int, list[float]] = {}
    places, highest = [], []
    exact: dict[tuple[int, int], int] = {}
    for place, (weight, word, rows) in enumerate(weighted):
        held, most, heavy = [], 0.0, False
        for block, data, top, least in rows:
            present = found.get(block)
            if present is None:
                present = found[block] = []
                bounds[block] = []
            held.append((block, len(present)))
            present.append((place, weight, data[0::2], data))
            if top < postings.HEAVY:
                bound = weight * top * ceiling / (top + norm + scale * least)
            else:
                bound, heavy = weight * ceiling, True
            bounds[block].append(bound)
            if bound > most:
                most = bound
        places.append(held)
        highest.append(most)
        if heavy:
            exact.update(((place, doc), tf) for doc, tf in postings.heavy_of(conn, word).items())
    return found, bounds, places, highest, exact


def _needed(present: list[tuple[int, float, bytes, bytes]], bounds: list[float], gain: list[float],
            index: int, threshold: float) -> set[int] | None:
    """The low bytes of the memories of the `index`-th word that also hold each later word they
    cannot reach `threshold` without (None when there is no such word)."""
    wanted = None
    for later in range(index + 1, len(present)):
        if gain[index] - bounds[later] < threshold:
            wanted = set(present[index][2]) if wanted is None else wanted
            wanted.intersection_update(present[later][2])
    return wanted
