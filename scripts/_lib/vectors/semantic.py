"""Semantic and hybrid search over cached embeddings, and similarity for link suggestions.

The per-memory JSON files of `.embedding-cache/` are the cache of record. For speed each
scope also keeps a derived pack, `.cache/embeddings.pack`: every usable vector (a memory's
own and its chunks') quantised to 7 bits, stored column by column. A search multiplies
the query into all rows at once with Python's big integers (each column becomes one
integer whose 3- or 4-byte lanes are the rows; no numpy): 17,000 rows of 768 dimensions
take about 45 ms. The winners are then re-scored exactly from their JSON files. When the
cache directory changed, the pack is brought up to date by re-reading only the cache
files whose stamps changed.

Hybrid ranking fuses the keyword (BM25) and cosine rankings (fuse; FUSION); a long memory
is ranked by its best-matching chunk (embed.chunk_texts).
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import json
import math
import os
import sys
import time
from array import array
from collections import namedtuple
from itertools import accumulate, repeat
from operator import itemgetter, mul

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Iterable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace
    from ..ops.store import Filters

from . import embedder as embed
from ..base import errors, fsutil
from ..ops import search

MODES = ("hybrid", "semantic")
PACK_NAME = "embeddings.pack"
PACK_MAGIC = b"MEMPACK1"
PACK_VERSION = 2
RACY_NS = 2_000_000_000  # a directory changed this recently may change again within its mtime tick
# Hybrid: how the keyword and meaning rankings are merged (fuse: method, keyword weight, rrf k),
# with a server's model and with the embedded model: each chosen by cross-validation on the
# dev queries of the ADR set (bench/search_quality.py), with all-MiniLM-L6-v2 over the Ollama
# API and with a static model distilled from it.
FUSION = ("convex", 0.4, 0.0)
FUSION_IN_PROCESS = ("rrf", 0.7, 1.0)
KEYWORD_DEPTH = 200      # hybrid: keyword matches fused per scope (beyond, BM25 adds next to nothing)
LAZY_LIMIT = 16          # missing embeddings a search computes on the way with a server (the rest: `memory embed`)
LAZY_LIMIT_IN_PROCESS = 128  # ... with the embedded model (about 2 ms each)
RESCORE_EXTRA = 10       # approximate winners re-scored exactly beyond --limit
LEVELS = 63              # quantised components are ZERO + (-63..63)
ZERO = 64
_U32 = "I" if array("I").itemsize == 4 else "L"


# -- the packed cache -----------------------------------------------------------------------

def _quantise(vector: list[float]) -> tuple[bytes, float, int]:
    """(bytes 1..127 = ZERO + round(63 * x / max|x|), scale back to unit length, byte sum).

    Seven bits keep sum(u * w) over 1,040 dimensions below 2**24, so the lanes of the
    big-integer product (see _scores) need only three bytes for most models.
    """
    norm = math.sqrt(math.fsum(x * x for x in vector))
    peak = max(max(vector), -min(vector)) if vector else 0.0
    if not norm or not peak:
        return bytes([ZERO]) * len(vector), 0.0, ZERO * len(vector)
    scale = LEVELS / peak
    values = bytes([int(x * scale + ZERO + 0.5) for x in vector])
    return values, peak / (LEVELS * norm), sum(values)


def _lane_bytes(dim: int) -> int:
    """Bytes per lane: the largest dot product of quantised vectors must fit."""
    return 3 if dim * (2 * LEVELS + 1) ** 2 < 1 << 24 else 4


def _stamp(path: Path | str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"


def _racy(stamp: str) -> bool:
    return time.time_ns() - int(stamp.split(":")[1]) < RACY_NS


def _scan(directory: Path) -> dict[str, str]:
    """slug -> stamp of every cache file."""
    found: dict[str, str] = {}
    try:
        names = os.listdir(directory)
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return found
    try:
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                with contextlib.suppress(OSError):
                    info = os.stat(name, dir_fd=fd)
                    found[name[:-5]] = f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"
    finally:
        os.close(fd)
    return found


class PackHeader(namedtuple("PackHeader", "model dim rows dir_stamp")):
    """What a pack file holds, without its vectors."""

    __slots__ = ()


class Pack:
    """The usable vectors of one scope for one model, quantised and stored by column.

    Memory m has `counts[m]` rows from `starts[m]` (its vector, then its chunks); a
    memory whose cache file is unusable (other model or size, broken) keeps its stamp
    with no rows, so it is not read again until its file changes.
    """

    __slots__ = ("model", "dim", "slugs", "hashes", "stamps", "counts", "starts", "scales", "sums", "columns",
                 "dir_stamp", "_usable")

    def __init__(self, model: str, dim: int, slugs: list[str], hashes: list[str], stamps: list[str],
                 counts: list[int], scales: array, sums: array, columns: bytes | memoryview,
                 dir_stamp: str | None) -> None:
        self.model, self.dim, self.slugs, self.hashes, self.stamps = model, dim, slugs, hashes, stamps
        self.counts, self.scales, self.sums, self.columns, self.dir_stamp = counts, scales, sums, columns, dir_stamp
        self.starts = list(accumulate(counts, initial=0))[:-1]
        self._usable: dict[str, str] | None = None

    @property
    def rows(self) -> int:
        return len(self.scales)

    @classmethod
    def empty(cls, model: str) -> "Pack":
        return cls(model, 0, [], [], [], [], array("d"), array(_U32), b"", None)

    def usable_hashes(self) -> dict[str, str]:
        """slug -> content hash of every memory the pack holds vectors for."""
        if self._usable is None:
            self._usable = {slug: content_hash
                            for slug, content_hash, count in zip(self.slugs, self.hashes, self.counts) if count}
        return self._usable

    def usable(self, slug: str, content_hash: str) -> bool:
        """Whether the pack holds vectors of `slug` for this exact content."""
        return self.usable_hashes().get(slug) == content_hash

    # -- files

    @classmethod
    def fresh(cls, catalog: Catalog, model: str) -> "Pack":
        """The scope's pack for `model`, brought up to date with the cache files (and saved)."""
        path = catalog.scope.cache_dir / PACK_NAME
        directory = catalog.embedding_dir
        dir_stamp = _stamp(directory)
        pack = cls.read(path)
        if pack is not None and not embed.same_model(pack.model, model):
            pack = None
        if pack is not None and dir_stamp is not None and pack.dir_stamp == dir_stamp:
            return pack
        if dir_stamp is None:
            return cls.empty(model)
        saved_stamp = pack.dir_stamp if pack is not None else None
        updated = (pack or cls.empty(model))._rebuilt(directory, _scan(directory))
        updated.dir_stamp = None if _racy(dir_stamp) else dir_stamp  # racy: check the files again next time
        if pack is None or updated is not pack or updated.dir_stamp != saved_stamp:
            with contextlib.suppress(OSError):
                updated.write(path)
        return updated

    @classmethod
    def read(cls, path: Path, *, header_only: bool = False) -> Any:
        """The pack saved at `path` (its PackHeader only, with `header_only`); None when missing,
        damaged or from another version."""
        try:
            with open(path, "rb") as handle:
                raw = handle.read(4096) if header_only else handle.read()
        except OSError:
            return None
        try:
            if raw[:8] != PACK_MAGIC:
                return None
            size = int.from_bytes(raw[8:12], "little")
            header = json.loads(raw[12:12 + size])
            if (header.get("version") != PACK_VERSION or header.get("byteorder") != sys.byteorder
                    or not isinstance(header.get("model"), str)):
                return None
            dim, rows, memories = int(header["dim"]), int(header["rows"]), int(header["memories"])
            if header_only:
                return PackHeader(header["model"], dim, rows, header.get("dirStamp"))
            view = memoryview(raw)
            position = 12 + size
            texts = []
            for length in header["texts"]:
                texts.append(bytes(view[position:position + length]).decode("utf-8"))
                position += length
            slugs, hashes, stamps = [text.split("\n") if memories else [] for text in texts]
            counts = array(_U32)
            counts.frombytes(view[position:position + 4 * memories])
            position += 4 * memories
            scales = array("d")
            scales.frombytes(view[position:position + 8 * rows])
            position += 8 * rows
            sums = array(_U32)
            sums.frombytes(view[position:position + 4 * rows])
            position += 4 * rows
            columns = view[position:position + rows * dim]
            if (len(columns) != rows * dim or not len(slugs) == len(hashes) == len(stamps) == memories
                    or sum(counts) != rows):
                return None
            return cls(header["model"], dim, slugs, hashes, stamps, list(counts), scales, sums, columns,
                       header.get("dirStamp"))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, OverflowError):
            return None

    def write(self, path: Path) -> None:
        texts = ["\n".join(items).encode("utf-8") for items in (self.slugs, self.hashes, self.stamps)]
        header = json.dumps({"version": PACK_VERSION, "byteorder": sys.byteorder, "model": self.model,
                             "dim": self.dim, "rows": self.rows, "memories": len(self.slugs),
                             "dirStamp": self.dir_stamp, "texts": [len(text) for text in texts]}).encode()
        fsutil.write_atomically(path, b"".join([PACK_MAGIC, len(header).to_bytes(4, "little"), header, *texts,
                                                array(_U32, self.counts).tobytes(), self.scales.tobytes(),
                                                self.sums.tobytes(), bytes(self.columns)]), durable=False)

    def _rebuilt(self, directory: Path, files: dict[str, str]) -> "Pack":
        """This pack with the cache files whose stamps changed re-read (self when none did)."""
        kept = [m for m, slug in enumerate(self.slugs) if files.get(slug) == self.stamps[m]]
        known = {self.slugs[m] for m in kept}
        fresh: list[tuple[str, str, embed.Cached | None]] = []
        for slug in sorted(files):
            if slug not in known:
                entry = embed.read_cached(directory / f"{slug}.json")
                usable = entry is not None and entry.slug == slug and embed.same_model(entry.model, self.model)
                fresh.append((slug, files[slug], entry if usable else None))
        if not fresh and len(kept) == len(self.slugs):
            return self
        votes: dict[int, int] = {}
        if any(self.counts[m] for m in kept):
            votes[self.dim] = sum(1 for m in kept if self.counts[m])
        for _, _, entry in fresh:
            if entry is not None:
                votes[len(entry.vectors[0])] = votes.get(len(entry.vectors[0]), 0) + 1
        dim = max(votes, key=lambda size: (votes[size], size == self.dim)) if votes else 0
        same = dim == self.dim
        slugs, hashes, stamps, counts = [], [], [], []
        scales, sums = array("d"), array(_U32)
        runs: list[list[int]] = []  # row ranges of this pack that are kept
        for m in kept:
            slugs.append(self.slugs[m])
            stamps.append(self.stamps[m])
            count = self.counts[m] if same else 0
            hashes.append(self.hashes[m] if count else "")
            counts.append(count)
            if count:
                start = self.starts[m]
                if runs and runs[-1][1] == start:
                    runs[-1][1] = start + count
                else:
                    runs.append([start, start + count])
        for start, end in runs:
            scales.extend(self.scales[start:end])
            sums.extend(self.sums[start:end])
        new_rows = []
        for slug, stamp, entry in fresh:
            slugs.append(slug)
            stamps.append(stamp)
            vectors = entry.vectors if entry is not None and len(entry.vectors[0]) == dim else []
            hashes.append(entry.content_hash if vectors and entry is not None else "")
            counts.append(len(vectors))
            for vector in vectors:
                values, scale, total = _quantise(vector)
                new_rows.append(values)
                scales.append(scale)
                sums.append(total)
        rows_before = self.rows
        old = memoryview(self.columns)
        added = b"".join(new_rows)
        parts: list[bytes | memoryview] = []
        for column in range(dim):
            base = column * rows_before
            parts.extend(old[base + start:base + end] for start, end in runs)
            parts.append(added[column::dim])
        return Pack(self.model, dim, slugs, hashes, stamps, counts, scales, sums, b"".join(parts), None)

    # -- scoring

    def row_scores(self, vector: list[float]) -> list[float]:
        """Approximate cosine similarity (within about 0.005) of `vector` with every row."""
        rows, dim = self.rows, self.dim
        if not rows or len(vector) != dim:
            return [0.0] * rows
        weights, query_scale, query_sum = _quantise(vector)
        return self._scores(weights, query_scale, query_sum, self.columns, rows, self.scales, self.sums)

    @staticmethod
    def _scores(weights: bytes, query_scale: float, query_sum: int, columns: bytes | memoryview | list[int],
                rows: int, scales: Any, sums: Any) -> list[float]:
        # Each column becomes one integer whose lanes (3 or 4 bytes) hold the rows' bytes;
        # adding weight * column over all columns leaves sum(w_i * u_ri) in lane r (it fits
        # the lane: no carries), i.e. every row's dot product in len(weights) steps. Columns
        # of equal weight are added first and multiplied once. `columns` may also be those
        # integers already made (see similar_pairs).
        width = _lane_bytes(len(weights))
        if isinstance(columns, list):
            integer = columns.__getitem__
        else:
            view = memoryview(columns)
            lanes_buffer = bytearray(width * rows)
            from_bytes = int.from_bytes

            def integer(column: int) -> int:  # type: ignore[misc]  # a list's own __getitem__ above
                lanes_buffer[0::width] = view[column * rows:(column + 1) * rows]
                return from_bytes(lanes_buffer, "little")
        total = same = 0
        current = 0
        for column in sorted(range(len(weights)), key=weights.__getitem__):
            if weights[column] != current:
                total += current * same
                current, same = weights[column], 0
            same += integer(column)
        total += current * same
        packed = total.to_bytes(width * rows, "little")
        if width == 3:
            wide = bytearray(4 * rows)
            for byte in range(3):
                wide[byte::4] = packed[byte::3]
            packed = bytes(wide)
        lanes = array(_U32)
        lanes.frombytes(packed)
        if sys.byteorder != "little":
            lanes.byteswap()
        # sum((u - Z) * (w - Z)) = sum(u * w) - Z * (sum(u) + sum(w)) + Z * Z * dim, Z = ZERO
        offset = ZERO * ZERO * len(weights) - ZERO * query_sum
        return [(lane - ZERO * row_sum + offset) * scale * query_scale
                for lane, row_sum, scale in zip(lanes, sums, scales)]

    def best(self, vector: list[float], current: dict[str, str]) -> dict[str, tuple[float, int]]:
        """slug -> (best approximate cosine over its rows, which row) of every memory whose
        vectors match its current content hash."""
        scores = self.row_scores(vector)
        if self.usable_hashes() == current:  # the usual case: every memory is up to date
            singles, single_rows, groups = self._layout()
            found = dict(zip(singles, zip(itemgetter(*single_rows)(scores), repeat(0)))) if len(singles) > 1 else \
                {slug: (scores[row], 0) for slug, row in zip(singles, single_rows)}
        else:
            groups = [(slug, start, count) for slug, content_hash, count, start
                      in zip(self.slugs, self.hashes, self.counts, self.starts)
                      if count and current.get(slug) == content_hash]
            found = {}
        for slug, start, count in groups:
            segment = scores[start:start + count]
            top = max(segment)
            found[slug] = (top, segment.index(top))
        return found

    def _layout(self) -> tuple[list[str], list[int], list[tuple[str, int, int]]]:
        """Memories with one row (slugs, rows) and with several (slug, first row, rows)."""
        singles, single_rows, groups = [], [], []
        for slug, count, start in zip(self.slugs, self.counts, self.starts):
            if count == 1:
                singles.append(slug)
                single_rows.append(start)
            elif count:
                groups.append((slug, start, count))
        return singles, single_rows, groups


