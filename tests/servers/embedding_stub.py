"""A real HTTP embedding server for tests: Ollama API plus OpenAI-compatible /v1/embeddings.

Stdlib only, CPython 3.10+. In-process use::

    with EmbeddingStub(dim=768, models=["nomic-embed-text"]) as stub:
        client_base_url = stub.url                   # http://127.0.0.1:PORT
        stub.configure(error_status=500)             # fault injection
        assert stub.count("/api/embed") == 1
        stub.set_available(False)                    # connections now refused

As a separate process (first stdout line = API URL, second = control URL)::

    python tests/servers/embedding_stub.py --port 0 --dim 768 --models a,b

Vectors are deterministic and meaningful: a hashed, sub-linearly weighted bag of
lowercase words, character trigrams and optional synonym-group features, projected
into ``dim`` dimensions with a per-model salt. Texts sharing words (or synonyms)
have higher cosine similarity; identical text gives identical vectors; different
models give different (unrelated) vector spaces.

Routes (Ollama shapes, gin-style ``404 page not found`` for unknown routes):
``GET|HEAD /``, ``GET /api/version``, ``GET /api/tags``, ``POST /api/show``,
``POST /api/embed``, ``POST /api/embeddings``, ``POST /v1/embeddings``,
``GET /v1/models``. Control (never counted): ``GET /_stub/state``,
``POST /_stub/config``, ``POST /_stub/reset``, ``POST /_stub/hold``,
``POST /_stub/release``; served on the API port and on an always-up control port.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import math
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

EMBED = "/api/embed"
EMBEDDINGS = "/api/embeddings"
OPENAI_EMBEDDINGS = "/v1/embeddings"
EMBEDDING_PATHS: tuple[str, ...] = (EMBED, EMBEDDINGS, OPENAI_EMBEDDINGS)
DEFAULT_MODELS: tuple[str, ...] = ("embeddinggemma:latest", "nomic-embed-text:latest")
OLLAMA_500 = "llama runner process has terminated: exit status 2"

#: Ready-made synonym table for the US2 scenario ("authentication problems" must
#: find memories about OAuth, login issues and auth errors).
AUTH_SYNONYMS: dict[str, list[str]] = {
    "authentication": ["auth", "oauth", "oauth2", "login", "signin", "sso", "credentials"],
    "problem": ["problems", "issue", "issues", "error", "errors", "failure", "bug"],
}

_WORD_RE = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were will with we our you your i".split()
)
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.3
_SYNONYM_WEIGHT = 2.0
_POSITIONS_PER_FEATURE = 4


# --------------------------------------------------------------------------- vectors


def canonical_model(name: str) -> str:
    """Ollama-style canonical model name: lowercase, ``:latest`` when untagged."""
    name = name.strip().lower()
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens (letters/digits), stop-words removed."""
    return [w for w in (m.lower() for m in _WORD_RE.findall(text)) if w not in _STOPWORDS]


