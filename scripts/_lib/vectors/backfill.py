"""Embedding memories after a write (`after_change`) and backfilling a scope (`memory embed`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

from ..base import errors
from ..catalog import vectors as catalog_vectors
from ..catalog import readable
from .cache import remove_orphans
from .embedder import Embedder, embed_memories, read_memories
from .providers import NOT_SET_UP, Unavailable

BATCH_MEMORIES = 16       # memories per `memory embed` round with a server ...
BATCH_MEMORIES_IN_PROCESS = 256  # ... and with the embedded model (rounds cost a lock and an index.json update)


def after_change(workspace: Workspace, catalog: Catalog, slugs: list[str]) -> None:
    """Embed memories just written or updated after the write released the scope
    lock. Never raises.

    Degradation matrix: with no working provider the memory is saved in full without an
    embedding. A failure seen by this command gives a one-line warning; one remembered from
    an earlier command (within DOWN_SECONDS) costs no wait and no repeated warning. With
    provider `auto`, a provider that is merely not set up here (no Ollama, the embedded
    model not downloaded) is no warning at all: `memory semantic` says how to set one up.
    """
    embedder = None
    try:
        embedder = Embedder(workspace)
        if embedder.disabled:
            return
        embedder.ready()
        from . import pack as packed  # not on the import path of every write: only with a provider

        expected = packed.cached_dimension(catalog, embedder.model)  # the packed cache knows the vector size
        embed_memories(embedder, catalog, read_memories(catalog, slugs), expected_dim=expected)
    except Unavailable as exc:
        quiet = exc.remembered or (embedder is not None and embedder.settings.provider == "auto"
                                   and exc.kind in NOT_SET_UP)
        if not quiet:
            workspace.warn(f"saved without an embedding: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
                           + "; `memory embed` adds it later")
    except (errors.Error, OSError, ValueError) as exc:
        workspace.warn(f"saved without an embedding: {getattr(exc, 'message', None) or exc}")


# -- backfill (`memory embed`) -------------------------------------------------------------------

class Backfill:
    """What `memory embed` did in one scope."""

    __slots__ = ("scope", "memories", "embedded", "up_to_date", "removed", "skipped")

    def __init__(self, scope: str, memories: int) -> None:
        self.scope, self.memories = scope, memories
        self.embedded = self.up_to_date = self.removed = self.skipped = 0

    def as_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "memories": self.memories, "embedded": self.embedded,
                "upToDate": self.up_to_date, "removed": self.removed, "skipped": self.skipped}


def backfill(workspace: Workspace, scope: str | None = None, *, everything: bool = False, batch: int | None = None,
             progress: Callable[[str, int, int], None] | None = None,
             embedder: Embedder | None = None) -> tuple[Embedder, list[Backfill]]:
    """Compute missing and stale embeddings (all of them with `everything`) of each scope.

    Always asks the provider afresh (a remembered failure is not trusted here); raises
    Unavailable when it cannot embed. Progress goes to `progress(scope, done, total)`.
    Each batch of `batch` memories (default: BATCH_MEMORIES of the provider) is written
    before the next is embedded, so a run that is killed keeps what it wrote, and the
    next run continues from there.
    """
    from . import pack as packed

    if batch is not None and batch < 1:
        raise errors.InvalidInput("--batch must be at least 1")
    embedder = embedder or Embedder(workspace)
    embedder.ready(refresh=True)
    batch = batch or (BATCH_MEMORIES_IN_PROCESS if embedder.ready().in_process else BATCH_MEMORIES)
    results = []
    for target, catalog in readable.catalogs(workspace, scope):
        model = embedder.model
        with catalog.locked():
            removed = remove_orphans(catalog)
        pack = packed.Pack.fresh(catalog, model)
        current = catalog_vectors.content_hashes(catalog)
        result = Backfill(target.name, len(current))
        result.removed = removed
        todo = sorted(slug for slug, content_hash in current.items()
                      if everything or not pack.usable(slug, content_hash))
        result.up_to_date = len(current) - len(todo)
        expected = None if everything or not pack.rows else pack.dim
        if progress:
            progress(target.name, 0, len(todo))
        for start in range(0, len(todo), batch):
            slugs = todo[start:start + batch]
            items = read_memories(catalog, slugs)
            try:
                written = embed_memories(embedder, catalog, items, expected_dim=expected)
            except Unavailable as exc:
                if start:
                    exc.message += (f" (after embedding {result.embedded} of {len(todo)} in the {target.name} "
                                    "scope; run `memory embed` again to continue)")
                raise
            if expected is None and written:
                expected = embedder.ready().dim
            result.embedded += len(written)
            result.skipped += len(slugs) - len(written)
            if progress:
                progress(target.name, min(start + batch, len(todo)), len(todo))
        packed.Pack.fresh(catalog, model)  # so the first search need not pack the new entries
        results.append(result)
    return embedder, results