def catalog_hashes(catalog: Catalog) -> dict[str, str]:
    """slug -> content hash of every memory of the scope."""
    return dict(catalog.conn.execute("SELECT slug, hash FROM docs"))


def cached_dimension(catalog: Catalog, model: str) -> int | None:
    """The size of the scope's cached vectors for `model` (None when it has none)."""
    header = Pack.read(catalog.scope.cache_dir / PACK_NAME, header_only=True)
    if header is not None and embed.same_model(header.model, model) and header.rows:
        return header.dim
    entry = _first_cached(catalog, model)
    return len(entry.vectors[0]) if entry is not None else None


# -- search -----------------------------------------------------------------------------------

class Hit(search.Hit):
    """One semantic or hybrid search result."""

    __slots__ = ("similarity", "keyword_rank", "vector_rank", "chunk")

    def __init__(self, entry: Any, score: float, similarity: float | None, keyword_rank: int | None,
                 vector_rank: int | None) -> None:
        super().__init__(entry, score)
        self.similarity, self.keyword_rank, self.vector_rank = similarity, keyword_rank, vector_rank
        self.chunk = 0  # 0: the whole memory matched best; n: its n-th chunk

    def as_json(self) -> dict[str, object]:
        data = super().as_json()
        data.update(score=round(self.score, 6), similarity=None if self.similarity is None else
                    round(self.similarity, 4), keywordRank=self.keyword_rank, vectorRank=self.vector_rank,
                    chunk=self.chunk)
        return data


