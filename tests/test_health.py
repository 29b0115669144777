"""US5: `memory health` finds orphans, broken links, bad frontmatter and drift (FR-037..039, SC-004)."""

from __future__ import annotations

import json
import os
import random
import time
from hypothesis import given, settings
from hypothesis import strategies as st

import health_corpus
from helpers import Env

DECISION = """---
type: decision
tags:
  - auth
created: "2026-01-10T10:00:00Z"
updated: "2026-01-10T10:30:00Z"
links:
  - learning-token-refresh
---

# OAuth2 decision

We chose OAuth2.
"""


def problems(result: object, kind: str | None = None) -> list[dict]:
    found = result.json()["problems"]  # type: ignore[attr-defined]
    return [problem for problem in found if kind is None or problem["kind"] == kind]


def keys(result: object) -> set[tuple[str, str, str, str]]:
    return {health_corpus.problem_key(problem) for problem in problems(result)}


def seed(env: Env) -> None:
    """A hub with two members, and one memory outside any hub."""
    env.ok("write", "Authentication hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Token refresh rotates keys", "--tags", "auth", "--links", "hub-authentication")
    env.ok("write", "Use OAuth2 with PKCE", "--type", "decision", "--tags", "auth",
           "--links", "hub-authentication,learning-token-refresh-rotates-keys")
    env.ok("write", "Redis keys expire", "--type", "gotcha", "--tags", "cache")


# -- the five scenarios (1-3 here; 4 in test_quality, 5 in test_repair) -------------------------

def test_us5_1_report_shows_totals_orphans_broken_links_and_frontmatter(env: Env) -> None:
    seed(env)
    (env.project_dir / "decision-hand-written.md").write_text(DECISION.replace("- auth", "- Auth"))
    env.unchecked.add(env.project_dir / "decision-hand-written.md")
    result = env.fails("health")
    out = result.out
    assert f"project scope ({env.project_dir}): 5 memories" in out
    assert "decision 2, gotcha 1, hub 1, learning 1" in out
    assert "orphan 2" in out and "broken-link 1" in out and "invalid-frontmatter 1" in out
    assert "memory health found 2 errors" in result.err
    data = env.fails("health", "--json").json()
    assert data["memories"] == 5 and data["ok"] is False and data["errors"] == 2
    project = next(scope for scope in data["scopes"] if scope["scope"] == "project")
    assert project["types"] == {"decision": 2, "gotcha": 1, "hub": 1, "learning": 1} and project["errors"] == 2
    assert data["byKind"]["orphan"] == 2 and data["byKind"]["broken-link"] == 1
    invalid = [problem for problem in data["problems"] if problem["kind"] == "invalid-frontmatter"]
    assert invalid[0]["field"] == "tags[0]" and invalid[0]["path"].endswith("decision-hand-written.md")
    assert invalid[0]["fixable"] is True


def test_us5_1_headline_counts_are_always_shown_and_count_each_broken_pair_once(env: Env) -> None:
    seed(env)
    env.ok("write", "Session store", "--tags", "auth", "--links", "hub-authentication")
    assert "Orphans: 1; broken links: 0; frontmatter issues: 0" in env.ok("health").out
    (env.project_dir / "learning-token-refresh-rotates-keys.md").unlink()  # `links` and graph.json edges dangle
    (env.project_dir / "decision-hand-written.md").write_text(DECISION.replace("- auth", "- Auth"))
    env.unchecked.add(env.project_dir / "decision-hand-written.md")
    data = env.fails("health", "--json").json()
    assert data["byKind"]["graph-broken-edge"] >= 2
    assert data["summary"] == {"memories": 5, "orphans": 2, "brokenLinks": 3, "frontmatterIssues": 1}
    assert "Orphans: 2; broken links: 3; frontmatter issues: 1" in env.fails("health").out


