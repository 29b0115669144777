"""Tests of the embedding stub itself: API shapes, fault modes, determinism, similarity."""

from __future__ import annotations

import base64
import http.client
import json
import struct
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_stub import (  # noqa: E402
    AUTH_SYNONYMS,
    EMBED,
    EMBEDDINGS,
    OPENAI_EMBEDDINGS,
    EmbeddingStub,
    EmbeddingStubProcess,
    StubControl,
    cosine,
    embed_text,
    refused_url,
)


def call(base: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         method: str | None = None, raw: bytes | None = None) -> tuple[int, bytes]:
    """One HTTP request; returns (status, body) for any status."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def embed(base: str, texts: str | list[str], model: str = "nomic-embed-text") -> list[list[float]]:
    status, body = call(base, EMBED, {"model": model, "input": texts})
    assert status == 200, body
    vectors: list[list[float]] = json.loads(body)["embeddings"]
    return vectors


@pytest.fixture
def stub() -> Iterator[EmbeddingStub]:
    with EmbeddingStub() as server:
        yield server


# ----------------------------------------------------------------- Ollama shapes


def test_root_version_and_tags_shapes(stub: EmbeddingStub) -> None:
    assert call(stub.url, "/") == (200, b"Ollama is running")
    assert json.loads(call(stub.url, "/api/version")[1]) == {"version": "0.12.6"}
    stub.configure(models=["nomic-embed-text", "all-minilm:l6-v2"])
    models = json.loads(call(stub.url, "/api/tags")[1])["models"]
    assert [m["name"] for m in models] == ["nomic-embed-text:latest", "all-minilm:l6-v2"]
    assert all(m["model"] == m["name"] and len(m["digest"]) == 64 and m["details"]["format"] == "gguf"
               for m in models)


def test_embed_single_and_batch(stub: EmbeddingStub) -> None:
    status, body = call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "Why is the sky blue?"})
    one = json.loads(body)
    assert status == 200 and one["model"] == "nomic-embed-text"
    assert len(one["embeddings"]) == 1 and len(one["embeddings"][0]) == 768
    assert {"total_duration", "load_duration", "prompt_eval_count"} <= one.keys()
    assert sum(v * v for v in one["embeddings"][0]) == pytest.approx(1.0)
    batch = embed(stub.url, ["Why is the sky blue?", "Why is the grass green?"])
    assert len(batch) == 2 and batch[0] == one["embeddings"][0]


def test_empty_input_returns_no_embeddings(stub: EmbeddingStub) -> None:
    assert embed(stub.url, "") == [] and embed(stub.url, []) == []


def test_legacy_embeddings_is_unnormalised_but_same_direction(stub: EmbeddingStub) -> None:
    status, body = call(stub.url, EMBEDDINGS, {"model": "nomic-embed-text", "prompt": "llamas eat grass"})
    legacy = json.loads(body)["embedding"]
    assert status == 200 and len(legacy) == 768
    assert sum(v * v for v in legacy) > 1.5
    assert cosine(legacy, embed(stub.url, "llamas eat grass")[0]) == pytest.approx(1.0)
    assert json.loads(call(stub.url, EMBEDDINGS, {"model": "nomic-embed-text", "prompt": ""})[1]) == {
        "embedding": []}


def test_show_reports_embedding_length(stub: EmbeddingStub) -> None:
    stub.configure(model_dims={"all-minilm": 384}, models=["all-minilm"])
    info = json.loads(call(stub.url, "/api/show", {"model": "all-minilm"})[1])
    assert info["model_info"]["bert.embedding_length"] == 384 and info["capabilities"] == ["embedding"]
    assert call(stub.url, "/api/show", {"model": "nope"})[0] == 404


@pytest.mark.parametrize(("payload", "status", "error"), [
    (b"", 400, "missing request body"),
    (b"{not json", 400, "invalid character"),
    (json.dumps({"input": "x"}).encode(), 400, "model is required"),
    (json.dumps({"model": "nomic-embed-text", "input": [1, 2]}).encode(), 400, "invalid input type"),
])
def test_embed_bad_requests(stub: EmbeddingStub, payload: bytes, status: int, error: str) -> None:
    got_status, body = call(stub.url, EMBED, raw=payload, method="POST")
    assert got_status == status and error in json.loads(body)["error"]


def test_unknown_route_and_wrong_method_are_gin_404(stub: EmbeddingStub) -> None:
    assert call(stub.url, "/api/nope") == (404, b"404 page not found")
    assert call(stub.url, EMBED) == (404, b"404 page not found")  # GET


# ----------------------------------------------------------------- vectors


def test_deterministic_across_requests_instances_and_helper(stub: EmbeddingStub) -> None:
    first = embed(stub.url, "Use OAuth2 with PKCE")[0]
    assert embed(stub.url, "Use OAuth2 with PKCE")[0] == first
    with EmbeddingStub() as other:
        assert embed(other.url, "Use OAuth2 with PKCE")[0] == first
    assert embed_text("Use OAuth2 with PKCE", "nomic-embed-text", 768) == first


def test_model_names_select_vector_spaces(stub: EmbeddingStub) -> None:
    text = "token refresh pattern"
    plain, tagged = embed(stub.url, text)[0], embed(stub.url, text, "Nomic-Embed-Text:latest")[0]
    other = embed(stub.url, text, "embeddinggemma")[0]
    assert plain == tagged
    assert abs(cosine(plain, other)) < 0.3


def test_shared_words_are_more_similar(stub: EmbeddingStub) -> None:
    q, near, far = embed(stub.url, [
        "graph edges are bidirectional",
        "every edge in the graph must be bidirectional",
        "quarterly tax filings are due in April",
    ])
    assert cosine(q, near) > 0.5 > 0.2 > abs(cosine(q, far))


def test_synonyms_make_authentication_find_oauth_login_and_auth() -> None:
    memories = ["OAuth token refresh fails", "Login issues after SSO change",
                "auth errors when the session expires", "Database migration plan for Postgres"]
    with EmbeddingStub(synonyms=AUTH_SYNONYMS) as stub:
        query, *docs = embed(stub.url, ["authentication problems", *memories])
    scores = [cosine(query, d) for d in docs]
    assert min(scores[:3]) > 0.3 > 0.15 > scores[3]
    assert "authentication" not in " ".join(memories).lower()
    with EmbeddingStub() as plain:  # without the table there is no such link
        query, oauth = embed(plain.url, ["authentication problems", memories[0]])
        assert cosine(query, oauth) < 0.15


def test_dimension_switches_between_runs(stub: EmbeddingStub) -> None:
    assert len(embed(stub.url, "x")[0]) == 768
    stub.configure(dim=1024)
    assert len(embed(stub.url, "x")[0]) == 1024
    stub.configure(model_dims={"nomic-embed-text": 384})
    assert len(embed(stub.url, "x")[0]) == 384 and len(embed(stub.url, "x", "embeddinggemma")[0]) == 1024


def test_dimensions_parameter_truncates_and_renormalises(stub: EmbeddingStub) -> None:
    vec = json.loads(call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "abc def",
                                            "dimensions": 64})[1])["embeddings"][0]
    assert len(vec) == 64 and sum(v * v for v in vec) == pytest.approx(1.0)


# ----------------------------------------------------------------- modes


def test_model_not_pulled(stub: EmbeddingStub) -> None:
    stub.configure(models=["nomic-embed-text"])
    tags = json.loads(call(stub.url, "/api/tags")[1])["models"]
    assert [m["name"] for m in tags] == ["nomic-embed-text:latest"]
    for path, body in ((EMBED, {"input": "x"}), (EMBEDDINGS, {"prompt": "x"})):
        status, err = call(stub.url, path, {"model": "embeddinggemma", **body})
        assert (status, json.loads(err)) == (
            404, {"error": 'model "embeddinggemma" not found, try pulling it first'})
    stub.configure(models=[])
    assert json.loads(call(stub.url, "/api/tags")[1]) == {"models": []}


def test_embed_endpoint_missing_leaves_legacy(stub: EmbeddingStub) -> None:
    stub.configure(embed_endpoint=False)
    assert call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "x"}) == (404, b"404 page not found")
    status, body = call(stub.url, EMBEDDINGS, {"model": "nomic-embed-text", "prompt": "x"})
    assert status == 200 and len(json.loads(body)["embedding"]) == 768


def test_http_500_then_recovers_after_fault_budget(stub: EmbeddingStub) -> None:
    stub.configure(error_status=500, faults_remaining=1)
    status, body = call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "x"})
    assert status == 500 and "error" in json.loads(body)
    assert call(stub.url, "/api/tags")[0] == 200  # not a fault path
    assert len(embed(stub.url, "x")) == 1


def test_malformed_json(stub: EmbeddingStub) -> None:
    stub.configure(malformed_json=True)
    status, body = call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "x"})
    assert status == 200 and body.startswith(b'{"model"')
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


def test_wrong_dimension(stub: EmbeddingStub) -> None:
    stub.configure(wrong_dim=5)
    assert len(embed(stub.url, "x")[0]) == 5
    status, body = call(stub.url, EMBEDDINGS, {"model": "nomic-embed-text", "prompt": "x"})
    assert len(json.loads(body)["embedding"]) == 5


def test_dropped_connection(stub: EmbeddingStub) -> None:
    stub.configure(drop_connection=True)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
        call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "x"})


def test_held_request_does_not_block_others(stub: EmbeddingStub) -> None:
    results: list[list[list[float]]] = []
    with stub.held():
        worker = threading.Thread(target=lambda: results.append(embed(stub.url, "slow")))
        worker.start()
        assert stub.wait_for_requests(1, EMBED)
        assert call(stub.url, "/api/tags")[0] == 200
        assert worker.is_alive() and not results
    worker.join(10)
    assert len(results) == 1 and len(results[0]) == 1


def test_delay_is_per_request_and_stop_wakes_it() -> None:
    stub = EmbeddingStub(delay=0.3).start()
    started = time.monotonic()
    embed(stub.url, "x")
    assert time.monotonic() - started >= 0.3
    stub.configure(delay=600)
    worker = threading.Thread(target=lambda: call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "y"}))
    worker.start()
    assert stub.wait_for_requests(2, EMBED)
    assert call(stub.url, "/api/version")[0] == 200
    stub.stop()
    worker.join(10)
    assert not worker.is_alive()


def test_unavailable_refuses_then_recovers_on_same_url(stub: EmbeddingStub) -> None:
    conn = http.client.HTTPConnection(stub.host, stub.port, timeout=10)
    conn.request("GET", "/api/version")
    assert conn.getresponse().read()  # keep-alive connection now open
    stub.set_available(False)
    with pytest.raises(urllib.error.URLError) as info:
        call(stub.url, "/api/tags")
    assert isinstance(info.value.reason, ConnectionRefusedError)
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        conn.request("GET", "/api/version")
        conn.getresponse().read()
    stub.set_available(True)
    assert call(stub.url, "/api/tags")[0] == 200


def test_refused_url() -> None:
    with refused_url() as url:
        with pytest.raises(urllib.error.URLError) as info:
            call(url, "/api/tags")
        assert isinstance(info.value.reason, ConnectionRefusedError)


# ----------------------------------------------------------------- OpenAI


def test_openai_embeddings_shape_and_base64() -> None:
    with EmbeddingStub(dim=256) as stub:
        status, body = call(stub.url, OPENAI_EMBEDDINGS, {"model": "text-embedding-3-small", "input": ["a b", "c"]})
        data = json.loads(body)
        assert status == 200 and data["object"] == "list" and data["model"] == "text-embedding-3-small"
        assert [(d["object"], d["index"], len(d["embedding"])) for d in data["data"]] == [
            ("embedding", 0, 256), ("embedding", 1, 256)]
        assert data["usage"]["prompt_tokens"] == data["usage"]["total_tokens"] == 3
        b64 = json.loads(call(stub.url, OPENAI_EMBEDDINGS, {"model": "text-embedding-3-small", "input": "a b",
                                                            "encoding_format": "base64"})[1])
        floats = struct.unpack("<256f", base64.b64decode(b64["data"][0]["embedding"]))
        assert floats == pytest.approx(data["data"][0]["embedding"], abs=1e-6)
        assert call(stub.url, OPENAI_EMBEDDINGS, {"model": "m", "input": ""})[0] == 400


def test_openai_bearer_key_and_models() -> None:
    with EmbeddingStub(api_key="sk-test-123456", openai_models=["text-embedding-3-small"]) as stub:
        body = {"model": "text-embedding-3-small", "input": "x"}
        missing = call(stub.url, OPENAI_EMBEDDINGS, body)
        wrong = call(stub.url, OPENAI_EMBEDDINGS, body, {"Authorization": "Bearer sk-nope-999999"})
        assert missing[0] == wrong[0] == 401
        assert json.loads(wrong[1])["error"]["code"] == "invalid_api_key"
        good = {"Authorization": "Bearer sk-test-123456"}
        assert call(stub.url, OPENAI_EMBEDDINGS, body, good)[0] == 200
        status, err = call(stub.url, OPENAI_EMBEDDINGS, {"model": "other", "input": "x"}, good)
        assert status == 404 and json.loads(err)["error"]["code"] == "model_not_found"
        assert call(stub.url, EMBED, {"model": "nomic-embed-text", "input": "x"})[0] == 200  # Ollama: no auth


# ----------------------------------------------------------------- recording & control


def test_counts_bodies_and_embedded_texts(stub: EmbeddingStub) -> None:
    embed(stub.url, ["one", "two"])
    call(stub.url, EMBEDDINGS, {"model": "nomic-embed-text", "prompt": "three"})
    call(stub.url, OPENAI_EMBEDDINGS, {"model": "m", "input": "four"})
    call(stub.url, "/_stub/state")  # control requests are not recorded
    assert stub.counts == {EMBED: 1, EMBEDDINGS: 1, OPENAI_EMBEDDINGS: 1}
    assert stub.bodies(EMBED) == [{"model": "nomic-embed-text", "input": ["one", "two"]}]
    assert stub.embedded_texts() == ["one", "two", "three", "four"]
    assert [r.status for r in stub.requests()] == [200, 200, 200]
    stub.reset()
    assert stub.count() == 0 and stub.embedded_texts() == []


def test_http_control_api(stub: EmbeddingStub) -> None:
    control = StubControl(stub.control_url)
    control.configure(models="all-minilm", dim=384)
    assert len(embed(stub.url, "x", "all-minilm")[0]) == 384
    assert control.counts() == {EMBED: 1} and control.embedded_texts() == ["x"]
    with pytest.raises(urllib.error.HTTPError):
        control.configure(no_such_setting=1)
    control.configure(available=False)
    assert not stub.available
    control.configure(available=True)
    control.reset(config=True)
    state = control.state()
    assert state["config"]["dim"] == 768 and state["requests"] == [] and state["available"]


def test_standalone_process() -> None:
    args = ("--port", "0", "--dim", "384", "--models", "all-minilm,nomic-embed-text", "--synonyms", "auth")
    with EmbeddingStubProcess(*args) as proc:
        assert proc.url.startswith("http://127.0.0.1:")
        vec = embed(proc.url, "login issues", "all-minilm")[0]
        assert vec == embed_text("login issues", "all-minilm", 384, AUTH_SYNONYMS)
        proc.control.configure(available=False)
        with pytest.raises(urllib.error.URLError):
            call(proc.url, "/api/tags")
        proc.control.configure(available=True)
        assert call(proc.url, "/api/tags")[0] == 200
        assert proc.control.counts() == {EMBED: 1, "/api/tags": 1}