class Outcome:
    """What `memory semantic` found and how: mode is semantic, hybrid or keyword-fallback."""

    __slots__ = ("query", "mode", "model", "hits", "problem", "provider", "reason")

    def __init__(self, query: str, mode: str, model: str | None, hits: list[Any],
                 problem: embed.Unavailable | None = None, status: embed.Status | None = None) -> None:
        self.query, self.mode, self.model, self.hits, self.problem = query, mode, model, hits, problem
        self.provider = status.provider if status is not None else None  # which provider ran ...
        self.reason = status.reason if status is not None else None      # ... and why it was chosen

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"query": self.query, "mode": self.mode, "model": self.model,
                                "provider": self.provider, "providerReason": self.reason,
                                "count": len(self.hits), "results": [hit.as_json() for hit in self.hits]}
        if self.problem is not None:
            data.update(warning=self.problem.notice(), reason=self.problem.kind)
        return data


def search_memories(workspace: Workspace, query: str, filters: Filters, *, limit: int = 10,
                    mode: str | None = None, embedder: embed.Embedder | None = None) -> Outcome:
    """Semantic (cosine) or hybrid (keyword + cosine, fused) search of every readable scope.

    Falls back to keyword search when the provider is unavailable (degradation matrix);
    the Outcome then carries the reason and setup instructions. `embedder`: one made with
    the caller's download permission (default: no download).
    """
    from ..ops import store

    store.check_filters(filters, workspace)
    if not query.strip():
        raise errors.InvalidInput("empty search query",
                                  'give a phrase to look for, e.g. memory semantic "login issues"')
    if limit < 1:
        raise errors.InvalidInput("--limit must be at least 1")
    mode = mode or workspace.config.get("search.semanticMode") or "hybrid"
    if mode not in MODES:
        raise errors.InvalidInput(f"unknown semantic search mode {mode!r}", "use one of: " + ", ".join(MODES))
    embedder = embedder or embed.Embedder(workspace)
    try:
        embedder.ready()
        pending = _Pending(embedder.embed, [query])  # overlaps the local work below
        with contextlib.ExitStack() as stack:
            scopes = [_prepare(embedder, catalog, query, filters, mode)
                      for catalog in _catalogs(workspace, stack, filters)]
            query_vector = pending.result()[0]
            return _search(workspace, embedder, scopes, query, query_vector, limit, mode)
    except embed.Unavailable as exc:
        return Outcome(query, "keyword-fallback", None, store.search_memories(workspace, query, filters, limit=limit),
                       exc)
    finally:
        if embedder.status is not None and embedder.status.note:
            workspace.warn(embedder.status.note)