def test_us5_2_orphans_are_identified_with_a_suggestion_to_link_them(env: Env) -> None:
    seed(env)
    result = env.ok("health", "--json")
    orphans = problems(result, "orphan")
    assert {problem["slug"] for problem in orphans} == {"gotcha-redis-keys-expire"}
    assert "memory link gotcha-redis-keys-expire" in orphans[0]["hint"]
    assert "--label part-of" in orphans[0]["hint"]
    env.ok("write", "Auth helpers", "--tags", "auth")
    found = {problem["slug"]: problem for problem in problems(env.ok("health", "--json"), "orphan")}
    hint = found["learning-auth-helpers"]["hint"]
    assert "memory link learning-auth-helpers hub-authentication --label part-of (hub-authentication shares" in hint
    text = env.ok("health").out
    assert "orphan  gotcha-redis-keys-expire.md" in text and "fix: memory link gotcha-redis-keys-expire" in text


def test_us5_3_broken_links_to_deleted_memories_come_with_fix_options(env: Env) -> None:
    seed(env)
    (env.project_dir / "learning-token-refresh-rotates-keys.md").unlink()  # deleted by hand, not `memory delete`
    result = env.fails("health", "--json")
    broken = problems(result, "broken-link")
    assert {(problem["slug"], problem["target"]) for problem in broken} == {
        ("decision-use-oauth2-with-pkce", "learning-token-refresh-rotates-keys"),
        ("hub-authentication", "learning-token-refresh-rotates-keys")}
    assert all(problem["severity"] == "error" and problem["fixable"] for problem in broken)
    assert "memory repair removes the link" in broken[0]["hint"]
    assert "write the memory learning-token-refresh-rotates-keys again" in broken[0]["hint"]


# -- SC-004: exactly the planted problems, and after repair only what repair may not fix --------------

def test_sc004_planted_problems_are_found_exactly_and_repair_leaves_only_the_unfixable(env: Env) -> None:
    from _lib.health import checks as health

    corpus = health_corpus.build(env.project_dir, env.global_dir, 2000, lambda: env.ok("reindex"))
    env.unchecked |= corpus.broken
    assert corpus.memories >= 1950
    planted = {key[0] for key in corpus.expected}
    derived_only = {"index-missing", "index-unreadable", "graph-missing", "graph-unreadable"}
    assert set(health.KINDS) - planted == derived_only  # those four: test_missing_and_unreadable_exports

    first = env.fails("health", "--json")
    found = {health_corpus.problem_key(problem): problem["fixable"] for problem in problems(first)}
    assert set(found) - set(corpus.expected) == set(), "false alarms"
    assert set(corpus.expected) - set(found) == set(), "missed problems"
    assert found == corpus.expected, "fixable flags differ"
    assert first.json()["memories"] == corpus.memories

    repaired = env.ok("repair", "--json").json()
    assert repaired["fixed"] > 0
    after = env.fails("health", "--json")
    assert keys(after) == corpus.unfixable
    assert env.ok("repair", "--json").json()["fixed"] == 0  # a second run finds nothing


