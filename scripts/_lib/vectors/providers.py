"""Embedding providers (config `embedding.provider`), their settings and what they report.

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

Which of them runs, and what is remembered of their availability, is embedder.py.
"""

from __future__ import annotations

import json
import math
import os
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..base import deps, errors

PROVIDERS = ("auto", "embedded", "ollama", "openai", "disabled")
PER_TEXT_SECONDS = 0.5    # extra read time allowed for each further text of one request
REQUEST_TEXTS = 32        # texts per HTTP request
MAX_DIMENSION = 8192      # schemas/embedding-cache.schema.json
OLLAMA_DOWNLOAD = "https://ollama.com/download"
# Failures meaning "not set up here" rather than "broken" (Unavailable.kind): no Ollama, the
# embedded model not downloaded (or its download client missing, or no network to get it).
NOT_SET_UP = ("down", "not-downloaded", "missing", "offline", "unreachable")
DEFAULT_EMBEDDED_MODEL = "minishlab/potion-retrieval-32M"  # the embedded provider's (a model2vec hub id)


# -- errors -------------------------------------------------------------------------------

class Unavailable(errors.ProviderUnavailable):
    """Embeddings cannot be computed now.

    `kind`: disabled, down, timeout, no-model, auth, failed (HTTP error or malformed
    answer) or dimension (vectors whose size differs from the cached ones). `steps`
    are the setup instructions shown when semantic search falls back.
    """

    def __init__(self, kind: str, message: str, hint: str | None = None, steps: list[str] | None = None) -> None:
        super().__init__(message, hint)
        self.kind = kind
        self.steps = steps or []
        self.remembered = False  # replayed from the state file, not observed by this process

    def notice(self) -> str:
        """The message shown when semantic search falls back (spec: Embedding Degradation Matrix)."""
        lines = [f"\u26a0\ufe0f Semantic search unavailable: {self.message}", ""]
        if self.steps:
            lines += ["To enable semantic search:"] + [f"  {step}" for step in self.steps] + [""]
        elif self.hint:
            lines += [self.hint[0].upper() + self.hint[1:], ""]
        lines.append("Falling back to keyword search.")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "hint": self.hint, "steps": self.steps}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Unavailable":
        return cls(str(data.get("kind") or "failed"), str(data.get("message") or "the embedding provider failed"),
                   data.get("hint") if isinstance(data.get("hint"), str) else None,
                   [str(step) for step in data.get("steps") or []])


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
        self.embedded_model = str(section.get("embeddedModel") or DEFAULT_EMBEDDED_MODEL)
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


class Status:
    """A working provider: the model it embeds with, how, what it told us, which provider
    it is and why it was chosen."""

    __slots__ = ("model", "api", "dim", "note", "provider", "reason")

    def __init__(self, model: str, api: str, dim: int | None = None, note: str | None = None, *,
                 provider: str = "ollama", reason: str | None = None) -> None:
        self.model, self.api, self.dim, self.note = model, api, dim, note
        self.provider, self.reason = provider, reason

    @property
    def in_process(self) -> bool:
        """Whether the model runs in this process (the embedded provider)."""
        return self.api == "static"

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "api": self.api, "dim": self.dim, "note": self.note,
                "reason": self.reason}


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
    checked: list[list[float]] = []
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
