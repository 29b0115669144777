"""US2 and the Embedding Degradation Matrix with the embedded provider, and no Ollama.

The model is a static model in the model2vec on-disk format that these tests build
(tests/static_model_factory.py) from a vocabulary and vectors chosen so that words of one
topic point one way: auth/login/OAuth/token, cache/latency/slow, migration/schema/column,
UI words, release words. It is loaded by the plugin's real loader through `bin/memory`, as
a model from the hub is. Ollama is always configured on a port that refuses connections,
and the model hub is never reached (the test environment sets HF_HUB_OFFLINE; the tests of
the hub point HF_ENDPOINT at 127.0.0.1).
"""

from __future__ import annotations

import http.server
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers import REPO, Env, write_memories
from static_model_factory import COMMIT, FakeHub, fake_cache, mean, write_model

sys.path.insert(0, str(REPO / "tests" / "servers"))

from embedding_stub import EMBED, EmbeddingStub, refused_url  # noqa: E402

from _lib.vectors import embedder as embed, staticmodel  # noqa: E402

AXES = {"auth": 0, "perf": 1, "data": 2, "ui": 3, "release": 4, "generic": 5}
TOPICS = {
    "auth": "oauth token login credentials sign session password authentication auth expires refresh keys",
    "perf": "cache latency slow performance speed misses dashboard spikes",
    "data": "schema migration column database table upgrade adds rows",
    "ui": "button colours dark theme css layout grid",
    "release": "release checklist deploy tag build artifacts",
    "generic": "the a when of problems issues fails errors after on to",
}


def topic_vectors() -> dict[str, list[float]]:
    """Each word: 1 on its topic's axis, a little on a shared axis, and a small word-specific tilt."""
    vectors = {}
    for topic, words in TOPICS.items():
        for number, word in enumerate(words.split()):
            vector = [0.0] * 8
            vector[AXES[topic]] = 1.0
            vector[6] = 0.125
            vector[7] = 0.0625 * (number % 4)
            if topic == "generic":
                vector = [value * 0.25 for value in vector]  # little meaning of their own
            vectors[word] = vector
    return vectors


VECTORS = topic_vectors()

# No content word of a query is in the memory it should find (nor a prefix of one).
MISMATCHED = [
    ("sign credentials", ("OAuth token refresh fails", "gotcha", "The oauth token expires when the session ends.")),
    ("latency performance", ("Cache misses slow the dashboard", "learning", "Page loads are slow when the cache misses.")),
    ("database table upgrade", ("Schema migration adds a column", "decision", "The migration adds a nullable column.")),
]
DISTRACTORS = [
    ("Button colours in dark theme", "learning", "Use css grid layout for the dark theme."),
    ("Release checklist", "artifact", "Tag, build, upload artifacts, deploy."),
]
AUTH_MEMORIES = [
    ("OAuth token refresh fails", "gotcha", "The oauth token expires when the session ends."),
    ("Login issues on Safari", "learning", "Users could not login because cookies are blocked."),
    ("Auth errors after deploy", "learning", "The auth service answered errors until keys rotated."),
]


# -- fixtures and helpers -------------------------------------------------------------------

@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return write_model(tmp_path / "topics", VECTORS)


@pytest.fixture(autouse=True)
def no_ollama(env: Env) -> Iterator[str]:
    with refused_url() as url:
        env.extra_env["TEST_OLLAMA"] = url
        yield url


def configure(env: Env, **embedding: Any) -> None:
    """The project config.json: these `embedding` settings, Ollama on a refused port."""
    env.project_dir.mkdir(parents=True, exist_ok=True)
    settings = {"endpoint": env.extra_env["TEST_OLLAMA"], **embedding}
    (env.project_dir / "config.json").write_text(json.dumps({"embedding": settings}))


def write(runner: Env, title: str, memory_type: str, content: str, **kwargs: Any) -> str:
    result = runner.ok("write", title, "--type", memory_type, "--content", content, "--json", **kwargs)
    return result.json()["slug"]


def cache_file(env: Env, slug: str) -> Path:
    return env.project_dir / ".embedding-cache" / f"{slug}.json"


def has_embedding(env: Env, slug: str) -> bool:
    return env.index(env.project_dir)["memories"][slug]["hasEmbedding"]