class _Pending:
    """A call running in a background thread; `result()` waits for it and re-raises its error."""

    def __init__(self, function: Any, *args: Any) -> None:
        import threading

        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(function, args), daemon=True)
        self._thread.start()

    def _run(self, function: Any, args: tuple[Any, ...]) -> None:
        try:
            self._value = function(*args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


class _Scope:
    """One scope's part of a search, prepared before the query vector is known."""

    __slots__ = ("catalog", "current", "pack", "allowed", "keyword")

    def __init__(self, catalog: Catalog, current: dict[str, str], pack: Pack,
                 allowed: set[str] | None, keyword: list[tuple[str, float]]) -> None:
        self.catalog, self.current, self.pack, self.allowed, self.keyword = catalog, current, pack, allowed, keyword


def _catalogs(workspace: Workspace, stack: contextlib.ExitStack, filters: Filters) -> list[Catalog]:
    from ..ops import store

    found = []
    for scope in workspace.readable_scopes(filters.scope):
        catalog = stack.enter_context(store.catalog_for(workspace, scope))
        if catalog is not None:
            store._report_problems(workspace, catalog.problems())
            found.append(catalog)
    return found


def _prepare(embedder: embed.Embedder, catalog: Catalog, query: str, filters: Filters, mode: str) -> _Scope:
    allowed = _allowed(catalog, filters)
    keyword = []
    if mode == "hybrid":
        depth = KEYWORD_DEPTH if allowed is None else None  # with filters: rank all, then filter
        keyword = [(slug, score) for slug, score in search.rank(catalog, query, limit=depth)
                   if allowed is None or slug in allowed]
    return _Scope(catalog, catalog_hashes(catalog), Pack.fresh(catalog, embedder.model), allowed, keyword)


def _search(workspace: Workspace, embedder: embed.Embedder, scopes: list[_Scope], query: str,
            query_vector: list[float], limit: int, mode: str) -> Outcome:
    vector: list[dict[str, tuple[float, int]]] = []   # per scope: slug -> (approximate cosine, best row)
    for part in scopes:
        part.pack = _pack_with_missing(workspace, embedder, part, len(query_vector), mode)
        found = part.pack.best(query_vector, part.current)
        vector.append(found if part.allowed is None else {slug: found[slug] for slug in found.keys() & part.allowed})
    keyword = [dict(part.keyword) for part in scopes]  # per scope: slug -> BM25
    if mode == "semantic":
        ranked = heapq.nlargest(limit + RESCORE_EXTRA, ((score, number, slug) for number, found in enumerate(vector)
                                                        for slug, (score, _) in found.items()))
        fused = {(number, slug): 0.0 for _, number, slug in ranked}
    else:
        fused = fuse(vector, keyword, FUSION_IN_PROCESS if embedder.ready().in_process else FUSION)
        fused = dict(heapq.nlargest(limit, fused.items(), key=itemgetter(1)))
    vector_scores = sorted(score for found in vector for score, _ in found.values())
    keyword_scores = sorted(score for scores in keyword for score in scores.values())
    hits = []
    for number, slug in fused:
        catalog = scopes[number].catalog
        entry = catalog.get(slug)
        if entry is None:
            continue
        cosine = vector[number].get(slug, (None, 0))[0]
        bm25 = keyword[number].get(slug)
        hit = Hit(entry, fused[(number, slug)], None, _rank(keyword_scores, bm25), _rank(vector_scores, cosine))
        _rescore(hit, catalog, query_vector)
        hits.append(hit)
    if mode == "semantic":
        hits.sort(key=lambda hit: -(hit.similarity or 0.0))
        hits = hits[:limit]
        for hit in hits:
            hit.score = hit.similarity or 0.0
    size = embed.chunking(embedder.ready())
    for hit in hits:
        _add_snippet(hit, query, size)
    return Outcome(query, mode, embedder.model, hits, status=embedder.status)


def _rank(ascending: list[float], score: float | None) -> int | None:
    """1 + how many of the scores beat `score` (None when the memory has no score)."""
    return None if score is None else len(ascending) - bisect.bisect_right(ascending, score) + 1


def fuse(vector: list[dict[str, tuple[float, int]]], keyword: list[dict[str, float]],
         fusion: tuple[str, float, float] = FUSION) -> dict[tuple[int, str], float]:
    """Hybrid scores of (scope number, slug); a memory missing from a ranking scores 0 there.

    `fusion` = (method, keyword weight w, k). rrf: reciprocal rank fusion, w / (k + keyword
    rank) + (1 - w) / (k + cosine rank), ranks counted over all scopes. convex: w x BM25
    divided by the best BM25 + (1 - w) x the cosine min-max scaled over all candidates.
    """
    method, keyword_weight, rrf_k = fusion
    if method == "rrf":
        fused: dict[tuple[int, str], float] = {}
        for weight, ranking in ((1.0 - keyword_weight, [((number, slug), score) for number, found in enumerate(vector)
                                                          for slug, (score, _) in found.items()]),
                                (keyword_weight, [((number, slug), score) for number, scores in enumerate(keyword)
                                                  for slug, score in scores.items()])):
            ranking.sort(key=lambda item: -item[1])
            for position, (key, _) in enumerate(ranking, 1):
                fused[key] = fused.get(key, 0.0) + weight / (rrf_k + position)
        return fused
    fused = {}
    cosines = [score for found in vector for score, _ in found.values()]
    if cosines:
        low = min(cosines)
        spread = max(cosines) - low
        factor = (1.0 - keyword_weight) / spread if spread > 0 else 0.0
        for number, found in enumerate(vector):
            fused.update({(number, slug): (score - low) * factor for slug, (score, _) in found.items()})
    best = max((max(scores.values()) for scores in keyword if scores), default=0.0)
    if best > 0:
        factor = keyword_weight / best
        for number, scores in enumerate(keyword):
            for slug, score in scores.items():
                key = (number, slug)
                fused[key] = fused.get(key, 0.0) + score * factor
    return fused


def _allowed(catalog: Catalog, filters: Filters) -> set[str] | None:
    """Slugs passing the filters (None: no filter given)."""
    if not (filters.types or filters.tag or filters.status or filters.since):
        return None
    from ..base import clock

    since = clock.to_iso(filters.since) if filters.since else None
    return {entry.slug for entry in catalog.entries(types=filters.types, tag=filters.tag, status=filters.status,
                                                     since=since)}


def _pack_with_missing(workspace: Workspace, embedder: embed.Embedder, part: _Scope, size: int, mode: str) -> Pack:
    """The scope's pack, after embedding up to LAZY_LIMIT (with the embedded model LAZY_LIMIT_IN_PROCESS)
    memories that have no usable vectors."""
    catalog, current, pack = part.catalog, part.current, part.pack
    if pack.rows and pack.dim != size:
        raise embed.Unavailable(
            "dimension", f"{embedder.model} now returns {size}-dimensional vectors, but the cached embeddings of "
                         f"the {catalog.scope.name} scope have {pack.dim}",
            "if the model behind that name changed, recompute them with `memory embed --all`",
            ["Recompute the embeddings for the changed model: memory embed --all"])
    usable = pack.usable_hashes()
    if usable == current:
        return pack
    missing = [slug for slug, content_hash in current.items() if usable.get(slug) != content_hash]
    if not missing:
        return pack
    updated = dict(catalog.conn.execute("SELECT slug, updated FROM docs"))
    missing.sort(key=lambda slug: updated.get(slug, ""), reverse=True)  # the newest first
    lazy = LAZY_LIMIT_IN_PROCESS if embedder.ready().in_process else LAZY_LIMIT
    try:
        items = embed.read_memories(catalog, missing[:lazy])
        if embed.embed_memories(embedder, catalog, items, expected_dim=size):
            pack = Pack.fresh(catalog, embedder.model)
    except embed.Unavailable as exc:
        workspace.warn(f"could not embed memories of the {catalog.scope.name} scope: {exc.message}")
    left = sum(1 for slug, content_hash in current.items() if not pack.usable(slug, content_hash))
    if left:
        workspace.warn(f"{left} memor{'y' if left == 1 else 'ies'} of the {catalog.scope.name} scope "
                       f"{'has' if left == 1 else 'have'} no embedding yet "
                       f"({'matched by keywords only' if mode == 'hybrid' else 'left out of this search'}); "
                       "run `memory embed` to compute them")
    return pack


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(map(mul, a, a)) * sum(map(mul, b, b)))
    return sum(map(mul, a, b)) / norm if norm else 0.0


