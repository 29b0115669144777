"""US5-5: `memory repair` fixes what can be fixed without guessing, safely and idempotently."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from helpers import Env, snapshot

PLAIN = """---
type: learning
tags:
  - {tags}
created: {created}
updated: {updated}
{extra}---

# {title}

{body}
"""


def hand_write(env: Env, slug: str, *, title: str = "A memory written by hand", tags: str = "notes",
               created: str = '"2026-01-10T10:00:00Z"', updated: str = '"2026-01-10T10:00:00Z"',
               extra: str = "", body: str = "Some body text.") -> Path:
    path = env.project_dir / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAIN.format(tags=tags, created=created, updated=updated, extra=extra, title=title, body=body))
    return path


def fields(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---\n")[1])


def memory_files(env: Env) -> dict[str, bytes]:
    """Memory files and caches: what a dry run must leave alone."""
    return {name: data for name, data in snapshot(env.project_dir).items()
            if name.endswith(".md") or name.startswith(".embedding-cache")}


def test_us5_5_repair_resolves_broken_links_and_missing_index_entries(env: Env) -> None:
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Token refresh", "--tags", "auth", "--links", "hub-auth")
    env.ok("write", "Session store", "--tags", "auth", "--links", "hub-auth,learning-token-refresh")
    (env.project_dir / "learning-token-refresh.md").unlink()  # deleted by hand: links now dangle
    index = env.index(env.project_dir)
    del index["memories"]["learning-session-store"]
    (env.project_dir / "index.json").write_text(json.dumps(index))
    health = env.fails("health", "--json").json()
    assert {problem["kind"] for problem in health["problems"]} >= {"broken-link", "index-drift"}

    result = env.ok("repair")
    assert "drop-link" in result.out and "rewrite-index" not in result.out  # health already rewrote index.json
    assert fields(env.project_dir / "hub-auth.md")["links"] == ["learning-session-store"]
    assert fields(env.project_dir / "learning-session-store.md")["links"] == ["hub-auth"]
    assert set(env.index(env.project_dir)["memories"]) == {"hub-auth", "learning-session-store"}
    after = env.ok("health", "--json").json()
    assert after["errors"] == 0 and not [problem for problem in after["problems"] if problem["fixable"]]


def test_index_drift_is_reported_and_fixed_by_repair(env: Env) -> None:
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    index = env.index(env.project_dir)
    index["memories"]["learning-ghost"] = dict(index["memories"]["hub-auth"], slug="learning-ghost")
    (env.project_dir / "index.json").write_text(json.dumps(index))
    data = env.ok("repair", "--json").json()
    actions = data["scopes"][0]["actions"]
    assert [action["action"] for action in actions] == ["rewrite-index"]
    assert "learning-ghost" not in env.index(env.project_dir)["memories"]


def test_dry_run_prints_the_plan_and_changes_nothing(env: Env) -> None:
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    hand_write(env, "learning-one-way", extra="links:\n  - hub-auth\n  - learning-gone\n", tags="Auth")
    env.unchecked.add(env.project_dir / "learning-one-way.md")
    env.ok("list")
    before = memory_files(env)
    plan = env.ok("repair", "--dry-run")
    assert "would do" in plan.out and "Dry run: no memory or cache file was changed" in plan.out
    assert "add-inverse-link" in plan.out and "drop-link" in plan.out and "normalise-tags" in plan.out
    assert memory_files(env) == before
    planned = env.ok("repair", "--dry-run", "--json").json()
    assert planned["dryRun"] is True and planned["planned"] == 3
    done = env.ok("repair", "--json").json()
    assert done["fixed"] == 3
    assert [action["action"] for action in done["scopes"][0]["actions"]] == \
        [action["action"] for action in planned["scopes"][0]["actions"]]
    assert env.ok("repair", "--json").json()["fixed"] == 0  # a second run finds nothing
    assert not list((env.project_dir / ".cache").glob("repair-backup-*"))  # copies removed after success


def test_dry_run_leaves_index_and_graph_as_found_and_plans_what_repair_does(env: Env) -> None:
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Token refresh", "--tags", "auth", "--links", "hub-auth")
    env.ok("write", "Session store", "--tags", "auth", "--links", "hub-auth,learning-token-refresh")
    (env.project_dir / "learning-token-refresh.md").unlink()  # deleted by hand
    index = env.index(env.project_dir)
    del index["memories"]["hub-auth"]
    (env.project_dir / "index.json").write_text(json.dumps(index))
    before = snapshot(env.project_dir)
    planned = env.ok("repair", "--dry-run", "--json").json()
    assert snapshot(env.project_dir) == before  # index.json and graph.json too
    done = env.ok("repair", "--json").json()
    assert [action["action"] for action in done["scopes"][0]["actions"]] == \
        [action["action"] for action in planned["scopes"][0]["actions"]]
    assert {"rewrite-index", "rewrite-graph", "drop-link"} <= {action["action"] for action in done["scopes"][0]["actions"]}
    assert set(env.index(env.project_dir)["memories"]) == {"hub-auth", "learning-session-store"}
    assert env.ok("repair", "--json").json()["fixed"] == 0


def test_inverse_links_get_the_inverse_label_and_the_rest_of_the_file_is_kept(env: Env) -> None:
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    hub = env.project_dir / "hub-auth.md"
    hub.write_text(hub.read_text().replace("\n---\n", "\ncustom: keep me  # a comment\n---\n", 1))
    path = hand_write(env, "learning-member", extra="links:\n  - hub-auth\nlink-labels:\n  hub-auth: part-of\n")
    before = hub.read_text()
    env.ok("repair")
    after = hub.read_text()
    assert fields(hub)["links"] == ["learning-member"]
    assert fields(hub)["link-labels"] == {"learning-member": "contains"}
    assert "custom: keep me  # a comment\n" in after
    assert fields(hub)["updated"] == yaml.safe_load(before.split("---\n")[1])["updated"]  # repair is not an update
    assert after.split("---\n", 2)[2] == before.split("---\n", 2)[2]  # body untouched
    edges = env.ok("edges", "hub-auth", "--json").json()["edges"]
    assert {(edge["direction"], edge["label"]) for edge in edges} == {("outgoing", "contains"), ("incoming", "part-of")}
    assert path.exists()


def test_renamed_memories_are_re_pointed_through_previous_slugs(env: Env) -> None:
    hand_write(env, "decision-new-name", title="The new name", extra="previous-slugs:\n  - decision-old-name\n")
    hand_write(env, "learning-pointing", extra="links:\n  - decision-old-name\nlink-labels:\n"
               "  decision-old-name: builds-on\n", body="Builds on [[decision-old-name|the old one]].")
    found = [problem for problem in env.fails("health", "--json").json()["problems"]
             if problem["kind"] in ("broken-link", "broken-reference")]
    assert {(problem["kind"], problem["fixable"]) for problem in found} == {("broken-link", True)}
    env.ok("repair")
    pointing = env.project_dir / "learning-pointing.md"
    assert fields(pointing)["links"] == ["decision-new-name"]
    assert fields(pointing)["link-labels"] == {"decision-new-name": "builds-on"}
    assert "Builds on [[decision-new-name|the old one]]." in pointing.read_text()
    assert fields(env.project_dir / "decision-new-name.md")["link-labels"] == {"learning-pointing": "foundation-for"}


def test_ambiguous_renames_are_left_alone(env: Env) -> None:
    for slug in ("decision-one", "decision-two"):
        hand_write(env, slug, extra="previous-slugs: [decision-old]\n")
    hand_write(env, "learning-pointing", extra="links:\n  - decision-old\n")
    broken = [problem for problem in env.fails("health", "--json").json()["problems"]
              if problem["kind"] == "broken-link"]
    assert broken[0]["fixable"] is False and "more than one memory" in broken[0]["hint"]
    env.fails("repair", "--json", code=0)
    assert fields(env.project_dir / "learning-pointing.md")["links"] == ["decision-old"]


def test_frontmatter_is_normalised_without_guessing(env: Env) -> None:
    tags = hand_write(env, "learning-tags", tags="Auth\n  - API_Design")
    stamps = hand_write(env, "learning-stamps", created="2026-01-10T10:00:00Z", updated="2026-01-11 09:00:00+02:00")
    missing = hand_write(env, "learning-missing", updated='"2026-01-12T10:00:00Z"')
    missing.write_text(missing.read_text().replace('created: "2026-01-10T10:00:00Z"\n', ""))
    unknown = hand_write(env, "learning-unknown", created='"next tuesday"')
    env.unchecked |= {tags, missing, unknown}
    env.ok("repair")
    assert fields(tags)["tags"] == ["auth", "api-design"]
    text = stamps.read_text()
    assert 'created: "2026-01-10T10:00:00Z"\n' in text and 'updated: "2026-01-11T07:00:00Z"\n' in text
    created = fields(missing)["created"]
    assert created <= "2026-01-12T10:00:00Z"  # from the file time, never after `updated`
    assert fields(unknown)["created"] == "next tuesday"  # not a timestamp: left for a person
    remaining = {problem["kind"] for problem in env.fails("health", "--json").json()["problems"]
                 if problem["severity"] == "error"}
    assert remaining == {"invalid-frontmatter"}


def test_fields_a_union_merge_wrote_twice_are_merged_once(env: Env) -> None:
    """git's union merge of two clones' changes to one memory can leave `updated`, `links` and
    `link-labels` written twice: the tool reads every copy, health flags it (other YAML readers
    keep only the last copy), and repair writes each field once with every copy's values."""
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Token rotation", "--tags", "auth")
    env.ok("write", "Cookie flags", "--type", "gotcha", "--tags", "auth")
    hub = env.project_dir / "hub-auth.md"
    head, body = hub.read_text().split("---\n")[1:3]
    merged = head.replace('updated: "', 'updated: "2026-01-02T00:00:00Z"\nlinks:\n  - gotcha-cookie-flags\n'
                          'link-labels:\n  gotcha-cookie-flags: contains\nupdated: "', 1)
    merged += "links:\n  - learning-token-rotation\nlink-labels:\n  learning-token-rotation: contains\n"
    hub.write_text("---\n" + merged + "---\n" + body)
    assert set(env.ok("read", "hub-auth", "--json").json()["links"]) == {"gotcha-cookie-flags",
                                                                      "learning-token-rotation"}
    report = env.fails("health", "--json").json()
    repeated = sorted(problem["field"] for problem in report["problems"] if problem["kind"] == "repeated-field")
    assert repeated == ["link-labels", "links", "updated"]
    env.ok("repair")
    written = yaml.safe_load(hub.read_text().split("---\n")[1])  # any YAML reader now sees everything
    assert written["links"] == ["gotcha-cookie-flags", "learning-token-rotation"]
    assert written["link-labels"] == {"gotcha-cookie-flags": "contains", "learning-token-rotation": "contains"}
    assert written["updated"] > "2026-01-02T00:00:00Z"  # the later of the two copies
    assert [line for line in hub.read_text().splitlines() if line.startswith("links:")] == ["links:"]
    env.ok("health")
    assert {"hub-auth"} == {edge["target"] for edge in env.graph(env.project_dir)["gotcha-cookie-flags"]}


