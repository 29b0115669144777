"""The embedding caches: readable, for a memory that exists, of the configured model, current."""

from __future__ import annotations

import contextlib
import json
from collections import Counter, defaultdict
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..base import fsutil, jsontext, schema
from ..catalog.catalog import file_stamp
from .facts import WARNING, ScopeFacts

MEMO_NAME = "health-embeddings.json"  # per cache file stamp: what the last check found in it
MEMO_VERSION = 2

CACHE_INVALID = "cache-invalid"
CACHE_ORPHANED = "cache-orphaned"
CACHE_WRONG_MODEL = "cache-wrong-model"
CACHE_STALE = "cache-stale"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    CACHE_INVALID: WARNING,
    CACHE_ORPHANED: WARNING,
    CACHE_WRONG_MODEL: WARNING,
    CACHE_STALE: WARNING,
}


def check(facts: ScopeFacts) -> None:
    """Add the problems of this family to `facts`."""
    _caches(facts)


def _caches(facts: ScopeFacts) -> None:
    from ..vectors.providers import Settings, canonical_model, configured_model

    files = facts.cache_listing()
    if not files:
        return
    settings = Settings(facts.config.section("embedding"))
    memo = CacheMemo(facts.scope.cache_dir / MEMO_NAME)
    found = {stem: memo.verdict(path) for stem, path in files.items()}
    memo.save()
    sizes: dict[str, Counter[Any]] = defaultdict(Counter)  # model -> vector sizes seen
    for verdict in found.values():
        if "error" not in verdict:
            sizes[canonical_model(verdict["model"])][verdict["dim"]] += 1
    hint = "memory repair removes it; the next semantic search embeds the memory again"
    for stem, path in files.items():
        verdict = found[stem]
        slug = stem if stem in facts.entries else None
        problem = None
        if "error" in verdict:
            problem = (CACHE_INVALID, verdict["error"])
        elif verdict["slug"] != stem:
            problem = (CACHE_INVALID, f"it holds the embedding of {verdict['slug']!r}")
        elif slug is None:
            problem = (CACHE_ORPHANED, f"it belongs to no memory ({facts.where(stem)})")
        elif not configured_model(settings, verdict["model"]):
            problem = (CACHE_WRONG_MODEL, f"made with {verdict['model']}, which is neither embedding.model "
                       f"({settings.model}), one of embedding.fallbackModels nor embedding.embeddedModel")
        else:
            usual = sizes[canonical_model(verdict["model"])].most_common(1)[0][0]
            if verdict["dim"] != usual:
                problem = (CACHE_INVALID, f"its vector has {verdict['dim']} numbers; the other "
                           f"{verdict['model']} caches have {usual}")
            elif verdict["hash"] != facts.hashes.get(stem, facts.entries[stem].content_hash):
                problem = (CACHE_STALE, "the memory changed since it was embedded")
        if problem:
            kind, why = problem
            facts.add(kind, slug, f"embedding cache {path.name}: {why}",
                      "memory repair removes it" if kind == CACHE_ORPHANED else hint,
                      path=path, fixable=True, target=path.name)


class CacheMemo:
    """What each embedding cache file held when last checked, keyed by its stamp.

    Parsing a 768-number JSON file costs ~150 us; 10,000 of them would dominate a check. The
    memo (in the scope's `.cache/`, derived and disposable) lets unchanged files be skipped.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            valid = data.get("version") == MEMO_VERSION and isinstance(data.get("files"), dict)
            self.entries: dict[str, list[Any]] = data["files"] if valid else {}
        except (OSError, ValueError, AttributeError, KeyError):
            self.entries = {}
        self.seen: set[str] = set()

    def verdict(self, path: Path) -> dict[str, str]:
        """{"slug", "model", "hash", "dim"} of a valid cache file, else {"error": why}."""
        stamp = file_stamp(path) or ""
        self.seen.add(path.name)
        known = self.entries.get(path.name)
        if isinstance(known, list) and len(known) == 2 and known[0] == stamp and isinstance(known[1], dict):
            return known[1]
        found = inspect_cache_file(path)
        self.entries[path.name] = [stamp, found]
        self.changed = True
        return found

    def save(self) -> None:
        stale = set(self.entries) - self.seen
        for name in stale:
            del self.entries[name]
        if self.changed or stale:
            with contextlib.suppress(OSError):
                text = json.dumps({"version": MEMO_VERSION, "files": self.entries})
                fsutil.write_atomically(self.path, text, durable=False)


def inspect_cache_file(path: Path) -> dict[str, str]:
    """Check one `.embedding-cache/<slug>.json` against the EmbeddingCache shape."""
    try:
        data = jsontext.loads(path.read_bytes())
    except OSError as exc:
        return {"error": f"cannot read it ({exc.strerror})"}
    except ValueError:
        return {"error": "not valid JSON"}
    if not isinstance(data, dict):
        return {"error": "not a JSON object"}
    vectors = [data.get("vector")] + (data["chunks"] if isinstance(data.get("chunks"), list) else [])
    for vector in vectors:
        if not isinstance(vector, list) or not vector or not all(
                type(value) is float or type(value) is int for value in vector):
            return {"error": "`vector` is not a non-empty list of numbers"}
    probe = {key: ([0.0] if key == "vector" else [[0.0]] if key == "chunks" else value)
             for key, value in data.items()}
    violations = schema.validate(probe, schema.load("embedding-cache"))
    if violations:
        return {"error": str(violations[0])}
    return {"slug": data["slug"], "model": data["model"], "hash": data["contentHash"], "dim": len(data["vector"])}
