"""Defects found by attacking the maintenance verbs from the command line: each test is the
attack that failed, run as users run it (bin/memory in a throwaway git project)."""

from __future__ import annotations

from pathlib import Path

import predecessor_store
import yaml

from helpers import Env, assert_consistent, snapshot


def fields(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1]) or {}


def adopted_memory(env: Env, folder: str, slug: str, tags: str) -> Path:
    """One memory in the earlier plugin's layout (permanent/ and archive/ folders)."""
    store = env.project_dir
    for name in ("permanent", "archive"):
        (store / name).mkdir(parents=True, exist_ok=True)
    path = store / folder / f"{slug}.md"
    path.write_text(f"---\nid: {slug}\ntitle: Old note\ntype: learning\ntags: [{tags}]\n"
                    "created: \"2026-01-01T00:00:00Z\"\n---\n\nBody\n")
    return path


def test_untag_removes_the_free_form_tags_of_an_adopted_store_whatever_their_case(env: Env) -> None:
    path = adopted_memory(env, "permanent", "old-note", "UX, node.js, auth")
    env.unchecked.add(path)  # the earlier plugin's frontmatter, not our schema's
    assert "Already as asked" in env.ok("tag", "old-note", "ux").out  # UX is there: no second ux
    env.ok("untag", "old-note", "ux,node.js")
    assert fields(path)["tags"] == ["auth"]
    before = snapshot(env.project_dir)
    assert "empty tags" in env.fails("untag", "old-note", ",,").err
    assert snapshot(env.project_dir) == before


def test_a_memory_moved_out_of_an_archive_folder_stays_archived(env: Env) -> None:
    adopted_memory(env, "permanent", "kept-note", "a")
    adopted_memory(env, "archive", "old-note", "a")
    env.ok("move", "old-note", "--to", "global")
    env.unchecked.update(env.project_dir.rglob("*"))  # the earlier plugin's files, not our schema's
    assert fields(env.global_dir / "old-note.md")["status"] == "archived"
    assert [item["slug"] for item in env.ok("list", "--status", "archived", "--json").json()["memories"]] == \
        ["old-note"]


def test_an_age_beyond_the_calendar_selects_everything_instead_of_failing(env: Env) -> None:
    env.ok("write", "Note", "--slug", "learning-note", "--tags", "a")
    before = snapshot(env.project_dir)
    result = env.ok("archive", "--since", "99999999d", "--dry-run", "--json")
    assert [item["slug"] for item in result.json()["changed"]] == ["learning-note"]
    assert snapshot(env.project_dir) == before


def test_impact_names_each_dangling_link_by_the_label_its_holder_gives_it(env: Env) -> None:
    env.ok("write", "Base", "--slug", "decision-base", "--type", "decision", "--tags", "a")
    env.ok("write", "Built", "--slug", "learning-built", "--tags", "a")
    env.ok("link", "decision-base", "learning-built", "--label", "builds-on")
    broken = env.ok("impact", "decision-base", "--json").json()["wouldBreak"]["danglingLinks"]
    assert broken == [{"slug": "learning-built", "label": "foundation-for"}]  # learning-built's own link
    assert_consistent(env.project_dir)


def test_impact_follows_the_links_an_adopted_store_keeps_in_graph_json(env: Env) -> None:
    store = predecessor_store.build(env.project_dir, memories=60, edges=80)
    env.unchecked.update(env.project_dir.rglob("*"))
    hub = max(store.hubs, key=lambda slug: sum(slug in (source, target) for source, target, _ in store.edges))
    neighbours = {target if source == hub else source for source, target, _ in store.edges
                  if hub in (source, target) and {source, target} <= set(store.memories)} - {hub}
    assert len(neighbours) > 2
    report = env.ok("impact", hub, "--depth", "1", "--json").json()
    assert set(report["linkedFrom"][0]["slugs"]) == neighbours


def test_verify_with_a_slug_and_all_is_a_usage_error_that_says_so(env: Env) -> None:
    result = env.fails("verify", "learning-x", "--all", code=2)
    assert "not both" in result.err