def _rescore(hit: Hit, catalog: Catalog, query_vector: list[float]) -> None:
    """Exact cosine of the hit's best row, from its cache file."""
    cached = embed.read_cached(embed.cache_path(catalog, hit.entry.slug))
    if cached is None or cached.content_hash != hit.entry.content_hash or len(cached.vectors[0]) != len(query_vector):
        return
    scores = [_cosine(query_vector, vector) for vector in cached.vectors]
    hit.similarity = max(scores)
    hit.chunk = scores.index(hit.similarity)


def _add_snippet(hit: Hit, query: str, size: tuple[int, int]) -> None:
    from ..model import frontmatter, memory

    with contextlib.suppress(OSError, UnicodeDecodeError, errors.Error):
        content = memory.content_of(frontmatter.split(hit.entry.path.read_text(encoding="utf-8")).body)
        if hit.chunk:
            chunks = embed.chunk_texts(hit.entry.title, content, size)
            if hit.chunk <= len(chunks):
                content = chunks[hit.chunk - 1][len(hit.entry.title) + 2:]
        hit.snippet = search.snippet(content, query)


# -- similarity for link suggestions and hooks ------------------------------------------------

def neighbours(catalog: Catalog, slug: str, k: int = 10, *, min_score: float = -1.0) -> list[tuple[str, float]]:
    """The `k` memories of the scope most similar to `slug`, best first: (slug, cosine).

    Compares whole-memory vectors (not chunks) from the cache only: never calls the
    provider, and returns [] when `slug` has no up-to-date embedding.
    """
    cached = embed.read_cached(embed.cache_path(catalog, slug))
    current = catalog_hashes(catalog)
    if cached is None or current.get(slug) != cached.content_hash:
        return []
    pack = Pack.fresh(catalog, cached.model)
    if pack.dim != len(cached.vectors[0]):
        return []
    scores = pack.row_scores(cached.vectors[0])
    found = [(other, round(scores[pack.starts[m]], 4)) for m, other in enumerate(pack.slugs)
             if other != slug and pack.counts[m] and current.get(other) == pack.hashes[m]]
    found = [item for item in found if item[1] >= min_score]
    found.sort(key=lambda item: (-item[1], item[0]))
    return found[:k]