def semantic_json(runner: Env, *args: str, **kwargs: Any) -> dict[str, Any]:
    return runner.ok("semantic", *args, "--json", **kwargs).json()


def stamps(env: Env) -> dict[str, int]:
    return {path.name: path.stat().st_mtime_ns for path in (env.project_dir / ".embedding-cache").iterdir()}


def modules(result: Any) -> set[str]:
    """Modules a command imported (PYTHONPROFILEIMPORTTIME lines on stderr)."""
    return {line.split("|")[-1].strip() for line in result.err.splitlines() if line.startswith("import time:")}


# -- words that differ ------------------------------------------------------------------------

def test_meaning_finds_memories_that_share_no_word_with_the_query(env: Env, model_dir: Path) -> None:
    configure(env, provider="embedded", embeddedModel=str(model_dir))
    expected = {query: write(env, *memory) for query, memory in MISMATCHED}
    for memory in DISTRACTORS:
        write(env, *memory)
    for query, slug in expected.items():
        assert env.ok("search", query, "--json").json()["count"] == 0, "keyword search must find nothing"
        for mode in ("hybrid", "semantic"):
            data = semantic_json(env, query, "--mode", mode, "--limit", "3")
            assert data["mode"] == mode and data["provider"] == "embedded"
            assert slug in [hit["slug"] for hit in data["results"]], (query, data["results"])
            assert data["results"][0]["slug"] == slug and data["results"][0]["keywordRank"] is None


# -- the five acceptance scenarios, embedded provider, no Ollama ------------------------------

def test_us2_1_authentication_problems_finds_oauth_login_and_auth_errors(env: Env, model_dir: Path) -> None:
    configure(env, embeddedModel=str(model_dir))  # provider auto: Ollama is down, the model is here
    auth = [write(env, *memory) for memory in AUTH_MEMORIES]
    others = [write(env, *memory) for _, memory in MISMATCHED[1:]] + [write(env, *memory) for memory in DISTRACTORS]
    assert not any("authentication" in (env.project_dir / f"{slug}.md").read_text().lower() for slug in auth)
    for mode in ("hybrid", "semantic"):
        data = semantic_json(env, "authentication problems", "--mode", mode, "--limit", "3")
        assert data["mode"] == mode and data["provider"] == "embedded"
        assert data["providerReason"].startswith("auto: Ollama not detected at " + env.extra_env["TEST_OLLAMA"])
        assert sorted(hit["slug"] for hit in data["results"]) == sorted(auth), data["results"]
    text = env.ok("semantic", "authentication problems", "--limit", "3")
    assert text.err == "" and "Login issues on Safari" in text.out and not set(others) & set(text.out.split())


def test_us2_2_no_model_and_no_ollama_gives_setup_steps_and_keyword_results(env: Env) -> None:
    configure(env)  # auto, the default model, which is not downloaded; downloads are off (HF_HUB_OFFLINE)
    slug = write(env, "Token rotation schedule", "decision", "Rotate signing keys every 90 days.")
    result = env.ok("semantic", "rotation")
    assert "Semantic search unavailable: the embedding model minishlab/potion-retrieval-32M is not downloaded" \
        in result.err
    assert "Ollama not detected at " + env.extra_env["TEST_OLLAMA"] in result.err
    assert "1. Download it once while online: memory embed" in result.err
    assert "local model2vec model directory" in result.err and "ollama pull embeddinggemma" in result.err
    assert result.err.rstrip().endswith("Falling back to keyword search.")
    assert slug in result.out
    data = semantic_json(env, "rotation")
    assert data["mode"] == "keyword-fallback" and data["reason"] == "offline" and data["provider"] is None
    assert [hit["slug"] for hit in data["results"]] == [slug]