def test_health_cache_finds_exactly_what_a_check_without_it_finds(env: Env) -> None:
    """Each file's digest is kept by its stamp: a warm check, one after hand edits (in place,
    replaced, deleted) and one over a damaged cache all equal a check without the cache."""
    def age_then_reindex() -> None:
        for path in [*env.project_dir.rglob("*.md"), *env.global_dir.rglob("*.md")]:
            info = path.stat()  # an hour old: a file changed within the last seconds is never cached
            os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns - 3600 * 10**9))
        env.ok("reindex")

    corpus = health_corpus.build(env.project_dir, env.global_dir, 400, age_then_reindex)
    env.unchecked |= corpus.broken
    derived = {path: path.read_bytes() for path in (env.project_dir / "index.json", env.project_dir / "graph.json")}
    cache = env.project_dir / ".cache" / "health-files.json"
    memos = [env.project_dir / ".cache" / name for name in ("health-graph.json", "health-duplicates.json")]

    def check(*, cold: bool = False) -> list[dict]:
        for path, data in derived.items():  # as found before the first check: the drift it reports each time
            path.write_bytes(data)
        if cold:
            for path in (cache, *memos):
                path.unlink(missing_ok=True)
        result = env.run("health", "--json")  # stderr: notes on the files aged above, then the errors
        assert result.code == 1 and "Traceback" not in result.err, result.err
        return problems(result)

    first = check(cold=True)
    assert {health_corpus.problem_key(problem): problem["fixable"] for problem in first} == corpus.expected
    kept = json.loads(cache.read_text())["files"]
    aged = {path.name for path in env.project_dir.glob("*.md") if path not in corpus.broken
            and path.stat().st_mtime_ns < time.time_ns() - 600 * 10**9}
    assert len(aged) > 300 and aged <= set(kept)
    stamp = cache.stat().st_mtime_ns, cache.stat().st_ino
    assert all(path.exists() for path in memos)
    assert check() == first  # warm: every digest from the cache, which is left as it was
    assert (cache.stat().st_mtime_ns, cache.stat().st_ino) == stamp

    files = sorted(path for path in env.project_dir.glob("*.md") if path not in corpus.broken)
    edited, replaced, deleted, linked = files[5], files[6], files[7], files[9]
    inode = edited.stat().st_ino
    with edited.open("a", encoding="utf-8") as handle:  # in place: same inode
        handle.write(f"\nSee [[a-memory-nobody-wrote]] and [[{linked.stem}]].\n")  # the second: a new edge
    assert edited.stat().st_ino == inode
    text = replaced.read_text(encoding="utf-8").replace("\n# ", "\n# Replaced ", 1) + "\n## Notes\n\nMore.\n"
    replacement = replaced.with_name(".replacement.tmp")
    replacement.write_text(text, encoding="utf-8")
    os.replace(replacement, replaced)  # as editors and `sed -i` do: a new inode
    deleted.unlink()
    warm = check()
    assert warm == check(cold=True)
    assert warm != first
    assert ("broken-reference", "project", edited.stem, "a-memory-nobody-wrote") in \
        {health_corpus.problem_key(problem) for problem in warm}
    # graph.json as found lacks the new edge: seen through the memo of the graph, made before the edit
    assert [problem for problem in warm if problem["kind"].startswith("graph-")
            and {problem["slug"], problem["target"]} == {edited.stem, linked.stem}]

    cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])  # truncated
    assert check() == warm
    damaged = json.loads(cache.read_text())  # rebuilt whole
    assert aged - {edited.name, replaced.name, deleted.name} <= set(damaged["files"]) <= \
        {path.name for path in env.project_dir.glob("*.md")}  # the files changed just now: read until they settle
    relpath = next(iter(damaged["files"]))
    damaged["files"][relpath][1] = [1, 2]  # an entry of the wrong shape, under the right stamp
    cache.write_text(json.dumps(damaged))
    assert check() == warm
    cache.write_text("[]")
    assert check() == warm


def test_a_memory_made_a_hub_by_hand_is_seen_through_the_graph_memo(env: Env) -> None:
    """The memo of the graph keeps what each memory's edges say (its hubs, a hub's members): a type
    edited by hand, which changes no link, makes a warm check find what a check without it finds."""
    seed(env)
    memo = env.project_dir / ".cache" / "health-graph.json"
    before = problems(env.ok("health", "--json"))
    assert memo.exists()
    member = env.project_dir / "learning-token-refresh-rotates-keys.md"
    member.write_text(member.read_text(encoding="utf-8").replace("type: learning", "type: hub"), encoding="utf-8")
    env.ok("health")  # reports index.json as found, out of step with the edit, once
    warm = problems(env.ok("health", "--json"))
    memo.unlink()
    assert warm == problems(env.ok("health", "--json"))
    assert warm != before  # the decision now links to a second hub; the new hub is scored as one
    assert [problem for problem in warm if problem["slug"] == member.stem] != \
        [problem for problem in before if problem["slug"] == member.stem]


