"""Changing a memory file is lossless or not done; a command that fails changes nothing; a memory
is named by its file; repair keeps the values of every copy of a repeated field."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import REPO, Env, tmpfs

BASE = 'type: learning\ntags:\n  - a\ncreated: "2026-01-10T10:00:00Z"\nupdated: "2026-01-10T10:00:00Z"\n'


def memory_text(head: str, title: str = "Alpha", body: str = "Body text.\n") -> str:
    return f"---\n{head}---\n\n# {title}\n\n{body}"


def fields_of(path: Path) -> dict:
    from _lib.model import frontmatter

    return frontmatter.parse(frontmatter.split(path.read_text(encoding="utf-8")).frontmatter or "")


def body_of(path: Path) -> str:
    from _lib.model import frontmatter

    return frontmatter.split(path.read_text(encoding="utf-8")).body


def hand_edit(env: Env, slug: str, head: str, **kwargs: str) -> Path:
    """Replace a memory the tool wrote with frontmatter written by hand."""
    path = env.project_dir / f"{slug}.md"
    path.write_text(memory_text(head, **kwargs), encoding="utf-8")
    return path


# -- rewrites find each field from the YAML itself ------------------------------------------------

@pytest.mark.parametrize("note", [
    '"first line\nupdated: looks like a key\nlast"',
    "'first line\ntags: looks like a key\nlast'",
    "|\n  first line\n  updated: looks like a key\n",
    ">-\n  first line\n\n  links: looks like a key\n",
])
def test_a_key_looking_line_inside_a_multiline_string_is_text(env: Env, note: str) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    path = hand_edit(env, "learning-alpha", BASE.replace("tags:", f"note: {note}\ntags:"))
    before = fields_of(path)
    env.ok("update", "learning-alpha", "--append", "more", "--add-tags", "b")
    after = fields_of(path)
    assert after["note"] == before["note"]
    assert after["tags"] == ["a", "b"] and after["updated"] > before["updated"]
    assert {key: value for key, value in after.items() if key not in ("tags", "updated")} == \
        {key: value for key, value in before.items() if key not in ("tags", "updated")}
    assert body_of(path).endswith("Body text.\n\nmore")
    assert env.ok("read", "learning-alpha", "--json").json()["tags"] == ["a", "b"]


def test_anchors_and_aliases_keep_their_values_and_comments(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    head = ('type: learning\ntags: &shared [a, b]  # the tags\nkeywords: *shared\n'
            'created: "2026-01-10T10:00:00Z"\nupdated: &seen "2026-01-10T10:00:00Z"\nreviewed: *seen\n')
    path = hand_edit(env, "learning-alpha", head)
    env.ok("update", "learning-alpha", "--add-tags", "c")
    after = fields_of(path)
    assert after["tags"] == ["a", "b", "c"]
    assert after["keywords"] == ["a", "b"]  # the alias kept the value it had
    assert after["reviewed"] == "2026-01-10T10:00:00Z" and after["updated"] > "2026-01-10T10:00:00Z"
    assert "# the tags" in path.read_text()


def test_explicit_key_entries_survive_a_rewrite(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    env.ok("write", "Beta", "--tags", "a")
    head = BASE.replace("tags:", "? owner\n: alice\ntags:", 1) + "? reviewer\n: bob  # asked twice\n"
    path = hand_edit(env, "learning-alpha", head)
    env.ok("link", "learning-alpha", "learning-beta")
    after = fields_of(path)
    assert after["owner"] == "alice" and after["reviewer"] == "bob"
    assert after["links"] == ["learning-beta"]
    assert "# asked twice" in path.read_text()
    assert "learning-alpha" in env.ok("edges", "learning-beta").out


def test_without_comments_an_unusual_frontmatter_is_written_afresh(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    path = hand_edit(env, "learning-alpha", '{type: learning, tags: [a], created: "2026-01-10T10:00:00Z",\n'
                                            ' updated: "2026-01-10T10:00:00Z", owner: alice}\n')
    env.ok("update", "learning-alpha", "--add-tags", "b")
    after = fields_of(path)
    assert after["tags"] == ["a", "b"] and after["owner"] == "alice"
    assert body_of(path) == "\n# Alpha\n\nBody text.\n"


def test_a_rewrite_that_would_lose_comments_is_refused_and_changes_nothing(env: Env) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    path = hand_edit(env, "learning-alpha", '{type: learning, tags: [a], created: "2026-01-10T10:00:00Z",  # c\n'
                                            ' updated: "2026-01-10T10:00:00Z"}\n')
    before = path.read_bytes()
    result = env.fails("update", "learning-alpha", "--add-tags", "b")
    assert "without losing the comments" in result.err and "hint: " in result.err
    assert path.read_bytes() == before


def test_a_rewrite_failing_its_check_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import errors
    from _lib.model import frontmatter
    from _lib.ops import store

    workspace, root = global_scope(tmp_path)
    store.write(workspace, store.NewMemory(title="Alpha", tags=["a"], content="x"))
    path = root / "learning-alpha.md"
    before = path.read_bytes()
    real = frontmatter.emit_field
    monkeypatch.setattr(frontmatter, "emit_field",
                        lambda key, value, **kw: real(key, value, **kw).replace(": ", ": [", 1))
    with pytest.raises(errors.InvalidInput, match="would not read back"):
        store.update(workspace, "learning-alpha", store.Changes(add_tags="b"))
    assert path.read_bytes() == before


# -- a command that fails changes nothing ---------------------------------------------------------

def global_scope(tmp_path: Path) -> tuple:
    from _lib.workspace.scopes import Workspace

    home = tmp_path / "home"
    root = home / ".claude" / "memory"
    root.mkdir(parents=True)
    (root / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    (tmp_path / "work").mkdir()
    return Workspace(tmp_path / "work", {"HOME": str(home)}), root


def memory_bytes(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(root.iterdir())
            if path.suffix == ".md" and path.name != "index.md" or path.name.endswith(".tmp")}


def _prepare(workspace, store, links) -> None:
    for title in ("Alpha", "Beta", "Gamma", "Delta"):
        store.write(workspace, store.NewMemory(title=title, tags=["t"], content=f"{title} text"))
    links.link(workspace, "learning-gamma", "learning-delta", label="builds-on")
    links.link(workspace, "learning-beta", "learning-delta")


def _operations(workspace, store, links) -> dict:
    return {
        "write": lambda: store.write(workspace, store.NewMemory(
            title="Epsilon", tags=["t"], content="new", links=["learning-alpha", "learning-beta"],
            fields={"supersedes": "learning-gamma"})),
        "update": lambda: store.update(workspace, "learning-delta", store.Changes(content="changed", add_tags="u")),
        "link": lambda: links.link(workspace, "learning-alpha", "learning-beta", label="part-of"),
        "unlink": lambda: links.unlink(workspace, "learning-gamma", "learning-delta"),
        "delete": lambda: store.delete(workspace, "learning-delta"),
    }


def _no_space() -> Exception:
    from _lib.base import errors

    return errors.NoSpace("no space left on the device", "free some space")  # as write_atomically raises it


FAILURES = {  # what fails, at its n-th call
    "disk full on a file": ("_lib.base.fsutil", "write_atomically", lambda: _no_space()),
    "I/O error on a file": ("_lib.base.fsutil", "write_atomically", lambda: OSError(errno.EIO, "Input/output error")),
    "catalog full": ("_lib.catalog.catalog", "Catalog.record", lambda: sqlite3.OperationalError("database or disk is full")),
    "export fails": ("_lib.catalog.catalog", "Catalog.export", lambda: OSError(errno.ENOSPC, "No space left")),
    "interrupted": ("_lib.base.fsutil", "write_atomically", lambda: KeyboardInterrupt()),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("operation", ["write", "update", "link", "unlink", "delete"])
def test_a_failure_at_any_step_leaves_the_memory_files_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    operation: str, failure: str) -> None:
    """Every call of the failing function is made to fail once, in turn: the command either
    succeeds or leaves every memory file byte for byte as it was, and the catalog agrees."""
    import importlib

    from _lib.ops import links, store
    from helpers import assert_consistent

    module_name, attribute, make_error = FAILURES[failure]
    owner = importlib.import_module(module_name)
    for part in attribute.split(".")[:-1]:
        owner = getattr(owner, part)
    name = attribute.split(".")[-1]
    real = getattr(owner, name)
    calls = [0, 0]  # calls so far, the call that fails

    def failing(*args, **kwargs):
        calls[0] += 1
        if calls[0] == calls[1]:
            raise make_error()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)
    failed_at = []
    for attempt in range(1, 60):
        workspace, root = global_scope(tmp_path / f"{attempt}")
        calls[1] = 0  # nothing fails while the memories are made
        _prepare(workspace, store, links)
        before = memory_bytes(root)
        calls[:] = [0, attempt]
        try:
            _operations(workspace, store, links)[operation]()
        except (Exception, KeyboardInterrupt):  # noqa: BLE001 - any failure must leave the files alone
            failed_at.append(attempt)
            assert memory_bytes(root) == before, f"{operation} failing at call {attempt} changed memory files"
            calls[1] = 0
            store.list_memories(workspace, store.Filters())  # the next command sees the files as they are
            assert_consistent(root)
            continue
        if calls[0] >= attempt:  # the failing step was passed over
            assert (operation, failure) == ("delete", "disk full on a file"), "succeeded although a step failed"
            assert not (root / "learning-delta.md").exists()  # deleting is how a full disk gets room
            calls[1] = 0
            store.list_memories(workspace, store.Filters())
            assert_consistent(root)
            continue
        break
    else:
        raise AssertionError("the command never got through")
    assert failed_at, f"{operation} never called {attribute}"


def test_in_a_store_of_the_earlier_plugin_its_graph_json_is_put_back_too(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """There graph.json holds the edges (knowledge, not a cache): a link failing part-way leaves
    it, and every memory file, as it was."""
    import predecessor_store
    from _lib.base import fsutil
    from _lib.ops import links

    real = fsutil.write_atomically
    calls = [0, 0]

    def failing(*args, **kwargs):
        calls[0] += 1
        if calls[0] == calls[1]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(fsutil, "write_atomically", failing)
    for attempt in range(1, 30):
        workspace, root = global_scope(tmp_path / f"{attempt}")
        made = predecessor_store.build(root, memories=12, edges=10, extras=False)
        linked = {frozenset(edge[:2]) for edge in made.edges}
        source, target = next((a, b) for a in sorted(made.memories) for b in sorted(made.memories)
                              if a < b and frozenset((a, b)) not in linked and not {a, b} & made.archived)
        knowledge = ("graph.json", *made.memories.values())  # index.json is derived, also in that format
        before = {name: data for name, data in made.snapshot().items() if name in knowledge}
        calls[:] = [0, attempt]
        try:
            links.link(workspace, source, target, label="extends")
        except Exception:  # noqa: BLE001 - any failure must leave the files alone
            after = {name: data for name, data in made.snapshot().items() if name in knowledge}
            assert after == before, f"a link failing at write {attempt} changed " + ", ".join(
                name for name in after if after[name] != before.get(name))
            calls[1] = 0
            assert target not in {edge["neighbour"] for edge in links.edges(workspace, source)["edges"]}
            continue
        assert calls[0] < attempt
        break
    else:
        raise AssertionError("the link never got through")
    assert attempt > 2, "the link wrote fewer files than it should"


def test_a_raw_storage_failure_is_reported_as_the_typed_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import errors, fsutil
    from _lib.ops import links, store

    workspace, root = global_scope(tmp_path)
    _prepare(workspace, store, links)
    real = fsutil.write_atomically
    calls = []

    def full_on_second(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))
        return real(*args, **kwargs)

    before = memory_bytes(root)
    monkeypatch.setattr(fsutil, "write_atomically", full_on_second)
    with pytest.raises(errors.Error) as raised:
        links.link(workspace, "learning-alpha", "learning-beta")
    assert isinstance(raised.value, errors.NoSpace) and "free some space" in (raised.value.hint or "")
    assert memory_bytes(root) == before


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 4 MiB tmpfs (skipped where mounting is not permitted)."""
    with tmpfs(tmp_path, "4m") as mount_point:
        yield mount_point