def test_a_move_after_a_copy_finishes_only_when_neither_side_changed_since(env: Env) -> None:
    env.ok("write", "Lesson", "--slug", "learning-lesson", "--tags", "a", "--scope", "global",
           "--content", "version one")
    env.ok("move", "learning-lesson", "--to", "project", "--copy")
    env.ok("update", "learning-lesson", "--scope", "global", "--content", "version two, with the detail that matters")
    before = snapshot(env.global_dir), snapshot(env.project_dir)
    result = env.fails("move", "learning-lesson", "--scope", "global", "--to", "project")
    assert "already exists in the project scope" in result.err
    assert (snapshot(env.global_dir), snapshot(env.project_dir)) == before  # the newer text is not thrown away

    env.ok("write", "Other", "--slug", "learning-other", "--tags", "a", "--scope", "global", "--content", "same")
    env.ok("move", "learning-other", "--to", "project", "--copy")
    assert "interrupted move finished" in env.ok("move", "learning-other", "--scope", "global", "--to", "project").out
    assert not (env.global_dir / "learning-other.md").exists()
    assert "same" in (env.project_dir / "learning-other.md").read_text()


def test_a_rename_to_the_slug_of_an_earlier_rename_does_not_drop_the_newer_memory(env: Env) -> None:
    env.ok("write", "A", "--slug", "learning-a", "--tags", "a", "--content", "the first a")
    env.ok("rename", "learning-a", "learning-b")
    env.ok("write", "A again", "--slug", "learning-a", "--tags", "a", "--content", "a brand new memory")
    before = snapshot(env.project_dir)
    result = env.fails("rename", "learning-a", "learning-b")
    assert "already exists" in result.err
    assert snapshot(env.project_dir) == before
    assert "a brand new memory" in env.ok("read", "learning-a").out


def test_stats_of_an_empty_store_says_so_instead_of_printing_empty_lists(env: Env) -> None:
    assert env.ok("stats").out.startswith("No memories yet")
    env.ok("write", "Note", "--slug", "learning-note", "--tags", "a")
    assert env.ok("stats").out.startswith("1 memory: 1 project\n")


def test_bash_era_frontmatter_yaml_refuses_is_rewritten_as_valid_yaml_by_the_verbs(env: Env) -> None:
    """`title: Fix: a colon` (the bash-era tool did not quote) is read line by line; a verb that
    changes such a file writes the whole frontmatter again, valid, with every value as it was."""
    store = env.project_dir
    (store / "permanent").mkdir(parents=True)
    for slug in ("bash-note", "other-note"):
        path = store / "permanent" / f"{slug}.md"
        path.write_text(f"---\nid: {slug}\ntitle: Fix: quote the colon of {slug}\ntype: learning\n"
                        "tags: [shell]\ncreated: 2026-01-01T00:00:00Z\n---\n\nBody of the note.\n")
    env.ok("link", "bash-note", "other-note", "--label", "builds-on")
    env.ok("tag", "bash-note", "quoting")
    written = fields(store / "permanent" / "bash-note.md")  # yaml.safe_load: valid YAML now
    assert written["title"] == "Fix: quote the colon of bash-note" and written["id"] == "bash-note"
    assert written["tags"] == ["shell", "quoting"] and written["links"] == ["other-note"]
    assert written["created"] in ("2026-01-01T00:00:00Z", __import__("datetime").datetime(
        2026, 1, 1, tzinfo=__import__("datetime").timezone.utc))
    assert (store / "permanent" / "bash-note.md").read_text().endswith("\n---\n\nBody of the note.\n")
    edges = env.ok("edges", "bash-note", "--json").json()
    assert any(edge["neighbour"] == "other-note" and edge["label"] == "builds-on" and edge["direction"] == "outgoing"
               for edge in edges["edges"])
    assert env.ok("read", "other-note", "--json").json()["title"] == "Fix: quote the colon of other-note"
    env.unchecked.update(store.rglob("*"))  # the earlier plugin's layout and formats