def test_json_report_is_written_as_the_indenting_encoder_writes_it() -> None:
    """The report's problems are encoded in batches without the pure-Python indenting encoder: the
    text is exactly what it makes, whatever the strings hold."""
    from pathlib import Path

    from _lib.health import facts

    class Scope:
        name, root = "project", Path("/tmp/store")

    odd = ["quote \" and back\\slash", "nul \0 tab \t newline \n", "ünïcødé ✓ \u2028", "%s %d {}", ""]
    found = [facts.Problem("orphan" if index % 3 else "broken-link", "warning" if index % 3 else "error", "project",
                           f"slug-{index}" if index % 4 else None, Path(f"/tmp/store/m{index}.md") if index % 5 else None,
                           odd[index % len(odd)], odd[(index + 1) % len(odd)], fixable=bool(index % 2),
                           target=odd[index % 2] if index % 7 else None, field="tags[0]" if index % 6 == 0 else None)
             for index in range(facts.PROBLEMS_PER_CHUNK * 2 + 3)]
    for problems_made in (found, found[:1], []):
        report = facts.Report([facts.ScopeReport(Scope(), {"learning": 2}, problems_made)])  # type: ignore[arg-type]
        assert "".join(report.json_chunks()) == json.dumps(report.as_json(), indent=2, ensure_ascii=False)
    assert facts.Report([]).as_json()["problems"] == [] and \
        "".join(facts.Report([]).json_chunks()) == json.dumps(facts.Report([]).as_json(), indent=2)


def test_missing_and_unreadable_exports_are_reported_once(env: Env) -> None:
    seed(env)
    (env.project_dir / "index.json").unlink()
    env.write_broken(env.project_dir / "graph.json", "{truncated")
    found = keys(env.ok("health", "--json"))
    assert ("index-missing", "project", "index.json", "") in found
    assert ("graph-unreadable", "project", "graph.json", "") in found
    assert not [key for key in found if key[0] in ("index-drift", "graph-drift", "graph-missing-inverse")]
    env.write_broken(env.project_dir / "index.json", "[]")
    (env.project_dir / "graph.json").unlink()
    found = keys(env.ok("health", "--json"))
    assert ("index-unreadable", "project", "index.json", "") in found
    assert ("graph-missing", "project", "graph.json", "") in found
    # every command rewrites derived files, this check too: the drift is reported once
    assert not [key for key in keys(env.ok("health", "--json")) if key[0].startswith(("index-", "graph-"))]


# -- behaviour ----------------------------------------------------------------------------------

def test_exit_status_gates_on_errors_only(env: Env) -> None:
    seed(env)
    result = env.ok("health")  # orphans are warnings
    assert "0 errors" in result.out and result.err == ""
    (env.project_dir / "learning-broken.md").write_bytes(b"\xff\xfe not text")
    env.unchecked.add(env.project_dir / "learning-broken.md")
    failed = env.fails("health")
    assert "unreadable-file  learning-broken.md" in failed.out
    assert "re-save the file as UTF-8" in failed.out


def test_empty_store_and_scope_option(env: Env) -> None:
    assert "No memory directories found" in env.ok("health").out
    env.ok("write", "Global thing to know", "--tags", "misc", "--scope", "global")
    data = env.ok("health", "--scope", "global", "--json").json()
    assert [scope["scope"] for scope in data["scopes"]] == ["global"]
    assert env.ok("health", "--scope", "project", "--json").json()["scopes"] == []
    env.fails("health", "--scope", "nowhere", code=2)


def test_cross_scope_links_and_edges_name_the_other_scope(env: Env) -> None:
    seed(env)
    env.ok("write", "Global thing", "--tags", "misc", "--scope", "global")
    path = env.project_dir / "gotcha-redis-keys-expire.md"
    path.write_text(path.read_text().replace("tags:", "links:\n  - learning-global-thing\ntags:"))
    broken = problems(env.fails("health", "--json"), "cross-scope-link")
    assert broken[0]["target"] == "learning-global-thing" and "global scope" in broken[0]["message"]
    assert broken[0]["fixable"] is False


