"""The cache of record of embeddings: one JSON file per memory, `<scope>/.embedding-cache/<slug>.json`.

Each holds slug, model, vector, contentHash, timestamp, and `chunks` for long memories.
An entry is usable when its model is the provider's and its contentHash the memory's
current one; pack.py keeps a packed copy of the usable vectors for fast search.
"""

from __future__ import annotations

import json
import math
import os
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..catalog.catalog import Catalog

from ..base import clock, fsutil, stamps
from .providers import same_model


class Cached:
    """One `.embedding-cache/<slug>.json` entry; `vectors` is [vector, *chunks]."""

    __slots__ = ("slug", "model", "vectors", "content_hash", "timestamp")

    def __init__(self, slug: str, model: str, vectors: list[list[float]], content_hash: str, timestamp: str) -> None:
        self.slug, self.model, self.vectors = slug, model, vectors
        self.content_hash, self.timestamp = content_hash, timestamp


def cache_path(catalog: Catalog, slug: str) -> Path:
    return catalog.embedding_dir / f"{slug}.json"


def read_cached(path: Path) -> Cached | None:
    """A cache file's entry; None when it is missing or not a valid entry (it is then recomputed)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    slug, model, vector, content_hash = data.get("slug"), data.get("model"), data.get("vector"), data.get("contentHash")
    if not (isinstance(slug, str) and isinstance(model, str) and isinstance(content_hash, str)
            and isinstance(vector, list) and vector):
        return None
    chunks = data.get("chunks")
    vectors = [vector] + [chunk for chunk in (chunks if isinstance(chunks, list) else [])
                          if isinstance(chunk, list) and len(chunk) == len(vector)]
    try:
        checked = [array("d", item).tolist() for item in vectors]  # numbers only (at C speed)
    except TypeError:
        return None
    if not all(math.isfinite(sum(item)) for item in checked):
        return None
    return Cached(slug, model, checked, content_hash, str(data.get("timestamp") or ""))


def write_cached(catalog: Catalog, slug: str, model: str, vectors: list[list[float]], content_hash: str) -> None:
    """Write one entry (atomically; derived data, so without fsync)."""
    data: dict[str, Any] = {"slug": slug, "model": model, "vector": _rounded(vectors[0]),
                            "contentHash": content_hash, "timestamp": clock.now_iso()}
    if len(vectors) > 1:
        data["chunks"] = [_rounded(vector) for vector in vectors[1:]]
    fsutil.write_atomically(cache_path(catalog, slug), json.dumps(data, separators=(",", ":")) + "\n",
                            durable=False)


def _rounded(vector: list[float]) -> list[float]:
    return [round(x, 7) for x in vector]


def remove_orphans(catalog: Catalog) -> int:
    """Delete cache files of memories the scope no longer has (holding the lock)."""
    try:
        names = os.listdir(catalog.embedding_dir)
    except OSError:
        return 0
    slugs = catalog.slugs()
    removed = 0
    for name in names:
        if name.endswith(".json") and not name.startswith(".") and name[:-5] not in slugs:
            removed += fsutil.remove_file(catalog.embedding_dir / name)
    return removed


def scan(catalog: Catalog) -> dict[str, str]:
    """slug -> file stamp of every cache file of the scope."""
    return {name[:-5]: stamp for name, stamp in (stamps.scan(catalog.embedding_dir, ".json") or {}).items()}


def first_cached(catalog: Catalog, model: str | None = None) -> Any:
    """A readable cache entry (of `model`, when given) among the first 50 files: a cheap sample."""
    try:
        names = os.listdir(catalog.embedding_dir)
    except OSError:
        return None
    for name in names[:50]:
        entry = read_cached(catalog.embedding_dir / name) if name.endswith(".json") else None
        if entry is not None and (model is None or same_model(entry.model, model)):
            return entry
    return None


def some_model(catalog: Catalog) -> str | None:
    """The model of some cached entry of the scope (None without a cache)."""
    entry = first_cached(catalog)
    return entry.model if entry is not None else None
