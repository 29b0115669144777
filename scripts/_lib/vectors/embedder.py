"""Embeddings: the providers, their remembered availability, and the per-memory cache.

Providers (config `embedding.provider`):
  auto      the default: Ollama when it answers with a usable model, else the embedded model
            when it is present, else none (keyword search). Ollama on this machine is first
            asked with a bare TCP connection, so a missing Ollama costs no HTTP library and
            no wait, and is not a warning.
  embedded  a static model2vec model run in this process (embedded.py): no server.
  ollama    POST <endpoint>/api/embed (servers older than 0.3: /api/embeddings). GET /api/tags
            tells which models are pulled: the configured model, else the first pulled
            fallback model; names match with or without `:latest`.
  openai    POST to any OpenAI-compatible /v1/embeddings (OpenAI, LM Studio, llama.cpp server,
            vLLM, Ollama), with a bearer key from the variable named by `embedding.apiKeyEnv`.
  disabled  no embeddings; semantic search falls back to keyword search.

Availability is remembered in `.cache/embedding-state.json` of the global scope (else of
the project scope; no scope directory is created for it): a working provider for
UP_SECONDS, a failing one for DOWN_SECONDS, so repeated commands and hooks never wait on a
dead endpoint. `memory embed` always checks again.

The cache of record is one JSON file per memory, `<scope>/.embedding-cache/<slug>.json`
(slug, model, vector, contentHash, timestamp, and `chunks` for long memories). An entry
is usable when its model is the provider's and its contentHash the memory's current one;
semantic.py keeps a packed copy of the usable vectors for fast search.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from array import array
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

from ..base import clock, deps, errors, fsutil
from ..model import memory
from ..workspace.scopes import CACHE_DIR_NAME
from .provider import NOT_SET_UP, Status, Unavailable  # noqa: F401  (embed.Unavailable for callers)

PROVIDERS = ("auto", "embedded", "ollama", "openai", "disabled")
STATE_NAME = "embedding-state.json"
STATE_VERSION = 1
STATE_KEEP = 8            # remembered provider settings
UP_SECONDS = 300.0        # a working provider is trusted this long without a new probe
DOWN_SECONDS = 60.0       # a failing one is not asked again for this long (`memory embed` asks anyway)
PER_TEXT_SECONDS = 0.5    # extra read time allowed for each further text of one request
REQUEST_TEXTS = 32        # texts per HTTP request
BATCH_MEMORIES = 16       # memories per `memory embed` round with a server ...
BATCH_MEMORIES_IN_PROCESS = 256  # ... and with the embedded model (rounds cost a lock and an index.json update)
MAX_INPUT_CHARS = 8000    # of the whole-memory text; long memories are covered by their chunks
MAX_DIMENSION = 8192      # schemas/embedding-cache.schema.json
CHUNK_WORDS = 180         # a chunk: the title and a window of this many words ...
CHUNK_OVERLAP = 60        # ... overlapping the next window by this many (with a server's model);
# with the embedded model, whose vector is an average of word vectors, shorter windows: chosen
# by cross-validation on the dev queries of the ADR set (bench/search_quality.py)
CHUNK_WORDS_IN_PROCESS = 60
CHUNK_OVERLAP_IN_PROCESS = 20
MAX_CHUNKS = 48
OLLAMA_DOWNLOAD = "https://ollama.com/download"
# -- settings and status ------------------------------------------------------------------

def canonical_model(name: str) -> str:
    """Ollama's name for a model: `embeddinggemma` and `embeddinggemma:latest` are the same."""
    name = name.strip().lower()
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def same_model(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and canonical_model(a or "") == canonical_model(b or "")


def _is_path(name: str) -> bool:
    return name.startswith(("/", "~", "."))


class Settings:
    """The `embedding` section of the effective config.

    `model` is the model of an Ollama or OpenAI-compatible server; `embedded_model` the
    embedded provider's (`embeddedModel`: a hub id or a directory). `model` names the
    embedded model instead when it is a directory path (no server model is named so), or
    a hub id while the provider is `embedded`.
    """

    __slots__ = ("provider", "endpoint", "model", "embedded_model", "fallbacks", "timeout", "key_env")

    def __init__(self, section: dict[str, Any]) -> None:
        self.provider = str(section.get("provider") or "auto")
        self.endpoint = str(section.get("endpoint") or "http://localhost:11434").rstrip("/")
        model = str(section.get("model") or "embeddinggemma")
        self.embedded_model = str(section.get("embeddedModel") or "")
        if not self.embedded_model:
            from .staticmodel import DEFAULT_MODEL

            self.embedded_model = DEFAULT_MODEL
        if _is_path(model) or (self.provider == "embedded" and "/" in model):  # a path or a hub id
            self.embedded_model, model = model, "embeddinggemma"
        self.model = model
        fallbacks = [str(name) for name in section.get("fallbackModels") or []]
        self.fallbacks = [name for name in dict.fromkeys(fallbacks) if not same_model(name, self.model)]
        self.timeout = float(section.get("timeoutSeconds") or 2.0)
        self.key_env = str(section.get("apiKeyEnv") or "OPENAI_API_KEY")


def configured_model(settings: Settings, model: str) -> bool:
    """Whether a cache entry made with `model` comes from these settings: the server model or
    a fallback, or the embedded model (named `<hub id or directory name>@<revision or digest>`)."""
    if "@" in model:
        name = settings.embedded_model
        return model.rsplit("@", 1)[0] in (name, os.path.basename(os.path.expanduser(name).rstrip("/")))
    return any(same_model(model, name) for name in [settings.model, *settings.fallbacks])


# -- HTTP ---------------------------------------------------------------------------------

def _loopback(url: str) -> bool:
    """Whether `url` names this machine (localhost, 127.x.x.x, ::1)."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    return host == "localhost" or host.startswith("127.") or host == "::1"


def _error_text(text: str) -> str:
    """The error message in an Ollama ({"error": "..."}) or OpenAI ({"error": {"message"}}) body."""
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    return str(error)[:200] if error else " ".join(text.split())[:200]


class _Http:
    """A provider's HTTP plumbing: one `requests` session, short timeouts, failures as Unavailable."""

    name = "provider"
    kind = "provider"
    texts_per_call = REQUEST_TEXTS
    remember_success = True

    def worth_remembering(self, failure: Unavailable) -> bool:
        return True  # asking again costs a timeout

    def __init__(self, settings: Settings, env: Any) -> None:
        self.settings = settings
        self.env = env
        self._session: Any = None

    def _request(self, method: str, url: str, *, body: Any = None, headers: dict[str, str] | None = None,
                 texts: int = 1) -> tuple[int, str]:
        try:
            requests = deps.load("requests")
        except errors.DependencyMissing as exc:
            raise Unavailable("failed", exc.message, exc.hint) from None
        if self._session is None:
            self._session = requests.Session()
            if _loopback(url):
                self._session.trust_env = False  # a local server: no proxy from the environment
        timeout = self.settings.timeout
        try:
            response = self._session.request(method, url, json=body, headers=headers,
                                             timeout=(timeout, timeout + PER_TEXT_SECONDS * max(texts - 1, 0)))
        except requests.exceptions.ConnectTimeout:
            raise self.down(f"no answer from {self.settings.endpoint} within {timeout:g} s") from None
        except requests.exceptions.ReadTimeout:
            raise self.slow() from None
        except requests.exceptions.ConnectionError as exc:
            if "Connection aborted" in str(exc) or "RemoteDisconnected" in str(exc):
                raise self.failed(f"{self.settings.endpoint} closed the connection without answering") from None
            raise self.down() from None
        except requests.exceptions.RequestException as exc:
            raise self.failed(f"the request to {url} failed: {type(exc).__name__}") from None
        return response.status_code, response.content.decode("utf-8", "replace")

    @property
    def key(self) -> str:
        """Identifies the provider and its settings in the state file (another endpoint or model
        is probed anew)."""
        settings = self.settings
        return " ".join([self.kind, settings.endpoint, settings.model, ",".join(settings.fallbacks)])

    def _json(self, text: str, what: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            raise self.failed(f"{what} returned an invalid answer (not JSON)", malformed=True) from None

    # the provider-specific messages
    def down(self, reason: str | None = None) -> Unavailable:
        raise NotImplementedError

    def slow(self) -> Unavailable:
        return Unavailable("timeout", f"{self.name} at {self.settings.endpoint} did not answer within "
                                      f"{self.settings.timeout:g} s",
                           "check that it is running and not overloaded, or raise embedding.timeoutSeconds")

    def failed(self, reason: str, *, malformed: bool = False) -> Unavailable:
        hint = ("check that embedding.endpoint points at the right server and embedding.provider names its API"
                if malformed else f"check {self.name}'s log, or restart it")
        return Unavailable("failed", reason, hint)


def _accepts_connections(url: str, timeout: float) -> bool:
    """Whether something listens at the host and port of `url` (a TCP connection, no request)."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        socket.create_connection((parts.hostname or "localhost", port), timeout=timeout).close()
    except (OSError, ValueError):
        return False
    return True


def _vectors(data: Any, count: int, what: str, owner: _Http) -> list[list[float]]:
    """Check that `data` is `count` vectors of one size made of finite numbers."""
    if not isinstance(data, list) or len(data) != count:
        raise owner.failed(f"{what} returned {len(data) if isinstance(data, list) else 'no'} embeddings "
                           f"for {count} texts", malformed=True)
    checked = []
    for vector in data:
        try:
            numbers = array("d", vector) if isinstance(vector, list) and 0 < len(vector) <= MAX_DIMENSION else None
        except TypeError:
            numbers = None
        if numbers is None or not math.isfinite(sum(numbers)):
            raise owner.failed(f"{what} returned something that is not an embedding vector", malformed=True)
        if checked and len(numbers) != len(checked[0]):
            raise owner.failed(f"{what} returned vectors of different sizes ({len(checked[0])} and {len(numbers)})",
                               malformed=True)
        checked.append(numbers.tolist())
    return checked


class Ollama(_Http):
    """Ollama's native API."""

    name = "Ollama"
    kind = "ollama"

    def down(self, reason: str | None = None) -> Unavailable:
        settings = self.settings
        return Unavailable(
            "down", reason or f"Ollama not detected at {settings.endpoint}",
            f"install Ollama ({OLLAMA_DOWNLOAD}), pull the model (`ollama pull {settings.model}`) and start it "
            "(`ollama serve`); or set embedding.provider to disabled",
            [f"1. Install Ollama: {OLLAMA_DOWNLOAD}", f"2. Pull embedding model: ollama pull {settings.model}",
             "3. Start Ollama: ollama serve"])

    def no_model(self, pulled: list[str]) -> Unavailable:
        settings = self.settings
        wanted = ", ".join([settings.model] + settings.fallbacks)
        others = f"; it has {', '.join(pulled[:5])}{', ...' if len(pulled) > 5 else ''}" if pulled else ""
        return Unavailable(
            "no-model", f"Ollama at {settings.endpoint} has no embedding model pulled (looked for {wanted}{others})",
            f"pull one: `ollama pull {settings.model}`" + (", or set embedding.model to one it has" if pulled else ""),
            [f"Pull embedding model: ollama pull {settings.model}"]
            + (["Or use a model it has: memory config embedding.model <name>"] if pulled else []))

    def probe(self) -> Status:
        """Which model to use: GET /api/tags, then the configured model or the first pulled fallback."""
        settings = self.settings
        if _loopback(settings.endpoint) and not _accepts_connections(settings.endpoint, settings.timeout):
            raise self.down()  # nothing listens: known without importing an HTTP library
        code, text = self._request("GET", f"{settings.endpoint}/api/tags")
        if code != 200:
            raise self.failed(f"{settings.endpoint}/api/tags answered HTTP {code}: {_error_text(text)}",
                              malformed=code == 404)
        data = self._json(text, f"{settings.endpoint}/api/tags")
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise self.failed(f"{settings.endpoint}/api/tags returned no model list", malformed=True)
        pulled = [str(item.get("name") or item.get("model")) for item in models
                  if isinstance(item, dict) and (item.get("name") or item.get("model"))]
        names = {canonical_model(name) for name in pulled}
        for candidate in [settings.model] + settings.fallbacks:
            if canonical_model(candidate) in names:
                note = None
                if candidate != settings.model:
                    note = (f"embedding model {settings.model} is not pulled in Ollama; using {candidate} "
                            f"(run `ollama pull {settings.model}` to use the configured model)")
                return Status(candidate, "embed", None, note)
        raise self.no_model(pulled)

    def embed(self, status: Status, texts: list[str]) -> list[list[float]]:
        endpoint = self.settings.endpoint
        if status.api == "embeddings":
            return [self._legacy(status, text) for text in texts]
        code, answer = self._request("POST", f"{endpoint}/api/embed", body={"model": status.model, "input": texts},
                                     texts=len(texts))
        if code == 404 and "not found" in answer and answer.lstrip().startswith("{"):
            raise self.no_model([])  # the model was removed since the probe
        if code == 404:  # no such route: Ollama older than 0.3
            status.api = "embeddings"
            return [self._legacy(status, text) for text in texts]
        if code != 200:
            raise self.failed(f"Ollama at {endpoint} failed to embed with {status.model} "
                              f"(HTTP {code}: {_error_text(answer)})")
        data = self._json(answer, f"Ollama at {endpoint}")
        return _vectors(data.get("embeddings") if isinstance(data, dict) else None, len(texts),
                        f"Ollama at {endpoint}", self)

    def _legacy(self, status: Status, text: str) -> list[float]:
        endpoint = self.settings.endpoint
        code, answer = self._request("POST", f"{endpoint}/api/embeddings", body={"model": status.model,
                                                                                "prompt": text})
        if code == 404 and "not found" in answer and answer.lstrip().startswith("{"):
            raise self.no_model([])
        if code != 200:
            raise self.failed(f"Ollama at {endpoint} failed to embed with {status.model} "
                              f"(HTTP {code}: {_error_text(answer)})", malformed=code == 404)
        data = self._json(answer, f"Ollama at {endpoint}")
        return _vectors([data.get("embedding") if isinstance(data, dict) else None], 1,
                        f"Ollama at {endpoint}", self)[0]


class OpenAI(_Http):
    """Any OpenAI-compatible /v1/embeddings endpoint."""

    name = "the embedding server"
    kind = "openai"

    @property
    def url(self) -> str:
        endpoint = self.settings.endpoint
        if endpoint.endswith("/embeddings"):
            return endpoint
        return endpoint + ("/embeddings" if endpoint.endswith("/v1") else "/v1/embeddings")

    def down(self, reason: str | None = None) -> Unavailable:
        return Unavailable(
            "down", reason or f"no OpenAI-compatible embedding server at {self.settings.endpoint}",
            "start the server, or fix embedding.endpoint",
            [f"1. Start the server (LM Studio, llama.cpp, vLLM, Ollama), or fix embedding.endpoint "
             f"(now {self.settings.endpoint})",
             f"2. Make it serve the model {self.settings.model} (embedding.model)",
             f"3. Put its API key, if it needs one, in ${self.settings.key_env} (embedding.apiKeyEnv)"])

    def probe(self) -> Status:
        return Status(self.settings.model, "openai", provider=self.kind)  # no cheap probe: the first request tells

    def embed(self, status: Status, texts: list[str]) -> list[list[float]]:
        settings = self.settings
        key = (self.env.get(settings.key_env) or "").strip()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        code, answer = self._request("POST", self.url, body={"model": status.model, "input": texts,
                                                             "encoding_format": "float"},
                                     headers=headers, texts=len(texts))
        if code in (401, 403):
            problem = "refused the API key" if key else "needs an API key"
            raise Unavailable("auth", f"{self.url} {problem} (HTTP {code}: {_error_text(answer)})",
                              f"put a valid key in ${settings.key_env} (the variable named by embedding.apiKeyEnv)",
                              [f"Set ${settings.key_env} to a valid API key (embedding.apiKeyEnv names the variable)"])
        if code == 404 and answer.lstrip().startswith("{"):
            raise Unavailable("no-model", f"{self.url} has no model {status.model} ({_error_text(answer)})",
                              "set embedding.model to a model the server offers",
                              ["Set embedding.model to a model the server offers: "
                               "memory config embedding.model <name>"])
        if code != 200:
            raise self.failed(f"{self.url} answered HTTP {code}: {_error_text(answer)}", malformed=code == 404)
        data = self._json(answer, self.url)
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise self.failed(f"{self.url} returned no embeddings", malformed=True)
        ordered = sorted(items, key=lambda item: item.get("index") if isinstance(item.get("index"), int) else 0)
        return _vectors([item.get("embedding") for item in ordered], len(texts), self.url, self)


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


# -- the cache files ----------------------------------------------------------------------------

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