def test_embedding_cache_checks_use_the_memo_and_notice_changes(env: Env) -> None:
    from _lib.model import memory

    seed(env)
    slug = "gotcha-redis-keys-expire"
    content_hash = memory.read_file(env.project_dir / f"{slug}.md", "project").content_hash()
    cache = env.project_dir / ".embedding-cache" / f"{slug}.json"
    cache.parent.mkdir()
    entry = {"slug": slug, "model": "embeddinggemma:latest", "vector": [0.5, 0.25],
             "contentHash": content_hash, "timestamp": "2026-01-01T00:00:00Z"}
    cache.write_text(json.dumps(entry))
    env.ok("reindex")
    assert not [key for key in keys(env.ok("health", "--json")) if key[0].startswith("cache-")]
    memo = env.project_dir / ".cache" / "health-embeddings.json"
    assert slug + ".json" in json.loads(memo.read_text())["files"]
    cache.write_text(json.dumps({**entry, "model": "nomic-embed-text"}))  # a configured fallback: fine
    assert not [key for key in keys(env.ok("health", "--json")) if key[0].startswith("cache-")]
    cache.write_text(json.dumps({**entry, "contentHash": "f" * 64, "vector": [0.5, 0.25, 0.125]}))
    assert ("cache-stale", "project", slug, f"{slug}.json") in keys(env.ok("health", "--json"))
    env.write_broken(cache, json.dumps({**entry, "vector": ["x"]}))
    invalid = problems(env.ok("health", "--json"), "cache-invalid")
    assert "not a non-empty list of numbers" in invalid[0]["message"]


def test_help_has_examples(env: Env) -> None:
    out = env.ok("health", "--help").out
    assert "examples:" in out and "memory health --scope project" in out and "--json" in out


# -- units --------------------------------------------------------------------------------------

def test_normal_tags() -> None:
    from _lib.health import facts

    assert facts.normal_tags(["Auth", "API_Design", "auth"]) == ["auth", "api-design"]
    assert facts.normal_tags("Auth, Big Data") == ["auth", "big-data"]
    assert facts.normal_tags(["ok", "not/valid"]) is None
    assert facts.normal_tags([]) is None and facts.normal_tags(None) is None
    assert facts.normal_tags([2024]) == ["2024"]


def _brute_force(terms: dict[str, frozenset[str]], threshold: float) -> set[tuple[str, str]]:
    found = set()
    names = sorted(terms)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if min(len(terms[a]), len(terms[b])) < 8:
                continue
            if len(terms[a] & terms[b]) / len(terms[a] | terms[b]) >= threshold:
                found.add((a, b))
    return found


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sets(st.sampled_from([f"w{i}" for i in range(14)]), min_size=0, max_size=14), max_size=12),
       st.sampled_from([0.5, 0.7, 0.8, 0.9]))
def test_near_duplicates_never_reports_a_pair_below_the_threshold(sets: list[set[str]], threshold: float) -> None:
    from _lib.health import duplicates

    terms = {f"m{i}": frozenset(words) for i, words in enumerate(sets)}
    found = {(a, b) for a, b, _ in duplicates.near_duplicates(terms, {slug: slug for slug in terms},
                                                            threshold=threshold)}
    expected = _brute_force(terms, threshold)
    assert found <= expected
    identical = {(a, b) for a, b in expected if terms[a] == terms[b]}
    assert identical <= found


