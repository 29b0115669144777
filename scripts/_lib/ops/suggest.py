"""Link suggestions: pairs of memories that look related but are not linked yet.

Without embeddings (the degradation matrix's "tag-based" mode) a pair scores on shared
tags (Jaccard) and textual similarity (BM25 of one memory's most telling words against
the other, relative to its score against itself). With cached embeddings, cosine
similarity joins in. Every suggestion carries a one-line reason and the exact
`memory link` command that accepts it.
"""

from __future__ import annotations

import math

from . import search
from ..catalog import queries
from ..catalog.catalog import Catalog, Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUERY_TERMS = 24          # a memory's most distinctive words used to find its look-alikes
CANDIDATES_PER_MEMORY = 20
MIN_SCORE = 0.15
SWEEP_LIMIT = 60          # memories examined when no slug is given (least linked, newest first)
VECTOR_MIN = 0.3          # cosine below which cached embeddings propose nothing


class Suggestion:
    """A proposed link between two memories of one scope."""

    __slots__ = ("source", "target", "score", "label", "reason", "scope", "cosine")

    def __init__(self, source: Entry, target: Entry, score: float, label: str, reason: str,
                 cosine: float | None = None) -> None:
        self.source, self.target, self.score, self.label, self.reason = source, target, score, label, reason
        self.scope = source.scope
        self.cosine = cosine  # embedding similarity, when cached embeddings took part

    @property
    def command(self) -> str:
        scope = f" --scope {self.scope}" if self.scope else ""
        return f"memory link {self.source.slug} {self.target.slug} --label {self.label}{scope}"

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source.slug, "target": self.target.slug, "score": round(self.score, 3),
                "label": self.label, "reason": self.reason, "scope": self.scope, "command": self.command,
                "sourceTitle": self.source.title, "targetTitle": self.target.title}


def _distinctive_terms(catalog: Catalog, slug: str) -> list[str]:
    """The memory's words ranked by tf-idf, best first."""
    frequencies = queries.term_frequencies(catalog, slug)
    if frequencies is None:
        return []
    count = queries.count(catalog) or 1
    weighted = []
    for term, tf, df in frequencies:
        if tf and df:
            weighted.append((tf * math.log(1 + count / df), term))
    weighted.sort(reverse=True)
    return [term for _, term in weighted[:QUERY_TERMS]]


def _text_neighbours(catalog: Catalog, slug: str) -> dict[str, float]:
    """Similarity in [0, 1] of other memories to `slug`, by BM25 of its distinctive words."""
    query = " ".join(_distinctive_terms(catalog, slug))
    if not query:
        return {}
    ranked = search.rank(catalog, query)
    own = next((score for other, score in ranked if other == slug), None) or (ranked[0][1] if ranked else 0)
    if not own:
        return {}
    return {other: min(score / own, 1.0) for other, score in ranked[: CANDIDATES_PER_MEMORY + 1] if other != slug}


def _label_for(source: Entry, target: Entry, similarity: float) -> str:
    if target.type == "hub" and source.type != "hub":
        return "part-of"
    if source.type == "hub" and target.type != "hub":
        return "contains"
    if similarity >= 0.8 and source.type == target.type:
        return "similar-to"
    return "relates-to"


def cached_similarity(catalog: Catalog, slugs: list[str]) -> dict[str, dict[str, float]]:
    """slug -> {neighbour: cosine} for `slugs`, from the embedding cache only (never the provider)."""
    if not queries.any_embedding(catalog):
        return {}
    from ..vectors import similarity  # only when some memory has a cached embedding

    near: dict[str, dict[str, float]] = {}
    for first, second, cosine in similarity.similar_pairs(catalog, slugs=slugs, k=CANDIDATES_PER_MEMORY,
                                                        min_score=VECTOR_MIN):
        near.setdefault(first, {})[second] = cosine
        near.setdefault(second, {})[first] = cosine
    return near


def suggest(catalog: Catalog, slug: str | None = None, *, limit: int = 10,
            embeddings: bool = False) -> list[Suggestion]:
    """Ranked link proposals for `slug` (or across the scope), excluding pairs already linked.

    With `embeddings`, cached embedding similarity joins tags and wording when the cache has any.
    """
    if slug is not None:
        sources = [slug]
    else:  # the least connected memories first: that is where links are missing
        sources = queries.least_linked(catalog, SWEEP_LIMIT)
    near = cached_similarity(catalog, sources) if embeddings else {}
    found: dict[frozenset[str], Suggestion] = {}
    for source_slug in sources:
        source = catalog.get(source_slug)
        if source is None:
            continue
        linked = {edge.target for edge in catalog.edges(source_slug)} | {source_slug}
        text = _text_neighbours(catalog, source_slug)
        vectors = near.get(source_slug, {})
        candidates = set(text) | set(vectors)
        if slug is not None:  # a single memory: tag overlap alone may propose a link
            candidates |= {other for tag in source.tags for other in queries.tagged(catalog, tag, 200)}
        for other_slug in candidates - linked:
            pair = frozenset((source_slug, other_slug))
            if pair in found:
                continue
            other = catalog.get(other_slug)
            if other is None:
                continue
            shared = sorted(set(source.tags) & set(other.tags))
            union = set(source.tags) | set(other.tags)
            jaccard = len(shared) / len(union) if union else 0.0
            similarity = text.get(other_slug, 0.0)
            cosine = vectors.get(other_slug)
            if cosine is None:
                score = 0.45 * jaccard + 0.55 * similarity
            else:
                score = 0.25 * jaccard + 0.3 * similarity + 0.45 * max(cosine, 0.0)
            if score < MIN_SCORE:
                continue
            reasons = []
            if shared:
                reasons.append("shares tag" + ("s " if len(shared) > 1 else " ") + ", ".join(shared))
            if similarity >= 0.05:
                reasons.append(f"similar wording ({similarity:.2f})")
            if cosine is not None:
                reasons.append(f"similar meaning ({cosine:.2f})")
            label = _label_for(source, other, max(similarity, cosine or 0.0))
            found[pair] = Suggestion(source, other, score, label, "; ".join(reasons) or "related", cosine)
    return sorted(found.values(), key=lambda suggestion: (-suggestion.score, suggestion.source.slug,
                                                          suggestion.target.slug))[:limit]
