"""Reading commands verify what they touch: the files they return and the scope directory's stamps.

Files that come, go or are replaced (editors and `sed -i` rename a new file over the old one)
show at once; a file edited in place shows when a command returns it, when a mutation
touches it, and after the background maintenance step (or health, or reindex).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers import Env, memory_text



def _edit_in_place(path: Path, text: str) -> None:
    """Rewrite a file through the same inode with its old mtime: only its size and content tell."""
    stat = path.stat()
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text)
        handle.truncate()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_ino == stat.st_ino


def _titles(env: Env) -> dict[str, str]:
    return {slug: entry["title"] for slug, entry in env.index(env.project_dir)["memories"].items()}


def test_new_and_deleted_files_show_at_once(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    (env.project_dir / "learning-pulled.md").write_text(memory_text("Pulled", body="okapi"))
    assert "learning-pulled" in env.ok("list", "--limit", "5").out
    assert env.ok("search", "okapi", "--json").json()["count"] == 1
    assert "learning-pulled" in _titles(env)
    (env.project_dir / "learning-pulled.md").unlink()
    assert "learning-pulled" not in env.ok("list").out
    assert "learning-pulled" not in _titles(env)
    assert env.ok("search", "okapi", "--json").json()["count"] == 0


def test_replaced_file_shows_at_once_even_when_not_returned(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a", "--content", "narwhal")
    env.ok("write", "Other", "--tags", "b")
    path = env.project_dir / "learning-seed.md"
    replacement = env.project_dir / "replacement.tmp"
    replacement.write_text(memory_text("Seed replaced", body="platypus"))
    os.replace(replacement, path)  # how most editors save
    # a search for the new word finds it: the directory's stamp changed, the new inode is read
    assert env.ok("search", "platypus", "--json").json()["count"] == 1
    assert env.ok("search", "narwhal", "--json").json()["count"] == 0
    assert _titles(env)["learning-seed"] == "Seed replaced"


def test_sed_in_place_shows_at_once(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a", "--content", "aardvark")
    path = env.project_dir / "learning-seed.md"
    subprocess.run(["sed", "-i", "s/aardvark/pangolin/", str(path)], check=True)
    assert env.ok("search", "pangolin", "--json").json()["count"] == 1
    assert env.ok("search", "aardvark", "--json").json()["count"] == 0


def test_in_place_edit_of_a_returned_file_is_taken_in(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    path = env.project_dir / "learning-seed.md"
    _edit_in_place(path, memory_text("Seed, edited in place"))
    listed = env.ok("list", "--json").json()
    rows = listed if isinstance(listed, list) else listed["memories"]
    assert [row["title"] for row in rows if row["slug"] == "learning-seed"] == ["Seed, edited in place"]
    assert _titles(env)["learning-seed"] == "Seed, edited in place"


def test_in_place_edit_of_an_untouched_file_waits_for_a_mutation_of_it(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    env.ok("write", "Other", "--tags", "b")
    path = env.project_dir / "learning-seed.md"
    _edit_in_place(path, memory_text("Seed, edited in place", body="quokka"))
    env.ok("edges", "learning-other")  # returns another memory: the edit is not looked for
    assert _titles(env)["learning-seed"] == "Seed"
    env.ok("link", "learning-other", "learning-seed")  # a mutation checks the files it touches
    assert _titles(env)["learning-seed"] == "Seed, edited in place"
    assert "learning-other" in path.read_text()  # the back link was added to the edited text
    assert "quokka" in path.read_text()


def test_in_place_edit_of_an_untouched_file_is_found_by_maintenance(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    env.ok("write", "Other", "--tags", "b")
    _edit_in_place(env.project_dir / "learning-seed.md", memory_text("Seed, edited in place", body="wombat"))
    env.ok("write", "Third", "--tags", "c")  # a mutation of something else leaves it
    assert _titles(env)["learning-seed"] == "Seed"
    result = subprocess.run(["sh", str(Path(__file__).resolve().parent.parent / "hooks" / "run"), "maintenance"],
                            input=b'{"hook_event_name": "SessionStart", "source": "startup", "session_id": "s1", '
                                  b'"cwd": "' + str(env.project_dir.parent.parent).encode() + b'"}',
                            env=env.environ(CLAUDE_PROJECT_DIR=str(env.project_dir.parent.parent)),
                            capture_output=True, cwd=env.project_dir.parent.parent)
    assert result.returncode == 0, result.stderr
    assert _titles(env)["learning-seed"] == "Seed, edited in place"
    assert env.ok("search", "wombat", "--json").json()["count"] == 1


def test_a_hook_facing_a_pull_answers_partially_and_the_next_is_complete(tmp_path: Path) -> None:
    """1,000 files arrive by hand (a `git pull`): the prompt hook answers from the catalog as it is,
    says so in its log and leaves the work to a detached catch-up; after it (or the next command
    doing it first) the catalog is complete and the next hook is whole again."""
    from hookenv import Hooks

    hooks = Hooks(tmp_path)
    hooks.memory("write", "Seed memory about rollbacks", "--tags", "deploy")
    for number in range(1000):
        (hooks.memory_dir / f"learning-pulled-{number}.md").write_text(
            memory_text(f"Pulled note {number}", body="okapi yodelling rota" if number == 7 else "zebu herding"))
    log = hooks.data / "hooks.log"
    before = log.read_text() if log.exists() else ""
    result = hooks.run("memory-prompt-context", hooks.prompt("How does the okapi yodelling rota work?"))
    assert result.code == 0, result.err
    first = log.read_text()[len(before):]
    assert "partial answer: 1000 memory files" in first, first
    listed = json.loads(hooks.memory("list", "--json"))
    rows = listed if isinstance(listed, list) else listed["memories"]
    assert len(rows) == 1001
    assert len(json.loads((hooks.memory_dir / "index.json").read_text())["memories"]) == 1001
    result = hooks.run("memory-prompt-context", hooks.prompt("How does the okapi yodelling rota work?"))
    assert result.code == 0
    assert "partial" not in log.read_text()[len(before) + len(first):]
    assert "learning-pulled-7," in (result.context("UserPromptSubmit") or "")


def test_the_first_command_after_a_pull_says_it_is_catching_up(env: Env) -> None:
    env.ok("write", "Seed", "--tags", "a")
    for number in range(400):
        (env.project_dir / f"learning-pulled-{number}.md").write_text(memory_text(f"Pulled {number}"))
    result = env.ok("list", "--limit", "3")
    assert "note: project scope: reading 400 memory files changed since the catalog last saw them" in result.err
    assert "reading" not in env.ok("list", "--limit", "3").err


def test_a_reading_command_finishes_the_export_a_killed_process_left(env: Env) -> None:
    """A process killed after recording a memory in the catalog but before patching index.json and
    graph.json leaves them marked pending; the next command, even one that only reads, exports."""
    from _lib.catalog.catalog import open_catalog
    from _lib.model import memory
    from _lib.workspace.scopes import Workspace

    env.ok("write", "Seed", "--tags", "a")
    env.ok("write", "Other", "--tags", "a")
    env.ok("link", "learning-seed", "learning-other")  # graph.json exists, as the catalog last wrote it
    workspace = Workspace(env.project, env.environ())
    scope = workspace.readable_scopes("project")[0]
    path = env.project_dir / "learning-recorded-only.md"
    with open_catalog(workspace, scope) as catalog:
        assert catalog is not None
        with catalog.locked(touching=()):
            path.write_text(memory_text("Recorded only", body="[[learning-seed]]"))
            catalog.record(memory.read_file(path, scope.name, root=scope.root))
        # killed here: the catalog holds the memory, the exports do not
    assert "learning-recorded-only" not in _titles(env)
    env.ok("list", "--limit", "1")
    assert _titles(env)["learning-recorded-only"] == "Recorded only"
    assert {edge["target"] for edge in env.graph(env.project_dir)["learning-seed"]} == {
        "learning-other", "learning-recorded-only"}
