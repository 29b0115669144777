"""Semantic and hybrid search over cached embeddings (`memory semantic`).

The query is embedded while each scope prepares its keyword ranking and packed vectors
(vectors/pack.py); the approximate winners are then re-scored exactly from their cache
files. Hybrid ranking fuses the keyword (BM25) and cosine rankings (fuse; FUSION); a long
memory is ranked by its best-matching chunk (embedder.chunk_texts).
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import math
from operator import itemgetter, mul

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace
    from .store import Filters

from ..base import errors
from ..catalog import readable
from ..catalog.catalog import open_catalog
from ..catalog.queries import content_hashes, updated_times
from ..vectors import cache, embedder as embed
from ..vectors.pack import Pack
from . import search

MODES = ("hybrid", "semantic")
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
    from . import store

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
            outcome = _search(workspace, embedder, scopes, query, query_vector, limit, mode)
            known = {(part.catalog.scope.name, slug): content_hash for part in scopes
                     for slug, content_hash in part.current.items()}
            # the catalog checks each file it returns (catalog.get): one edited by hand since the
            # ranking began now has another content hash, so rank again with what it says now
            if any(known.get((hit.entry.scope, hit.entry.slug)) != hit.entry.content_hash for hit in outcome.hits):
                scopes = [_prepare(embedder, part.catalog, query, filters, mode) for part in scopes]
                outcome = _search(workspace, embedder, scopes, query, query_vector, limit, mode)
            return outcome
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
    found = []  # all open at once (the walk of readable.catalogs closes each before the next)
    for scope in workspace.readable_scopes(filters.scope):
        catalog = stack.enter_context(open_catalog(workspace, scope))
        if catalog is not None:
            readable.report_problems(workspace, catalog.problems())
            found.append(catalog)
    return found


def _prepare(embedder: embed.Embedder, catalog: Catalog, query: str, filters: Filters, mode: str) -> _Scope:
    allowed = _allowed(catalog, filters)
    keyword = []
    if mode == "hybrid":
        depth = KEYWORD_DEPTH if allowed is None else None  # with filters: rank all, then filter
        keyword = [(slug, score) for slug, score in search.rank(catalog, query, limit=depth)
                   if allowed is None or slug in allowed]
    return _Scope(catalog, content_hashes(catalog), Pack.fresh(catalog, embedder.model), allowed, keyword)


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
    updated = updated_times(catalog)
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
    cached = cache.read_cached(cache.cache_path(catalog, hit.entry.slug))
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