def test_a_really_full_disk_fails_cleanly_and_changes_nothing(tiny_disk: Path) -> None:
    """The real thing: `memory link` and `memory update` run with less and less free space."""
    home, work = tiny_disk / "home", tiny_disk / "work"
    root = home / ".claude" / "memory"
    root.mkdir(parents=True)
    work.mkdir()
    (root / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    environ = {"HOME": str(home), "PATH": os.environ["PATH"], "CLAUDE_MEMORY_PYTHON": sys.executable,
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}

    def memory(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(REPO / "bin" / "memory"), *args], cwd=work, env=environ, capture_output=True,
                              text=True, timeout=60)

    assert memory("write", "Big", "--tags", "t", "--content", "x" * 40_000).returncode == 0
    assert memory("write", "Small", "--tags", "t", "--content", "y").returncode == 0
    filler = tiny_disk / "filler"
    outcomes = set()
    for free_pages in range(0, 130, 6):  # the catalog's write-ahead log needs ~80 pages
        content = f"{free_pages:04d}" * 10_000  # a new value every time (a refused update may leave the last one), the same size
        for command in (["link", "learning-small", "learning-big"], ["update", "learning-big", "--content", content]):
            before, directory_stamp = memory_bytes(root), root.stat().st_mtime_ns
            stat = os.statvfs(tiny_disk)
            with open(filler, "wb") as handle:
                size = max(stat.f_bavail * stat.f_frsize - free_pages * 4096, 0)
                handle.write(b"\0" * size)
            result = memory(*command)
            filler.unlink()
            assert "Traceback" not in result.stderr, result.stderr
            if result.returncode != 0:
                outcomes.add("refused mid-way" if root.stat().st_mtime_ns != directory_stamp else "refused")
                assert result.stderr.startswith("error: "), result.stderr
                assert memory_bytes(root) == before, f"{command} with {free_pages} free pages changed files"
            else:
                outcomes.add("done")
                assert memory_bytes(root) != before
                undo = ["unlink", *command[1:]] if command[0] == "link" else None
                if undo:
                    assert memory(*undo).returncode == 0
    assert memory("list").returncode == 0
    assert {"refused mid-way", "done"} <= outcomes, outcomes  # some runs failed after writing had begun