def similar_pairs(catalog: Catalog, *, slugs: Iterable[str] | None = None, k: int = 5,
                  min_score: float = 0.6) -> list[tuple[str, str, float]]:
    """Pairs of similar memories of one scope: (slug_a, slug_b, cosine) with slug_a < slug_b, best first.

    For each memory of `slugs` (default: all with an up-to-date embedding) its `k` nearest
    others scoring at least `min_score`, from cached whole-memory vectors only (never calls
    the provider; [] without a cache). Scores are the packed approximations (within about
    0.005). Cost grows with N per source: about 0.6 ms per source among 500 memories of 768
    dimensions, 2 ms among 2,000; pass `slugs` (e.g. new or orphan memories) for big scopes.
    """
    header = Pack.read(catalog.scope.cache_dir / PACK_NAME, header_only=True)
    model = header.model if header is not None else _some_model(catalog)
    if model is None:
        return []
    pack = Pack.fresh(catalog, model)
    current = catalog_hashes(catalog)
    members = [m for m, slug in enumerate(pack.slugs)
               if pack.counts[m] and current.get(slug) == pack.hashes[m]]
    if len(members) < 2:
        return []
    rows = [pack.starts[m] for m in members]
    wanted = set(slugs) if slugs is not None else None
    view = memoryview(pack.columns)
    columns = b"".join(_gather(view[column * pack.rows:(column + 1) * pack.rows], rows)
                       for column in range(pack.dim))
    scales = array("d", [pack.scales[row] for row in rows])
    sums = array(_U32, [pack.sums[row] for row in rows])
    count = len(rows)
    width = _lane_bytes(pack.dim)
    integers = []  # made once, used for every source
    lanes_buffer = bytearray(width * count)
    for column in range(pack.dim):
        lanes_buffer[0::width] = columns[column * count:(column + 1) * count]
        integers.append(int.from_bytes(lanes_buffer, "little"))
    best: dict[tuple[str, str], float] = {}
    for position, m in enumerate(members):
        source = pack.slugs[m]
        if wanted is not None and source not in wanted:
            continue
        weights = _gather(columns, range(position, count * pack.dim, count))
        scores = Pack._scores(weights, scales[position], sums[position], integers, count, scales, sums)
        scores[position] = -2.0  # not its own neighbour
        for other, score in heapq.nlargest(k, enumerate(scores), key=itemgetter(1)):
            if score < min_score:
                break
            pair = tuple(sorted((source, pack.slugs[members[other]])))
            best[pair] = max(best.get(pair, -2.0), round(score, 4))  # type: ignore[index,arg-type]  # a pair
    return sorted(((a, b, score) for (a, b), score in best.items()), key=lambda item: (-item[2], item[0], item[1]))


