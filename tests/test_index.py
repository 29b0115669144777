"""index.json (and graph.json) stay true to the files: hand edits, corruption, compatibility (SC-001)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import OAUTH_EXAMPLE, Env, memory_text, schema_errors

SEED_NODE = """---
id: decision-001-jwt-auth
type: decision
created: 2025-12-08T11:00:00Z
updated: 2025-12-08T11:00:00Z
tags: [auth, security, architecture]
related: [[file-src-auth-ts]], [[discovery-jwt-pattern]]
status: active
supersedes: null
---

# Decision: Use JWT with Redis Session Store

## Context
Need stateless auth that can scale horizontally. See [[file-src-auth-ts]].
"""

FILE_NODE = """---
id: file-src-auth-ts
type: file-summary
path: /src/auth.ts
created: 2025-12-08T10:30:00Z
updated: 2025-12-08T14:20:00Z
tags: [auth, security, jwt, middleware]
related: [[file-src-config-ts]], [[discovery-jwt-pattern]]
status: active
---

# /src/auth.ts

JWT authentication module handling user login.
"""


def test_index_matches_files_after_every_operation(env: Env) -> None:
    def check() -> None:
        index = env.index(env.project_dir)
        assert schema_errors(index, "index") == []
        on_disk = {path.stem for path in env.project_dir.glob("*.md") if path.name != "index.md"}
        assert set(index["memories"]) == on_disk
        for slug, entry in index["memories"].items():
            assert entry["slug"] == slug and os.path.exists(entry["filePath"])

    env.ok("write", "One", "--tags", "a")
    check()
    env.ok("write", "Two", "--tags", "b", "--links", "learning-one")
    check()
    env.ok("update", "learning-one", "--title", "One again")
    check()
    assert env.index(env.project_dir)["memories"]["learning-one"]["title"] == "One again"
    env.ok("delete", "learning-two")
    check()


def test_hand_added_edited_and_deleted_files_are_picked_up(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    (env.project_dir / "learning-by-hand.md").write_text(memory_text("By hand", body="kangaroo"))
    assert "learning-by-hand" in env.ok("list").out
    assert env.ok("search", "kangaroo", "--json").json()["count"] == 1
    assert "learning-by-hand" in env.index(env.project_dir)["memories"]

    path = env.project_dir / "learning-by-hand.md"
    stat = path.stat()
    path.write_text(memory_text("By hand, edited", body="wombat"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with an unchanged mtime
    # edited in place: taken in when a command returns it (the search finds it by its old word)
    assert env.ok("search", "kangaroo", "--json").json()["count"] == 0
    assert env.ok("search", "wombat", "--json").json()["count"] == 1
    assert env.index(env.project_dir)["memories"]["learning-by-hand"]["title"] == "By hand, edited"

    path.unlink()
    assert "learning-by-hand" not in env.ok("list").out
    assert env.ok("search", "wombat", "--json").json()["count"] == 0
    assert "learning-by-hand" not in env.index(env.project_dir)["memories"]


def test_missing_truncated_or_invalid_index_is_rebuilt(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    env.ok("write", "Beta", "--tags", "b")
    index_path = env.project_dir / "index.json"
    good = env.index(env.project_dir)["memories"]
    for damage in (lambda: index_path.unlink(), lambda: index_path.write_text(index_path.read_text()[:40]),
                   lambda: index_path.write_text("not json"), lambda: index_path.write_text('{"memories": {}}')):
        damage()
        env.ok("list")
        assert env.index(env.project_dir)["memories"] == good


def test_read_repairs_a_stale_index_on_access(env: Env) -> None:
    """Edge Case: a memory file that is not in the index gets its entry on access, by `read` too."""
    env.ok("write", "Seed", "--tags", "a")
    (env.project_dir / "learning-by-hand.md").write_text(memory_text("By hand"))
    assert "# By hand" in env.ok("read", "learning-by-hand").out
    assert env.index(env.project_dir)["memories"]["learning-by-hand"]["title"] == "By hand"

    path = env.project_dir / "learning-by-hand.md"
    stat = path.stat()
    path.write_text(memory_text("By hand, edited"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # edited in place, same mtime
    env.ok("read", "learning-by-hand")
    assert env.index(env.project_dir)["memories"]["learning-by-hand"]["title"] == "By hand, edited"

    index_path = env.project_dir / "index.json"
    good = env.index(env.project_dir)["memories"]
    index_path.write_text("not json")
    env.ok("read", "learning-seed")
    assert env.index(env.project_dir)["memories"] == good


def test_deleted_catalog_is_rebuilt_and_labels_kept(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    env.ok("write", "Beta", "--tags", "b")
    env.ok("link", "learning-alpha", "learning-beta", "--label", "builds-on")
    before = env.graph(env.project_dir)
    for path in (env.project_dir / ".cache").iterdir():
        path.unlink()
    assert env.ok("search", "alpha", "--json").json()["count"] == 1
    assert env.graph(env.project_dir) == before
    env.ok("reindex")
    assert env.graph(env.project_dir) == before


def test_sc001_data_model_example_and_seed_nodes_read_without_modification(env: Env) -> None:
    env.global_dir.mkdir(parents=True)
    oauth = env.global_dir / "decision-oauth2.md"
    oauth.write_text(OAUTH_EXAMPLE)
    nodes = env.global_dir / "nodes"
    (nodes / "decisions").mkdir(parents=True)
    (nodes / "files").mkdir(parents=True)
    (nodes / "decisions" / "decision-001-jwt-auth.md").write_text(SEED_NODE)
    (nodes / "files" / "src-auth-ts.md").write_text(FILE_NODE)
    before = {path: path.read_bytes() for path in env.global_dir.rglob("*.md")}

    listed = {item["slug"]: item for item in env.ok("list", "--json").json()["memories"]}
    assert set(listed) == {"decision-oauth2", "decision-001-jwt-auth", "file-src-auth-ts"}
    assert listed["decision-oauth2"]["title"] == "OAuth2 Implementation Decision"
    assert listed["decision-001-jwt-auth"]["created"] == "2025-12-08T11:00:00Z"
    assert listed["file-src-auth-ts"]["type"] == "file-summary"
    assert env.ok("search", "PKCE", "--json").json()["results"][0]["slug"] == "decision-oauth2"
    assert env.ok("search", "horizontally", "--json").json()["results"][0]["slug"] == "decision-001-jwt-auth"
    assert "JWT authentication module" in env.ok("read", "file-src-auth-ts").out
    assert env.ok("read", "decision-oauth2").out == OAUTH_EXAMPLE
    assert {path: path.read_bytes() for path in env.global_dir.rglob("*.md")} == before
    edges = env.graph(env.global_dir)
    assert {edge["target"] for edge in edges["decision-001-jwt-auth"]} == {"file-src-auth-ts"}


def test_duplicate_slugs_and_unknown_types_are_reported(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    (env.project_dir / "learning-a.md").write_text(memory_text("A"))
    (env.project_dir / "nodes" / "x").mkdir(parents=True)
    (env.project_dir / "nodes" / "x" / "other.md").write_text(
        memory_text("A twin").replace("type: learning", "id: learning-a\ntype: learning"))
    env.write_broken(env.project_dir / "weird.md", memory_text("W").replace("type: learning", "type: opinion"))
    result = env.ok("list")
    assert "duplicate slug" in result.err
    assert result.out.count("learning-a ") == 1
    assert "weird" in result.out and "opinion" in result.out  # unusual, yet readable
    report = env.run("health", "--json").json()
    about_type = [(problem["kind"], problem["severity"]) for problem in report["problems"]
                  if problem["slug"] == "weird" and problem["field"] == "type"]
    assert about_type == [("unknown-type", "warning")]
    assert report["errors"] == 1  # the duplicate slug only


def test_a_large_batch_of_files_is_searchable_as_after_a_rebuild(env: Env) -> None:
    """Hundreds of files taken in at once store their keyword postings at the end of the batch:
    search then answers as after a rebuild, including for files replaced or removed meanwhile."""
    env.ok("write", "Kept note", "--tags", "a", "--content", "wallaby sightings")
    env.ok("write", "Replaced note", "--tags", "a", "--content", "quokka sightings")
    env.ok("write", "Removed note", "--tags", "a", "--content", "numbat sightings")
    (env.project_dir / "learning-replaced-note.md").write_text(memory_text("Replaced note", body="bilby"))
    (env.project_dir / "learning-removed-note.md").unlink()
    for number in range(250):
        (env.project_dir / f"learning-pulled-{number}.md").write_text(
            memory_text(f"Pulled {number}", body="wallaby" if number % 50 == 0 else "dingo"))

    def answers() -> dict[str, list[str]]:  # (scores also weigh recency: they drift as time passes)
        return {word: [hit["slug"] for hit in env.ok("search", word, "--json", "--limit", "100").json()["results"]]
                for word in ("wallaby", "quokka", "numbat", "bilby", "dingo")}

    batch = answers()
    assert sorted(batch["wallaby"]) == ["learning-kept-note"] + [
        f"learning-pulled-{number}" for number in sorted((0, 50, 100, 150, 200), key=str)]
    assert batch["quokka"] == batch["numbat"] == []
    assert batch["bilby"] == ["learning-replaced-note"]
    assert len(batch["dingo"]) == 100
    env.ok("reindex")
    assert answers() == batch


def test_reindex_reports_and_rebuilds(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    env.write_broken(env.project_dir / "bad.md", "---\n: :\n---\n")
    data = env.ok("reindex", "--scope", "project", "--json").json()
    assert data["scopes"][0]["memories"] == 1
    assert data["scopes"][0]["problems"][0]["path"].endswith("bad.md")
    assert json.loads((env.project_dir / "index.json").read_text())["version"] == "1.0.0"


@pytest.mark.parametrize("searches", [64, 0])
def test_splice_lines_matches_a_full_rewrite(monkeypatch: pytest.MonkeyPatch, searches: int) -> None:
    """index.json/graph.json are patched line by line, each change found by a search or (many
    changes) by one split of the file; the result must equal the intended JSON."""
    import random

    from _lib.catalog import exports
    from _lib.catalog.exports import splice_lines

    monkeypatch.setattr(exports, "SPLICE_SEARCHES", searches)
    rng = random.Random(7)
    for _ in range(2000):
        data = {f"k{rng.randint(0, 30)}": {"v": rng.randint(0, 9), "text": "é, \",\\n\""}
                for _ in range(rng.randint(1, 8))}
        text = ("HEAD\n" + ",\n".join(json.dumps(k) + ": " + json.dumps(v, ensure_ascii=False)
                                      for k, v in data.items()) + "\n}}\n").encode()
        changes = {}
        for _ in range(rng.randint(1, 6)):
            key = f"k{rng.randint(0, 30)}"
            if rng.random() < 0.4:
                changes[key] = None
                data.pop(key, None)
            else:
                data[key] = {"v": rng.randint(0, 9)}
                changes[key] = json.dumps(key) + ": " + json.dumps(data[key])
        out = splice_lines(text, b"HEAD", b"}}", changes)
        if out is None:
            assert not data
            continue
        assert out.startswith(b"HEAD\n") and out.endswith(b"\n}}\n")
        assert json.loads("{" + out.decode()[5:-3] + "}") == data


def test_patches_in_place_leave_valid_json_after_every_write(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """index.json/graph.json are patched where they lie, one write per change: after each single
    write (where a killed process would stop) the file is valid JSON holding every entry that no
    change touches, and after the last one exactly the intended entries; padding is bounded."""
    import random

    from _lib.catalog import exports
    from _lib.catalog.exports import patch_in_place

    path = tmp_path / "index.json"
    snapshots: list[bytes] = []
    real_pwrite = os.pwrite

    def pwrite(descriptor: int, data: bytes, offset: int) -> int:
        written = real_pwrite(descriptor, data, offset)
        snapshots.append(path.read_bytes())
        return written

    monkeypatch.setattr(exports.os, "pwrite", pwrite)
    rng = random.Random(11)
    patched = copied = 0
    for _ in range(300):
        data = {f"k{rng.randint(0, 30)}": {"v": rng.randint(0, 99), "text": "é, \",\\n\"" * rng.randint(0, 3)}
                for _ in range(rng.randint(1, 8))}
        path.write_bytes(("HEAD\n" + ",\n".join(json.dumps(k) + ": " + json.dumps(v, ensure_ascii=False)
                                                 for k, v in data.items()) + "\n}}\n").encode())
        slack = 0
        for _ in range(8):
            changes: dict[str, str | None] = {}
            before = dict(data)
            for _ in range(rng.randint(1, 4)):
                key = f"k{rng.randint(0, 30)}"
                if rng.random() < 0.3:
                    changes[key] = None
                    data.pop(key, None)
                else:
                    data[key] = {"v": rng.randint(0, 99), "text": "x" * rng.randint(0, 40)}
                    changes[key] = json.dumps(key) + ": " + json.dumps(data[key])
            snapshots.clear()
            added = patch_in_place(path, b"HEAD", b"}}", changes, slack)
            if added is None:
                assert not snapshots  # refused: nothing written
                copied += 1
                break
            patched += 1
            slack += added
            untouched = {key: value for key, value in before.items() if key not in changes}
            for snapshot in snapshots:
                assert snapshot.startswith(b"HEAD\n") and snapshot.endswith(b"\n}}\n")
                found = json.loads("{" + snapshot.decode()[5:-3] + "}")
                assert untouched.items() <= found.items()
            text = path.read_text()
            assert json.loads("{" + text[5:-3] + "}") == data
            assert slack <= exports.MAX_SLACK * len(text.encode())
    assert patched > 300 and copied > 50, (patched, copied)


def test_disk_fingerprint_updates_in_place() -> None:
    from _lib.catalog.catalog import DiskState

    state = DiskState({"a.md": "1:2:3", "b.md": "4:5:6"})
    state.note("a.md", "1:2:9")
    state.note("c.md", "7:8:9")
    state.note("b.md", None)
    assert state.digest() == DiskState({"a.md": "1:2:9", "c.md": "7:8:9"}).digest()
    assert state.digest() != DiskState({"a.md": "1:2:3", "c.md": "7:8:9"}).digest()


def test_resumed_fingerprint_matches_a_fresh_scan() -> None:
    from _lib.catalog.catalog import DiskState

    recorded = {"a.md": "1:2:3", "b.md": "4:5:6", "d.md": "0:0:1"}
    state = DiskState.resumed(DiskState(recorded).digest(), recorded.get)
    for relpath, stamp in (("a.md", "1:2:9"), ("c.md", "7:8:9"), ("b.md", None), ("c.md", "7:8:10")):
        state.recall(relpath)
        state.note(relpath, stamp)
    assert state.digest() == DiskState({"a.md": "1:2:9", "c.md": "7:8:10", "d.md": "0:0:1"}).digest()


def test_mutations_skip_the_scan_yet_hand_edits_are_found_and_the_state_stays_exact(env: Env) -> None:
    """write/update/link/unlink trust the recorded state when the scope directory has not changed
    (no scan of every file); the fingerprint they leave must equal a fresh scan's, and a file
    edited in place by hand meanwhile is still picked up by the next command that scans."""
    import sqlite3

    from _lib.catalog import catalog as catalog_index

    def recorded_state() -> str:
        conn = sqlite3.connect(env.project_dir / ".cache" / catalog_index.DB_NAME)
        try:
            return conn.execute("SELECT value FROM meta WHERE key=?", (catalog_index.DISK_KEY,)).fetchone()[0]
        finally:
            conn.close()

    def fresh_state() -> str:
        return catalog_index.DiskState(catalog_index.scan(env.project_dir)).digest()

    for title in ("Alpha", "Beta", "Gamma"):
        env.ok("write", title, "--tags", "a")
    env.ok("list")
    gamma = env.project_dir / "learning-gamma.md"
    with gamma.open("r+") as handle:  # in place: same inode, the directory does not change
        handle.write(memory_text("Gamma by hand")[:-1] + "\n")
    for args in (["link", "learning-alpha", "learning-beta", "--label", "builds-on"],
                 ["update", "learning-alpha", "--append", "More."], ["write", "Delta", "--tags", "a"],
                 ["unlink", "learning-alpha", "learning-beta"]):
        env.ok(*args)
        assert env.index(env.project_dir)["memories"]["learning-gamma"]["title"] == "Gamma", \
            "the mutation did not scan: gamma's hand edit waits for the next scanning command"
    assert "Gamma by hand" in env.ok("list").out
    assert env.index(env.project_dir)["memories"]["learning-gamma"]["title"] == "Gamma by hand"
    env.ok("link", "learning-alpha", "learning-delta")
    assert recorded_state() == fresh_state()
    edges = json.loads((env.project_dir / "graph.json").read_text())
    assert [edge["target"] for edge in edges["learning-alpha"]] == ["learning-delta"]
    assert [edge["target"] for edge in edges["learning-delta"]] == ["learning-alpha"]


def test_catalog_stays_within_one_and_a_half_times_the_markdown(env: Env) -> None:
    """The catalog holds the index of the memories, not a second copy of them: past the fixed pages
    of an empty catalog, it grows by at most 1.5 bytes per byte of markdown (bench_scale's store:
    realistic prose, 2-4 tags, ~3 labelled links per memory)."""
    import sys

    from helpers import REPO
    sys.path.insert(0, str(REPO / "bench"))
    from bench_scale import Corpus

    env.project_dir.mkdir(parents=True)
    env.ok("list", "--scope", "project")  # an empty catalog: its pages are a fixed cost, whatever the store holds
    cache = env.project_dir / ".cache"

    def catalog_bytes() -> int:
        return sum(path.stat().st_size for path in cache.glob("catalog.sqlite3*"))

    empty = catalog_bytes()
    assert empty > 0
    Corpus().write(env.project_dir, 600)
    env.ok("reindex")
    env.ok("search", "the value of the argument")
    markdown = sum(path.stat().st_size for path in env.project_dir.glob("*.md"))
    grown = catalog_bytes() - empty
    assert 0 < grown <= 1.5 * markdown, f"catalog grew {grown} bytes for {markdown} bytes of markdown"


@pytest.mark.parametrize("seed", range(4))
def test_packed_postings_read_back_as_recorded(seed: int) -> None:
    """Postings packed per word and block of doc ids read back exactly as a plain (word, doc) -> tf
    table would: after single adds and removals, batches that share a block with older memories,
    many removed at once, removals inside a batch (the highest ids given again, back into blocks written already), and
    frequencies past what a byte holds."""
    import random
    import sqlite3

    from _lib.catalog import postings

    rng = random.Random(seed)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(postings.SCHEMA)
    model: dict[int, dict[int, int]] = {}  # doc -> word -> tf

    def counts() -> dict[int, int]:
        return {word: rng.choice((1, 1, 2, 3, 254, 255, 256, 1000, 70000)) for word in rng.sample(range(1, 40), 6)}

    for _ in range(6):
        staged = postings.Staged(conn) if rng.random() < 0.5 else None
        for _ in range(rng.randint(1, 300)):
            if not staged and len(model) > 3 and rng.random() < 0.05:  # many at once, in doc id order
                leaving = sorted(rng.sample(sorted(model), rng.randint(2, len(model) - 1)))
                postings.remove_many(conn, [(doc, list(model.pop(doc))) for doc in leaving])
            elif model and rng.random() < 0.25:  # the highest (its id is then given again) or any
                doc = max(model) if rng.random() < 0.5 else rng.choice(sorted(model))
                (staged.remove if staged else lambda *a: postings.remove(conn, *a))(doc, list(model.pop(doc)))
            else:  # a new id is above every one in use (a jump: memories of other blocks)
                doc = max(model, default=250) + rng.choice((1, 1, 1, 200))
                model[doc] = counts()
                (staged.add if staged else lambda *a: postings.add(conn, *a))(
                    doc, sum(model[doc].values()), list(model[doc].items()))
        if staged:
            staged.flush()
    for word in range(1, 40):
        expected = [(doc, found[word], sum(found.values())) for doc, found in sorted(model.items()) if word in found]
        assert postings.read(conn, word) == expected
        assert postings.frequency(conn, word) == len(expected)
        some = {doc for doc, _, _ in expected[::3]}
        assert postings.holding(conn, word, some) == sorted(some)
        for block, _, top, shortest in postings.blocks_of(conn, word):  # the bounds BM25 prunes by
            held = [(tf, length) for doc, tf, length in expected if doc >> postings.SHIFT == block]
            assert top == min(max(tf for tf, _ in held), postings.HEAVY)
            assert shortest == min(length for _, length in held)
    assert set(conn.execute("SELECT word, doc, tf FROM heavy")) == {  # nothing left of those that went
        (word, doc, tf) for doc, found in model.items() for word, tf in found.items() if tf >= postings.HEAVY}


@pytest.mark.parametrize("seed", range(8))
def test_pruned_ranking_is_the_exhaustive_one(seed: int) -> None:
    """The best k of BM25, with blocks and memories passed over by their bounds, are exactly the
    first k of scoring every memory holding a query word: the same memories with the same scores,
    equal scores in the same order (by the first, rarest, query word held, then by doc id). Corpora
    with many equal scores, frequencies past a byte, removed memories, and blocks with gaps."""
    import math
    import random
    import sqlite3
    from types import SimpleNamespace

    from _lib.catalog import bm25, postings

    rng = random.Random(seed)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(postings.SCHEMA + """
        CREATE TABLE words(id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE);
        CREATE TABLE docs(id INTEGER PRIMARY KEY, slug TEXT NOT NULL, length INTEGER NOT NULL);
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);""")
    conn.executemany("INSERT INTO words VALUES (?, ?)", [(word, f"w{word}") for word in range(1, 31)])
    model: dict[int, tuple[dict[int, int], int]] = {}  # doc -> (word -> tf, length)
    staged, doc = postings.Staged(conn), 0
    for _ in range(rng.randint(50, 1500)):
        if model and rng.random() < 0.1:
            gone = rng.choice(sorted(model))
            staged.remove(gone, list(model.pop(gone)[0]))
            conn.execute("DELETE FROM docs WHERE id=?", (gone,))
            continue
        doc += rng.choice((1, 1, 1, 1, 300))
        counts: dict[int, int] = {}
        for _ in range(rng.randint(1, 10)):  # a few words in most memories, most words in a few
            word = min(int(rng.paretovariate(0.8)), 30)
            counts[word] = counts.get(word, 0) + rng.choice((1, 1, 1, 2, 3, 300))
        model[doc] = counts, sum(counts.values()) + rng.choice((0, 0, 4, 60))
        staged.add(doc, model[doc][1], list(counts.items()))
        conn.execute("INSERT INTO docs VALUES (?, ?, ?)", (doc, f"m{doc}", model[doc][1]))
    staged.flush()
    count = len(model)
    average = max(sum(length for _, length in model.values()) / count, 1.0)
    norm, scale = bm25.K1 * (1 - bm25.B), bm25.K1 * bm25.B / average
    held = sorted({word for counts, _ in model.values() for word in counts})
    for _ in range(25):
        query = rng.sample(held, min(len(held), rng.randint(1, 7)))
        frequency = {word: sum(word in counts for counts, _ in model.values()) for word in query}
        weighted = sorted(((math.log(1 + (count - frequency[word] + 0.5) / (frequency[word] + 0.5)), word)
                           for word in query), key=lambda item: -item[0])
        exhaustive = []
        for doc, (counts, length) in model.items():
            score, first = 0.0, None
            for place, (weight, word) in enumerate(weighted):
                if word in counts:
                    tf = counts[word]
                    score += weight * tf * (bm25.K1 + 1) / (tf + norm + scale * length)
                    first = place if first is None else first
            if first is not None:
                exhaustive.append((-score, first, doc))
        expected = [(f"m{doc}", -score) for score, _, doc in sorted(exhaustive)]
        for limit in (0, 1, 2, 5, 20, None):
            assert bm25.rank(SimpleNamespace(conn=conn), [f"w{word}" for word in query], limit=limit) == \
                expected[:limit], (query, limit)


def test_many_memories_deleted_by_hand_leave_the_catalog_a_reindex_would_build(env: Env) -> None:
    """Hundreds of files gone at once (a branch switch, a folder cleaned out) are forgotten in one
    pass over the postings; what the catalog then answers is what a reindex from the files gives."""
    import random
    import sys

    from helpers import REPO, assert_consistent
    sys.path.insert(0, str(REPO / "bench"))
    from bench_scale import Corpus

    env.project_dir.mkdir(parents=True)
    Corpus().write(env.project_dir, 500)
    env.ok("reindex")
    files = sorted(env.project_dir.glob("*.md"))
    for path in random.Random(3).sample(files, 320):
        path.unlink()
    queries = ["the value of the argument", "return a new list", "file name", "socket connection timeout"]
    after = [json.loads(env.ok("search", query, "--json", "--limit", "50").out) for query in queries]
    assert all(after), after
    listed = json.loads(env.ok("list", "--json").out)
    assert_consistent(env.project_dir)
    env.ok("reindex")
    assert [json.loads(env.ok("search", query, "--json", "--limit", "50").out) for query in queries] == after
    assert json.loads(env.ok("list", "--json").out) == listed
    assert len(listed if isinstance(listed, list) else listed["memories"]) == 180
