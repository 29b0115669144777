"""The maintenance verbs: rename, move, archive, tag/untag, stats, impact and their bulk forms.

Subprocess runs of bin/memory for the command-line contract (files on disk, exit codes, error
text, git status), in-process tests for the pure link-rewriting rules.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import Env, assert_consistent, snapshot

from _lib.model import frontmatter
from _lib.ops import relink


def fields(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1]) or {}


def body(path: Path) -> str:
    return frontmatter.split(path.read_text(encoding="utf-8")).body


def edge_set(scope_dir: Path) -> set[tuple[str, str, str]]:
    graph = json.loads((scope_dir / "graph.json").read_text())
    return {(source, edge["target"], edge["label"]) for source, edges in graph.items() for edge in edges}


# -- pure rules -----------------------------------------------------------------------------------

def test_wiki_links_are_renamed_in_every_form_and_only_whole_targets() -> None:
    text = ("[[learning-old]] [[learning-old|the old one]] [[learning-old#setup]] [[ learning-old ]] "
            "[[learning-old#s|t]] [[learning-older]] `[[learning-old]]`")
    assert relink.rename_in_text(text, "learning-old", "learning-new") == (
        "[[learning-new]] [[learning-new|the old one]] [[learning-new#setup]] [[ learning-new ]] "
        "[[learning-new#s|t]] [[learning-older]] `[[learning-new]]`")  # code spans too: the graph reads them


def test_rewritten_text_declares_exactly_the_renamed_links() -> None:
    text = "see [[a]], [[old|x]] and [[old#y]], not [[olden]]"
    assert frontmatter.wiki_targets(relink.rename_in_text(text, "old", "new")) == ["a", "new", "olden"]


def test_wiki_links_to_a_memory_left_behind_become_text_that_still_names_it() -> None:
    assert relink.unwiki_in_text("[[x]] [[x|the x]] [[x#part]] [[y]]", "x") == "x the x (x) x#part [[y]]"


def test_field_changes_rename_links_labels_related_and_supersede_fields() -> None:
    fields_ = {"links": ["a", "old"], "link-labels": {"old": "builds-on", "a": "part-of"},
               "related": ["[[old]]", "a"], "superseded-by": "old", "title": "old"}
    changes = relink.field_changes(fields_, "old", "new")
    assert changes == {"links": ["a", "new"], "link-labels": {"new": "builds-on", "a": "part-of"},
                       "related": ["[[new]]", "a"], "superseded-by": "new"}


def test_field_changes_merge_when_the_new_slug_is_already_linked() -> None:
    changes = relink.field_changes({"links": ["new", "old"], "link-labels": {"new": "a", "old": "b"}}, "old", "new")
    assert changes == {"links": ["new"], "link-labels": {"new": ["a", "b"]}}


def test_dropping_a_link_removes_every_declaration() -> None:
    changes, text = relink.drop_links({"links": ["x"], "link-labels": {"x": "blocks"}, "related": ["x"]},
                                      "[[x|why]]", ["x"])
    assert changes["links"] is frontmatter.DELETE and changes["link-labels"] is frontmatter.DELETE
    assert changes["related"] == [] and text == "why (x)"


# -- rename ---------------------------------------------------------------------------------------

def _linked_pair(env: Env) -> None:
    env.ok("write", "Old name", "--slug", "learning-old", "--tags", "a", "--content", "the body")
    env.ok("write", "Linker", "--slug", "learning-linker", "--tags", "a", "--content",
           "see [[learning-old]], [[learning-old|it]] and [[learning-old#part]]")
    env.ok("link", "learning-linker", "learning-old", "--label", "builds-on")


def test_rename_rewrites_links_labels_wiki_links_graph_and_keeps_previous_slugs(env: Env) -> None:
    _linked_pair(env)
    result = env.ok("rename", "learning-old", "learning-new", "--json").json()
    assert result["rewritten"] == ["learning-linker"]
    directory = env.project_dir
    assert not (directory / "learning-old.md").exists()
    assert fields(directory / "learning-new.md")["previous-slugs"] == ["learning-old"]
    assert body(directory / "learning-new.md").strip().endswith("the body")
    linker = fields(directory / "learning-linker.md")
    assert linker["links"] == ["learning-new"] and linker["link-labels"] == {"learning-new": "builds-on"}
    assert "[[learning-new]], [[learning-new|it]] and [[learning-new#part]]" in body(directory / "learning-linker.md")
    assert edge_set(directory) == {("learning-linker", "learning-new", "builds-on"),
                                   ("learning-new", "learning-linker", "foundation-for")}
    assert "learning-old" not in env.index(directory)["memories"]
    assert_consistent(directory)
    read = env.ok("read", "learning-old")  # found through previous-slugs
    assert "the body" in read.out and "renamed to 'learning-new'" in read.err


def test_rename_rewrites_tasks_that_mention_the_memory(env: Env) -> None:
    env.ok("write", "Old name", "--slug", "learning-old", "--tags", "a")
    env.ok("task", "add", "--title", "Apply learning-old everywhere", "--description", "see learning-old; not learning-older")
    env.ok("rename", "learning-old", "learning-new")
    task = json.loads((env.project_dir / "tasks" / "1.json").read_text())
    assert task["title"] == "Apply learning-new everywhere"
    assert task["description"] == "see learning-new; not learning-older"


def test_rename_dry_run_shows_a_diff_and_changes_nothing(env: Env) -> None:
    _linked_pair(env)
    before = snapshot(env.project_dir)
    result = env.ok("rename", "learning-old", "learning-new", "--dry-run")
    assert "+++ b/learning-new.md" in result.out and "-  - learning-old" in result.out
    assert "--- a/learning-old.md" in result.out and "nothing was changed" in result.out
    assert snapshot(env.project_dir) == before


@pytest.mark.parametrize("new, message", [("learning-linker", "already exists"), ("Not_A_Slug", "invalid slug"),
                                          ("index", "reserved")])
def test_rename_to_a_taken_or_invalid_slug_is_refused_and_changes_nothing(env: Env, new: str, message: str) -> None:
    _linked_pair(env)
    before = snapshot(env.project_dir)
    result = env.fails("rename", "learning-old", new)
    assert message in result.err.splitlines()[0] and result.err.splitlines()[1].startswith("hint: ")
    assert snapshot(env.project_dir) == before


def test_rename_of_a_missing_memory_and_usage_errors(env: Env) -> None:
    env.ok("write", "Some", "--slug", "learning-some", "--tags", "a")
    assert "no memory 'learning-nope'" in env.fails("rename", "learning-nope", "learning-x").err
    env.fails("rename", "learning-some", code=2)


def test_an_interrupted_rename_is_finished_by_running_it_again(env: Env) -> None:
    _linked_pair(env)
    old = env.project_dir / "learning-old.md"
    text = old.read_text()
    # what a process killed after writing NEW.md (and before the links and OLD.md) leaves
    new_text = text.replace("link-labels:", "previous-slugs:\n  - learning-old\nlink-labels:")
    (env.project_dir / "learning-new.md").write_text(new_text)
    env.ok("rename", "learning-old", "learning-new")
    assert not old.exists()
    assert fields(env.project_dir / "learning-linker.md")["links"] == ["learning-new"]
    assert_consistent(env.project_dir)


# -- move -----------------------------------------------------------------------------------------

def _git(env: Env, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=env.project,
                          capture_output=True, text=True, check=True).stdout


def test_move_into_the_project_is_one_new_file_with_provenance_and_links_left_as_text(env: Env) -> None:
    env.ok("write", "Stays", "--slug", "learning-stays", "--tags", "a", "--scope", "global")
    env.ok("write", "Mover", "--slug", "learning-mover", "--tags", "a", "--scope", "global",
           "--links", "learning-stays", "--content", "see [[learning-stays|the other]]")
    env.ok("write", "Shared", "--slug", "learning-shared", "--tags", "a")
    _git(env, "add", "-A")
    _git(env, "commit", "-qm", "start")
    result = env.ok("move", "learning-mover", "--to", "project", "--json").json()
    moved = result["moved"][0]
    assert moved["linksLeftBehind"] == [{"slug": "learning-stays", "label": "relates-to"}]
    assert moved["unlinked"] == ["learning-stays"]
    assert _git(env, "status", "--porcelain").splitlines() == ["?? .claude/memory/learning-mover.md"]
    arrived = env.project_dir / "learning-mover.md"
    head = fields(arrived)
    assert head["promoted-from"] == "global:learning-mover" and head["promoted-at"].endswith("Z")
    assert not head.get("links")
    text = body(arrived)
    assert "see the other (learning-stays)" in text and "relates-to learning-stays" in text
    assert not (env.global_dir / "learning-mover.md").exists()
    assert not fields(env.global_dir / "learning-stays.md").get("links")
    assert_consistent(env.project_dir)
    assert_consistent(env.global_dir)


def test_move_copy_keeps_the_original_and_its_links(env: Env) -> None:
    env.ok("write", "Stays", "--slug", "learning-stays", "--tags", "a", "--scope", "global")
    env.ok("write", "Mover", "--slug", "learning-mover", "--tags", "a", "--scope", "global", "--links", "learning-stays")
    before = snapshot(env.global_dir)
    env.ok("move", "learning-mover", "--to", "project", "--copy")
    assert {k: v for k, v in snapshot(env.global_dir).items() if k.endswith(".md")} == \
        {k: v for k, v in before.items() if k.endswith(".md")}
    assert fields(env.project_dir / "learning-mover.md")["promoted-from"] == "global:learning-mover"


def test_move_to_a_taken_slug_is_refused_with_a_hint_and_dry_run_changes_nothing(env: Env) -> None:
    env.ok("write", "Mine", "--slug", "learning-same", "--tags", "a", "--scope", "global")
    env.ok("write", "Theirs", "--slug", "learning-same", "--tags", "a")
    env.ok("write", "Other", "--slug", "learning-other", "--tags", "a", "--scope", "global")
    before = snapshot(env.global_dir), snapshot(env.project_dir)
    refused = env.fails("move", "learning-same", "--to", "project", "--scope", "global")
    assert "already exists in the project scope" in refused.err and "memory rename learning-same" in refused.err
    dry = env.ok("move", "learning-other", "--to", "project", "--dry-run")
    assert "+++ b/learning-other.md" in dry.out and "+promoted-from" in dry.out
    assert (snapshot(env.global_dir), snapshot(env.project_dir)) == before
    assert "already in the global scope" in env.fails("move", "learning-other", "--to", "global").err


def test_bulk_move_by_tag_keeps_links_among_the_moved_and_needs_confirmation(env: Env) -> None:
    for name in ("a", "b", "c"):
        env.ok("write", f"Note {name}", "--slug", f"learning-{name}", "--tags", "auth" if name != "c" else "other",
               "--scope", "global")
    env.ok("link", "learning-a", "learning-b", "--label", "builds-on")
    env.ok("link", "learning-a", "learning-c")
    before = snapshot(env.global_dir)
    refused = env.fails("move", "--tag", "auth", "--to", "project")  # no tty, no --yes
    assert "2 memories would move to the project scope" in refused.err and "--yes" in refused.err
    assert "learning-a: global -> project would move" in refused.out
    assert snapshot(env.global_dir) == before
    env.ok("move", "--tag", "auth", "--to", "project", "--yes")
    assert ("learning-a", "learning-b", "builds-on") in edge_set(env.project_dir)
    assert "learning-c" not in fields(env.project_dir / "learning-a.md")["links"]
    assert sorted(path.stem for path in env.global_dir.glob("learning-*.md")) == ["learning-c"]
    assert_consistent(env.project_dir)
    assert_consistent(env.global_dir)


def test_move_redacts_secrets_a_hand_written_file_holds(env: Env) -> None:
    env.global_dir.mkdir(parents=True)
    (env.global_dir / "learning-key.md").write_text(
        "---\ntype: learning\ntags: [a]\ncreated: \"2026-01-01T00:00:00Z\"\nupdated: \"2026-01-01T00:00:00Z\"\n---\n\n"
        "# Key\n\naws key AKIAZ7Q3KX9LM2PW4RTB here\n")
    moved = env.ok("move", "learning-key", "--to", "project")
    assert "AKIAZ7Q3KX9LM2PW4RTB" not in (env.project_dir / "learning-key.md").read_text()
    assert "[REDACTED:aws-access-key]" in (env.project_dir / "learning-key.md").read_text()
    assert "redacted" in moved.err


# -- archive, tag, untag --------------------------------------------------------------------------

def test_archive_and_undo(env: Env) -> None:
    env.ok("write", "Old", "--slug", "breadcrumb-old", "--type", "breadcrumb", "--tags", "a")
    env.ok("archive", "breadcrumb-old")
    assert fields(env.project_dir / "breadcrumb-old.md")["status"] == "archived"
    assert "Already as asked" in env.ok("archive", "breadcrumb-old").out
    assert [item["slug"] for item in env.ok("list", "--status", "archived", "--json").json()["memories"]] == \
        ["breadcrumb-old"]
    env.ok("archive", "breadcrumb-old", "--undo")
    assert "status" not in fields(env.project_dir / "breadcrumb-old.md")


def test_archive_in_an_adopted_store_moves_the_file_to_its_archive_folder(env: Env) -> None:
    store = env.project_dir
    (store / "permanent").mkdir(parents=True)
    (store / "archive").mkdir()
    text = "---\nid: old-note\ntitle: Old note\ntype: learning\ntags: [a]\ncreated: \"2026-01-01T00:00:00Z\"\n---\n\nBody\n"
    (store / "permanent" / "old-note.md").write_text(text)
    env.ok("archive", "old-note")
    assert not (store / "permanent" / "old-note.md").exists()
    assert (store / "archive" / "old-note.md").read_text() == text  # moved unchanged
    assert env.ok("read", "old-note", "--json").json()["status"] == "archived"
    env.ok("archive", "old-note", "--undo")
    assert (store / "permanent" / "old-note.md").exists() and not (store / "archive" / "old-note.md").exists()


def test_tag_and_untag_validate_and_refuse_leaving_no_tag(env: Env) -> None:
    env.ok("write", "Note", "--slug", "learning-note", "--tags", "a")
    env.ok("tag", "learning-note", "b,c")
    assert fields(env.project_dir / "learning-note.md")["tags"] == ["a", "b", "c"]
    before = snapshot(env.project_dir)
    assert "invalid tag" in env.fails("tag", "learning-note", "Bad Tag").err
    assert "no tags left" in env.fails("untag", "learning-note", "a,b,c").err
    assert snapshot(env.project_dir) == before
    env.ok("untag", "learning-note", "b")
    assert fields(env.project_dir / "learning-note.md")["tags"] == ["a", "c"]
    env.fails("tag", "learning-note", code=2)


def test_bulk_tag_by_type_dry_run_then_yes(env: Env) -> None:
    env.ok("write", "G1", "--slug", "gotcha-one", "--type", "gotcha", "--tags", "a")
    env.ok("write", "G2", "--slug", "gotcha-two", "--type", "gotcha", "--tags", "a")
    env.ok("write", "L", "--slug", "learning-l", "--tags", "a")
    before = snapshot(env.project_dir)
    dry = env.ok("tag", "--type", "gotcha", "review", "--dry-run", "--json").json()
    assert dry["count"] == 2 and "+  - review" in dry["diff"]
    assert snapshot(env.project_dir) == before
    env.ok("tag", "--type", "gotcha", "review", "--yes")
    assert [f"gotcha-{n}" for n in ("one", "two")] == sorted(
        path.stem for path in env.project_dir.glob("*.md") if "review" in fields(path)["tags"])


# -- stats, impact, bulk link and delete -----------------------------------------------------------

def test_stats_counts_hubs_sinks_and_orphans(env: Env) -> None:
    env.ok("write", "Hub", "--slug", "hub-auth", "--type", "hub", "--tags", "a")
    for name in ("x", "y"):
        env.ok("write", name, "--slug", f"learning-{name}", "--tags", "a")
        env.ok("link", f"learning-{name}", "hub-auth", "--label", "part-of")
    env.ok("write", "Alone", "--slug", "learning-alone", "--tags", "a", "--scope", "global")
    (env.project_dir / "learning-sink.md").write_text(
        "---\ntype: learning\ntags: [a]\ncreated: \"2026-01-01T00:00:00Z\"\nupdated: \"2026-01-01T00:00:00Z\"\n---\n\n# Sink\n")
    (env.project_dir / "learning-x.md").write_text((env.project_dir / "learning-x.md").read_text() + "\n[[learning-sink]]\n")
    stats = env.ok("stats", "--json").json()
    assert stats["total"] == 5 and stats["byScope"] == {"project": 4, "global": 1}
    assert stats["byType"] == {"hub": 1, "learning": 4}
    assert stats["hubs"][0] == {"scope": "project", "slug": "hub-auth", "links": 2}
    assert stats["orphans"] == [{"scope": "global", "slug": "learning-alone"}]
    assert stats["sinks"] == [{"scope": "project", "slug": "learning-sink"}]
    assert stats["stalest"][0]["slug"] == "learning-sink"
    assert "hubs: hub-auth (2)" in env.ok("stats").out


def test_impact_lists_links_by_depth_and_what_would_break(env: Env) -> None:
    env.ok("write", "Target", "--slug", "learning-target", "--tags", "a")
    env.ok("write", "Hub", "--slug", "hub-only", "--type", "hub", "--tags", "a", "--links", "learning-target")
    env.ok("write", "Far", "--slug", "learning-far", "--tags", "a", "--content", "see [[hub-only]]")
    env.ok("task", "add", "--title", "Revisit learning-target")
    result = env.ok("impact", "learning-target", "--json").json()
    assert result["linkedFrom"] == [{"depth": 1, "slugs": ["hub-only"]}, {"depth": 2, "slugs": ["learning-far"]}]
    broken = result["wouldBreak"]
    assert broken["danglingLinks"] == [{"slug": "hub-only", "label": "relates-to"}]
    assert broken["emptiedHubs"] == [] and broken["tasks"] == ["1"]
    assert env.ok("impact", "learning-target", "--depth", "1", "--json").json()["linkedFrom"] == \
        [{"depth": 1, "slugs": ["hub-only"]}]
    assert "no memory" in env.fails("impact", "learning-nothing").err


def test_bulk_link_and_delete(env: Env) -> None:
    env.ok("write", "Hub", "--slug", "hub-auth", "--type", "hub", "--tags", "hub")
    for name in ("x", "y"):
        env.ok("write", name, "--slug", f"learning-{name}", "--tags", "auth")
    env.ok("link", "--tag", "auth", "hub-auth", "--label", "part-of", "--yes")
    assert {("learning-x", "hub-auth", "part-of"), ("learning-y", "hub-auth", "part-of")} <= edge_set(env.project_dir)
    env.fails("delete", "--tag", "auth")  # not confirmed
    assert (env.project_dir / "learning-x.md").exists()
    env.ok("delete", "--tag", "auth", "--yes")
    assert not list(env.project_dir.glob("learning-*.md"))
    assert not fields(env.project_dir / "hub-auth.md").get("links")
    assert_consistent(env.project_dir)
    env.fails("delete", code=2)
