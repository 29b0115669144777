"""`memory export` / `memory import`: one JSON document; round trips; other sources (a store
directory, the earlier plugin's store, Claude Code's auto memory)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import predecessor_store
from helpers import Env, schema_errors, snapshot


def exported(env: Env, *args: str) -> dict:
    document = env.ok("export", *args).json()
    assert schema_errors(document, "export") == []
    return document


def comparable(document: dict) -> tuple[dict, set]:
    """Memories (fields, content, status, where they lie) and edges of a one-scope export."""
    (part,) = document["scopes"]
    memories = {item["slug"]: (item["fields"], item["content"], item["status"], item["path"])
                for item in part["memories"]}
    return memories, {(edge["source"], edge["target"], edge["label"]) for edge in part["edges"]}


def seed(env: Env) -> None:
    env.ok("write", "API uses OAuth2", "--type", "decision", "--tags", "auth,api", "--content", "PKCE everywhere.")
    env.ok("write", "Token refresh", "--type", "learning", "--tags", "auth", "--content", "Refresh 60 s early.")
    env.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    env.ok("write", "Old approach", "--type", "decision", "--tags", "auth", "--content", "Sessions in cookies.")
    env.ok("update", "decision-old-approach", "--status", "archived")
    env.ok("link", "decision-api-uses-oauth2", "learning-token-refresh", "--label", "implements")
    env.ok("link", "decision-api-uses-oauth2", "hub-auth", "--label", "part-of")
    env.ok("link", "learning-token-refresh", "hub-auth", "--label", "part-of")
    env.ok("task", "add", "--title", "Ship login")


def test_round_trip_into_an_empty_scope_keeps_memories_fields_and_edges(env: Env) -> None:
    seed(env)
    document = exported(env, "--scope", "project")
    assert document["scopes"][0]["tasks"][0]["title"] == "Ship login"
    path = env.root / "team.json"
    path.write_text(json.dumps(document))
    result = env.ok("import", str(path), "--scope", "global", "--json").json()
    assert sorted(result["added"]) == sorted(item["slug"] for item in document["scopes"][0]["memories"])
    again = exported(env, "--scope", "global")
    assert comparable(again) == comparable(document)
    for item in document["scopes"][0]["memories"]:
        assert (env.global_dir / item["path"]).read_text() == item["text"], "files come back byte for byte"
    before = snapshot(env.global_dir)
    second = env.ok("import", str(path), "--scope", "global", "--json").json()
    assert second["added"] == second["replaced"] == [] and len(second["unchanged"]) == len(result["added"])
    assert snapshot(env.global_dir) == before, "a second import changes nothing"


def test_round_trip_of_a_store_of_the_earlier_plugin(env: Env) -> None:
    store = predecessor_store.build(env.project_dir, memories=80, edges=100)
    env.unchecked.update(env.project_dir.rglob("*"))
    document = exported(env, "--scope", "project")
    path = env.root / "old.json"
    path.write_text(json.dumps(document))
    env.ok("import", str(path), "--scope", "global")
    env.unchecked.update(env.global_dir.rglob("*"))
    again = exported(env, "--scope", "global")
    assert comparable(again) == comparable(document)
    assert len(again["scopes"][0]["memories"]) == len(store.memories)
    graph = json.loads((env.global_dir / "graph.json").read_text())
    assert {(edge["source"], edge["target"]) for edge in graph["edges"]} >= {
        (source, target) for source, target, _ in store.edges}
    assert env.ok("import", str(path), "--scope", "global", "--json").json()["edgesAdded"] == []


def test_merge_keeps_the_newer_copy_and_reports_it(env: Env) -> None:
    seed(env)
    document = exported(env, "--scope", "project")
    env.ok("update", "learning-token-refresh", "--append", "Ours changed later.")
    older = dict(document["scopes"][0]["memories"][0])
    newer_slug = "decision-api-uses-oauth2"
    for item in document["scopes"][0]["memories"]:
        if item["slug"] == newer_slug:
            item["text"] = item["text"].replace("PKCE everywhere.", "PKCE everywhere, also for CLIs.")
            item["text"] = re.sub(r'updated: "[^"]+"', 'updated: "2099-01-01T00:00:00Z"', item["text"])
            item["updated"] = "2099-01-01T00:00:00Z"
    path = env.root / "merge.json"
    path.write_text(json.dumps(document))
    dry = env.ok("import", str(path), "--dry-run", "--json").json()
    before = snapshot(env.project_dir)
    assert dry["replaced"] == [newer_slug] and "learning-token-refresh" in dry["kept"]
    assert snapshot(env.project_dir) == before, "--dry-run changes nothing"
    result = env.ok("import", str(path))
    assert f"replaced: {newer_slug}" in result.out and "kept: learning-token-refresh" in result.out
    assert "also for CLIs" in env.ok("read", newer_slug).out
    assert "Ours changed later." in env.ok("read", "learning-token-refresh").out
    assert older


def test_an_invalid_document_is_refused_and_nothing_is_written(env: Env) -> None:
    env.ok("write", "Keep me", "--tags", "x")
    before = snapshot(env.project_dir)
    for content in ("not json", json.dumps({"format": "something-else", "version": 1, "scopes": []}),
                    json.dumps({"format": "claude-memory-export", "version": 1,
                                "scopes": [{"scope": "x", "memories": [{"slug": "../etc/passwd", "type": "learning",
                                                                        "title": "t"}], "edges": []}]})):
        path = env.root / "bad.json"
        path.write_text(content)
        result = env.fails("import", str(path))
        assert "nothing was imported" in result.err or "not a JSON document" in result.err
    assert snapshot(env.project_dir) == before


def test_imported_text_is_redacted(env: Env) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    document = {"format": "claude-memory-export", "version": 1, "scopes": [{"scope": "project", "memories": [
        {"slug": "learning-deploy-token", "type": "learning", "title": "Deploy token", "tags": ["deploy"],
         "created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z",
         "fields": {"type": "learning", "tags": ["deploy"], "owner": f"uses {secret}"},
         "content": f"The deploy used {secret}.",
         "text": f'---\ntype: learning\ntags: [deploy]\nowner: "uses {secret}"\n---\n\n# Deploy token\n\n'
                 f"The deploy used {secret}.\n"}], "edges": []}]}
    path = env.root / "secret.json"
    path.write_text(json.dumps(document))
    env.ok("import", str(path))
    text = (env.project_dir / "learning-deploy-token.md").read_text()
    assert secret not in text and "Deploy token" in text


def test_a_store_directory_is_imported_without_writing_into_it(env: Env) -> None:
    source = env.root / "old-store"
    store = predecessor_store.build(source, memories=40, edges=40)
    before = snapshot(source)
    result = env.ok("import", str(source), "--scope", "project", "--json").json()
    assert sorted(result["added"]) == sorted(store.memories)
    assert snapshot(source) == before and not (source / ".cache").exists()
    env.unchecked.update(env.project_dir.rglob("*"))
    shown = {(edge["source"], edge["target"], edge["label"])
             for edge in env.ok("graph", "--all", "--json").json()["edges"]}
    assert {edge for edge in store.edges if edge[0] in store.memories and edge[1] in store.memories} <= shown


def test_claude_code_auto_memory_is_imported(env: Env) -> None:
    project_key = re.sub(r"[^A-Za-z0-9-]", "-", str(env.project))
    directory = env.home / ".claude" / "projects" / project_key / "memory"
    directory.mkdir(parents=True)
    (directory / "MEMORY.md").write_text("- [Testing preferences](feedback_testing.md) — use a real DB\n"
                                         "- [Merge freeze](project_freeze.md) — mobile release\n")
    (directory / "feedback_testing.md").write_text(
        "---\nname: Testing preferences\ndescription: use a real database in integration tests, not mocks\n"
        "type: feedback\n---\n\nMocks hid a broken migration last quarter.\n")
    (directory / "project_freeze.md").write_text(
        "---\nname: Merge freeze\ndescription: merges freeze on 2026-03-05 for the mobile release\n"
        "type: project\n---\n\nOnly release fixes after that date.\n")
    dry = env.ok("import", "--auto-memory", "--dry-run", "--json").json()
    assert len(dry["added"]) == 2 and not env.project_dir.exists()
    env.ok("import", "--auto-memory")
    memories = {item["title"]: item for item in env.ok("list", "--json").json()["memories"]}
    assert memories["Testing preferences"]["type"] == "learning"
    assert memories["Merge freeze"]["type"] == "decision"
    assert "claude-auto-memory" in memories["Merge freeze"]["tags"]
    assert "real database" in env.ok("read", memories["Testing preferences"]["slug"]).out
    assert env.ok("import", "--auto-memory", "--json").json()["added"] == []
    missing = env.fails("import", "--auto-memory", env={"CLAUDE_CONFIG_DIR": str(env.root / "elsewhere")})
    assert "no Claude Code auto memory" in missing.err


def test_export_writes_a_file_atomically_and_reports(env: Env) -> None:
    seed(env)
    target = env.root / "out.json"
    result = env.ok("export", "--output", str(target))
    assert str(target) in result.out
    assert schema_errors(json.loads(target.read_text()), "export") == []
    (env.root / "a-file").write_text("")
    refused = env.fails("export", "--output", str(env.root / "a-file" / "x.json"))
    assert "cannot write" in refused.err
    assert not list(Path(env.root).glob("**/.out.json.*.tmp"))


def test_export_writes_to_a_file_named_without_a_directory(env: Env) -> None:
    # the usual form, `memory export --output backup.json`: the file goes into the working directory
    seed(env)
    result = env.ok("export", "--output", "backup.json")
    assert "backup.json" in result.out
    assert schema_errors(json.loads((env.project / "backup.json").read_text()), "export") == []


def test_an_imported_task_never_replaces_a_task_file_that_cannot_be_read(env: Env) -> None:
    """A hand-written tasks/<id>.json that is broken is no task the store knows, but it is a file
    the plugin did not write: the import leaves it as it is and says so."""
    seed(env)
    env.ok("task", "add", "--title", "Ship signup")
    document = exported(env, "--scope", "project")
    for task in document["scopes"][0]["tasks"]:
        task["updatedAt"] = "2099-01-01T00:00:00Z"
    path = env.root / "team.json"
    path.write_text(json.dumps(document))
    broken = env.project_dir / "tasks" / "1.json"
    broken.write_text("{hand-written, broken")
    env.unchecked.add(broken)
    result = env.ok("import", str(path), "--scope", "project", "--json").json()
    assert broken.read_text() == "{hand-written, broken"
    assert any(line.startswith("task 1: ") and "cannot be read" in line for line in result["refused"]), result
    assert result["tasksReplaced"] == ["2"]