def test_near_duplicates_finds_pairs_at_the_threshold() -> None:
    from _lib.health import duplicates

    rng = random.Random(8)
    vocabulary = [f"w{i}" for i in range(20000)]
    misses = tried = 0
    for size in (10, 20, 80, 200) * 100:
        base = rng.sample(vocabulary, size)
        kept = -(-2 * size * 4 // 9)  # Jaccard kept / (2 size - kept) >= 0.8
        other = frozenset(base[:kept] + rng.sample(vocabulary, size - kept))
        tried += 1
        misses += not duplicates.near_duplicates({"a": frozenset(base), "b": other}, {"a": "1", "b": "2"})
    assert tried == 400 and misses <= 4  # 99.5% recall at 0.8 (1 - (1 - 0.8^4)^10)


def test_near_duplicates_at_10000_finds_the_one_copy_among_look_alikes() -> None:
    """Memories sharing many common words are not near duplicates; the one copy is found.
    (How long this takes is bench/bench_health.py's business.)"""
    from _lib.health import duplicates

    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(20000)]
    common = vocabulary[:300]
    terms = {f"m{i}": frozenset(rng.sample(common, 15) + rng.sample(vocabulary, 60)) for i in range(10000)}
    terms["copy"] = frozenset(sorted(terms["m7"])[3:]) | {"x1"}
    found = duplicates.near_duplicates(terms, {slug: slug for slug in terms})
    assert [(a, b) for a, b, _ in found] == [("copy", "m7")]


_VALUES = st.one_of(st.sampled_from(["auth", "Auth", "api-design", "a--b", "x" * 51, "", "2026-01-10T10:00:00Z",
                                     "2026-01-10", "next tuesday", "learning", "hub", "recipe", "implements",
                                     "decision-oauth2", "active", "Active!"]),
                    st.integers(), st.none(), st.booleans())
_FIELDS = st.dictionaries(
    st.sampled_from(["type", "tags", "created", "updated", "links", "link-labels", "title", "status", "id",
                     "related", "custom"]),
    st.one_of(_VALUES, st.lists(_VALUES, max_size=3), st.dictionaries(st.sampled_from(["decision-oauth2", "Bad"]),
                                                                      st.one_of(_VALUES, st.lists(_VALUES)))))


@settings(max_examples=400, deadline=None)
@given(_FIELDS)
def test_quick_schema_never_hides_a_violation(fields: dict) -> None:
    from _lib.health import files
    from _lib.base import schema

    rules = schema.load("frontmatter")
    if "type" in fields and not isinstance(fields["type"], str):
        return  # memory.parse refuses such a file before health sees it
    if files.QuickSchema(rules).surely_valid(fields):
        assert schema.validate(fields, rules) == []


def test_graph_json_patched_in_place_reads_as_the_file_written_afresh(env: Env) -> None:
    """Commands patch graph.json where it lies (lines overwritten and padded, blanked, added at the
    end): health tells that file from the one a rewrite makes by its entries, not its bytes, so a
    warm check of a store in daily use never compares 100,000 memories' edges one by one."""
    from _lib.health import quality

    for number in range(40):
        links = ",".join(f"learning-note-{other}" for other in (number - 1, number - 2) if other >= 0)
        env.ok("write", f"Note {number}", "--type", "learning", "--tags", "notes", "--content", f"note {number}",
               *(["--links", links] if links else []))
    graph = env.project_dir / "graph.json"
    env.ok("reindex")
    fresh_before = graph.read_bytes()
    env.ok("unlink", "learning-note-30", "learning-note-29")  # shorter lines: overwritten and padded
    env.ok("link", "learning-note-3", "learning-note-33", "--label", "builds-on")  # longer: added at the end
    env.ok("delete", "learning-note-39")
    patched = graph.read_bytes()
    assert b"   " in patched and patched != fresh_before
    assert not [problem for problem in problems(env.ok("health", "--json")) if problem["kind"].startswith("graph-")]
    env.ok("reindex")
    fresh = graph.read_bytes()
    assert fresh != patched and quality.entries_digest(patched) == quality.entries_digest(fresh)
    relabelled = fresh.replace(b'"builds-on"', b'"relates-to"', 1)
    assert relabelled != fresh and quality.entries_digest(relabelled) != quality.entries_digest(fresh)
    assert quality.entries_digest(json.dumps(json.loads(fresh), indent=2).encode()) != quality.entries_digest(fresh)