def _synonym_index(synonyms: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Map every word of each synonym group (key + values) to its group key."""
    index: dict[str, str] = {}
    for head, others in synonyms.items():
        for word in (head, *others):
            for token in tokenize(word):
                index.setdefault(token, head.lower())
    return index


def _features(tokens: Sequence[str], synonyms: Mapping[str, str]) -> dict[str, float]:
    """Weighted features with sub-linear term frequency (1 + ln count)."""
    counts: Counter[str] = Counter()
    base: dict[str, float] = {}
    for word in tokens:
        grams = [f"<{word}>"[i : i + 3] for i in range(len(word))]
        items = [(f"w:{word}", _WORD_WEIGHT)] + [(f"t:{g}", _TRIGRAM_WEIGHT) for g in grams]
        if word in synonyms:
            items.append((f"s:{synonyms[word]}", _SYNONYM_WEIGHT))
        for feat, weight in items:
            counts[feat] += 1
            base[feat] = weight
    if not counts:
        return {"empty": 1.0}
    return {f: base[f] * (1.0 + math.log(n)) for f, n in counts.items()}


@lru_cache(maxsize=200_000)
def _positions(salt: str, feature: str, dim: int) -> tuple[tuple[int, float], ...]:
    digest = hashlib.blake2b(f"{salt}\x00{feature}".encode(), digest_size=32).digest()
    scale = 1.0 / math.sqrt(_POSITIONS_PER_FEATURE)
    out = []
    for k in range(_POSITIONS_PER_FEATURE):
        word = int.from_bytes(digest[k * 8 : k * 8 + 8], "little")
        out.append((word % dim, scale if (word >> 63) & 1 else -scale))
    return tuple(out)


def raw_vector(text: str, model: str, dim: int, synonyms: Mapping[str, Iterable[str]] | None = None) -> list[float]:
    """Un-normalised deterministic embedding (what legacy ``/api/embeddings`` returns)."""
    vec = [0.0] * dim
    salt = canonical_model(model)
    for feat, weight in _features(tokenize(text), _synonym_index(synonyms or {})).items():
        for idx, sign in _positions(salt, feat, dim):
            vec[idx] += sign * weight
    return vec


def normalize(vec: Sequence[float]) -> list[float]:
    """L2-normalise like Ollama's ``/api/embed`` does."""
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def embed_text(text: str, model: str, dim: int, synonyms: Mapping[str, Iterable[str]] | None = None) -> list[float]:
    """Normalised deterministic embedding of ``text`` in ``model``'s vector space."""
    return normalize(raw_vector(text, model, dim, synonyms))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


# --------------------------------------------------------------------------- config & stats


@dataclass(frozen=True)
class StubConfig:
    """Runtime behaviour; change with :meth:`EmbeddingStub.configure` or ``POST /_stub/config``."""

    dim: int = 768  # default vector size
    models: tuple[str, ...] = DEFAULT_MODELS  # "pulled" Ollama models
    model_dims: Mapping[str, int] = field(default_factory=dict)  # per-model size override
    openai_models: tuple[str, ...] | None = None  # None: /v1 accepts any model
    api_key: str | None = None  # required Bearer key on /v1/* when set
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    embed_endpoint: bool = True  # False: /api/embed is 404 (Ollama < 0.2)
    legacy_endpoint: bool = True  # False: /api/embeddings is 404
    openai_endpoint: bool = True  # False: /v1/* is 404
    version: str = "0.12.6"
    # Faults, applied to requests whose path is in fault_paths:
    delay: float = 0.0  # seconds before answering (other requests proceed)
    error_status: int | None = None  # answer this status with an Ollama/OpenAI error body
    error_message: str = OLLAMA_500
    malformed_json: bool = False  # 200 with a truncated JSON body
    wrong_dim: int | None = None  # embeddings of this size instead
    drop_connection: bool = False  # close the socket without answering
    fault_paths: tuple[str, ...] = EMBEDDING_PATHS
    faults_remaining: int | None = None  # faults apply to this many requests, then stop

    def dim_for(self, model: str) -> int:
        """Vector size served for ``model``."""
        dims = {canonical_model(k): v for k, v in self.model_dims.items()}
        return dims.get(canonical_model(model), self.dim)

    def has_model(self, model: str) -> bool:
        """Whether ``model`` is "pulled" (Ollama name matching, case-insensitive)."""
        return canonical_model(model) in {canonical_model(m) for m in self.models}

    def to_json(self) -> dict[str, Any]:
        """JSON-serialisable view."""
        data = dataclasses.asdict(self)
        data["model_dims"] = dict(self.model_dims)
        data["synonyms"] = {k: list(v) for k, v in self.synonyms.items()}
        return data


_TUPLE_FIELDS = ("models", "openai_models", "fault_paths")


def _coerce(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Validate keys and normalise list values (from JSON or Python) for StubConfig."""
    names = {f.name for f in dataclasses.fields(StubConfig)}
    unknown = set(changes) - names
    if unknown:
        raise ValueError(f"unknown stub setting(s): {sorted(unknown)}")
    out = dict(changes)
    for key in _TUPLE_FIELDS:
        if out.get(key) is not None:
            value = out[key]
            out[key] = tuple(value.split(",") if isinstance(value, str) else value)
    if "models" in out:
        out["models"] = tuple(canonical_model(m) for m in out["models"] if m)
    if "synonyms" in out:
        out["synonyms"] = {k: tuple(v) for k, v in out["synonyms"].items()}
    if "model_dims" in out:
        out["model_dims"] = dict(out["model_dims"])
    return out


@dataclass
class RecordedRequest:
    """One request received on the API port (control requests are not recorded)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, raw text when not JSON, None when empty
    status: int | None = None  # filled in when answered (None: dropped or pending)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def texts_of(path: str, body: Any) -> list[str]:
    """Texts an embedding request asked for (empty for other paths or bad bodies)."""
    if not isinstance(body, dict):
        return []
    value = body.get("prompt") if path == EMBEDDINGS else body.get("input")
    if isinstance(value, str):
        return [value] if value or path != EMBED else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


# --------------------------------------------------------------------------- HTTP


class _HTTPError(Exception):
    def __init__(self, status: int, payload: Any) -> None:
        super().__init__(status)
        self.status, self.payload = status, payload


class _Drop(Exception):
    """Close the connection without an answer."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], stub: EmbeddingStub, control_only: bool) -> None:
        self.stub, self.control_only = stub, control_only
        super().__init__(addr, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-answer are normal in fault tests: stay quiet."""
        if self.stub.verbose:
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.stub.verbose:
            sys.stderr.write(f"stub: {self.address_string()} {format % args}\n")

    def setup(self) -> None:
        super().setup()
        self.server.stub._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.stub._track(self.connection, add=False)

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_HEAD = do_DELETE = do_PUT = do_GET

    # -- plumbing

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, payload: Any, malformed: bool = False) -> None:
        body = json.dumps(payload).encode()
        if malformed:
            body = body[: max(1, len(body) // 2)]
        self._send(status, body, "application/json; charset=utf-8")

    def _dispatch(self) -> None:
        stub = self.server.stub
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        if path.startswith("/_stub/"):
            self._control(path, raw)
            return
        if self.server.control_only:
            self._send(404, b"404 page not found", "text/plain")
            return
        body = _parse_body(raw)
        record = stub._record(self.command, path, dict(self.headers), body)
        cfg, faulty = stub._fault_snapshot(path)
        status: int | None = None
        try:
            status = self._answer(stub, cfg, faulty, path, raw, body)
        except _Drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        finally:
            stub._answered(record, status)

    def _answer(self, stub: EmbeddingStub, cfg: StubConfig, faulty: bool, path: str, raw: bytes, body: Any) -> int:
        handler = _ROUTES.get((self.command if self.command != "HEAD" else "GET", path))
        if handler is None or not _route_enabled(cfg, path):
            self._send(404, b"404 page not found", "text/plain")
            return 404
        openai = path.startswith("/v1/")
        if faulty:
            stub._wait(cfg.delay)
            if cfg.drop_connection:
                raise _Drop()
            if cfg.error_status is not None:
                err = _openai_error(cfg.error_message, "server_error") if openai else {"error": cfg.error_message}
                self._send_json(cfg.error_status, err)
                return cfg.error_status
        try:
            if openai:
                _check_key(cfg, self.headers.get("Authorization"))
            payload = handler(cfg, raw, body, cfg.wrong_dim if faulty else None)
        except _HTTPError as exc:
            self._send_json(exc.status, exc.payload)
            return exc.status
        if isinstance(payload, str):
            self._send(200, payload.encode(), "text/plain; charset=utf-8")
        else:
            self._send_json(200, payload, malformed=faulty and cfg.malformed_json)
        return 200

    def _control(self, path: str, raw: bytes) -> None:
        stub = self.server.stub
        stub._local.conn = self.connection  # never cut the connection carrying this answer
        try:
            body = json.loads(raw) if raw.strip() else {}
            if path == "/_stub/state" and self.command == "GET":
                self._send_json(200, stub.state())
            elif path == "/_stub/config" and self.command == "POST":
                stub.configure(**body)
                self._send_json(200, stub.state())
            elif path == "/_stub/reset" and self.command == "POST":
                stub.reset(config=bool(body.get("config", False)))
                self._send_json(200, stub.state())
            elif path in ("/_stub/hold", "/_stub/release") and self.command == "POST":
                stub.hold() if path.endswith("hold") else stub.release()
                self._send_json(200, {"held": path.endswith("hold")})
            else:
                self._send(404, b"404 page not found", "text/plain")
            if not self.server.control_only and not stub.available:
                self.close_connection = True
        except (ValueError, TypeError, AttributeError) as exc:
            self._send_json(400, {"error": str(exc)})


def _parse_body(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _route_enabled(cfg: StubConfig, path: str) -> bool:
    if path == EMBED:
        return cfg.embed_endpoint
    if path == EMBEDDINGS:
        return cfg.legacy_endpoint
    return cfg.openai_endpoint or not path.startswith("/v1/")


def _ollama_request(raw: bytes, body: Any) -> dict[str, Any]:
    """Ollama's ShouldBindJSON error handling."""
    if not raw.strip():
        raise _HTTPError(400, {"error": "missing request body"})
    if not isinstance(body, dict):
        raise _HTTPError(400, {"error": "invalid character looking for beginning of value"})
    return body


def _require_model(cfg: StubConfig, body: Mapping[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _HTTPError(400, {"error": "model is required"})
    if not cfg.has_model(model):
        raise _HTTPError(404, {"error": f"model {json.dumps(model)} not found, try pulling it first"})
    return model


def _vectors(cfg: StubConfig, model: str, texts: Sequence[str], wrong_dim: int | None) -> list[list[float]]:
    dim = wrong_dim or cfg.dim_for(model)
    return [embed_text(t, model, dim, cfg.synonyms) for t in texts]


def _token_count(text: str) -> int:
    """Rough token count (words, stop-words included) for usage fields."""
    return len(_WORD_RE.findall(text))


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _h_root(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> str:
    return "Ollama is running"


def _h_version(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    return {"version": cfg.version}


def _model_entry(cfg: StubConfig, name: str) -> dict[str, Any]:
    digest = hashlib.sha256(name.encode()).hexdigest()
    base = name.split(":")[0]
    family = "nomic-bert" if "nomic" in base else "gemma3" if "gemma" in base else "bert"
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-01-10T10:00:00.000000000Z",
        "size": 100_000_000 + int(digest[:6], 16),
        "digest": digest,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": family,
            "families": [family],
            "parameter_size": "137M",
            "quantization_level": "F16",
        },
    }


def _h_tags(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    return {"models": [_model_entry(cfg, m) for m in cfg.models]}


def _h_show(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    req = _ollama_request(raw, body)
    model = req.get("model") or req.get("name")
    if not isinstance(model, str) or not model:
        raise _HTTPError(400, {"error": "model is required"})
    if not cfg.has_model(model):
        raise _HTTPError(404, {"error": f"model '{model}' not found"})
    entry = _model_entry(cfg, canonical_model(model))
    family = entry["details"]["family"]
    return {
        "license": "",
        "modelfile": f"FROM {entry['name']}\n",
        "parameters": "",
        "template": "",
        "details": entry["details"],
        "model_info": {
            "general.architecture": family,
            f"{family}.embedding_length": cfg.dim_for(model),
            f"{family}.context_length": 2048,
        },
        "capabilities": ["embedding"],
        "modified_at": entry["modified_at"],
    }


def _h_embed(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    started = time.monotonic()
    req = _ollama_request(raw, body)
    value = req.get("input")
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise _HTTPError(400, {"error": "invalid input type"})
    if value is not None and not isinstance(value, (str, list)):
        raise _HTTPError(400, {"error": "invalid input type"})
    model = _require_model(cfg, req)
    texts = texts_of(EMBED, req)
    vectors = _vectors(cfg, model, texts, wrong_dim)
    dims = req.get("dimensions")
    if isinstance(dims, int) and 0 < dims < (len(vectors[0]) if vectors else 0):
        vectors = [normalize(v[:dims]) for v in vectors]
    if not texts:
        return {"model": model, "embeddings": []}
    return {
        "model": model,
        "embeddings": vectors,
        "total_duration": _ns(time.monotonic() - started),
        "load_duration": 1_000_000,
        "prompt_eval_count": sum(_token_count(t) + 2 for t in texts),
    }


def _h_embeddings(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    req = _ollama_request(raw, body)
    model = _require_model(cfg, req)
    prompt = req.get("prompt")
    if not prompt or not isinstance(prompt, str):
        return {"embedding": []}
    dim = wrong_dim or cfg.dim_for(model)
    return {"embedding": raw_vector(prompt, model, dim, cfg.synonyms)}


def _openai_error(message: str, etype: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": etype, "param": None, "code": code}}


def _check_key(cfg: StubConfig, header: str | None) -> None:
    if cfg.api_key is None:
        return
    if not header or not header.startswith("Bearer ") or not header[7:].strip():
        raise _HTTPError(401, _openai_error(
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."))
    key = header[7:].strip()
    if key != cfg.api_key:
        shown = f"{key[:3]}*****{key[-4:]}" if len(key) > 8 else "*****"
        raise _HTTPError(401, _openai_error(f"Incorrect API key provided: {shown}.", code="invalid_api_key"))


def _h_openai_embeddings(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _HTTPError(400, _openai_error("We could not parse the JSON body of your request."))
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _HTTPError(400, _openai_error("you must provide a model parameter"))
    if cfg.openai_models is not None and model not in cfg.openai_models:
        raise _HTTPError(404, _openai_error(
            f"The model `{model}` does not exist or you do not have access to it.", code="model_not_found"))
    value = body.get("input")
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        texts = [" ".join(f"tok{v}" for v in value)]
    elif isinstance(value, list) and value and all(isinstance(v, (str, list)) for v in value):
        texts = [v if isinstance(v, str) else " ".join(f"tok{t}" for t in v) for v in value]
    else:
        texts = []
    if not texts or any(t == "" for t in texts):
        raise _HTTPError(400, _openai_error(
            "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."))
    vectors = _vectors(cfg, model, texts, wrong_dim)
    dims = body.get("dimensions")
    if isinstance(dims, int) and 0 < dims < len(vectors[0]):
        vectors = [normalize(v[:dims]) for v in vectors]
    as_b64 = body.get("encoding_format") == "base64"
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if as_b64 else v,
        }
        for i, v in enumerate(vectors)
    ]
    tokens = sum(_token_count(t) for t in texts)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _h_openai_models(cfg: StubConfig, raw: bytes, body: Any, wrong_dim: int | None) -> dict[str, Any]:
    names = cfg.openai_models if cfg.openai_models is not None else cfg.models
    return {"object": "list", "data": [
        {"id": n, "object": "model", "created": 1736503200, "owned_by": "library"} for n in names]}


_ROUTES = {
    ("GET", "/"): _h_root,
    ("GET", "/api/version"): _h_version,
    ("GET", "/api/tags"): _h_tags,
    ("POST", "/api/show"): _h_show,
    ("POST", EMBED): _h_embed,
    ("POST", EMBEDDINGS): _h_embeddings,
    ("POST", OPENAI_EMBEDDINGS): _h_openai_embeddings,
    ("GET", "/v1/models"): _h_openai_models,
}


# --------------------------------------------------------------------------- the stub


class EmbeddingStub:
    """Threaded embedding server on 127.0.0.1; a context manager.

    ``url`` serves the API (and ``/_stub/*`` control); ``control_url`` serves only
    control and stays up while the API port is made unavailable.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, verbose: bool = False, **settings: Any) -> None:
        self.host, self.verbose = host, verbose
        self.port = port
        self._initial = StubConfig(**_coerce(settings))
        self._config = self._initial
        self._faults_left = self._config.faults_remaining
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._released = threading.Event()
        self._released.set()
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._api: _Server | None = None
        self._control: _Server | None = None
        self._placeholder: socket.socket | None = None
        self._local = threading.local()

    # -- lifecycle

    def __enter__(self) -> EmbeddingStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> EmbeddingStub:
        """Bind both listeners and serve in daemon threads."""
        self._stopping.clear()
        self._control = self._serve(0, control_only=True)
        self._api = self._serve(self.port, control_only=False)
        self.port = self._api.server_address[1]
        return self

    def stop(self) -> None:
        """Stop serving, wake delayed/held requests and close every connection."""
        self._stopping.set()
        self._released.set()
        for srv in (self._api, self._control):
            if srv is not None:
                srv.shutdown()
                srv.server_close()
        self._api = self._control = None
        self._close_connections()
        if self._placeholder is not None:
            self._placeholder.close()
            self._placeholder = None

    def _serve(self, port: int, control_only: bool) -> _Server:
        srv = _Server((self.host, port), self, control_only)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return srv

    @property
    def url(self) -> str:
        """Base URL of the API, e.g. ``http://127.0.0.1:41234`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    @property
    def control_url(self) -> str:
        """Base URL of the control-only listener."""
        assert self._control is not None, "stub not started"
        return f"http://{self.host}:{self._control.server_address[1]}"

    @property
    def available(self) -> bool:
        """Whether the API port accepts connections."""
        return self._api is not None

    def set_available(self, available: bool) -> None:
        """Make the API port refuse connections (like Ollama not running) or serve again.

        While unavailable the port stays reserved by a bound, non-listening socket,
        so connections are refused and the same URL works again afterwards.
        Established keep-alive connections are closed too.
        """
        if available == self.available:
            return
        if available:
            assert self._placeholder is not None
            self._placeholder.close()
            self._placeholder = None
            self._api = self._serve(self.port, control_only=False)
            return
        assert self._api is not None
        self._api.shutdown()
        self._api.server_close()
        self._api = None
        self._close_connections(api_only=True)
        self._placeholder = _bound_socket(self.host, self.port)

    # -- configuration

    @property
    def config(self) -> StubConfig:
        """Current settings (immutable snapshot)."""
        return self._config

    def configure(self, **changes: Any) -> StubConfig:
        """Change settings at runtime (any :class:`StubConfig` field, plus ``available``)."""
        available = changes.pop("available", None)
        coerced = _coerce(changes)
        with self._cond:
            self._config = dataclasses.replace(self._config, **coerced)
            if "faults_remaining" in coerced:
                self._faults_left = coerced["faults_remaining"]
        if available is not None:
            self.set_available(bool(available))
        return self._config

    def reset(self, config: bool = False) -> None:
        """Forget recorded requests; with ``config=True`` also restore initial settings."""
        with self._cond:
            self._requests.clear()
            if config:
                self._config = self._initial
                self._faults_left = self._initial.faults_remaining
        if config:
            self.release()
            self.set_available(True)

    def hold(self) -> None:
        """Block answers on fault paths until :meth:`release` (deterministic 'slow server')."""
        self._released.clear()

    def release(self) -> None:
        """Let held requests proceed."""
        self._released.set()

    @contextmanager
    def held(self) -> Iterator[EmbeddingStub]:
        """``with stub.held(): ...`` holds answers for the block."""
        self.hold()
        try:
            yield self
        finally:
            self.release()

    # -- stats

    def requests(self, path: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, optionally for one path."""
        with self._cond:
            return [r for r in self._requests if path is None or r.path == path]

    def count(self, path: str | None = None) -> int:
        """Number of requests received on ``path`` (all paths when None)."""
        return len(self.requests(path))

    @property
    def counts(self) -> dict[str, int]:
        """Requests per path."""
        return dict(Counter(r.path for r in self.requests()))

    def bodies(self, path: str) -> list[Any]:
        """Request bodies received on ``path``."""
        return [r.body for r in self.requests(path)]

    def embedded_texts(self, path: str | None = None) -> list[str]:
        """Every text clients asked to embed, in arrival order, across embedding paths."""
        return [t for r in self.requests(path) for t in texts_of(r.path, r.body)]

    def wait_for_requests(self, n: int, path: str | None = None, timeout: float = 10.0) -> bool:
        """Block until at least ``n`` requests arrived on ``path``; False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: sum(1 for r in self._requests if path is None or r.path == path) >= n, timeout)

    def state(self) -> dict[str, Any]:
        """JSON view served by ``GET /_stub/state``."""
        with self._cond:
            faults_left = self._faults_left
        reqs = self.requests()
        return {
            "url": self.url,
            "available": self.available,
            "held": not self._released.is_set(),
            "config": self._config.to_json() | {"faults_remaining": faults_left},
            "counts": dict(Counter(r.path for r in reqs)),
            "requests": [r.to_json() for r in reqs],
        }

    # -- used by the handler

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> RecordedRequest:
        rec = RecordedRequest(method, path, headers, body)
        with self._cond:
            self._requests.append(rec)
            self._cond.notify_all()
        return rec

    def _answered(self, rec: RecordedRequest, status: int | None) -> None:
        with self._cond:
            rec.status = status
            self._cond.notify_all()

    def _fault_snapshot(self, path: str) -> tuple[StubConfig, bool]:
        """Config for this request and whether faults apply (consumes the fault budget)."""
        with self._cond:
            cfg = self._config
            faulty = path in cfg.fault_paths and (
                cfg.delay > 0 or cfg.error_status is not None or cfg.malformed_json
                or cfg.wrong_dim is not None or cfg.drop_connection or not self._released.is_set())
            if faulty and self._faults_left is not None:
                faulty = self._faults_left > 0
                self._faults_left = max(0, self._faults_left - 1)
            return cfg, faulty

    def _wait(self, delay: float) -> None:
        """Apply hold, then delay, in this request's thread only; stop() wakes both."""
        self._released.wait()
        if delay > 0:
            self._stopping.wait(delay)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._cond:
            (self._conns.add if add else self._conns.discard)(conn)

    def _close_connections(self, api_only: bool = False) -> None:
        with self._cond:
            conns = list(self._conns)
        control_port = self._control.server_address[1] if (api_only and self._control) else None
        current = getattr(self._local, "conn", None)
        for conn in conns:
            try:
                if conn is current or (control_port is not None and conn.getsockname()[1] == control_port):
                    continue
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _bound_socket(host: str, port: int) -> socket.socket:
    """A bound, non-listening TCP socket: connections to it are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


@contextmanager
def refused_url(host: str = "127.0.0.1") -> Iterator[str]:
    """Yield ``http://host:port`` whose port refuses connections ("Ollama not running").

    The port is held by a bound, non-listening socket for the block, so nothing
    else can start listening on it meanwhile.
    """
    sock = _bound_socket(host, 0)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        sock.close()


# --------------------------------------------------------------------------- other process


class StubControl:
    """Client for the ``/_stub/*`` control API of a stub in another process."""

    def __init__(self, control_url: str, timeout: float = 10.0) -> None:
        self.control_url, self.timeout = control_url.rstrip("/"), timeout

    def _call(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(f"{self.control_url}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            return cast("dict[str, Any]", json.loads(resp.read()))

    def state(self) -> dict[str, Any]:
        """Config, availability, counts and recorded requests."""
        return self._call("GET", "/_stub/state")

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Same keys as :meth:`EmbeddingStub.configure` (including ``available``)."""
        return self._call("POST", "/_stub/config", changes)

    def reset(self, config: bool = False) -> dict[str, Any]:
        """Forget requests (and restore settings with ``config=True``)."""
        return self._call("POST", "/_stub/reset", {"config": config})

    def hold(self) -> None:
        self._call("POST", "/_stub/hold", {})

    def release(self) -> None:
        self._call("POST", "/_stub/release", {})

    def counts(self) -> dict[str, int]:
        return cast("dict[str, int]", self.state()["counts"])

    def embedded_texts(self) -> list[str]:
        return [t for r in self.state()["requests"] for t in texts_of(r["path"], r["body"])]


class EmbeddingStubProcess:
    """Run the stub as a child process: ``with EmbeddingStubProcess("--dim", "384") as p: p.url``."""

    def __init__(self, *args: str, python: str = sys.executable) -> None:
        self.argv = [python, __file__, *args]
        self.proc: subprocess.Popen[str] | None = None
        self.url = self.control_url = ""

    def __enter__(self) -> EmbeddingStubProcess:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        self.control_url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.proc.kill()
            raise RuntimeError(f"stub did not start: {self.argv}")
        return self

    @property
    def control(self) -> StubControl:
        return StubControl(self.control_url)

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


# --------------------------------------------------------------------------- CLI


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--models", default=",".join(DEFAULT_MODELS), help="pulled models, comma-separated ('' = none)")
    p.add_argument("--model-dims", default="{}", help='JSON, e.g. {"all-minilm": 384}')
    p.add_argument("--api-key", help="require this Bearer key on /v1/*")
    p.add_argument("--synonyms", default="{}", help='JSON {"word": ["syn", ...]}, or "auth" for AUTH_SYNONYMS')
    p.add_argument("--no-embed-endpoint", action="store_true", help="/api/embed answers 404")
    p.add_argument("--no-legacy-endpoint", action="store_true", help="/api/embeddings answers 404")
    p.add_argument("--version", dest="ollama_version", default=StubConfig.version)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--error-status", type=int)
    p.add_argument("--malformed-json", action="store_true")
    p.add_argument("--wrong-dim", type=int)
    p.add_argument("--unavailable", action="store_true", help="start with the API port refusing connections")
    p.add_argument("--verbose", action="store_true", help="log requests to stderr")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT. Prints the API URL, then the control URL."""
    a = _parse_args(argv)
    synonyms = AUTH_SYNONYMS if a.synonyms == "auth" else json.loads(a.synonyms)
    stub = EmbeddingStub(
        host=a.host, port=a.port, verbose=a.verbose, dim=a.dim, models=[m for m in a.models.split(",") if m],
        model_dims=json.loads(a.model_dims), api_key=a.api_key, synonyms=synonyms,
        embed_endpoint=not a.no_embed_endpoint, legacy_endpoint=not a.no_legacy_endpoint,
        version=a.ollama_version, delay=a.delay, error_status=a.error_status,
        malformed_json=a.malformed_json, wrong_dim=a.wrong_dim,
    ).start()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    if a.unavailable:
        stub.set_available(False)
    print(stub.url, flush=True)
    print(stub.control_url, flush=True)
    while not done.wait(1.0):
        pass
    stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