def test_us2_3_the_configured_model_is_used(env: Env, model_dir: Path, tmp_path: Path) -> None:
    other = write_model(tmp_path / "other-model", {word: vector[::-1] for word, vector in VECTORS.items()})
    configure(env, embeddedModel=str(other))
    slug = write(env, "Cache warmup", "learning", "Warm the cache before the load test.")
    data = semantic_json(env, "latency")
    assert data["model"].startswith("other-model@") and data["provider"] == "embedded"
    assert json.loads(cache_file(env, slug).read_text())["model"] == data["model"]
    # a hub id is found in the user's hub cache, through the same loader
    hub = tmp_path / "hub"
    fake_cache(hub, model_dir)
    configure(env, embeddedModel="org/tiny")
    data = semantic_json(env, "latency", env={"HF_HUB_CACHE": str(hub)})
    assert data["model"] == f"org/tiny@{COMMIT[:12]}" and data["mode"] == "hybrid"
    assert json.loads(cache_file(env, slug).read_text())["model"] == data["model"]  # stale: embedded again
    # embedding.model naming a directory means the embedded model (no server model is named so)
    configure(env, model=str(other))
    assert semantic_json(env, "latency")["model"].startswith("other-model@")


def test_us2_4_write_computes_and_caches_the_embedding(env: Env, model_dir: Path) -> None:
    configure(env, provider="embedded", embeddedModel=str(model_dir))
    title, content = "Login token expires", "The session token expires after an hour."
    result = env.ok("write", title, "--type", "gotcha", "--content", content)
    assert result.err == ""
    slug = "gotcha-login-token-expires"
    cached = json.loads(cache_file(env, slug).read_text())
    words = [word for word in f"{title} {content}".lower().replace(".", " ").split() if word in VECTORS]
    assert cached["model"].startswith("topics@") and len(cached["vector"]) == 8
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(cached["vector"], mean([VECTORS[w] for w in words])))
    assert "chunks" not in cached and has_embedding(env, slug)
    health = env.run("health", "--json").json()
    assert not [problem for problem in health["problems"] if problem["kind"].startswith("cache-")]
    # the compiled tokenizer index goes to the global scope's cache, never into the project
    assert not any(path.name.endswith(".index") for path in env.project.rglob("*"))


def test_us2_5_cached_embeddings_are_not_recomputed(env: Env, model_dir: Path) -> None:
    configure(env, embeddedModel=str(model_dir))
    for memory in AUTH_MEMORIES + DISTRACTORS:
        write(env, *memory)
    before = stamps(env)
    for query in ("sign credentials", "dark theme"):
        assert semantic_json(env, query)["mode"] == "hybrid"
    assert stamps(env) == before
    assert env.ok("embed", "--json").json()["scopes"][0]["embedded"] == 0


# -- the degradation matrix ---------------------------------------------------------------------

def test_matrix_write_without_any_provider_is_full_and_quiet_under_auto(env: Env) -> None:
    configure(env)
    result = env.ok("write", "Flaky DNS", "--type", "gotcha", "--content", "Resolvers time out.")
    slug = "gotcha-flaky-dns"
    assert result.err == "", "a provider that is merely not set up is no warning"
    assert (env.project_dir / f"{slug}.md").exists() and not cache_file(env, slug).exists()
    assert not has_embedding(env, slug)


def test_matrix_a_broken_model_is_a_warning_and_nothing_is_lost(env: Env, tmp_path: Path) -> None:
    configure(env, provider="embedded", embeddedModel=str(tmp_path / "missing-model"))
    result = env.ok("write", "Flaky DNS", "--type", "gotcha", "--content", "Resolvers time out.")
    assert result.err.startswith(f"warning: saved without an embedding: the embedding model directory "
                                 f"{tmp_path / 'missing-model'} does not exist")
    assert env.ok("read", "gotcha-flaky-dns").out.endswith("Resolvers time out.\n")
    data = semantic_json(env, "resolvers")
    assert data["mode"] == "keyword-fallback" and data["reason"] == "no-model"
    assert data["results"][0]["slug"] == "gotcha-flaky-dns"


def test_matrix_read_list_search_delete_never_load_the_model(env: Env, model_dir: Path) -> None:
    configure(env, embeddedModel=str(model_dir))
    keep = write(env, "Pin the base image", "decision", "Pin images by digest.")
    gone = write(env, "Old note", "learning", "Remove me.")
    profile = {"PYTHONPROFILEIMPORTTIME": "1", "MEMORY_HOOK_SERVER": "off"}  # (what the command itself imports)
    for command in (["read", keep], ["list"], ["search", "digest"], ["delete", gone]):
        result = env.ok(*command, env=profile)
        assert not {"_lib.vectors.staticmodel", "_lib.vectors.embedded"} & modules(result), command
    assert not cache_file(env, gone).exists() and cache_file(env, keep).exists()
    assert "_lib.vectors.staticmodel" in modules(env.ok("semantic", "digest", env=profile))