def test_edges_only_graph_json_knows_are_written_into_the_files(env: Env) -> None:
    env.ok("write", "Caching layer design", "--type", "decision", "--tags", "cache")
    env.ok("write", "Redis eviction", "--tags", "cache")
    graph = {}  # hand-made: no file declares these edges
    stamp = "2026-01-10T10:00:00Z"
    graph["decision-caching-layer-design"] = [{"target": "learning-redis-eviction", "label": "builds-on",
                                               "timestamp": stamp}]
    graph["learning-redis-eviction"] = [{"target": "decision-caching-layer-design", "label": "foundation-for",
                                         "timestamp": stamp}]
    (env.project_dir / "graph.json").write_text(json.dumps(graph))
    unbacked = [problem for problem in env.ok("health", "--json").json()["problems"]
                if problem["kind"] == "graph-unbacked-edge"]
    assert len(unbacked) == 1 and unbacked[0]["fixable"]
    env.ok("repair")
    assert fields(env.project_dir / "decision-caching-layer-design.md")["link-labels"] == {
        "learning-redis-eviction": "builds-on"}
    assert fields(env.project_dir / "learning-redis-eviction.md")["link-labels"] == {
        "decision-caching-layer-design": "foundation-for"}
    (env.project_dir / "graph.json").unlink()
    (env.project_dir / ".cache" / "catalog.sqlite3").unlink()
    env.ok("reindex")  # nothing lives only in derived data any more
    assert env.graph(env.project_dir)["decision-caching-layer-design"][0]["label"] == "builds-on"


