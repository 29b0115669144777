"""US2: semantic search with embeddings from Ollama, and the Embedding Degradation Matrix.

Everything runs the real `bin/memory` against a real HTTP embedding server on 127.0.0.1
(tests/servers/embedding_stub.py), with embedding.provider ollama. Every test configures
the endpoint (the stub, or a port that refuses connections), so the default endpoint
localhost:11434 is never contacted. tests/test_embedded.py runs the same scenarios with the
embedded provider and no server.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import REPO, Env

sys.path.insert(0, str(REPO / "tests" / "servers"))

from embedding_stub import AUTH_SYNONYMS, EMBED, EmbeddingStub, refused_url  # noqa: E402

from _lib.ops import semantic  # noqa: E402
from _lib.vectors import cache, embedder as embed, pack as vector_pack, similarity  # noqa: E402

SETUP_BLOCK = """\u26a0\ufe0f Semantic search unavailable: Ollama not detected at {endpoint}

To enable semantic search:
  1. Install Ollama: https://ollama.com/download
  2. Pull embedding model: ollama pull {model}
  3. Start Ollama: ollama serve

Falling back to keyword search."""

AUTH_MEMORIES = [
    ("OAuth token refresh fails", "gotcha", "oauth", "The oauth2 refresh token expires when the session ends."),
    ("Login issues on Safari", "learning", "safari", "Users could not login because third-party cookies are blocked."),
    ("Auth errors after deploy", "learning", "deploy", "The auth service answered 401 errors until keys rotated."),
]
OTHER_MEMORIES = [
    ("Postgres vacuum tuning", "learning", "db", "Autovacuum thresholds for large tables."),
    ("CSS grid layout tips", "learning", "css", "Use grid template areas for page layout."),
    ("Release checklist", "artifact", "release", "Tag, build, upload artifacts, announce."),
]


# -- fixtures and helpers -------------------------------------------------------------------

@pytest.fixture
def stub() -> Iterator[EmbeddingStub]:
    with EmbeddingStub(synonyms=AUTH_SYNONYMS) as server:
        yield server


@pytest.fixture(autouse=True)
def offline(env: Env) -> Iterator[str]:
    """Every test starts with the endpoint on a port that refuses connections."""
    with refused_url() as url:
        configure(env, endpoint=url)
        yield url


def configure(env: Env, search: dict[str, Any] | None = None, **embedding: Any) -> None:
    """Write the project config.json with these `embedding` settings (provider ollama unless given)."""
    env.project_dir.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"embedding": {"provider": "ollama", **embedding}}
    if search:
        data["search"] = search
    (env.project_dir / "config.json").write_text(json.dumps(data))


def write(env: Env, title: str, memory_type: str, tag: str, content: str, **kwargs: Any) -> str:
    data = env.ok("write", title, "--type", memory_type, "--tags", tag, "--content", content, "--json", **kwargs).json()
    return data["slug"]


def cache_file(env: Env, slug: str) -> Path:
    return env.project_dir / ".embedding-cache" / f"{slug}.json"


def has_embedding(env: Env, slug: str) -> bool:
    return env.index(env.project_dir)["memories"][slug]["hasEmbedding"]


def semantic_json(env: Env, *args: str, **kwargs: Any) -> dict[str, Any]:
    return env.ok("semantic", *args, "--json", **kwargs).json()


def content_hash(title: str, content: str) -> str:
    return hashlib.sha256(f"{title}\n\n{content}".strip().encode()).hexdigest()


# -- the five acceptance scenarios --------------------------------------------------------------

def test_us2_1_meaning_finds_memories_without_the_word(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    auth = [write(env, *memory) for memory in AUTH_MEMORIES]
    for memory in OTHER_MEMORIES:
        write(env, *memory)
    assert not any("authentication" in (env.project_dir / f"{slug}.md").read_text().lower() for slug in auth)
    for mode in ("hybrid", "semantic"):
        data = semantic_json(env, "authentication problems", "--mode", mode, "--limit", "3")
        assert data["mode"] == mode and data["model"] == "embeddinggemma"
        assert sorted(hit["slug"] for hit in data["results"]) == sorted(auth), data["results"]
        assert all(hit["similarity"] > 0.2 for hit in data["results"])
    text = env.ok("semantic", "authentication problems", "--limit", "3")
    assert text.err == "" and "similarity" in text.out and "Login issues on Safari" in text.out


def test_us2_2_ollama_not_running_gives_setup_steps_and_keyword_results(env: Env, offline: str) -> None:
    write(env, "Token rotation schedule", "decision", "auth", "Rotate signing keys every 90 days.")
    result = env.ok("semantic", "rotation")
    assert SETUP_BLOCK.format(endpoint=offline, model="embeddinggemma") in result.err
    assert "Token rotation schedule" in result.out and "decision-token-rotation-schedule" in result.out
    data = semantic_json(env, "rotation")
    assert data["mode"] == "keyword-fallback" and data["reason"] == "down"
    assert data["warning"] == SETUP_BLOCK.format(endpoint=offline, model="embeddinggemma")
    assert [hit["slug"] for hit in data["results"]] == ["decision-token-rotation-schedule"]


def test_us2_2_default_endpoint_message_is_the_spec_text_exactly() -> None:
    ollama = embed.Ollama(embed.Settings({}), {})  # defaults, no network: only the message
    assert ollama.down().notice() == SETUP_BLOCK.format(endpoint="http://localhost:11434", model="embeddinggemma")


def test_us2_3_configured_model_is_used(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url, model="nomic-embed-text")
    slug = write(env, "Cache warmup", "learning", "perf", "Warm the cache before the load test.")
    data = semantic_json(env, "preheating caches")
    assert data["model"] == "nomic-embed-text" and data["mode"] == "hybrid"
    assert {body["model"] for body in stub.bodies(EMBED)} == {"nomic-embed-text"}
    assert json.loads(cache_file(env, slug).read_text())["model"] == "nomic-embed-text"


def test_us2_4_write_computes_and_caches_the_embedding(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    title, content = "Retry with jitter", "Exponential backoff with full jitter avoids thundering herds."
    result = env.ok("write", title, "--type", "learning", "--tags", "retry", "--content", content)
    assert result.err == ""
    slug = "learning-retry-with-jitter"
    cached = json.loads(cache_file(env, slug).read_text())
    assert cached["slug"] == slug and cached["model"] == "embeddinggemma"
    assert len(cached["vector"]) == 768 and math.isclose(sum(x * x for x in cached["vector"]), 1.0, rel_tol=1e-4)
    assert cached["contentHash"] == content_hash(title, content)
    assert "chunks" not in cached  # short memories have one vector
    assert has_embedding(env, slug)
    assert stub.embedded_texts() == [f"{title}\n\n{content}"]


def test_us2_5_cached_embeddings_are_not_recomputed(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    for memory in AUTH_MEMORIES + OTHER_MEMORIES:
        write(env, *memory)
    stamps = {path.name: path.stat().st_mtime_ns for path in (env.project_dir / ".embedding-cache").iterdir()}
    stub.reset()
    for query in ("sign-in trouble", "database maintenance"):
        data = semantic_json(env, query)
        assert data["mode"] == "hybrid" and data["count"] == 6
        assert stub.embedded_texts() == [query], "only the query is embedded"
        stub.reset()
    assert {path.name: path.stat().st_mtime_ns for path in (env.project_dir / ".embedding-cache").iterdir()} == stamps


# -- the degradation matrix ---------------------------------------------------------------------

def test_matrix_write_without_provider_is_full_without_embedding(env: Env, offline: str) -> None:
    result = env.ok("write", "Flaky DNS", "--type", "gotcha", "--tags", "dns", "--content", "Resolvers time out.")
    slug = "gotcha-flaky-dns"
    assert (env.project_dir / f"{slug}.md").exists() and not cache_file(env, slug).exists()
    assert not has_embedding(env, slug)
    assert result.err.startswith("warning: saved without an embedding: Ollama not detected at " + offline)
    assert "ollama serve" in result.err and "memory embed" in result.err
    assert env.ok("read", slug).out.endswith("Resolvers time out.\n")


@pytest.mark.parametrize("available", [True, False])
def test_matrix_read_list_delete_search_never_need_the_provider(env: Env, stub: EmbeddingStub,
                                                                 available: bool) -> None:
    configure(env, endpoint=stub.url)
    keep = write(env, "Pin the base image", "decision", "docker", "Pin images by digest.")
    gone = write(env, "Old note", "learning", "misc", "Remove me.")
    stub.reset()
    stub.set_available(available)
    for command in (["read", keep], ["list"], ["search", "digest"], ["delete", gone]):
        result = env.ok(*command)
        assert "embedding" not in result.err and "Semantic" not in result.err, (command, result.err)
    assert stub.count() == 0
    assert not cache_file(env, gone).exists() and cache_file(env, keep).exists()
    assert list(env.index(env.project_dir)["memories"]) == [keep]


def test_matrix_semantic_with_provider_and_cache_populated_on_write(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    slugs = [write(env, *memory) for memory in AUTH_MEMORIES]
    assert all(cache_file(env, slug).exists() and has_embedding(env, slug) for slug in slugs)
    assert semantic_json(env, "login")["mode"] == "hybrid"
    configure(env, endpoint=stub.url, search={"semanticMode": "semantic"})
    assert semantic_json(env, "login")["mode"] == "semantic"


def test_matrix_cache_empty_while_down_then_rebuilt_when_available(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    stub.set_available(False)
    slugs = [write(env, *memory).strip() for memory in AUTH_MEMORIES]
    assert not (env.project_dir / ".embedding-cache").exists()
    assert semantic_json(env, "login")["mode"] == "keyword-fallback"
    stub.set_available(True)
    # The failure is remembered for a minute: no re-probe, no wait ...
    assert semantic_json(env, "login")["mode"] == "keyword-fallback" and stub.count() == 0
    # ... `memory embed` asks again and fills the cache.
    data = env.ok("embed", "--json").json()
    project = next(item for item in data["scopes"] if item["scope"] == "project")
    assert project["embedded"] == 3 and data["model"] == "embeddinggemma" and data["dimension"] == 768
    assert all(cache_file(env, slug).exists() and has_embedding(env, slug) for slug in slugs)
    assert semantic_json(env, "login")["mode"] == "hybrid"


def test_matrix_automatic_recovery_on_next_access(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    stub.set_available(False)
    slugs = [write(env, *memory) for memory in AUTH_MEMORIES]
    stub.set_available(True)
    state = env.project_dir / ".cache" / embed.STATE_NAME
    data = json.loads(state.read_text())
    for record in data["providers"].values():
        record["checked"] -= embed.DOWN_SECONDS + 1  # the remembered failure has expired
    state.write_text(json.dumps(data))
    result = semantic_json(env, "authentication problems", "--mode", "semantic")
    assert result["mode"] == "semantic" and sorted(hit["slug"] for hit in result["results"]) == sorted(slugs)
    assert all(cache_file(env, slug).exists() and has_embedding(env, slug) for slug in slugs)


# -- search behaviour ----------------------------------------------------------------------------

def test_semantic_filters_limit_and_json_shape(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    for memory in AUTH_MEMORIES + OTHER_MEMORIES:
        write(env, *memory)
    data = semantic_json(env, "authentication problems", "--type", "gotcha")
    assert [hit["slug"] for hit in data["results"]] == ["gotcha-oauth-token-refresh-fails"]
    data = semantic_json(env, "authentication problems", "--tag", "safari", "--mode", "semantic")
    assert [hit["slug"] for hit in data["results"]] == ["learning-login-issues-on-safari"]
    data = semantic_json(env, "layout", "--limit", "2")
    assert data["count"] == 2 and data["results"][0]["slug"] == "learning-css-grid-layout-tips"
    hit = data["results"][0]
    assert {"slug", "scope", "title", "type", "tags", "score", "similarity", "keywordRank", "vectorRank",
            "snippet", "chunk", "hasEmbedding"} <= hit.keys()
    assert hit["keywordRank"] == 1 and hit["scope"] == "project"
    assert env.ok("semantic", "nothing like this at all xyzzy", "--type", "hub").out.startswith("No memories match")


def test_long_memory_is_found_by_any_part(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    rng = random.Random(4)
    filler = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "theta", "kappa"]
    words = [rng.choice(filler) for _ in range(700)]
    words[600:606] = ["kubernetes", "autoscaler", "evicts", "pods", "during", "upgrades"]
    slug = write(env, "Cluster notes", "learning", "k8s", " ".join(words))
    for memory in OTHER_MEMORIES:
        write(env, *memory)
    cached = json.loads(cache_file(env, slug).read_text())
    assert len(cached["chunks"]) >= 5 and all(len(chunk) == 768 for chunk in cached["chunks"])
    data = semantic_json(env, "autoscaler evicts pods", "--mode", "semantic")
    top = data["results"][0]
    assert top["slug"] == slug and top["chunk"] >= 4
    assert "autoscaler evicts" in top["snippet"]


def test_update_reembeds_and_hand_edits_are_recomputed_on_search(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    slug = write(env, "Queue sizing", "learning", "queues", "Keep queues short.")
    env.ok("update", slug, "--content", "Bound every queue and shed load early.")
    cached = json.loads(cache_file(env, slug).read_text())
    assert cached["contentHash"] == content_hash("Queue sizing", "Bound every queue and shed load early.")
    assert has_embedding(env, slug)
    path = env.project_dir / f"{slug}.md"
    path.write_text(path.read_text().replace("shed load early", "drop excess requests"))
    stub.reset()
    data = semantic_json(env, "drop excess requests")
    assert data["results"][0]["slug"] == slug
    assert any("drop excess requests" in text for text in stub.embedded_texts()[1:])  # the stale entry
    assert json.loads(cache_file(env, slug).read_text())["contentHash"] == content_hash(
        "Queue sizing", "Bound every queue and drop excess requests.")


def test_delete_removes_cache_entry_and_embed_removes_orphans(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    keep = write(env, "Keep me", "learning", "misc", "Still here.")
    gone = write(env, "Delete me", "learning", "misc", "Going away.")
    env.ok("delete", gone)
    assert not cache_file(env, gone).exists()
    orphan = write(env, "Removed by hand", "learning", "misc", "Deleted with rm.")
    (env.project_dir / f"{orphan}.md").unlink()
    data = env.ok("embed", "--json").json()
    project = next(item for item in data["scopes"] if item["scope"] == "project")
    assert project["removed"] == 1 and project["upToDate"] == 1
    assert sorted(path.stem for path in (env.project_dir / ".embedding-cache").iterdir()) == [keep]


def test_provider_disabled_is_silent_on_write_and_falls_back(env: Env, stub: EmbeddingStub) -> None:
    configure(env, provider="disabled", endpoint=stub.url)
    result = env.ok("write", "Offline note", "--tags", "misc", "--content", "No embeddings here.")
    assert result.err == "" and not (env.project_dir / ".embedding-cache").exists()
    data = semantic_json(env, "offline")
    assert data["mode"] == "keyword-fallback" and data["reason"] == "disabled"
    assert data["results"][0]["slug"] == "learning-offline-note"
    assert "embedding.provider auto" in env.ok("semantic", "offline").err
    failed = env.fails("embed")
    assert "turned off" in failed.err and "hint: turn it on" in failed.err
    assert stub.count() == 0


def test_semantic_usage_errors(env: Env) -> None:
    assert "error:" in env.fails("semantic", "x", "--limit", "0", code=2).err
    assert "error:" in env.fails("semantic", "x", "--mode", "fuzzy", code=2).err
    env.fails("semantic", "x", "--type", "nonsense")
    help_text = env.ok("semantic", "--help").out
    assert "examples:" in help_text and "--mode" in help_text
    assert "examples:" in env.ok("embed", "--help").out


# -- the packed cache and the similarity functions ----------------------------------------------

def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 300), st.integers(0, 2**32 - 1))
def test_quantised_scores_match_exact_cosine(rows: int, dim: int, seed: int) -> None:
    rng = random.Random(seed)
    vectors = [[rng.gauss(0, 1) for _ in range(dim)] for _ in range(rows)]
    if rng.random() < 0.2:
        vectors[0] = [0.0] * dim
    query = [rng.gauss(0, 1) for _ in range(dim)]
    quantised = [vector_pack.quantise(vector) for vector in vectors]
    columns = b"".join(bytes(values[column] for values, _, _ in quantised) for column in range(dim))
    from array import array

    weights, scale, total = vector_pack.quantise(query)
    got = vector_pack.scores(weights, scale, total, columns, rows, array("d", [q[1] for q in quantised]),
                                array(vector_pack.U32, [q[2] for q in quantised]))
    for vector, score in zip(vectors, got):
        norm = math.sqrt(sum(x * x for x in vector)) * math.sqrt(sum(x * x for x in query))
        exact = sum(x * y for x, y in zip(vector, query)) / norm if norm else 0.0
        assert abs(score - exact) < 0.03


def test_lanes_are_wide_enough_for_every_dimension() -> None:
    for dim in (1, 384, 768, 1040, 1041, 3072, 8192):
        width = vector_pack.lane_bytes(dim)
        assert dim * (2 * vector_pack.LEVELS + 1) ** 2 < 1 << (8 * width)


@given(st.integers(0, 2000))
def test_chunks_cover_every_word_with_overlap(words: int) -> None:
    content = " ".join(f"w{index}" for index in range(words))
    chunks = embed.chunk_texts("Title", content)
    if words <= embed.CHUNK_WORDS + embed.CHUNK_OVERLAP:
        assert chunks == []
        return
    bodies = [chunk.split("\n\n", 1)[1].split() for chunk in chunks]
    assert all(chunk.startswith("Title\n\n") for chunk in chunks) and len(chunks) <= embed.MAX_CHUNKS
    assert {word for body in bodies for word in body} == set(content.split())
    assert all(len(body) <= embed.CHUNK_WORDS for body in bodies)


def test_fuse_convex_and_reciprocal_rank() -> None:
    vector, keyword = [{"a": (0.9, 0), "b": (0.5, 2), "c": (0.1, 0)}, {"e": (0.7, 0)}], [{"b": 12.0, "d": 6.0}, {"e": 3.0}]
    fused = semantic.fuse(vector, keyword, ("convex", 0.5, 0.0))
    assert fused == pytest.approx({(0, "a"): 0.5, (0, "b"): 0.5 * 0.5 + 0.5, (0, "c"): 0.0, (0, "d"): 0.25,
                                   (1, "e"): 0.5 * 0.75 + 0.125})
    # cosine ranks a 1, e 2, b 3, c 4; keyword ranks b 1, d 2, e 3 (over all scopes)
    fused = semantic.fuse(vector, keyword, ("rrf", 0.8, 3.0))
    assert fused == pytest.approx({(0, "a"): 0.2 / 4, (1, "e"): 0.2 / 5 + 0.8 / 6, (0, "b"): 0.2 / 6 + 0.8 / 4,
                                   (0, "c"): 0.2 / 7, (0, "d"): 0.8 / 5})
    assert semantic.fuse([{"a": (0.3, 0)}], [{}], ("convex", 0.5, 0.0)) == {(0, "a"): 0.0}  # nothing to scale


def test_neighbours_and_similar_pairs_from_the_cache_only(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    for memory in AUTH_MEMORIES + OTHER_MEMORIES:
        write(env, *memory)
    from _lib.catalog.catalog import open_catalog
    from _lib.workspace.scopes import Workspace

    stub.set_available(False)  # cached vectors only: no provider needed
    workspace = Workspace(env.project, {"HOME": str(env.home)})
    with open_catalog(workspace, workspace.scope("project")) as catalog:
        assert catalog is not None
        near = similarity.neighbours(catalog, "learning-login-issues-on-safari", 2)
        assert len(near) == 2 and near[0][1] >= near[1][1]
        assert {slug for slug, _ in near} <= {"gotcha-oauth-token-refresh-fails", "learning-auth-errors-after-deploy"}
        pairs = similarity.similar_pairs(catalog, k=2, min_score=0.0)
        assert pairs and all(a < b and -1 <= score <= 1 for a, b, score in pairs)
        assert pairs == sorted(pairs, key=lambda pair: -pair[2])
        exact = json.loads(cache_file(env, pairs[0][0]).read_text())["vector"]
        other = json.loads(cache_file(env, pairs[0][1]).read_text())["vector"]
        assert pairs[0][2] == pytest.approx(sum(x * y for x, y in zip(exact, other)), abs=0.01)
        assert similarity.neighbours(catalog, "no-such-memory") == []
        assert similarity.similar_to_text(workspace, catalog, "login") == []  # provider down: empty, no error


def test_pack_is_updated_by_reading_only_changed_cache_files(env: Env, stub: EmbeddingStub,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    configure(env, endpoint=stub.url)
    for memory in AUTH_MEMORIES:
        write(env, *memory)
    assert semantic_json(env, "login")["count"] == 3  # builds the pack
    pack_path = env.project_dir / ".cache" / vector_pack.PACK_NAME
    assert pack_path.exists()
    added = write(env, *OTHER_MEMORIES[0])
    from _lib.catalog.catalog import open_catalog
    from _lib.workspace.scopes import Workspace

    reads: list[str] = []
    original = cache.read_cached
    monkeypatch.setattr(cache, "read_cached", lambda path: reads.append(path.name) or original(path))
    monkeypatch.setattr(vector_pack, "RACY_NS", 0)  # as if the directory had not changed for a while
    workspace = Workspace(env.project, {"HOME": str(env.home)})
    with open_catalog(workspace, workspace.scope("project")) as catalog:
        assert catalog is not None
        pack = vector_pack.Pack.fresh(catalog, "embeddinggemma")
        assert reads == [f"{added}.json"] and pack.rows == 4 and pack.dir_stamp is not None
        reads.clear()
        again = vector_pack.Pack.fresh(catalog, "embeddinggemma")
        assert reads == [] and again.rows == 4 and sorted(again.slugs) == sorted(pack.slugs)
        assert vector_pack.cached_dimension(catalog, "embeddinggemma:latest") == 768
    env.write_broken(pack_path, b"MEMPACK1 but not really")
    assert semantic_json(env, "login")["count"] == 4  # a damaged pack is rebuilt from the cache files


def test_results_from_several_scopes(env: Env, stub: EmbeddingStub) -> None:
    configure(env, endpoint=stub.url)
    write(env, *AUTH_MEMORIES[0])
    env.ok("write", AUTH_MEMORIES[1][0], "--type", "learning", "--tags", "safari", "--content", AUTH_MEMORIES[1][3],
           "--scope", "global")
    data = semantic_json(env, "authentication problems")
    assert {(hit["slug"], hit["scope"]) for hit in data["results"]} == {
        ("gotcha-oauth-token-refresh-fails", "project"), ("learning-login-issues-on-safari", "global")}
    only = semantic_json(env, "authentication problems", "--scope", "global")
    assert [hit["scope"] for hit in only["results"]] == ["global"]
    assert (env.global_dir / ".embedding-cache" / "learning-login-issues-on-safari.json").exists()