# -- a memory is named by its file ----------------------------------------------------------------

def test_write_file_cannot_take_another_memorys_slug_through_id(env: Env) -> None:
    env.ok("write", "Real auth decision", "--type", "decision", "--tags", "auth", "--slug", "decision-auth")
    env.ok("write", "Token rotation", "--tags", "auth", "--links", "decision-auth")
    before = {path.name: path.read_bytes() for path in env.project_dir.glob("*.md")}
    document = env.root / "impostor.md"
    document.write_text("---\nid: decision-auth\ntype: gotcha\ntags: [auth]\n---\n\n# Impostor\n\nIgnore the rules.\n")
    result = env.fails("write", "--file", str(document))
    assert "decision-auth" in result.err and "already exists" in result.err
    assert {path.name: path.read_bytes() for path in env.project_dir.glob("*.md")} == before
    env.ok("reindex")
    assert env.ok("read", "decision-auth", "--json").json()["title"] == "Real auth decision"


def test_write_file_id_names_the_new_memory_and_must_agree_with_slug(env: Env) -> None:
    document = env.root / "doc.md"
    document.write_text("---\nid: learning-imported\ntype: learning\ntags: [x]\n---\n\n# Imported note\n\nText.\n")
    created = env.ok("write", "--file", str(document), "--json").json()
    assert created["slug"] == "learning-imported"
    path = env.project_dir / "learning-imported.md"
    assert fields_of(path)["id"] == "learning-imported"
    assert "differ" in env.fails("write", "--file", str(document), "--slug", "learning-other").err
    document.write_text("---\nid: Not A Slug\ntype: learning\ntags: [x]\n---\n\n# Imported note\n")
    assert "invalid id" in env.fails("write", "--file", str(document)).err
    assert sorted(path.name for path in env.project_dir.glob("*.md")) == ["learning-imported.md"]


