"""Similarity from cached vectors only: a memory's nearest neighbours, similar pairs of a
scope (link suggestions), and the memories closest to a text (hooks)."""

from __future__ import annotations

import heapq
from array import array
from operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

from ..catalog.vectors import content_hashes
from . import cache
from .embedder import Embedder
from .pack import PACK_NAME, U32, Pack, gather, lane_bytes, read, scores as pack_scores
from .providers import Unavailable


def neighbours(catalog: Catalog, slug: str, k: int = 10, *, min_score: float = -1.0) -> list[tuple[str, float]]:
    """The `k` memories of the scope most similar to `slug`, best first: (slug, cosine).

    Compares whole-memory vectors (not chunks) from the cache only: never calls the
    provider, and returns [] when `slug` has no up-to-date embedding.
    """
    cached = cache.read_cached(cache.cache_path(catalog, slug))
    current = content_hashes(catalog)
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
    header = read(catalog.scope.cache_dir / PACK_NAME, header_only=True)
    model = header.model if header is not None else cache.some_model(catalog)
    if model is None:
        return []
    pack = Pack.fresh(catalog, model)
    current = content_hashes(catalog)
    members = [m for m, slug in enumerate(pack.slugs)
               if pack.counts[m] and current.get(slug) == pack.hashes[m]]
    if len(members) < 2:
        return []
    rows = [pack.starts[m] for m in members]
    wanted = set(slugs) if slugs is not None else None
    view = memoryview(pack.columns)
    columns = b"".join(gather(view[column * pack.rows:(column + 1) * pack.rows], rows)
                       for column in range(pack.dim))
    scales = array("d", [pack.scales[row] for row in rows])
    sums = array(U32, [pack.sums[row] for row in rows])
    count = len(rows)
    width = lane_bytes(pack.dim)
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
        weights = gather(columns, range(position, count * pack.dim, count))
        scores = pack_scores(weights, scales[position], sums[position], integers, count, scales, sums)
        scores[position] = -2.0  # not its own neighbour
        for other, score in heapq.nlargest(k, enumerate(scores), key=itemgetter(1)):
            if score < min_score:
                break
            first, second = sorted((source, pack.slugs[members[other]]))
            best[first, second] = max(best.get((first, second), -2.0), round(score, 4))
    return sorted(((a, b, score) for (a, b), score in best.items()), key=lambda item: (-item[2], item[0], item[1]))


def similar_to_text(workspace: Workspace, catalog: Catalog, text: str, k: int = 5, *,
                    min_score: float = -1.0) -> list[tuple[str, float]]:
    """Memories of the scope closest in meaning to `text` (best chunk), best first: (slug, cosine).

    Embeds `text` with the provider when it is up (a remembered failure costs no wait);
    [] when it is unavailable or the scope has no cached vectors. For hooks (gotcha
    relevance): never raises for provider problems.
    """
    embedder = Embedder(workspace)
    if embedder.disabled:
        return []
    try:
        vector = embedder.embed([text])[0]
    except Unavailable:
        return []
    pack = Pack.fresh(catalog, embedder.model)
    if pack.dim != len(vector):
        return []
    found = [(slug, round(score, 4)) for slug, (score, _) in pack.best(vector, content_hashes(catalog)).items()
             if score >= min_score]
    found.sort(key=lambda item: (-item[1], item[0]))
    return found[:k]