def test_matrix_cache_empty_without_the_model_then_rebuilt(env: Env, model_dir: Path, tmp_path: Path) -> None:
    later = tmp_path / "later-model"
    configure(env, provider="embedded", embeddedModel=str(later))
    slugs = [write(env, *memory) for memory in AUTH_MEMORIES]
    assert not (env.project_dir / ".embedding-cache").exists()
    assert semantic_json(env, "login")["mode"] == "keyword-fallback"
    later.symlink_to(model_dir)  # the model arrives
    # the next search embeds what is missing on the way (automatic recovery) ...
    data = semantic_json(env, "authentication problems", "--mode", "semantic", "--limit", "20")
    assert data["mode"] == "semantic" and set(slugs) <= {hit["slug"] for hit in data["results"]}
    assert all(cache_file(env, slug).exists() and has_embedding(env, slug) for slug in slugs)
    # ... and `memory embed` has nothing left to do
    project = env.ok("embed", "--json").json()["scopes"][0]
    assert project["embedded"] == 0 and project["upToDate"] == 3


def test_auto_prefers_a_running_ollama_then_the_embedded_model(env: Env, model_dir: Path) -> None:
    with EmbeddingStub() as stub:
        configure(env, embeddedModel=str(model_dir), endpoint=stub.url)
        slug = write(env, *AUTH_MEMORIES[0])
        data = semantic_json(env, "login")
        assert (data["provider"], data["model"]) == ("ollama", "embeddinggemma")
        assert data["providerReason"] == "auto: Ollama is the first provider that works"
        assert json.loads(cache_file(env, slug).read_text())["model"] == "embeddinggemma"
    configure(env, embeddedModel=str(model_dir))
    data = semantic_json(env, "login")
    assert data["provider"] == "embedded" and data["results"][0]["slug"] == slug
    assert json.loads(cache_file(env, slug).read_text())["model"] == data["model"]  # the other model's: redone


def test_a_changed_model_makes_the_cached_vectors_stale(env: Env, model_dir: Path) -> None:
    configure(env, provider="embedded", embeddedModel=str(model_dir))
    slug = write(env, *AUTH_MEMORIES[0])
    before = json.loads(cache_file(env, slug).read_text())
    write_model(model_dir, {word: vector[::-1] for word, vector in VECTORS.items()})  # same place, new weights
    data = semantic_json(env, "login")
    after = json.loads(cache_file(env, slug).read_text())
    assert after["model"] == data["model"] != before["model"] and after["vector"] != before["vector"]


# -- writes, backfill, downloads ----------------------------------------------------------------

