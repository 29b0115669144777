"""The embedded embedding provider: a static (model2vec) model run in this process.

Its model is `Settings.embedded_model`: a Hugging Face hub id, found in the user's hub cache
or downloaded there once with huggingface_hub, or a local model directory (air-gapped
machines, tests). Only a process that is allowed to (an explicit `memory embed` or
`memory semantic`) downloads; writes and hooks use a model already present or none. The
compiled tokenizer index is kept in the global scope's cache (`.cache/static-models/`),
never in a project.

Cache entries name the model by identity: the hub id and the snapshot's commit, or a local
directory's name and a digest of its files, so a changed model makes the old vectors stale.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from .providers import Settings

from ..base import errors, fsutil
from ..base.stamps import file_stamp
from . import staticmodel
from .providers import Status, Unavailable

INDEX_DIR_NAME = "static-models"   # in the global scope's .cache
DIGESTS_NAME = "digests.json"      # local model directory -> digest of its files, by file stamps
DEFAULT_MODEL_SIZE = "129 MB"      # of staticmodel.DEFAULT_MODEL, for the download notice
MAX_DIGESTS = 8


class Embedded:
    """A static model, loaded once per process; the provider interface of providers.Ollama."""

    name = "the embedded model"
    kind = "embedded"
    texts_per_call = 4096        # no request to bound: big calls let the model sum packed rows
    remember_success = False     # finding the model costs a few stats: its identity is always fresh

    def __init__(self, settings: Settings, index_dir: Path | None, *, download: bool = False,
                 progress: Callable[[str], None] | None = None,
                 notify: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.index_dir = index_dir
        self.download = download
        self.progress = progress
        self.notify = notify
        self.model: staticmodel.Model | None = None

    def worth_remembering(self, failure: Unavailable) -> bool:
        """Only a failed download is remembered (asking again waits on the network); a model
        that is absent or broken is looked at again by the next command, at no cost."""
        return failure.kind not in ("not-downloaded", "no-model")

    @property
    def key(self) -> str:
        """Identifies the provider in the remembered state."""
        return f"embedded {self.settings.embedded_model}"

    def probe(self) -> Status:
        directory, identity = self._locate()
        try:
            self.model = staticmodel.load(directory, index_dir=self.index_dir)
        except errors.InvalidInput as exc:
            raise Unavailable("no-model", exc.message, exc.hint,
                              [f"Set embedding.embeddedModel to a model2vec model directory or hub id "
                               f"(default {staticmodel.DEFAULT_MODEL})"]) from None
        return Status(identity, "static", self.model.dim, provider=self.kind)

    def embed(self, status: Status, texts: list[str]) -> list[list[float]]:
        if self.model is None:
            self.probe()
        assert self.model is not None
        return self.model.embed(texts)

    def failed(self, reason: str, *, malformed: bool = False) -> Unavailable:
        return Unavailable("failed", reason, "check embedding.embeddedModel")

    # -- finding the model

    def _locate(self) -> tuple[Path, str]:
        """The model's directory and identity; downloads a hub model when allowed."""
        name = self.settings.embedded_model
        if not staticmodel.is_hub_id(name):
            try:
                directory = staticmodel.ensure(name)
            except errors.InvalidInput as exc:
                raise Unavailable("no-model", exc.message, exc.hint) from None
            return directory, directory_identity(directory, self.index_dir)
        found = staticmodel.cached(name, staticmodel.hub_cache_dir())
        if found is None:
            if not self.download:
                raise self.not_downloaded()
            found = self._download()
        return found, f"{name}@{found.name[:12]}"  # the snapshot directory is named by its commit

    def _download(self) -> Path:
        name = self.settings.embedded_model
        if self.notify is not None and not staticmodel.offline():
            size = f" ({DEFAULT_MODEL_SIZE}, once)" if name == staticmodel.DEFAULT_MODEL else " (once)"
            self.notify(f"downloading the embedding model {name}{size} into {staticmodel.hub_cache_dir()}")
        progress = self.progress
        report = None if progress is None else \
            lambda file, done, total: progress(staticmodel.progress_line(name, file, done, total))
        try:
            return staticmodel.ensure(name, progress=report)
        except errors.DependencyMissing:
            raise Unavailable(
                "missing", f"downloading the embedding model {name} needs the huggingface_hub package",
                "install it (`python3 -m pip install huggingface_hub`), or set embedding.embeddedModel to a local "
                "model directory",
                ["Install the download client: python3 -m pip install huggingface_hub",
                 "Or set embedding.embeddedModel to a local model2vec model directory"]) from None
        except staticmodel.DownloadFailed as exc:
            raise Unavailable(exc.kind, exc.message, exc.hint,
                              ["Download it once while online: memory embed",
                               "Or set embedding.embeddedModel to a local model2vec model directory"]) from None

    def not_downloaded(self) -> Unavailable:
        name = self.settings.embedded_model
        size = f" ({DEFAULT_MODEL_SIZE})" if name == staticmodel.DEFAULT_MODEL else ""
        return Unavailable(
            "not-downloaded", f"the embedding model {name} is not downloaded",
            f"`memory embed` or `memory semantic` downloads it{size}; or set embedding.embeddedModel to a local "
            "model directory",
            [f"Download the model{size}, once: memory embed",
             "Or set embedding.embeddedModel to a local model2vec model directory"])


def index_dir(global_root: Path) -> Path | None:
    """Where compiled tokenizer indexes go: the global scope's cache (None without a global scope)."""
    from ..workspace.scopes import CACHE_DIR_NAME

    return global_root / CACHE_DIR_NAME / INDEX_DIR_NAME if global_root.is_dir() else None


def directory_identity(directory: Path, memo_dir: Path | None) -> str:
    """`<directory name>@<digest>`: a digest of the model's files, remembered by their stamps."""
    stamps = [[name, file_stamp(directory / name)] for name in staticmodel.FILES]
    if any(stamp is None for _, stamp in stamps):
        return directory.name  # missing files: load() says which
    key = os.path.realpath(directory)
    memo_path = memo_dir / DIGESTS_NAME if memo_dir is not None else None
    memo: dict[str, Any] = {}
    if memo_path is not None:
        try:
            loaded = json.loads(memo_path.read_text(encoding="utf-8"))
            memo = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            memo = {}
    record = memo.get(key)
    if isinstance(record, dict) and record.get("stamps") == stamps and isinstance(record.get("digest"), str):
        digest = record["digest"]
    else:
        import hashlib  # only when the files changed: the digest is remembered

        hasher = hashlib.sha256()
        try:
            for name in staticmodel.FILES:
                with open(directory / name, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        hasher.update(block)
        except OSError:
            return directory.name
        digest = hasher.hexdigest()
        if memo_path is not None:
            memo.pop(key, None)
            kept = dict(list(memo.items())[-(MAX_DIGESTS - 1):])
            kept[key] = {"stamps": stamps, "digest": digest}
            try:
                memo_path.parent.mkdir(parents=True, exist_ok=True)
                fsutil.write_atomically(memo_path, json.dumps(kept), durable=False)
            except OSError:
                pass  # a read-only cache: the digest is computed again next time
    return f"{directory.name}@{digest[:12]}"