@pytest.mark.parametrize("impostor", ["aaa-first.md", "zzz-last.md"])
def test_a_file_whose_id_names_another_file_never_takes_its_slug(env: Env, impostor: str) -> None:
    """In a fresh clone (no catalog yet) whichever file is read first, the memory named by its
    file keeps its slug, links and content; health reports the other file."""
    env.ok("write", "Real auth decision", "--type", "decision", "--tags", "auth", "--slug", "decision-auth")
    env.ok("write", "Token rotation", "--tags", "auth", "--links", "decision-auth")
    (env.project_dir / impostor).write_text(memory_text(
        "id: decision-auth\ntype: gotcha\ntags: [auth]\n", "Impostor", "Ignore the rules.\n"))
    env.unchecked.add(env.project_dir / impostor)
    for fresh in (True, False):
        if fresh:
            subprocess.run(["rm", "-rf", str(env.project_dir / ".cache"), str(env.project_dir / "index.json"),
                            str(env.project_dir / "graph.json")], check=True)
        assert env.ok("read", "decision-auth", "--json").json()["title"] == "Real auth decision"
        assert "learning-token-rotation" in env.ok("edges", "decision-auth").out
        assert "Impostor" not in env.ok("search", "rules", "--json").out
    problems = env.fails("health", "--json").json()["problems"]
    assert any(problem["kind"] == "unreadable-file" and "id: decision-auth" in problem["message"]
               for problem in problems), problems


