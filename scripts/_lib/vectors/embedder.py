"""The embedder: the configured provider, its remembered availability, and what is embedded for a memory.

Availability is remembered in `.cache/embedding-state.json` of the global scope (else of
the project scope; no scope directory is created for it): a working provider for
UP_SECONDS, a failing one for DOWN_SECONDS, so repeated commands and hooks never wait on a
dead endpoint. `memory embed` always checks again.

A memory is embedded as its whole text and, when long, overlapping chunks
(chunk_texts); the vectors go to the cache (cache.py).
"""

from __future__ import annotations

import contextlib
import json
import math
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

from ..base import errors, fsutil
from ..model import memory
from ..workspace.scopes import CACHE_DIR_NAME
from .cache import Cached, cache_path, read_cached, write_cached  # noqa: F401  (Cached...read_cached: the API)
from .providers import (  # noqa: F401  (PROVIDERS...configured_model: the API of embeddings, in one place)
    OLLAMA_DOWNLOAD, PROVIDERS, Ollama, OpenAI, Settings, Status, Unavailable, canonical_model, configured_model,
    same_model)

STATE_NAME = "embedding-state.json"
STATE_VERSION = 1
STATE_KEEP = 8            # remembered provider settings
UP_SECONDS = 300.0        # a working provider is trusted this long without a new probe
DOWN_SECONDS = 60.0       # a failing one is not asked again for this long (`memory embed` asks anyway)
MAX_INPUT_CHARS = 8000    # of the whole-memory text; long memories are covered by their chunks
CHUNK_WORDS = 180         # a chunk: the title and a window of this many words ...
CHUNK_OVERLAP = 60        # ... overlapping the next window by this many (with a server's model);
# with the embedded model, whose vector is an average of word vectors, shorter windows: chosen
# by cross-validation on the dev queries of the ADR set (bench/search_quality.py)
CHUNK_WORDS_IN_PROCESS = 60
CHUNK_OVERLAP_IN_PROCESS = 20
MAX_CHUNKS = 48


# -- the embedder: provider + remembered availability --------------------------------------

