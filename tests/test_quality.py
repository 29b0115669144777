"""US5-4 and FR-040: `memory quality` scores a memory 0-100 with a breakdown and suggestions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import Env

RATIONALE = """We decided to use OAuth2 with PKCE for every public client of the API gateway.

## Rationale

- Industry standard, so client libraries exist for every platform we ship
- Better security than basic auth because tokens expire and can be revoked

## Trade-offs

- More complex than basic auth: token refresh needs care in the mobile clients
- The alternatives (API keys, session cookies) were rejected for third-party apps
"""


def write_oauth(env: Env, content: str = RATIONALE) -> None:
    env.ok("write", "Authentication hub", "--type", "hub", "--tags", "auth",
           "--content", "Everything about how users and services authenticate against our APIs lives here.")
    env.ok("write", "Use OAuth2 with PKCE for public clients", "--type", "decision", "--tags", "auth,api,security",
           "--slug", "decision-oauth2", "--links", "hub-authentication", "--content", content)


def test_us5_4_quality_returns_a_score_with_suggestions(env: Env) -> None:
    write_oauth(env, "We use OAuth2.")
    result = env.ok("quality", "decision-oauth2")
    assert result.out.startswith("decision-oauth2 (project scope, decision): ")
    score = int(result.out.split(": ", 1)[1].split("/")[0])
    assert 0 <= score <= 100
    assert "Suggestions:" in result.out
    assert "## Rationale" in result.out and "## Trade-offs" in result.out
    data = env.ok("quality", "decision-oauth2", "--json").json()
    assert data["score"] == score and 0 <= data["score"] <= 100
    assert set(data["breakdown"]) == {"title", "tags", "structure", "links", "freshness", "completeness"}
    assert sum(part["score"] for part in data["breakdown"].values()) == data["score"]
    assert sum(part["max"] for part in data["breakdown"].values()) == 100
    assert data["suggestions"] and all(isinstance(text, str) for text in data["suggestions"])


def test_a_complete_decision_scores_higher_and_needs_no_completeness_advice(env: Env) -> None:
    write_oauth(env)
    data = env.ok("quality", "decision-oauth2", "--json").json()
    assert data["breakdown"]["completeness"] == {"score": 20, "max": 20,
                                                 "note": "decision: has rationale, has trade-offs"}
    assert data["breakdown"]["structure"]["score"] == 25
    assert data["breakdown"]["links"]["note"] == "1 link, hub hub-authentication"
    assert not any("Rationale" in text or "Trade-offs" in text for text in data["suggestions"])
    assert data["score"] >= 85


def test_gotcha_needs_trigger_and_fix(env: Env) -> None:
    env.ok("write", "Redis keys vanish", "--type", "gotcha", "--tags", "cache,redis", "--content", "Annoying.")
    thin = env.ok("quality", "gotcha-redis-keys-vanish", "--json").json()
    assert thin["breakdown"]["completeness"]["score"] == 0
    assert any("trigger" in text for text in thin["suggestions"]) and any("## Fix" in text
                                                                          for text in thin["suggestions"])
    env.ok("update", "gotcha-redis-keys-vanish", "--content",
           "When the cache restarts, keys without a TTL are lost. Fix: always set a TTL and warm the cache.")
    full = env.ok("quality", "gotcha-redis-keys-vanish", "--json").json()
    assert full["breakdown"]["completeness"]["score"] == 20 and full["score"] > thin["score"]


def test_hub_membership_and_links_raise_the_score(env: Env) -> None:
    env.ok("write", "Caching notes for the API layer", "--tags", "cache,api", "--content", "Short.")
    alone = env.ok("quality", "learning-caching-notes-for-the-api-layer", "--json").json()
    assert alone["breakdown"]["links"] == {"score": 0, "max": 20, "note": "0 links, no hub"}
    env.ok("write", "Caching hub", "--type", "hub", "--tags", "cache",
           "--links", "learning-caching-notes-for-the-api-layer")
    linked = env.ok("quality", "learning-caching-notes-for-the-api-layer", "--json").json()
    assert linked["breakdown"]["links"]["score"] == 15
    hub = env.ok("quality", "hub-caching", "--json").json()
    assert hub["breakdown"]["links"]["note"] == "1 member"
    assert any("memory link MEMBER hub-caching --label part-of" in text for text in hub["suggestions"])


def test_orphan_suggestion_names_a_hub_sharing_tags(env: Env) -> None:
    write_oauth(env)
    env.ok("write", "Token lifetimes", "--tags", "auth", "--content", "Access tokens live 15 minutes.")
    data = env.ok("quality", "learning-token-lifetimes", "--json").json()
    assert ("Link it to a hub (hub-authentication shares its tags): "
            "memory link learning-token-lifetimes hub-authentication --label part-of") in data["suggestions"]


def test_all_lists_every_memory_lowest_first(env: Env) -> None:
    write_oauth(env)
    env.ok("write", "Misc", "--tags", "misc", "--content", "tbd")
    data = env.ok("quality", "--all", "--json").json()
    scores = [item["score"] for item in data["memories"]]
    assert scores == sorted(scores) and data["count"] == 3
    assert data["memories"][0]["slug"] == "learning-misc"
    assert data["below"] >= 1 and data["threshold"] == 50
    text = env.ok("quality", "--all").out
    assert text.splitlines()[0].split() == ["SCORE", "SCOPE", "SLUG", "FIRST", "SUGGESTION"]
    assert "3 memories, average" in text


def test_threshold_comes_from_config(env: Env) -> None:
    write_oauth(env, "Short.")
    env.ok("config", "quality.minQualityScore", "95", "--scope", "project")
    assert "below quality.minQualityScore 95" in env.ok("quality", "decision-oauth2").out


def test_errors_and_usage(env: Env) -> None:
    write_oauth(env)
    failed = env.fails("quality", "decision-nope")
    assert "no memory 'decision-nope'" in failed.err
    env.fails("quality", code=2)
    env.fails("quality", "decision-oauth2", "--all", code=2)
    help_text = env.ok("quality", "--help").out
    assert "examples:" in help_text and "memory quality --all" in help_text


# -- units --------------------------------------------------------------------------------------

def _memory(text: str, slug: str = "learning-x") -> object:
    from _lib.model import memory

    return memory.parse(text, Path(f"/tmp/{slug}.md"), "project")


def test_title_and_freshness_rules() -> None:
    from _lib.health import quality

    facts = quality.GraphFacts()
    no_heading = quality.assess(_memory("---\ntype: learning\ntags: [a]\n---\n\nJust text.\n"), facts)
    assert no_heading.parts[0].score == 0 and "slug stands in" in no_heading.parts[0].note
    generic = quality.assess(_memory("---\ntype: learning\ntags: [a]\n---\n\n# Notes\n\nx\n"), facts)
    assert generic.parts[0].score == 3
    old = quality.assess(_memory('---\ntype: learning\ntags: [a]\nupdated: "2020-01-01T00:00:00Z"\n---\n\n# Old '
                                 'memory about caching\n\nx\n'), facts)
    assert old.parts[4].score == 2 and any("Last updated" in text for text in old.suggestions)
    archived = quality.assess(_memory('---\ntype: learning\ntags: [a]\nstatus: archived\nupdated: '
                                      '"2020-01-01T00:00:00Z"\n---\n\n# Old memory\n\nx\n'), facts)
    assert archived.parts[4].score == 10


_TEXT = st.text(st.sampled_from(list("abc xyz#-`\n/.:")), max_size=400)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["decision", "learning", "gotcha", "artifact", "breadcrumb", "hub", "session"]),
       _TEXT, _TEXT, st.lists(st.sampled_from(["a", "b-c", "Bad", "x" * 60]), max_size=9),
       st.integers(0, 5), st.lists(st.sampled_from(["hub-a", "hub-b"]), max_size=2), st.integers(0, 6))
def test_score_is_always_0_to_100_and_the_sum_of_its_parts(type_: str, title: str, body: str, tags: list[str],
                                                           edges: int, hubs: list[str], members: int) -> None:
    from _lib.model import frontmatter
    from _lib.health import quality

    heading = title.splitlines()[0] if title else ""
    text = f"---\ntype: {type_}\ntags: {frontmatter.emit_flow_list(tags)}\n---\n\n# {heading}\n\n{body}\n"
    result = quality.assess(_memory(text), quality.GraphFacts(edges, hubs, members))
    assert 0 <= result.score <= 100
    assert result.score == sum(part.score for part in result.parts)
    assert all(0 <= part.score <= part.max for part in result.parts)
    if result.score < 100:
        assert result.suggestions