def test_a_write_waiting_for_its_embedding_does_not_hold_up_other_writes(env: Env) -> None:
    with EmbeddingStub() as stub:
        configure(env, provider="ollama", endpoint=stub.url, timeoutSeconds=60)
        write(env, "Warm up", "learning", "So the provider's state is remembered.")
        stub.hold()
        try:
            slow = subprocess.Popen([str(REPO / "bin" / "memory"), "write", "Slow one", "--content", "Held."],
                                    cwd=env.project, env=env.environ(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            stub.wait_for_requests(2, EMBED, timeout=30)
            assert stub.count(EMBED) == 2, "the first write never reached the provider"
            # the held write has released the scope's lock: another writer gets it now
            quick = env.run("delete", "learning-warm-up", timeout=30)
            assert slow.poll() is None, "the held write finished early: the test proves nothing"
        finally:
            stub.release()
        assert slow.wait(timeout=30) == 0
        assert quick.code == 0 and not (env.project_dir / "learning-warm-up.md").exists()
        assert cache_file(env, "learning-slow-one").exists() and has_embedding(env, "learning-slow-one")


def test_embed_shows_nothing_on_a_pipe_and_continues_after_a_kill(env: Env, model_dir: Path) -> None:
    configure(env, provider="disabled")
    write_memories(env, [(f"Note {number}", "learning", None, f"Login token number {number} expires.")
                         for number in range(120)])
    configure(env, provider="embedded", embeddedModel=str(model_dir))
    child = os.fork()  # `memory embed` in a process that SIGKILLs itself once 5 batches are written
    if child == 0:
        try:
            from _lib.vectors import backfill
            from _lib.workspace.scopes import Workspace

            def kill_after_five(scope: str, done: int, total: int) -> None:
                if done >= 5:
                    os.kill(os.getpid(), signal.SIGKILL)

            backfill.backfill(Workspace(env.project, env.environ()), batch=1, progress=kill_after_five)
        finally:
            os._exit(1)  # only reached if the kill never came
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    cache = env.project_dir / ".embedding-cache"
    kept = {path.stem for path in cache.glob("*.json")}
    result = env.ok("embed", "--json")
    project = result.json()["scopes"][0]
    assert project["upToDate"] >= len(kept) >= 5 and project["embedded"] + project["upToDate"] == 120
    assert result.err == ""
    assert all(entry["hasEmbedding"] for entry in env.index(env.project_dir)["memories"].values())


class _CountingHub:
    """A loopback server standing in for the model hub: counts requests, answers 404."""

    def __init__(self) -> None:
        hub = self
        self.requests: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                hub.requests.append(f"{self.command} {self.path}")
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_only_an_explicit_command_asks_the_hub_and_a_failure_is_remembered(env: Env) -> None:
    configure(env)
    hub = _CountingHub()
    online = {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": hub.url}
    try:
        write(env, "Login tokens", "learning", "Refresh them early.", env=online)
        assert hub.requests == [], "a write never downloads"
        data = semantic_json(env, "login", env=online)
        assert data["mode"] == "keyword-fallback" and hub.requests, "memory semantic downloads the model"
        asked = len(hub.requests)
        assert semantic_json(env, "login", env=online)["mode"] == "keyword-fallback"
        assert len(hub.requests) == asked, "the failed download is remembered, not retried at once"
    finally:
        hub.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    (env.project_dir / ".cache" / embed.STATE_NAME).unlink()
    result = env.ok("semantic", "login", env={"HF_HUB_OFFLINE": "", "HF_ENDPOINT": closed})
    assert f"cannot reach {closed} to download the embedding model minishlab/potion-retrieval-32M" in result.err
    assert "Falling back to keyword search." in result.err and "learning-login-tokens" in result.out


def test_memory_embed_downloads_a_hub_model_once(env: Env, model_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    FakeHub.files = {name: (model_dir / name).read_bytes() for name in staticmodel.FILES}
    FakeHub.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    online = {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
              "HF_HUB_CACHE": str(tmp_path / "hub")}
    configure(env, embeddedModel="org/tiny")
    try:
        slug = write(env, *AUTH_MEMORIES[0], env=online)
        assert FakeHub.requests == [] and not (tmp_path / "hub").exists(), "a write never downloads"
        result = env.ok("embed", "--json", env=online)
    finally:
        server.shutdown()
        server.server_close()
    assert result.err.startswith(f"downloading the embedding model org/tiny (once) into {tmp_path / 'hub'}")
    data = result.json()
    assert (data["provider"], data["model"]) == ("embedded", f"org/tiny@{COMMIT[:12]}")
    assert data["scopes"][0]["embedded"] == 1 and cache_file(env, slug).exists()
    assert (tmp_path / "hub" / "models--org--tiny" / "snapshots" / COMMIT / "model.safetensors").exists()
    # the hub is gone: the cache serves the model, with no notice
    search = env.ok("semantic", "sign credentials", env=online)
    assert search.err == "" and slug in search.out


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_embed_counts_down_on_a_terminal(env: Env, model_dir: Path) -> None:
    import pty

    configure(env, provider="disabled")
    write_memories(env, [(f"Note {number}", "learning", None, "Session token cache.") for number in range(40)])
    configure(env, provider="embedded", embeddedModel=str(model_dir))
    parent, child = pty.openpty()
    proc = subprocess.Popen([str(REPO / "bin" / "memory"), "embed", "--batch", "8"], cwd=env.project,
                            env=env.environ(), stdout=subprocess.PIPE, stderr=child)
    os.close(child)
    out, _ = proc.communicate(timeout=60)
    screen = b""
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(parent)
    assert proc.returncode == 0 and b"embedded 40 of 40" in out
    text = screen.decode()
    assert "embedding project: [" in text and "40/40" in text