def test_stale_and_orphaned_caches_are_removed_and_memories_never_deleted(env: Env) -> None:
    env.ok("write", "Cache me", "--tags", "cache")
    cache = env.project_dir / ".embedding-cache"
    cache.mkdir(exist_ok=True)
    entry = {"model": "embeddinggemma", "vector": [0.1, 0.2], "contentHash": "0" * 64,
             "timestamp": "2026-01-01T00:00:00Z"}
    (cache / "learning-cache-me.json").write_text(json.dumps({**entry, "slug": "learning-cache-me"}))
    (cache / "learning-gone.json").write_text(json.dumps({**entry, "slug": "learning-gone"}))
    env.ok("reindex")
    count = len(list(env.project_dir.glob("*.md")))
    data = env.ok("repair", "--json").json()
    assert sorted(action["detail"] for action in data["scopes"][0]["actions"]) == [
        "removed learning-cache-me.json (stale)", "removed learning-gone.json (orphaned)"]
    assert not list(cache.glob("*.json"))
    assert env.index(env.project_dir)["memories"]["learning-cache-me"]["hasEmbedding"] is False
    assert len(list(env.project_dir.glob("*.md"))) == count


def test_repair_waits_for_the_scope_lock(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Repair blocks on a held scope lock and changes nothing until it gets it. The wait is
    observed, not timed: the lock's back-off sleep signals that repair is waiting."""
    import threading
    import types

    from _lib.base import fsutil
    from _lib.health import repair
    from _lib.workspace.scopes import Workspace

    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    path = hand_write(env, "learning-member", extra="links:\n  - hub-auth\n")
    env.ok("list")
    waiting = threading.Event()

    def back_off(seconds: float) -> None:
        waiting.set()
        time.sleep(seconds)

    monkeypatch.setattr(fsutil, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=back_off,
                                                              monotonic_ns=time.monotonic_ns, time=time.time))
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(
        repair.repair(Workspace(env.project, env.environ())).as_json()))
    with fsutil.exclusive_lock(env.project_dir / ".cache" / "lock"):
        worker.start()
        assert waiting.wait(timeout=60), "repair never tried the held lock"
        assert worker.is_alive()  # still waiting for the lock
        assert "learning-member" not in (env.project_dir / "hub-auth.md").read_text()
    worker.join(timeout=60)
    assert "add-inverse-link" in json.dumps(outcome)
    assert fields(env.project_dir / "hub-auth.md")["links"] == ["learning-member"] and path.exists()


