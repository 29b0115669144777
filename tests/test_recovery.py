"""Loss made recoverable: every memory's last known content is journalled outside the memory
directories; `memory delete` goes to a trash; what is deleted or changed outside the tool is
noticed by the next command or hook, reported once, and `memory restore` brings it back byte
for byte."""

from __future__ import annotations

import json
import shutil
import sqlite3

from helpers import Env, snapshot


def seed(env: Env) -> dict[str, bytes]:
    env.ok("write", "Token refresh", "--tags", "auth", "--content", "Refresh tokens 60 s before expiry.")
    env.ok("write", "OAuth2 everywhere", "--type", "decision", "--tags", "auth", "--content", "PKCE for all clients.")
    env.ok("write", "Cache TTL", "--tags", "cache", "--content", "Five minutes for sessions.")
    env.ok("link", "decision-oauth2-everywhere", "learning-token-refresh", "--label", "implements")
    return memory_files(env)


def memory_files(env: Env) -> dict[str, bytes]:
    return {name: data for name, data in snapshot(env.project_dir).items()
            if name.endswith(".md") and name != "index.md"}


def test_files_removed_by_a_shell_command_are_reported_once_and_restored_byte_for_byte(env: Env) -> None:
    files = seed(env)
    for name in ("learning-token-refresh.md", "learning-cache-ttl.md"):
        (env.project_dir / name).unlink()  # rm, git clean, a careless script...
    first = env.ok("list")
    assert "learning-token-refresh.md was deleted outside the memory tool" in first.err
    assert "memory restore learning-token-refresh" in first.err
    assert "deleted outside" not in env.ok("list").err, "reported once"
    listed = env.ok("trash", "--json").json()["kept"]
    assert {(item["slug"], item["kind"]) for item in listed} >= {("learning-token-refresh", "deleted"),
                                                                 ("learning-cache-ttl", "deleted")}
    assert "learning-cache-ttl" in env.ok("restore", "--all", "--dry-run").out
    assert not (env.project_dir / "learning-cache-ttl.md").exists()
    result = env.ok("restore", "--all", "--json").json()
    assert {item["slug"] for item in result["restored"]} == {"learning-token-refresh", "learning-cache-ttl"}
    for name in ("learning-token-refresh.md", "learning-cache-ttl.md"):
        assert (env.project_dir / name).read_bytes() == files[name]
    assert "learning-token-refresh" in env.ok("list").out
    assert env.ok("restore", "--all").out.startswith("Nothing to restore")


def test_the_whole_memory_directory_removed_comes_back(env: Env) -> None:
    files = seed(env)
    shutil.rmtree(env.project_dir)  # rm -rf .claude/memory
    result = env.ok("list")
    assert result.err.count("was deleted outside the memory tool") == 3
    env.ok("restore", "--all")
    assert memory_files(env) == files
    edges = env.ok("edges", "decision-oauth2-everywhere", "--json").json()["edges"]
    assert ("outgoing", "implements", "learning-token-refresh") in {
        (edge["direction"], edge["label"], edge["neighbour"]) for edge in edges}


def test_a_change_outside_the_tool_keeps_the_previous_version(env: Env) -> None:
    files = seed(env)
    path = env.project_dir / "learning-cache-ttl.md"
    path.write_text(path.read_text().replace("Five minutes", "Ten minutes"))  # an editor, git checkout ...
    changed = path.read_bytes()
    assert "learning-cache-ttl.md was changed outside the memory tool" in env.ok("list").err
    env.ok("restore", "learning-cache-ttl")
    assert path.read_bytes() == files["learning-cache-ttl.md"]
    env.ok("restore", "learning-cache-ttl")  # the version it replaced is kept too
    assert path.read_bytes() == changed