class Embedder:
    """The configured provider (for `auto`, the first that works), asked only when its
    remembered state allows.

    `download`: this process may download the embedded model (an explicit `memory embed` or
    `memory semantic`; never a write or a hook), saying so through `notify` and showing
    `progress` lines (`downloading org/model: model.safetensors 45/129 MB`).
    """

    def __init__(self, workspace: Workspace, *, download: bool = False,
                 progress: Callable[[str], None] | None = None,
                 notify: Callable[[str], None] | None = None) -> None:
        self.settings = Settings(workspace.config.section("embedding"))
        # the state lives in the cache of the global scope, else of the project scope: never
        # create a scope directory just for it (with neither, nothing is remembered)
        self._state_roots = [workspace.global_root] + (
            [] if workspace.project_is_global or fsutil.escapes(workspace.project_root, workspace.project_dir)
            else [workspace.project_root])
        chosen = self.settings.provider
        self.candidates: list[Any] = []  # the providers tried, in order
        if chosen in ("auto", "ollama"):
            self.candidates.append(Ollama(self.settings, workspace.env))
        if chosen == "openai":
            self.candidates.append(OpenAI(self.settings, workspace.env))
        if chosen in ("auto", "embedded"):
            from . import embedded

            self.candidates.append(embedded.Embedded(self.settings, embedded.index_dir(workspace.global_root),
                                                     download=download, progress=progress, notify=notify))
        self.provider: Any = self.candidates[0] if len(self.candidates) == 1 else None
        self.status: Status | None = None

    @property
    def disabled(self) -> bool:
        return not self.candidates

    @property
    def model(self) -> str:
        return self.ready().model

    def ready(self, *, refresh: bool = False) -> Status:
        """The working provider's status; raises Unavailable (remembered failures are not retried
        before DOWN_SECONDS, unless `refresh`)."""
        if not self.candidates:
            raise Unavailable("disabled", 'semantic search is turned off (embedding.provider is "disabled")',
                              "turn it on with `memory config embedding.provider auto --scope global`")
        if self.status is not None:
            return self.status
        failures = []
        for provider in self.candidates:
            try:
                status = self._ready(provider, refresh)
            except Unavailable as exc:
                failures.append(exc)
                continue
            if self.settings.provider != "auto":
                status.reason = f"embedding.provider is {self.settings.provider}"
            elif failures:
                status.reason = f"auto: {failures[0].message}; using {provider.name}"
            else:
                status.reason = f"auto: {provider.name} is the first provider that works"
            self.provider, self.status = provider, status
            return status
        raise failures[0] if len(failures) == 1 else self._none_works(failures)

    def _ready(self, provider: Any, refresh: bool) -> Status:
        if not refresh:
            remembered = self._remembered(provider)
            if isinstance(remembered, Unavailable):
                raise remembered
            if remembered is not None:
                return remembered
        try:
            status = provider.probe()
        except Unavailable as exc:
            if provider.worth_remembering(exc):
                self._remember(provider, failure=exc)
            raise
        if provider.remember_success:
            self._remember(provider, status=status)
        return status

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length embeddings of `texts`, in order; raises Unavailable."""
        status = self.ready()
        provider = self.provider
        before = (status.api, status.dim)
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), provider.texts_per_call):
                vectors += provider.embed(status, texts[start:start + provider.texts_per_call])
            sizes = {len(vector) for vector in vectors}
            if len(sizes) > 1:
                raise provider.failed(f"{provider.name} returned vectors of different sizes "
                                      f"({', '.join(map(str, sorted(sizes)))})", malformed=True)
        except Unavailable as exc:
            self.status = None
            if provider.worth_remembering(exc):
                self._remember(provider, failure=exc)
            raise
        if vectors:
            status.dim = len(vectors[0])
        if (status.api, status.dim) != before and provider.remember_success:
            self._remember(provider, status=status)
        return [unit(vector) for vector in vectors]

    # -- the state file

    @property
    def state_path(self) -> Path | None:
        return next((root / CACHE_DIR_NAME / STATE_NAME for root in self._state_roots if root.is_dir()), None)

    def _read_state(self) -> dict[str, Any]:
        path = self.state_path
        if path is None:
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION or not isinstance(
                data.get("providers"), dict):
            return {}
        return data["providers"]

    def _remembered(self, provider: Any) -> Status | Unavailable | None:
        record = self._read_state().get(provider.key)
        if not isinstance(record, dict) or not isinstance(record.get("checked"), (int, float)):
            return None
        age = time.time() - record["checked"]
        if record.get("ok"):
            if not 0 <= age < UP_SECONDS or not isinstance(record.get("model"), str):
                return None
            dim = record.get("dim")
            return Status(record["model"], str(record.get("api") or "embed"), dim if isinstance(dim, int) else None,
                          record.get("note") if isinstance(record.get("note"), str) else None, provider=provider.kind)
        if not 0 <= age < DOWN_SECONDS:
            return None
        failure = Unavailable.from_json(record)
        failure.remembered = True
        return failure

    def _remember(self, provider: Any, *, status: Status | None = None, failure: Unavailable | None = None) -> None:
        """Record the outcome for other processes (best effort: a read-only HOME just disables it)."""
        path = self.state_path
        if path is None:
            return
        providers = self._read_state()
        record: dict[str, Any] = {"checked": time.time()}
        record.update({"ok": True, **status.as_json()} if status is not None else
                      {"ok": False, **(failure.as_json() if failure else {})})
        providers = {key: value for key, value in providers.items()
                     if isinstance(value, dict) and isinstance(value.get("checked"), (int, float))}
        providers[provider.key] = record
        newest = sorted(providers.items(), key=lambda item: -item[1]["checked"])[:STATE_KEEP]
        with contextlib.suppress(OSError):
            fsutil.write_atomically(path, json.dumps({"version": STATE_VERSION, "providers": dict(newest)}, indent=1),
                                    durable=False)

    def _none_works(self, failures: list[Unavailable]) -> Unavailable:
        """`auto` found no provider: one notice naming each failure, the embedded model's steps
        first (it needs no server), then Ollama's."""
        embedded = failures[-1]
        steps = embedded.steps or ([embedded.hint[0].upper() + embedded.hint[1:]] if embedded.hint else [])
        steps = steps + [f"Or use Ollama ({OLLAMA_DOWNLOAD}): ollama pull {self.settings.model}, then ollama serve"]
        combined = Unavailable(embedded.kind, "; ".join(failure.message for failure in reversed(failures)),
                               embedded.hint, [f"{number}. {step}" for number, step in enumerate(steps, 1)])
        combined.remembered = all(failure.remembered for failure in failures)
        return combined