def test_a_failed_repair_keeps_copies_of_the_files_it_changed(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import errors, fsutil
    from _lib.health import repair
    from _lib.workspace.scopes import Workspace

    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    for slug in ("learning-a", "learning-b"):
        env.unchecked.add(hand_write(env, slug, tags="Upper", extra="links:\n  - hub-auth\n"))
    original = (env.project_dir / "hub-auth.md").read_bytes()
    real = fsutil.write_atomically
    calls = []

    def failing(path: Path, data: bytes | str, **kwargs: object) -> None:
        if path.suffix == ".md":
            calls.append(path)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
        real(path, data, **kwargs)

    monkeypatch.setattr(fsutil, "write_atomically", failing)
    workspace = Workspace(cwd=env.project, env=env.environ())
    with pytest.raises(errors.Error) as raised:
        repair.repair(workspace)
    assert "No space left on device" in raised.value.message and "copies of the files" in raised.value.hint
    backups = list((env.project_dir / ".cache").glob("repair-backup-*"))
    assert len(backups) == 1 and (backups[0] / "hub-auth.md").read_bytes() == original
    monkeypatch.setattr(fsutil, "write_atomically", real)
    env.ok("repair")  # the next run completes the job
    assert env.ok("repair", "--json").json()["fixed"] == 0


def test_help_has_examples(env: Env) -> None:
    out = env.ok("repair", "--help").out
    assert "examples:" in out and "memory repair --dry-run" in out


def test_plain_related_entries_are_re_pointed_too(env: Env) -> None:
    hand_write(env, "decision-new-name", title="The new name", extra="previous-slugs: [decision-old-name]\n")
    path = hand_write(env, "learning-related", extra="related:\n  - decision-old-name\n")
    env.ok("repair")
    assert fields(path)["related"] == ["decision-new-name"]
    assert env.ok("repair", "--json").json()["fixed"] == 0


def test_both_timestamps_missing_are_filled_once(env: Env) -> None:
    path = hand_write(env, "learning-no-times")
    path.write_text(path.read_text().replace('created: "2026-01-10T10:00:00Z"\nupdated: "2026-01-10T10:00:00Z"\n', ""))
    env.unchecked.add(path)
    actions = env.ok("repair", "--json").json()["scopes"][0]["actions"]
    assert [action["action"] for action in actions if action["action"] != "rewrite-index"] == [
        "fill-timestamp", "fill-timestamp"]
    assert fields(path)["created"] == fields(path)["updated"]
