"""Embedding providers, their failures and the embedding cache, through `bin/memory`.

Each fault of the stub server (tests/servers/embedding_stub.py, real HTTP on 127.0.0.1)
must give the degradation matrix's behaviour: `memory write` saves the memory in full
without an embedding (exit 0, one actionable warning), `memory semantic` shows keyword
results with an actionable message (exit 0), and nothing is lost (the memory file is
written and index.json is correct). The default endpoint is never contacted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers import REPO, Env

sys.path.insert(0, str(REPO / "tests" / "servers"))

from embedding_stub import EMBED, EMBEDDINGS, OPENAI_EMBEDDINGS, EmbeddingStub, refused_url  # noqa: E402

from _lib.vectors import embedder as embed  # noqa: E402

NOTE = ("Retry budget", "learning", "retry", "Give each request a retry budget of three attempts.")


@pytest.fixture
def stub() -> Iterator[EmbeddingStub]:
    with EmbeddingStub() as server:
        yield server


def configure(env: Env, **embedding: Any) -> None:
    """Write the project config.json with these `embedding` settings (provider ollama unless given)."""
    env.project_dir.mkdir(parents=True, exist_ok=True)
    (env.project_dir / "config.json").write_text(json.dumps({"embedding": {"provider": "ollama", **embedding}}))


def write_note(runner: Env, title: str = NOTE[0], content: str = NOTE[3], **kwargs: Any) -> Any:
    return runner.run("write", title, "--type", NOTE[1], "--tags", NOTE[2], "--content", content, **kwargs)


def slug_of(title: str) -> str:
    return "learning-" + "-".join(title.lower().split())


def cache_file(env: Env, slug: str) -> Path:
    return env.project_dir / ".embedding-cache" / f"{slug}.json"


def assert_saved_without_embedding(env: Env, result: Any, slug: str, *, warned: bool = True) -> None:
    """Degradation matrix, `memory write` with no working provider: Full (no embedding).

    The warning comes from the command that met the failure; later ones within a minute are quiet."""
    assert result.code == 0, result.err
    assert (env.project_dir / f"{slug}.md").exists()
    entry = env.index(env.project_dir)["memories"][slug]
    assert entry["hasEmbedding"] is False and entry["filePath"].endswith(f"{slug}.md")
    assert not cache_file(env, slug).exists()
    if warned:
        assert result.err.startswith("warning: saved without an embedding: ")
    else:
        assert result.err == ""


def assert_falls_back(env: Env, query: str, reason: str, *needles: str) -> dict[str, Any]:
    """Degradation matrix, `memory semantic` with no working provider: keyword results + message."""
    result = env.ok("semantic", query)
    assert "Semantic search unavailable" in result.err and "Falling back to keyword search." in result.err
    for needle in needles:
        assert needle in result.err, (needle, result.err)
    data = env.ok("semantic", query, "--json").json()
    assert data["mode"] == "keyword-fallback" and data["reason"] == reason, data
    assert data["warning"].endswith("Falling back to keyword search.")
    return data


# -- availability ---------------------------------------------------------------------------------

def test_available_provider_probes_once_and_remembers(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    for index in range(3):
        assert write_note(env, f"Note {index}").err == ""
    assert stub.count("/api/tags") == 1 and stub.count(EMBED) == 3
    state = json.loads((env.project_dir / ".cache" / embed.STATE_NAME).read_text())
    (record,) = state["providers"].values()
    assert record["ok"] and record["model"] == "embeddinggemma" and record["dim"] == 768
    assert not env.global_dir.exists(), "the state file must not create the global scope"


def test_connection_refused(env: Env) -> None:
    with refused_url() as url:
        configure(env, endpoint=url)
        result = write_note(env)
        assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
        assert f"Ollama not detected at {url}" in result.err and "ollama pull embeddinggemma" in result.err
        data = assert_falls_back(env, "retry", "down", f"Ollama not detected at {url}", "ollama serve")
        assert data["results"][0]["slug"] == slug_of(NOTE[0])
        failed = env.fails("embed")
        assert failed.err.startswith(f"error: Ollama not detected at {url}\nhint: install Ollama")


def test_slow_provider_times_out_once_then_is_not_waited_for(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url, timeoutSeconds=0.5)
    stub.configure(delay=5.0)
    result = write_note(env)  # the stub answers after 5 s: the note is saved without waiting for it
    assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
    assert "did not answer within 0.5 s" in result.err and "timeoutSeconds" in result.err
    requests_so_far = stub.count()
    second = write_note(env, "Second note")
    assert_saved_without_embedding(env, second, slug_of("Second note"), warned=False)
    assert_falls_back(env, "retry", "timeout", "did not answer within 0.5 s")
    assert stub.count() == requests_so_far, "a remembered failure is not asked again"


def test_model_not_pulled_names_the_pull_command(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url, fallbackModels=["all-minilm"])
    stub.configure(models=["llama3.2"])
    result = write_note(env)
    assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
    assert "no embedding model pulled" in result.err and "`ollama pull embeddinggemma`" in result.err
    assert "it has llama3.2" in result.err
    assert_falls_back(env, "retry", "no-model", "ollama pull embeddinggemma", "looked for embeddinggemma, all-minilm")
    assert stub.count(EMBED) == 0


def test_fallback_model_is_used_when_configured_one_is_missing(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)  # default fallbacks: nomic-embed-text, all-minilm
    stub.configure(models=["all-minilm:latest"], model_dims={"all-minilm": 384})
    assert write_note(env).err == ""
    cached = json.loads(cache_file(env, slug_of(NOTE[0])).read_text())
    assert cached["model"] == "all-minilm" and len(cached["vector"]) == 384
    result = env.ok("semantic", "retries", "--json")
    assert result.json()["mode"] == "hybrid" and result.json()["model"] == "all-minilm"
    assert "using all-minilm" in result.err and "ollama pull embeddinggemma" in result.err
    assert {body["model"] for body in stub.bodies(EMBED)} == {"all-minilm"}


def test_model_names_match_with_or_without_latest(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url, model="nomic-embed-text:latest")
    stub.configure(models=["nomic-embed-text"])
    assert write_note(env).err == ""
    assert env.ok("semantic", "retry", "--json").json()["mode"] == "hybrid"


@pytest.mark.parametrize(("fault", "reason", "needle"), [
    ({"error_status": 500}, "failed", "HTTP 500: llama runner process has terminated"),
    ({"malformed_json": True}, "failed", "invalid answer (not JSON)"),
    ({"drop_connection": True}, "failed", "closed the connection"),
])
def test_provider_errors_degrade_without_data_loss(env: Env, stub: EmbeddingStub, fault: dict[str, Any],
                                                   reason: str, needle: str) -> None:
    configure(env, endpoint=stub.url)
    stub.configure(**fault)
    result = write_note(env)
    assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
    assert needle in result.err
    data = assert_falls_back(env, "retry", reason, needle)
    assert data["results"][0]["slug"] == slug_of(NOTE[0])
    stub.configure(error_status=None, malformed_json=False, drop_connection=False)
    embedded = env.ok("embed", "--json").json()  # `memory embed` asks again: recovered
    assert next(item for item in embedded["scopes"] if item["scope"] == "project")["embedded"] == 1
    assert env.index(env.project_dir)["memories"][slug_of(NOTE[0])]["hasEmbedding"] is True


def test_wrong_vector_dimension_is_refused_until_recomputed(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    assert write_note(env).err == ""
    stub.configure(wrong_dim=5)
    result = write_note(env, "Odd vectors", "Written while the model answers with five numbers.")
    assert_saved_without_embedding(env, result, slug_of("Odd vectors"))
    assert "5-dimensional vectors" in result.err and "have 768" in result.err and "memory embed --all" in result.err
    assert_falls_back(env, "retry", "dimension", "memory embed --all")
    assert len(json.loads(cache_file(env, slug_of(NOTE[0])).read_text())["vector"]) == 768, "cache kept"
    failed = env.fails("embed")
    assert "5-dimensional" in failed.err and "--all" in failed.err
    embedded = env.ok("embed", "--all", "--json").json()  # the user says the model changed
    assert embedded["dimension"] == 5
    assert all(len(json.loads(path.read_text())["vector"]) == 5
               for path in (env.project_dir / ".embedding-cache").iterdir())
    assert env.ok("semantic", "retry", "--json").json()["mode"] == "hybrid"


def test_model_switch_makes_entries_stale_and_they_are_recomputed(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    slugs = [slug_of(title) for title in ("First note", "Second note")]
    for title in ("First note", "Second note"):
        assert write_note(env, title).err == ""
    assert {json.loads(cache_file(env, slug).read_text())["model"] for slug in slugs} == {"embeddinggemma"}
    configure(env, endpoint=stub.url, model="nomic-embed-text")
    stub.reset()
    data = env.ok("semantic", "note", "--mode", "semantic", "--json").json()
    assert data["mode"] == "semantic" and data["model"] == "nomic-embed-text" and data["count"] == 2
    assert {json.loads(cache_file(env, slug).read_text())["model"] for slug in slugs} == {"nomic-embed-text"}
    assert len(stub.embedded_texts()) == 3  # the query, then both stale memories
    embedded = env.ok("embed", "--json").json()
    assert next(item for item in embedded["scopes"] if item["scope"] == "project")["upToDate"] == 2


def test_older_ollama_without_api_embed_uses_api_embeddings(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    stub.configure(embed_endpoint=False)
    assert write_note(env).err == ""
    cached = json.loads(cache_file(env, slug_of(NOTE[0])).read_text())
    assert abs(sum(x * x for x in cached["vector"]) - 1.0) < 1e-4  # normalised like /api/embed
    assert env.ok("semantic", "retries", "--json").json()["mode"] == "hybrid"
    assert stub.count(EMBEDDINGS) == 2
    state = json.loads((env.project_dir / ".cache" / embed.STATE_NAME).read_text())
    assert next(iter(state["providers"].values()))["api"] == "embeddings"


# -- the OpenAI-compatible provider -------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["", "/v1"])
def test_openai_compatible_provider_with_key_from_env(env: Env, stub: EmbeddingStub, suffix: str) -> None:
    configure(env, provider="openai", endpoint=stub.url + suffix, model="text-embedding-3-small",
              apiKeyEnv="MEMORY_TEST_KEY")
    stub.configure(api_key="sk-test-123456")
    assert write_note(env, env={"MEMORY_TEST_KEY": "sk-test-123456"}).err == ""
    cached = json.loads(cache_file(env, slug_of(NOTE[0])).read_text())
    assert cached["model"] == "text-embedding-3-small" and len(cached["vector"]) == 768
    data = env.ok("semantic", "retries", "--json", env={"MEMORY_TEST_KEY": "sk-test-123456"}).json()
    assert data["mode"] == "hybrid"
    requests = stub.requests(OPENAI_EMBEDDINGS)
    assert len(requests) == 2 and all(r.headers.get("Authorization") == "Bearer sk-test-123456" for r in requests)
    assert stub.count("/api/tags") == 0 and stub.count(EMBED) == 0


def test_openai_compatible_provider_without_key_explains(env: Env, stub: EmbeddingStub) -> None:
    configure(env, provider="openai", endpoint=stub.url, model="text-embedding-3-small", apiKeyEnv="MEMORY_TEST_KEY")
    stub.configure(api_key="sk-test-123456")
    result = write_note(env)
    assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
    assert "needs an API key" in result.err and "$MEMORY_TEST_KEY" in result.err
    assert_falls_back(env, "retry", "auth", "Set $MEMORY_TEST_KEY")
    wrong = env.ok("semantic", "retry", "--json", env={"MEMORY_TEST_KEY": "sk-wrong"}).json()
    assert wrong["mode"] == "keyword-fallback"  # the failure is remembered for a minute


def test_openai_compatible_unknown_model_and_unreachable_server(env: Env, stub: EmbeddingStub) -> None:
    configure(env, provider="openai", endpoint=stub.url, model="no-such-model")
    stub.configure(openai_models=["text-embedding-3-small"])
    result = write_note(env)
    assert_saved_without_embedding(env, result, slug_of(NOTE[0]))
    assert "has no model no-such-model" in result.err and "embedding.model" in result.err
    with refused_url() as url:
        configure(env, provider="openai", endpoint=url)
        assert_falls_back(env, "retry", "down", f"no OpenAI-compatible embedding server at {url}")


# -- backfill ---------------------------------------------------------------------------------------

def test_embed_backfills_in_batches_and_reports(env: Env, stub: EmbeddingStub) -> None:
    configure(env, provider="disabled")
    for index in range(7):
        write_note(env, f"Note {index}")
    configure(env, endpoint=stub.url)
    result = env.ok("embed", "--batch", "3")
    assert "project scope: embedded 7 of 7 memories, 0 already up to date" in result.out
    assert "Model: embeddinggemma (ollama, 768 dimensions)" in result.out
    assert result.err == ""  # no progress bar when stderr is not a terminal
    assert stub.count(EMBED) == 3  # 3 + 3 + 1 memories
    assert all(entry["hasEmbedding"] for entry in env.index(env.project_dir)["memories"].values())
    again = env.ok("embed", "--json").json()
    assert next(item for item in again["scopes"] if item["scope"] == "project") == {
        "scope": "project", "memories": 7, "embedded": 0, "upToDate": 7, "removed": 0, "skipped": 0}
    everything = env.ok("embed", "--all", "--json").json()
    assert next(item for item in everything["scopes"] if item["scope"] == "project")["embedded"] == 7
    assert "--batch must be at least 1" in env.fails("embed", "--batch", "0", code=2).err


def imported(result: Any) -> set[str]:
    """Top-level packages a command imported (PYTHONPROFILEIMPORTTIME lines on stderr; deps.load's
    importlib call itself is not logged, the modules it pulls in are)."""
    return {line.split("|")[-1].strip().split(".")[0] for line in result.err.splitlines()
            if line.startswith("import time:")}


def test_requests_is_imported_only_when_the_provider_is_asked(env: Env, stub: EmbeddingStub) -> None:
    profile = {"PYTHONPROFILEIMPORTTIME": "1", "MEMORY_HOOK_SERVER": "off"}  # (what the command itself imports)
    configure(env, provider="disabled")
    assert "urllib3" not in imported(write_note(env, "Quiet", env=profile))
    with refused_url() as url:
        configure(env, endpoint=url)
        # Nothing listens on this machine's port: known from a TCP connection, without requests.
        first = write_note(env, "First", env=profile)
        assert "urllib3" not in imported(first) and f"Ollama not detected at {url}" in first.err
        remembered = write_note(env, "Second", env=profile)
        assert "urllib3" not in imported(remembered) and "saved without an embedding" not in remembered.err
        for command in (["read", slug_of("First")], ["list"], ["search", "retry"]):
            assert "urllib3" not in imported(env.ok(*command, env=profile)), command
    configure(env, endpoint=stub.url)
    assert {"requests", "urllib3"} <= imported(write_note(env, "Third", env=profile))  # a server answers