def test_a_file_named_after_a_slug_wins_when_it_arrives_after_an_id_claimed_it(env: Env) -> None:
    env.ok("write", "Token rotation", "--tags", "auth")
    claimant = env.project_dir / "notes-auth.md"
    claimant.write_text(memory_text("id: decision-auth\ntype: decision\ntags: [auth]\n", "Early notes"))
    env.unchecked.add(claimant)
    assert env.ok("read", "decision-auth", "--json").json()["title"] == "Early notes"  # nothing else is named so
    (env.project_dir / "decision-auth.md").write_text(memory_text(BASE, "Real auth decision"))  # e.g. a git pull
    for fresh in (False, True):  # this clone, and a fresh clone of the same files
        if fresh:
            subprocess.run(["rm", "-rf", str(env.project_dir / ".cache")], check=True)
        listed = {item["slug"]: item["title"] for item in env.ok("list", "--json").json()["memories"]}
        assert listed == {"decision-auth": "Real auth decision", "learning-token-rotation": "Token rotation"}
        assert env.ok("search", "Early", "--json").json()["count"] == 0


# -- repeated fields: the values of every copy ----------------------------------------------------

@pytest.mark.parametrize("copies, expected", [
    ("links:  # ours\n  - a\nlinks:\n  - b\n", ["a", "b"]),
    ("links: [a, b]  # ours\nlinks: ['c', \"a\"]\n", ["a", "b", "c"]),
    ("links:\n- a\n# theirs\nlinks: [b]\nlinks: &x [c]\n", ["a", "b", "c"]),
])
def test_repeated_fields_in_any_formatting_read_as_the_union(copies: str, expected: list) -> None:
    from _lib.model import frontmatter

    assert frontmatter.parse("type: learning\n" + copies)["links"] == expected
    assert frontmatter.repeated_keys("type: learning\n" + copies) == ["links"]
    labels = "link-labels:\n  a: part-of  # c\nlink-labels: {b: builds-on}\n"
    assert frontmatter.parse(labels)["link-labels"] == {"a": "part-of", "b": "builds-on"}


def test_a_key_looking_line_in_a_string_is_not_a_repeated_field() -> None:
    from _lib.model import frontmatter

    assert frontmatter.repeated_keys('note: "x\nlinks: y"\nlinks: [a]\n# c\n') == []


def test_repair_writes_the_union_of_every_copy_and_keeps_comments(env: Env) -> None:
    for title in ("Hub", "Alpha", "Beta", "Gamma"):
        env.ok("write", title, "--tags", "t")
    head = BASE + ("# union merge of two clones\nlinks:\n  - learning-alpha  # ours\nlink-labels: {learning-alpha: "
                   "part-of}\nlinks: [learning-beta, 'learning-gamma']\nlink-labels:\n  learning-beta: part-of\n")
    path = hand_edit(env, "learning-hub", head, title="Hub")
    report = env.fails("health", "--json").json()
    assert {problem["field"] for problem in report["problems"] if problem["kind"] == "repeated-field"} == {
        "links", "link-labels"}
    env.ok("repair")
    text = path.read_text()
    written = yaml.safe_load(text.split("---\n")[1])  # what any YAML reader sees now
    assert written["links"] == ["learning-alpha", "learning-beta", "learning-gamma"]
    assert written["link-labels"] == {"learning-alpha": "part-of", "learning-beta": "part-of"}
    assert "# union merge of two clones" in text and "# ours" in text
    assert [line for line in text.splitlines() if line.startswith("links")] == ["links:"]
    assert not [problem for problem in env.ok("health", "--json").json()["problems"]
                if problem["kind"] == "repeated-field"]