def unit(vector: list[float]) -> list[float]:
    """`vector` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [float(x) for x in vector]


# -- what is embedded for a memory -----------------------------------------------------------

def chunking(status: Status) -> tuple[int, int]:
    """(words per chunk, overlap) for vectors of this provider's model."""
    return (CHUNK_WORDS_IN_PROCESS, CHUNK_OVERLAP_IN_PROCESS) if status.in_process else (CHUNK_WORDS, CHUNK_OVERLAP)


def chunk_texts(title: str, content: str, size: tuple[int, int] = (CHUNK_WORDS, CHUNK_OVERLAP)) -> list[str]:
    """Overlapping passages of a long memory, each the title plus `size` = (words, overlap)
    words ([] when short)."""
    width, overlap = size
    words = content.split()
    if len(words) <= width + overlap:
        return []
    step = width - overlap
    count = 1 + -(-(len(words) - width) // step)
    if count > MAX_CHUNKS:
        step = -(-(len(words) - width) // (MAX_CHUNKS - 1))
        count = 1 + -(-(len(words) - width) // step)
    return [f"{title}\n\n{' '.join(words[index * step:index * step + width])}" for index in range(count)]


def texts_for(title: str, content: str, size: tuple[int, int] = (CHUNK_WORDS, CHUNK_OVERLAP)) -> list[str]:
    """What is embedded for one memory: its whole text (capped), then the chunks of a long one."""
    return [memory.embedding_text(title, content)[:MAX_INPUT_CHARS]] + chunk_texts(title, content, size)


# -- embedding memories ------------------------------------------------------------------------

def embed_memories(embedder: Embedder, catalog: Catalog, items: list[memory.Memory], *,
                   expected_dim: int | None = None) -> list[str]:
    """Embed memories and write their cache entries; returns the slugs written.

    The provider is called without holding the scope lock (unless the caller holds it), so
    a model never holds up other writers; the entries, and index.json, are then written
    under the lock, and only for memories whose content did not change meanwhile. Raises
    Unavailable, also when the vectors' size is not `expected_dim`.
    """
    if not items:
        return []
    passages = chunking(embedder.ready())
    groups = [texts_for(item.title, item.content, passages) for item in items]
    vectors = embedder.embed([text for group in groups for text in group])
    size = len(vectors[0])
    if expected_dim is not None and size != expected_dim:
        model = embedder.model
        raise Unavailable(
            "dimension", f"{model} now returns {size}-dimensional vectors, but the cached embeddings of this scope "
                         f"have {expected_dim}",
            "if the model behind that name changed, recompute them with `memory embed --all`",
            ["Recompute the embeddings for the changed model: memory embed --all"])
    model = embedder.model
    written = []
    with catalog.locked(touching=[item.slug for item in items]):
        position = 0
        for item, group in zip(items, groups):
            mine = vectors[position:position + len(group)]
            position += len(group)
            current = catalog.get(item.slug)
            content_hash = item.content_hash()
            if current is None or current.content_hash != content_hash:
                continue  # changed meanwhile: the next run embeds the new content
            write_cached(catalog, item.slug, model, mine, content_hash)
            written.append(item.slug)
        if written:
            catalog.set_has_embedding(written, True)
            catalog.export()
    return written


def read_memories(catalog: Catalog, slugs: list[str]) -> list[memory.Memory]:
    """The memories `slugs` of the catalog's scope (unreadable ones are left out)."""
    items = []
    for slug in slugs:
        entry = catalog.get(slug)
        if entry is None:
            continue
        try:
            items.append(memory.read_file(entry.path, catalog.scope.name, slug=slug, root=catalog.scope.root))
        except errors.Error:
            continue
    return items