def test_memory_delete_goes_to_the_trash_and_restore_brings_links_back(env: Env) -> None:
    files = seed(env)
    env.ok("delete", "learning-token-refresh")
    trash = env.ok("trash")
    assert "memory delete" in trash.out and "learning-token-refresh" in trash.out
    restored = env.ok("restore", "learning-token-refresh")
    assert "links again" in restored.out
    text = (env.project_dir / "learning-token-refresh.md").read_bytes()
    assert text == files["learning-token-refresh.md"], "the file as it was last seen"
    edges = env.ok("edges", "learning-token-refresh", "--json").json()["edges"]
    assert ("incoming", "implements", "decision-oauth2-everywhere") in {
        (edge["direction"], edge["label"], edge["neighbour"]) for edge in edges}
    env.ok("delete", "learning-cache-ttl")
    assert env.ok("trash", "--purge", "learning-cache-ttl").out.startswith("Purged 1")
    assert "learning-cache-ttl" not in env.ok("trash").out
    env.fails("restore", "learning-cache-ttl")


def test_a_slug_taken_again_is_not_overwritten(env: Env) -> None:
    seed(env)
    (env.project_dir / "learning-cache-ttl.md").unlink()
    env.ok("list")
    env.ok("write", "Cache TTL", "--tags", "cache", "--content", "A new memory with the old slug.")
    refused = env.fails("restore", "learning-cache-ttl")
    assert "exists again" in refused.err
    assert "A new memory" in (env.project_dir / "learning-cache-ttl.md").read_text()


def test_hooks_tell_claude_what_a_command_deleted(env: Env) -> None:
    seed(env)
    common = {"session_id": "s-loss", "cwd": str(env.project), "transcript_path": str(env.root / "t.jsonl")}
    env.hook("start-memory-index", {**common, "hook_event_name": "SessionStart", "source": "startup"})
    (env.project_dir / "learning-cache-ttl.md").unlink()
    bash = {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm .claude/memory/learning-cache-ttl.md"},
            "tool_response": {"stdout": "", "stderr": ""}}
    answer = json.loads(env.hook("memory-context-bash", bash))
    text = answer["hookSpecificOutput"]["additionalContext"]
    assert "learning-cache-ttl.md was deleted outside the memory tool" in text
    assert "memory restore learning-cache-ttl" in text
    assert env.hook("memory-context-bash", bash) == "", "told once"


def test_the_journal_stays_within_its_bound(env: Env) -> None:
    seed(env)
    env.ok("config", "journal.maxMegabytes", "0.0001", "--scope", "global")
    for number in range(5):
        env.ok("write", f"Throwaway {number}", "--tags", "x", "--content", f"padding {number} " * 200)
        env.ok("delete", f"learning-throwaway-{number}")
    assert len(env.ok("trash", "--json").json()["kept"]) == 5, "losses within the last hour always stay"
    database = env.home / ".cache" / "claude-memory" / "journal.sqlite3"
    with sqlite3.connect(database) as conn:  # as if they were deleted two days ago
        conn.execute("UPDATE kept SET at = at - 2 * 86400")
    env.ok("write", "Throwaway new", "--tags", "x", "--content", "padding new " * 200)
    env.ok("delete", "learning-throwaway-new")
    kept = env.ok("trash", "--json").json()["kept"]
    assert [item["slug"] for item in kept] == ["learning-throwaway-new"], "the oldest copies went first"
    (env.project_dir / "learning-cache-ttl.md").unlink()
    env.ok("list")
    assert env.ok("restore", "learning-cache-ttl").code == 0, "what is seen now is always kept"


def test_many_memories_gone_at_once_are_summed_up_not_listed(env: Env) -> None:
    for number in range(30):
        env.ok("write", f"Note number {number}", "--tags", "bulk", "--content", f"body {number}")
    for path in env.project_dir.glob("learning-note-number-*.md"):
        path.unlink()
    result = env.ok("list")
    assert result.err.count("was deleted outside the memory tool") == 10
    assert "20 more memories were deleted or changed outside the memory tool" in result.err
    assert "memory restore --all" in result.err
    assert len(env.ok("restore", "--all", "--json").json()["restored"]) == 30
