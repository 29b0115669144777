"""`memory file read|write|update-json`: deterministic, contained, atomic operations on .claude/memory/ files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from helpers import Env

OPERATIONS = {
    "read": lambda path: ("file", "read", path),
    "write": lambda path: ("file", "write", path, "--content", "{}"),
    "update-json": lambda path: ("file", "update-json", path, "--patch", "{}"),
}


# -- round trips -------------------------------------------------------------------------------------

def test_write_then_read_with_each_path_form(env: Env) -> None:
    out = env.ok("file", "write", ".claude/memory/notes/plan.md", "--content", "# Plan\n").out
    assert "Wrote .claude/memory/notes/plan.md (7 bytes)" in out
    path = env.project_dir / "notes" / "plan.md"
    assert path.read_text() == "# Plan\n"
    assert env.ok("file", "read", ".claude/memory/notes/plan.md").out == "# Plan\n"
    assert env.ok("file", "read", "notes/plan.md").out == "# Plan\n"            # relative to .claude/memory
    assert env.ok("file", "read", "./.claude/memory/notes/plan.md").out == "# Plan\n"
    assert env.ok("file", "read", str(path)).out == "# Plan\n"                   # absolute, inside
    data = env.ok("file", "read", "notes/plan.md", "--json").json()
    assert data == {"path": ".claude/memory/notes/plan.md", "absolutePath": str(path), "content": "# Plan\n"}
    deeper = env.project / "src"
    deeper.mkdir()
    assert env.ok("file", "read", ".claude/memory/notes/plan.md", cwd=deeper).out == "# Plan\n"  # from the project root
    assert (env.project_dir / ".gitignore").exists()  # the project scope was prepared as for any write


def test_write_takes_stdin_and_normalises_line_endings(env: Env) -> None:
    env.ok("file", "write", "notes.txt", stdin="one\r\ntwo\r\n")
    assert (env.project_dir / "notes.txt").read_bytes() == b"one\ntwo\n"
    result = env.ok("file", "write", "data.yaml", "--json", stdin="a: 1\nb: [x, y]\n").json()
    assert result["path"] == ".claude/memory/data.yaml" and result["bytes"] == 15
    assert "no content" in env.fails("file", "write", "empty.md").err  # stdin is /dev/null
    assert not (env.project_dir / "empty.md").exists()


def test_update_json_applies_an_rfc7386_merge_patch(env: Env) -> None:
    env.ok("file", "write", "state.json", "--content", '{"a": 1, "b": {"c": 2, "d": [1, 2]}, "e": "x"}')
    result = env.ok("file", "update-json", ".claude/memory/state.json", "--patch",
                    '{"b": {"c": null, "d": [3], "f": {"g": true}}, "e": null, "h": "new"}', "--json").json()
    expected = {"a": 1, "b": {"d": [3], "f": {"g": True}}, "h": "new"}
    assert result["data"] == expected
    assert json.loads((env.project_dir / "state.json").read_text()) == expected
    env.ok("file", "update-json", "state.json", "--patch", '["replaced"]')  # a non-object patch replaces it
    assert json.loads((env.project_dir / "state.json").read_text()) == ["replaced"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_update_json_with_a_jq_expression(env: Env) -> None:
    env.ok("file", "write", "state.json", "--content", '{"runs": 1, "tags": ["a"]}')
    env.ok("file", "update-json", "state.json", "--jq", '.runs += 1 | .tags += ["b"]')
    assert json.loads((env.project_dir / "state.json").read_text()) == {"runs": 2, "tags": ["a", "b"]}
    assert env.ok("file", "update-json", "state.json", "--jq=-.runs", "--json").json()["data"] == -2
    env.ok("file", "write", "state.json", "--content", '{"runs": 1, "tags": ["a"]}')
    before = (env.project_dir / "state.json").read_bytes()
    assert "exactly one JSON value" in env.fails("file", "update-json", "state.json", "--jq", ".[]").err
    assert "jq failed" in env.fails("file", "update-json", "state.json", "--jq", ".runs +").err
    assert (env.project_dir / "state.json").read_bytes() == before


def test_jq_missing_is_a_clear_error(env: Env, tmp_path: Path) -> None:
    env.ok("file", "write", "state.json", "--content", "{}")
    bin_dir = tmp_path / "bin-without-jq"
    bin_dir.mkdir()
    for tool in ("dirname", "readlink"):  # what bin/memory itself needs
        os.symlink(shutil.which(tool), bin_dir / tool)
    result = env.fails("file", "update-json", "state.json", "--jq", ".a = 1", env={"PATH": str(bin_dir)})
    assert "jq program, which is not installed" in result.err and "--patch" in result.err


def test_update_json_needs_an_existing_valid_json_file(env: Env) -> None:
    assert "does not exist" in env.fails("file", "update-json", "missing.json", "--patch", "{}").err
    env.write_broken(env.project_dir / "broken.json", "{nope")
    assert "is not valid JSON" in env.fails("file", "update-json", "broken.json", "--patch", "{}").err
    env.ok("file", "write", "notes/a.md", "--content", "x")
    assert "not a .json file" in env.fails("file", "update-json", "notes/a.md", "--patch", "{}").err
    assert "not valid JSON" in env.fails("file", "update-json", "broken.json", "--patch", "{x").err
    env.fails("file", "update-json", "state.json", code=2)  # --patch or --jq is required


# -- verification before the rename ------------------------------------------------------------------

def test_invalid_content_is_never_written(env: Env) -> None:
    env.ok("file", "write", "state.json", "--content", '{"ok": true}')
    before = (env.project_dir / "state.json").read_bytes()
    result = env.fails("file", "write", "state.json", "--content", '{"ok": tru')
    assert "not valid JSON" in result.err and "nothing was written" in result.err
    assert (env.project_dir / "state.json").read_bytes() == before
    assert "not valid YAML" in env.fails("file", "write", "x.yaml", "--content", "a: [b").err
    assert not (env.project_dir / "x.yaml").exists()
    assert "NUL" in env.fails("file", "write", "x.txt", stdin=b"a\x00b").err
    assert "UTF-8" in env.fails("file", "write", "x.txt", stdin=b"\xff\xfe").err
    too_large = env.fails("file", "write", "x.txt", stdin=b"x" * (4 * 1024 * 1024 + 1)).err
    assert "larger than 4 MiB" in too_large and "\nhint: " in too_large
    assert not (env.project_dir / "x.txt").exists()
    assert not [name for name in os.listdir(env.project_dir) if name.endswith(".tmp")]


def test_content_nested_past_any_file_here_is_one_error_and_never_written(env: Env) -> None:
    # JSON or YAML nested hundreds deep parses (or not) and then exhausts Python's stack in the
    # secret redaction or the merge: refused before either, the file as it was
    env.ok("file", "write", "state.json", "--content", '{"ok": true}')
    before = (env.project_dir / "state.json").read_bytes()
    for depth in (500, 5000):
        deep = "[" * depth + "]" * depth
        for args in (("file", "write", "state.json", "--content", deep),
                     ("file", "write", "tasks/9.json", "--content", deep),
                     ("file", "write", "notes/deep.yaml", "--content", f"a: {deep}"),
                     ("file", "update-json", "state.json", "--patch", '{"a": ' + deep + "}")):
            refused = env.fails(*args)
            assert "not valid" in refused.err and "nested" in refused.err and "Traceback" not in refused.err, args
    env.write_broken(env.project_dir / "notes" / "deep.json", "[" * 500 + "]" * 500)
    assert "nested more than 100 levels deep" in env.fails("file", "update-json", "notes/deep.json",
                                                           "--patch", '{"a": 1}').err
    assert (env.project_dir / "state.json").read_bytes() == before
    assert not (env.project_dir / "tasks").exists() and not (env.project_dir / "notes" / "deep.yaml").exists()
    assert (env.project_dir / "notes" / "deep.json").read_text() == "[" * 500 + "]" * 500


def test_markdown_where_memories_live_must_be_a_memory(env: Env) -> None:
    result = env.fails("file", "write", "notes.md", "--content", "# Just notes")
    assert "where memories live" in result.err and "memory write" in result.err
    env.fails("file", "write", ".claude/memory/nodes/session/x.md", "--content", "plain")
    memory = ('---\ntype: learning\ntags:\n  - ci\ncreated: "2026-01-10T10:00:00Z"\n'
              'updated: "2026-01-10T10:00:00Z"\n---\n\n# Flaky CI\n\nRetry once.\n')
    env.ok("file", "write", "learning-flaky-ci.md", "--content", memory)
    assert env.ok("read", "learning-flaky-ci", "--json").json()["title"] == "Flaky CI"
    env.ok("file", "write", "notes/free-form.md", "--content", "# Anything goes here")
    env.ok("file", "write", "README.md", "--content", "# About this directory")


def test_the_project_config_is_checked_against_its_schema(env: Env) -> None:
    assert "invalid config" in env.fails("file", "write", "config.json", "--content", '{"scopes": {"default": 5}}').err
    assert "JSON object" in env.fails("file", "write", "config.json", "--content", "[]").err
    env.ok("file", "write", "config.json", "--content", '{"capture": {"capture_todos": false}}')
    assert env.ok("config", "capture.capture_todos", "--json").json()["value"] is False


def test_task_files_are_checked_against_the_task_schema_and_invalidate_the_index(env: Env) -> None:
    env.ok("task", "add", "--title", "Epic")
    assert "would break the task schema" in env.fails(
        "file", "update-json", "tasks/1.json", "--patch", '{"status": "finished"}').err
    assert "whose id is '1'" in env.fails(
        "file", "write", "tasks/1.json", "--content", '{"id": "2", "type": "epic", "status": "pending"}').err
    result = env.ok("file", "update-json", ".claude/memory/tasks/1.json", "--patch", '{"title": "Renamed"}')
    assert "task validate" in result.err  # a warning: no roll-up happened
    assert env.ok("task", "list", "--json").json()["tasks"][0]["title"] == "Renamed"


# -- security: every path argument -------------------------------------------------------------------

@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("path", ["../outside.json", ".claude/memory/../../outside.json", "notes/../../x.json",
                                  "tasks/../../../etc/passwd.json"])
def test_traversal_is_refused(env: Env, operation: str, path: str) -> None:
    result = env.fails(*OPERATIONS[operation](path))
    assert "`..` is not allowed" in result.err
    assert not (env.project / "outside.json").exists()


@pytest.mark.parametrize("operation", OPERATIONS)
def test_absolute_paths_outside_are_refused(env: Env, operation: str) -> None:
    outside = env.root / "outside.json"
    outside.write_text("{}")
    result = env.fails(*OPERATIONS[operation](str(outside)))
    assert "is outside" in result.err
    assert outside.read_text() == "{}"
    assert "is outside" in env.fails(*OPERATIONS[operation](str(env.project / "x.json"))).err


@pytest.mark.parametrize("operation", OPERATIONS)
def test_symlink_escapes_are_refused(env: Env, operation: str) -> None:
    secret = env.root / "secret.json"
    secret.write_text('{"secret": true}')
    outside_dir = env.root / "elsewhere"
    outside_dir.mkdir()
    (outside_dir / "x.json").write_text("{}")
    env.project_dir.mkdir(parents=True)
    os.symlink(secret, env.project_dir / "link.json")
    os.symlink(outside_dir, env.project_dir / "linked-dir")
    for path in ("link.json", ".claude/memory/linked-dir/x.json"):
        result = env.fails(*OPERATIONS[operation](path))
        assert "symlink" in result.err
    assert secret.read_text() == '{"secret": true}' and (outside_dir / "x.json").read_text() == "{}"


@pytest.mark.parametrize("operation", ["write", "update-json"])
def test_writes_never_follow_a_symlink_even_inside(env: Env, operation: str) -> None:
    env.ok("file", "write", "real.json", "--content", '{"real": 1}')
    os.symlink(env.project_dir / "real.json", env.project_dir / "alias.json")
    assert "never follow symlinks" in env.fails(*OPERATIONS[operation]("alias.json")).err
    assert json.loads((env.project_dir / "real.json").read_text()) == {"real": 1}
    assert os.path.islink(env.project_dir / "alias.json")
    assert env.ok("file", "read", "alias.json").out == '{"real": 1}'  # a read may follow it: it stays inside


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("path", ["script.sh", "notes.py", "image.png", "noext", ".claude/memory/x.JSON.exe",
                                  ".json", "db.sqlite3"])
def test_other_extensions_are_refused(env: Env, operation: str, path: str) -> None:
    assert "only .json .md .txt .yaml .yml files are allowed" in env.fails(*OPERATIONS[operation](path)).err


@pytest.mark.parametrize("operation", ["write", "update-json"])
@pytest.mark.parametrize("path, command", [
    ("index.json", "memory reindex"), (".claude/memory/graph.json", "memory reindex"),
    ("task-index.json", "memory task rebuild-index"), ("local/index.json", "memory reindex"),
    (".cache/state.json", "nothing to do"), ("local/.cache/x.json", "nothing to do"),
    (".embedding-cache/x.json", "nothing to do"),
])
def test_derived_files_are_not_writable_and_the_error_names_the_command(env: Env, operation: str, path: str,
                                                                       command: str) -> None:
    result = env.fails(*OPERATIONS[operation](path))
    assert "not written by hand" in result.err and command in result.err
    assert not (env.project_dir / path.replace(".claude/memory/", "")).exists()


def test_derived_files_can_be_read(env: Env) -> None:
    env.ok("task", "add", "--title", "Epic")
    data = json.loads(env.ok("file", "read", "task-index.json").out)
    assert data["tasks"][0]["id"] == "1"


def test_odd_paths_are_refused(env: Env) -> None:
    assert "names the memory directory" in env.fails("file", "read", ".claude/memory/").err
    assert "give a file path" in env.fails("file", "read", "").err
    env.project_dir.mkdir(parents=True)
    (env.project_dir / "dir.json").mkdir()
    assert "is a directory" in env.fails("file", "write", "dir.json", "--content", "{}").err
    assert "does not exist" in env.fails("file", "read", "nothing.md").err
    env.fails("file", code=2)
    assert "examples:" in env.ok("file", "--help").out


@pytest.mark.parametrize("operation", ["read", "write"])
def test_a_name_longer_than_the_file_system_allows_is_one_error_with_a_hint(env: Env, operation: str) -> None:
    env.ok("write", "Keep me", "--tags", "a", "--content", "x")
    before = sorted(path.name for path in env.project_dir.iterdir())
    extra = ["--content", "x"] if operation == "write" else []
    failed = env.fails("file", operation, "a" * 300 + ".md", *extra)
    lines = failed.err.strip().splitlines()
    assert lines[0].startswith("error:") and "File name too long" in lines[0]
    assert lines[1].startswith("hint:") and "Traceback" not in failed.err
    assert sorted(path.name for path in env.project_dir.iterdir()) == before