def _gather(data: bytes | memoryview, indexes: Any) -> bytes:
    """The bytes of `data` at `indexes`, gathered at C speed."""
    indexes = list(indexes)
    if len(indexes) == 1:
        return bytes([data[indexes[0]]])
    return bytes(itemgetter(*indexes)(data))


def _some_model(catalog: Catalog) -> str | None:
    entry = _first_cached(catalog)
    return entry.model if entry is not None else None


def _first_cached(catalog: Catalog, model: str | None = None) -> Any:
    """A readable cache entry (of `model`, when given) among the first 50 files: a cheap sample."""
    try:
        names = os.listdir(catalog.embedding_dir)
    except OSError:
        return None
    for name in names[:50]:
        entry = embed.read_cached(catalog.embedding_dir / name) if name.endswith(".json") else None
        if entry is not None and (model is None or embed.same_model(entry.model, model)):
            return entry
    return None


def similar_to_text(workspace: Workspace, catalog: Catalog, text: str, k: int = 5, *,
                    min_score: float = -1.0) -> list[tuple[str, float]]:
    """Memories of the scope closest in meaning to `text` (best chunk), best first: (slug, cosine).

    Embeds `text` with the provider when it is up (a remembered failure costs no wait);
    [] when it is unavailable or the scope has no cached vectors. For hooks (gotcha
    relevance): never raises for provider problems.
    """
    embedder = embed.Embedder(workspace)
    if embedder.disabled:
        return []
    try:
        vector = embedder.embed([text])[0]
    except embed.Unavailable:
        return []
    pack = Pack.fresh(catalog, embedder.model)
    if pack.dim != len(vector):
        return []
    found = [(slug, round(score, 4)) for slug, (score, _) in pack.best(vector, catalog_hashes(catalog)).items()
             if score >= min_score]
    found.sort(key=lambda item: (-item[1], item[0]))
    return found[:k]
