"""US1: store and retrieve memories, through the command line as users run it."""

from __future__ import annotations

import json
import re

import yaml

from helpers import OAUTH_EXAMPLE, Env, schema_errors, snapshot



def frontmatter_of(path) -> dict:
    text = path.read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_us1_1_write_creates_markdown_with_frontmatter(env: Env) -> None:
    result = env.ok("write", "API uses OAuth2", "--type", "decision", "--tags", "auth,api")
    path = env.project_dir / "decision-api-uses-oauth2.md"
    assert path.exists(), result.out
    assert "decision-api-uses-oauth2" in result.out
    fields = frontmatter_of(path)
    assert fields["type"] == "decision"
    assert fields["tags"] == ["auth", "api"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fields["created"])
    assert fields["updated"] == fields["created"]
    text = path.read_text()
    assert '\ncreated: "' in text and "\ntags:\n  - auth\n  - api\n" in text  # the data model's style
    assert "\n# API uses OAuth2\n" in text
    assert schema_errors(fields, "frontmatter") == []
    entry = env.index(env.project_dir)["memories"]["decision-api-uses-oauth2"]
    assert entry["title"] == "API uses OAuth2" and entry["filePath"] == str(path)


def test_us1_2_read_displays_full_content(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    (env.project_dir / "decision-oauth2.md").write_text(OAUTH_EXAMPLE)
    result = env.ok("read", "decision-oauth2")
    assert result.out == OAUTH_EXAMPLE
    data = env.ok("read", "decision-oauth2", "--json").json()
    assert data["title"] == "OAuth2 Implementation Decision"
    assert data["tags"] == ["auth", "oauth2", "security"]
    assert data["scope"] == "project"
    assert data["content"].startswith("We decided to use OAuth2 with PKCE")


def test_us1_3_list_by_type_shows_titles_and_dates(env: Env) -> None:
    env.ok("write", "API uses OAuth2", "--type", "decision", "--tags", "auth")
    env.ok("write", "Use Postgres", "--type", "decision", "--tags", "db")
    env.ok("write", "Token refresh", "--type", "learning", "--tags", "auth")
    out = env.ok("list", "--type", "decision").out
    assert "API uses OAuth2" in out and "Use Postgres" in out
    assert "Token refresh" not in out
    assert re.search(r"\d{4}-\d\d-\d\d", out)
    listed = env.ok("list", "--type", "decision", "--json").json()
    assert listed["count"] == 2
    assert {item["type"] for item in listed["memories"]} == {"decision"}
    assert all(item["scope"] == "project" and item["updated"] for item in listed["memories"])


def test_us1_4_delete_removes_file_and_graph_references(env: Env) -> None:
    env.ok("write", "OAuth2", "--type", "decision", "--tags", "auth")
    env.ok("write", "Token refresh", "--type", "learning", "--tags", "auth", "--links", "decision-oauth2")
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth", "--links", "decision-oauth2")
    graph = env.graph(env.project_dir)
    assert {edge["target"] for edge in graph["decision-oauth2"]} == {"learning-token-refresh", "hub-auth"}
    assert "decision-oauth2" in frontmatter_of(env.project_dir / "learning-token-refresh.md")["links"]

    result = env.ok("delete", "decision-oauth2")
    assert "Deleted decision-oauth2" in result.out
    assert not (env.project_dir / "decision-oauth2.md").exists()
    graph = env.graph(env.project_dir)
    assert "decision-oauth2" not in graph
    assert all(edge["target"] != "decision-oauth2" for edges in graph.values() for edge in edges)
    for slug in ("learning-token-refresh", "hub-auth"):
        assert "decision-oauth2" not in frontmatter_of(env.project_dir / f"{slug}.md").get("links", [])
    assert "decision-oauth2" not in env.index(env.project_dir)["memories"]
    env.fails("read", "decision-oauth2")


def test_us1_5_search_finds_word_in_title_or_content(env: Env) -> None:
    env.ok("write", "Login flow", "--tags", "auth", "--content", "Authentication uses OAuth2 tokens.")
    env.ok("write", "Authentication errors", "--type", "gotcha", "--tags", "auth", "--content", "401 loops")
    env.ok("write", "Database pool", "--tags", "db", "--content", "Pool size 20.")
    out = env.ok("search", "authentication").out
    assert "learning-login-flow" in out and "gotcha-authentication-errors" in out
    assert "database" not in out.lower()
    hits = env.ok("search", "authentication", "--json").json()["results"]
    assert {hit["slug"] for hit in hits} == {"learning-login-flow", "gotcha-authentication-errors"}
    assert any("Authentication uses OAuth2" in hit["snippet"] for hit in hits)


def test_search_is_case_insensitive_ranked_and_partial(env: Env) -> None:
    env.ok("write", "Redis cache eviction", "--tags", "redis", "--content", "LRU eviction under memory pressure.")
    env.ok("write", "Redis cluster", "--tags", "redis", "--content", "Three shards.")
    env.ok("write", "Unrelated", "--tags", "misc", "--content", "Nothing to see.")
    hits = env.ok("search", "REDIS eviction", "--json").json()["results"]
    assert [hit["slug"] for hit in hits] == ["learning-redis-cache-eviction", "learning-redis-cluster"]
    assert hits[0]["score"] > hits[1]["score"]
    filtered = env.ok("search", "redis", "--tag", "misc", "--json").json()
    assert filtered["count"] == 0
    assert env.ok("search", "evict", "--json").json()["results"][0]["slug"] == "learning-redis-cache-eviction"


def test_slug_collisions_get_numeric_suffix(env: Env) -> None:
    env.ok("write", "OAuth2 Decision", "--type", "decision", "--tags", "auth")
    env.ok("write", "OAuth2 Decision", "--type", "decision", "--tags", "auth")
    env.ok("write", "OAuth2 Decision", "--type", "decision", "--tags", "auth")
    names = sorted(path.name for path in env.project_dir.glob("*.md") if path.name != "index.md")
    assert names == ["decision-oauth2-1.md", "decision-oauth2-2.md", "decision-oauth2.md"]
    env.ok("write", "Auth Hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Token Refresh Pattern", "--type", "learning", "--tags", "auth")
    assert (env.project_dir / "hub-auth.md").exists()
    assert (env.project_dir / "learning-token-refresh-pattern.md").exists()


def test_slug_override_and_default_type_and_derived_tags(env: Env) -> None:
    env.ok("write", "Anything", "--slug", "breadcrumb-start-here", "--type", "breadcrumb", "--tags", "nav")
    assert (env.project_dir / "breadcrumb-start-here.md").exists()
    env.fails("write", "Again", "--slug", "breadcrumb-start-here", "--tags", "nav")
    env.ok("write", "Retry logic for payment webhooks")
    fields = frontmatter_of(env.project_dir / "learning-retry-logic-for-payment-webhooks.md")
    assert fields["type"] == "learning"
    assert fields["tags"] == ["retry", "logic", "payment", "webhooks"]
    env.ok("write", "The", "--type", "artifact")
    assert frontmatter_of(env.project_dir / "artifact-the.md")["tags"] == ["artifact"]


def test_body_from_content_file_and_stdin(env: Env, tmp_path) -> None:
    env.ok("write", "From flag", "--tags", "t", "--content", "flag body")
    source = tmp_path / "body.md"
    source.write_text("file body\n\n- point\n")
    env.ok("write", "From file", "--tags", "t", "--file", str(source))
    env.ok("write", "From stdin", "--tags", "t", stdin="stdin body\n")
    env.ok("write", "From dash", "--tags", "t", "--file", "-", stdin="dash body")
    for slug, body in [("learning-from-flag", "flag body"), ("learning-from-file", "file body\n\n- point\n"),
                       ("learning-from-stdin", "stdin body\n"), ("learning-from-dash", "dash body")]:
        assert env.ok("read", slug, "--json").json()["content"] == body


def test_write_file_with_frontmatter_keeps_its_fields(env: Env, tmp_path) -> None:
    source = tmp_path / "import.md"
    source.write_text('---\ntype: gotcha\ntags: [ci]\ncreated: "2025-03-01T08:00:00Z"\nowner: team-a\n---\n\n'
                      "# Flaky macOS runners\n\nRetry twice.\n")
    result = env.ok("write", "--file", str(source), "--json").json()
    assert result["slug"] == "gotcha-flaky-macos-runners"
    assert result["created"] == "2025-03-01T08:00:00Z"
    fields = frontmatter_of(env.project_dir / "gotcha-flaky-macos-runners.md")
    assert fields["owner"] == "team-a" and fields["tags"] == ["ci"]
    assert env.ok("read", "gotcha-flaky-macos-runners", "--json").json()["content"] == "Retry twice.\n"


def test_update_changes_fields_bumps_updated_keeps_created(env: Env) -> None:
    env.ok("write", "Cache policy", "--type", "decision", "--tags", "cache", "--content", "LRU.",
           "--created", "2026-01-01T00:00:00Z")
    path = env.project_dir / "decision-cache-policy.md"
    (env.project_dir / ".embedding-cache").mkdir()
    cache = env.project_dir / ".embedding-cache" / "decision-cache-policy.json"
    cache.write_text("{}")
    env.unchecked.add(cache)
    env.ok("update", "decision-cache-policy", "--title", "Cache policy v2", "--append", "TTL 60s.",
           "--add-tags", "perf", "--remove-tags", "cache", "--type", "learning")
    data = env.ok("read", "decision-cache-policy", "--json").json()
    assert data["title"] == "Cache policy v2"
    assert data["content"] == "LRU.\n\nTTL 60s."
    assert data["tags"] == ["perf"] and data["type"] == "learning"
    assert data["created"] == "2026-01-01T00:00:00Z" and data["updated"] > data["created"]
    assert not cache.exists(), "update must drop the stale embedding"
    assert path.exists()
    env.ok("update", "decision-cache-policy", "--content", "Replaced.")
    assert env.ok("read", "decision-cache-policy", "--json").json()["content"] == "Replaced."
    env.ok("update", "decision-cache-policy", "--tags", "a,b")
    assert env.ok("read", "decision-cache-policy", "--json").json()["tags"] == ["a", "b"]
    entry = env.index(env.project_dir)["memories"]["decision-cache-policy"]
    assert entry["tags"] == ["a", "b"] and entry["title"] == "Cache policy v2"


def test_update_preserves_unknown_fields_and_formatting(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    path = env.project_dir / "learning-custom.md"
    original = ('---\ntype: learning\n# a comment kept as is\ntags: [x, y]   # flow style\ncreated: "2026-01-01T00:00:00Z"\n'
                'updated: "2026-01-02T00:00:00Z"\nowner:\n  team: core\n  people: [ann]\n---\n\n# Custom\n\nBody.\n')
    path.write_text(original)
    env.ok("update", "learning-custom", "--append", "More.")
    text = path.read_text()
    assert "# a comment kept as is\ntags: [x, y]   # flow style\n" in text
    assert "owner:\n  team: core\n  people: [ann]\n" in text
    assert text.endswith("# Custom\n\nBody.\n\nMore.")


def test_unchanged_memory_round_trips_byte_identical() -> None:
    from _lib.model import frontmatter

    for text in [OAUTH_EXAMPLE, "---\r\ntype: gotcha\r\ntags: [a]\r\n---\r\n\r\n# T\r\n\r\nbody\r\n",
                 "\ufeff---\ntype: hub\ntags:\n- x\ncustom: {deep: [1, 2]}\n---\nno heading"]:
        document = frontmatter.split(text)
        assert document.text() == text
        assert frontmatter.replace_fields(document.frontmatter, {}) == document.frontmatter


def test_read_not_found_suggests_close_slugs(env: Env) -> None:
    env.ok("write", "OAuth2", "--type", "decision", "--tags", "auth")
    result = env.fails("read", "decision-oauth")
    assert "decision-oauth2" in result.err
    assert result.out == ""


def test_index_md_and_readme_are_not_memories(env: Env) -> None:
    """The generated index.md (and a README) are no memories: not readable as one, not writable over."""
    env.ok("write", "OAuth2", "--type", "decision", "--tags", "auth")
    assert (env.project_dir / "index.md").exists()
    assert env.fails("read", "index").err.startswith("error: no memory 'index'")
    for scope in ("project", "global"):
        for slug in ("index", "readme"):
            assert "reserved" in env.fails("write", "X", "--slug", slug, "--scope", scope).err
    assert not (env.global_dir / "readme.md").exists()


def test_bad_input_refused_with_one_error_and_nothing_changed(env: Env) -> None:
    env.ok("write", "Existing", "--tags", "keep")
    before = snapshot(env.project_dir)
    cases = [
        ("write", "Bad slug", "--slug", "Not_A_Slug", "--tags", "a"),
        ("write", "Traversal", "--slug", "../escape", "--tags", "a"),
        ("write", "Slash", "--slug", "a/b", "--tags", "a"),
        ("write", "x" * 201, "--tags", "a"),
        ("write", "Big body", "--tags", "a", "--content", "y" * 50_001),
        ("write", "Empty tags", "--tags", ""),
        ("write", "Bad tags", "--tags", "Has Space,ok"),
        ("write", "Bad type", "--type", "opinion", "--tags", "a"),
        ("write", "Future", "--tags", "a", "--created", "2999-01-01T00:00:00Z"),
        ("write", "Backwards", "--tags", "a", "--created", "2026-01-02T00:00:00Z", "--updated", "2026-01-01T00:00:00Z"),
        ("read", "../../etc/passwd"),
        ("update", "learning-existing", "--tags", "UPPER"),
        ("update", "learning-existing", "--title", ""),
        ("update", "learning-missing", "--title", "x"),
        ("delete", "learning-missing"),
        ("update", "learning-existing"),
    ]
    for args in cases:
        result = env.run(*args)
        assert result.code == 1, (args, result.code, result.err)
        lines = result.err.strip().splitlines()
        assert lines[0].startswith("error: "), (args, result.err)
        assert all(line.startswith(("error: ", "hint: ")) for line in lines), result.err
        assert snapshot(env.project_dir) == before, args
    nul = env.run("write", "Nul body", "--tags", "a", stdin=b"abc\x00def")
    assert nul.code == 1 and "binary" in nul.err
    binary = env.run("write", "Latin-1", "--tags", "a", stdin=b"caf\xe9")
    assert binary.code == 1 and "UTF-8" in binary.err
    assert snapshot(env.project_dir) == before


def test_usage_errors_exit_2(env: Env) -> None:
    result = env.fails("write", "--nonsense", code=2)
    assert "hint:" in result.err
    env.fails("bogus-op", code=2)
    env.fails("list", "--limit", "x", code=2)
    assert "usage: memory <operation>" in env.ok("--help").out


def test_broken_files_reported_by_name_others_still_listed(env: Env) -> None:
    env.ok("write", "Good one", "--tags", "ok", "--content", "searchable words")
    env.write_broken(env.project_dir / "broken-yaml.md", "---\ntype: [unclosed\n---\n\n# X\n")
    env.write_broken(env.project_dir / "latin1.md", b"---\ntype: learning\ntags: [a]\n---\n\n# caf\xe9\n")
    env.write_broken(env.project_dir / "no-frontmatter.md", "# Just a note\n")
    listing = env.ok("list")
    assert "learning-good-one" in listing.out
    for name in ("broken-yaml.md", "latin1.md", "no-frontmatter.md"):
        assert name in listing.err
    search = env.ok("search", "searchable")
    assert "learning-good-one" in search.out and "broken-yaml.md" in search.err
    failed = env.fails("read", "broken-yaml")
    assert "broken-yaml.md" in failed.err


def test_json_outputs_are_single_documents(env: Env) -> None:
    created = env.ok("write", "Json check", "--tags", "j", "--json").json()
    assert created["slug"] == "learning-json-check" and created["scope"] == "project"
    for args in (["list", "--json"], ["search", "json", "--json"], ["read", "learning-json-check", "--json"],
                 ["config", "--json"], ["reindex", "--json"]):
        json.loads(env.ok(*args).out)
