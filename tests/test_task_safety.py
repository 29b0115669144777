"""The task store under crashes, full disks, concurrent writers and hostile repositories.

- A command killed at any moment leaves a store the next command completes: each change is
  all there or not at all (a child its parent does not list, a parent listing a deleted
  child, half a cascade never survive), and temp files of killed writes are removed.
- Stores damaged otherwise (older versions, merges) are reported by `memory health` and
  fixed by `memory repair`.
- A write that fails (ENOSPC) changes nothing.
- Test commands from task files run only once the user trusts them for the repository.
- Secrets in task fields are redacted before they reach the (committed) task files.

Figures are printed with -s.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import HOOKS, REPO, SCRIPTS, Env, snapshot
from helpers import fill_disk as fill

AGENT = "testplugin:implementer"
SECRET = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def tasks_dir(env: Env) -> Path:
    return env.project_dir / "tasks"


def task_file(env: Env, task_id: str) -> dict[str, Any]:
    return json.loads((tasks_dir(env) / f"{task_id}.json").read_text())


def state(directory: Path) -> dict[str, tuple[Any, ...]]:
    """What a change may alter, per task file (timestamps aside): every file must be whole JSON."""
    found = {}
    for path in sorted(directory.glob("*.json")):
        entity = json.loads(path.read_text())  # raises on a half-written file
        found[entity["id"]] = (entity["status"], tuple(entity["children"]), tuple(entity["dependencies"]),
                               entity.get("title"), tuple(entity.get("tests") or []))
    return found


def tree_ids(nodes: list[dict[str, Any]]) -> list[str]:
    return [id_ for node in nodes for id_ in [node["id"], *tree_ids(node["children"])]]


def assert_whole(env: Env) -> None:
    """The store validates, the tree shows every task file, roll-up and progress agree, nothing is left over."""
    report = env.ok("task", "validate", "--json").json()
    assert report["problems"] == [], report["problems"]
    on_disk = set(state(tasks_dir(env)))
    assert sorted(tree_ids(env.ok("task", "tree", "--json").json()["tasks"])) == sorted(on_disk)
    listed = {entry["id"]: entry for entry in env.ok("task", "list", "--json").json()["tasks"]}
    for entry in listed.values():
        children = [listed[child] for child in entry["children"]]
        if children:
            assert entry["progress"]["total"] == sum(child["progress"]["total"] for child in children)
            assert entry["progress"]["completed"] == sum(child["progress"]["completed"] for child in children)
    assert not [path.name for path in tasks_dir(env).iterdir() if path.name.startswith(".")], "temp files left"
    assert not (env.project_dir / ".cache" / "tasks.journal").exists()


def add(env: Env, title: str, *args: str) -> str:
    return env.ok("task", "add", "--title", title, *args, "--json").json()["task"]["id"]


def base_plan(env: Env) -> None:
    """1 > 1.1 > 1.1.1 (all done); 2 > 2.1 > (2.1.1, 2.1.2 after 1.1.1), 2.2 > 2.2.1 after 2.1.1."""
    add(env, "Shipped")
    add(env, "Shipped feature", "--parent", "1")
    add(env, "Shipped task", "--parent", "1.1")
    env.ok("task", "status", "1.1.1", "done")
    add(env, "Next")
    add(env, "Next feature", "--parent", "2")
    add(env, "First step", "--parent", "2.1")
    add(env, "Second step", "--parent", "2.1", "--depends", "1.1.1")
    add(env, "Later feature", "--parent", "2")
    add(env, "Later step", "--parent", "2.2", "--depends", "2.1.1")


# every multi-file change: add under a done parent (3 files), status rolling up two levels
# (3 files), a cascade delete with a dependant (5 files); and a one-file update
OPERATIONS = {
    "add": ["task", "add", "--title", "Reopened", "--parent", "1.1", "--test", "make check"],
    "status": ["task", "status", "2.1.1", "done"],
    "delete": ["task", "delete", "2.1", "--cascade"],
    "update": ["task", "update", "2.1.2", "--patch", '{"title": "Renamed", "tests": ["make it"]}'],
}

# Runs `memory task ...` in this process and dies (os._exit, as SIGKILL would leave it) at
# the KILL_AT-th write or removal of a task file or the journal; a write it dies in leaves
# the half-written temp file a killed atomic write leaves.
KILLED_AT = textwrap.dedent("""
    import os, runpy, sys, time
    sys.path.insert(0, {scripts!r})
    from _lib.base import fsutil
    target, calls = int(os.environ["KILL_AT"]), [0]

    def ours(path):
        return path.parent.name == "tasks" or path.name == "tasks.journal"

    def dying(real, writes):
        def wrapper(path, *args, **kwargs):
            if ours(path):
                calls[0] += 1
                if calls[0] == target:
                    if writes:
                        temp = path.parent / f".{{path.name}}.{{os.getpid()}}.{{time.monotonic_ns() % 10**9}}.tmp"
                        temp.write_text('{{"id": "half')
                    os._exit(9)
            return real(path, *args, **kwargs)
        return wrapper

    fsutil.write_atomically = dying(fsutil.write_atomically, True)
    fsutil.remove_file = dying(fsutil.remove_file, False)
    sys.argv = [{task!r}, *sys.argv[1:]]
    runpy.run_path({task!r}, run_name="__main__")
""")


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_command_killed_at_any_write_is_all_or_nothing_after_the_next_command(env: Env, operation: str) -> None:
    base_plan(env)
    saved = env.root / "saved"
    shutil.copytree(env.project_dir, saved)
    before = state(tasks_dir(env))
    env.ok(*OPERATIONS[operation])
    after = state(tasks_dir(env))
    assert after != before
    script = env.root / "killed.py"
    script.write_text(KILLED_AT.format(scripts=str(SCRIPTS), task=str(SCRIPTS / "task.py")))
    outcomes = []
    for kill_at in range(1, 30):
        shutil.rmtree(env.project_dir)
        shutil.copytree(saved, env.project_dir)
        proc = subprocess.run([sys.executable, str(script), *OPERATIONS[operation][1:]], cwd=env.project,
                              env=env.environ(KILL_AT=str(kill_at)), capture_output=True, timeout=60)
        if proc.returncode == 0:
            break  # it finished before the kill point: every point was tried
        assert proc.returncode == 9, proc.stderr.decode()
        state(tasks_dir(env))  # every task file is whole JSON right after the kill
        env.ok("task", "list")  # the next command, a read
        outcome = state(tasks_dir(env))
        assert outcome in (before, after), f"killed at write {kill_at}: a partial change survived"
        outcomes.append("after" if outcome == after else "before")
        assert_whole(env)
    assert outcomes and kill_at > 1
    if operation != "update":  # one file: killed before its rename it did not happen
        assert outcomes[0] == "before" and outcomes[-1] == "after", outcomes
    print(f"\n{operation}: killed at each of {len(outcomes)} writes: {outcomes}")


@pytest.mark.parametrize("next_command", [["task", "validate"], ["health"]])
def test_a_killed_change_is_completed_by_validate_and_health_not_reported(env: Env, next_command: list[str]) -> None:
    base_plan(env)
    script = env.root / "killed.py"
    script.write_text(KILLED_AT.format(scripts=str(SCRIPTS), task=str(SCRIPTS / "task.py")))
    proc = subprocess.run([sys.executable, str(script), "delete", "2.1", "--cascade"], cwd=env.project,
                          env=env.environ(KILL_AT="3"), capture_output=True, timeout=60)  # 2.1.2 removed, no more
    assert proc.returncode == 9
    assert (env.project_dir / ".cache" / "tasks.journal").exists()
    assert "2.1" in state(tasks_dir(env)) and "2.1.2" not in state(tasks_dir(env))
    report = env.ok(*next_command, "--json").json()
    assert report["problems"] == []  # not a report of the half-done cascade: its completion
    assert {"2.1", "2.1.1", "2.1.2"}.isdisjoint(state(tasks_dir(env)))
    assert task_file(env, "2.2.1")["dependencies"] == [] and task_file(env, "2")["children"] == ["2.2"]
    assert_whole(env)


def test_a_journaled_file_changed_since_is_kept_and_the_rest_reported(env: Env) -> None:
    base_plan(env)
    script = env.root / "killed.py"
    script.write_text(KILLED_AT.format(scripts=str(SCRIPTS), task=str(SCRIPTS / "task.py")))
    proc = subprocess.run([sys.executable, str(script), "status", "2.1.1", "done"], cwd=env.project,
                          env=env.environ(KILL_AT="2"), capture_output=True, timeout=60)  # only the journal written
    assert proc.returncode == 9
    edited = task_file(env, "2")
    edited["title"] = "Renamed by a checkout meanwhile"
    (tasks_dir(env) / "2.json").write_text(json.dumps(edited, indent=2))
    listed = env.ok("task", "list")
    assert "completed except for 2.json, changed since" in listed.err
    assert task_file(env, "2")["title"] == "Renamed by a checkout meanwhile"  # never overwritten
    assert task_file(env, "2.1.1")["status"] == "done" and task_file(env, "2.1")["status"] == "in-progress"
    assert env.fails("task", "validate").out.startswith("2: status is pending but its children roll up")
    env.ok("task", "validate", "--fix")
    assert_whole(env)


# -- what older versions and merges left: health reports, repair fixes ------------------------------

def test_a_child_its_parent_does_not_list_is_reported_by_health_and_adopted_by_repair(env: Env) -> None:
    base_plan(env)
    parent = task_file(env, "2.1")
    parent["children"] = ["2.1.1"]  # what a killed `task add` of 2.1.2 left before the journal
    (tasks_dir(env) / "2.1.json").write_text(json.dumps(parent, indent=2))
    assert "2.1.2" not in tree_ids(env.ok("task", "tree", "--json").json()["tasks"])  # invisible, as reported
    health = env.fails("health", "--json").json()
    found = [problem for problem in health["problems"] if problem["kind"].startswith("task-")]
    assert [(problem["kind"], Path(problem["path"]).name, problem["fixable"]) for problem in found] == [
        ("task-structure", "2.1.2.json", True)]
    assert "its parent 2.1 does not list it" in found[0]["message"] and "memory repair" in found[0]["hint"]
    planned = env.ok("repair", "--dry-run", "--json").json()
    assert [action["action"] for scope in planned["scopes"] for action in scope["actions"]] == ["fix-task"]
    assert task_file(env, "2.1")["children"] == ["2.1.1"]  # a dry run changes nothing
    env.ok("repair")
    assert task_file(env, "2.1")["children"] == ["2.1.1", "2.1.2"]
    assert_whole(env)
    assert env.ok("repair", "--json").json()["fixed"] == 0


def test_a_parent_listing_a_missing_child_is_reported_by_health_and_fixed_by_repair(env: Env) -> None:
    base_plan(env)
    env.ok("task", "status", "2.1.1", "done")
    env.ok("task", "status", "2.2.1", "done")
    (tasks_dir(env) / "2.1.2.json").unlink()  # what a killed `task delete` left before the journal
    health = env.fails("health", "--json").json()
    found = {(problem["kind"], Path(problem["path"]).name) for problem in health["problems"]
             if problem["kind"].startswith("task-")}
    assert ("task-structure", "2.1.json") in found
    env.ok("repair")
    assert task_file(env, "2.1")["children"] == ["2.1.1"]
    assert task_file(env, "2.1")["status"] == task_file(env, "2")["status"] == "done"  # rolled up without it
    assert_whole(env)


def test_broken_task_files_are_health_errors_repair_leaves_alone(env: Env) -> None:
    base_plan(env)
    env.write_broken(tasks_dir(env) / "3.json", "{not json")
    health = env.fails("health", "--json").json()
    found = [problem for problem in health["problems"] if problem["kind"].startswith("task-")]
    assert [(problem["kind"], problem["severity"], problem["fixable"]) for problem in found] == [
        ("task-invalid", "error", False)]
    repaired = env.ok("repair", "--json").json()
    project = next(scope for scope in repaired["scopes"] if scope["scope"] == "project")
    assert [problem["kind"] for problem in project["remaining"]] == ["task-invalid"]
    assert (tasks_dir(env) / "3.json").read_text() == "{not json"


def test_a_task_file_holding_half_an_emoji_is_read_as_utf8_can_hold_it(env: Env) -> None:
    # a hand edit or a tool that cut a string between the two halves of an emoji ("\\ud83d" in the
    # JSON): every task command, export and import go on, the half read as U+FFFD
    env.ok("task", "add", "--title", "Ship login")
    entity = task_file(env, "1")
    entity["title"] = "Ship HALF login"
    (tasks_dir(env) / "1.json").write_text(json.dumps(entity).replace("HALF", "\\ud83d"))
    assert "Ship \ufffd login" in env.ok("task", "list").out
    env.ok("task", "status", "1", "in-progress")
    assert task_file(env, "1")["title"] == "Ship \ufffd login"
    exported = env.ok("export", "--scope", "project").out
    document = env.root / "cut.json"
    document.write_text(exported.replace("\ufffd", "\\ud83d").replace("2026-", "2099-"))
    imported = env.ok("import", str(document), "--scope", "project", "--json").json()
    assert imported["tasksReplaced"] == ["1"]
    assert task_file(env, "1")["title"] == "Ship \ufffd login"


# -- temp files ---------------------------------------------------------------------------------------

def test_temp_files_of_killed_writes_are_removed_by_the_next_command_and_gitignored(env: Env) -> None:
    base_plan(env)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tasks_dir(env) / f".2.1.json.{dead.stdout.strip()}.123.tmp"
    stale.write_text('{"id": "2.')
    env.unchecked.add(stale)
    ignored = subprocess.run(["git", "check-ignore", "-q", str(stale)], cwd=env.project)
    assert ignored.returncode == 0, "temp files under tasks/ are gitignored"
    kept = subprocess.run(["git", "check-ignore", "-q", str(tasks_dir(env) / "2.1.json")], cwd=env.project)
    assert kept.returncode == 1, "task files are committed"
    env.ok("task", "list")  # a read
    assert not stale.exists()
    assert_whole(env)


# -- a write that fails changes nothing (in process) -----------------------------------------------------

def _workspace(env: Env) -> Any:
    from _lib.workspace.scopes import Workspace

    return Workspace(env.project, {"HOME": str(env.home), "CLAUDE_PROJECT_DIR": str(env.project)}, load_config=False)


CHANGES = {
    "add": lambda store: store.add("Reopened", parent="1.1", tests=["make check"]),
    "status": lambda store: store.set_status("2.1.1", "done"),
    "delete": lambda store: store.delete("2.1", cascade=True),
}


def _failing_writes(monkeypatch: pytest.MonkeyPatch, first: int, *, every_later: bool = False) -> list[int]:
    """Make the `first`-th write of a task file or the journal meet ENOSPC (with `every_later`, all after too),
    below `fsutil.write_atomically`, which turns it into the NoSpace error a full disk gives."""
    from _lib.base import fsutil

    real, calls = fsutil._write_atomically, [0]

    def write(path: Path, *args: Any) -> None:
        if path.parent.name == "tasks" or path.name == "tasks.journal":
            calls[0] += 1
            if calls[0] == first or (every_later and calls[0] > first):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, *args)

    monkeypatch.setattr(fsutil, "_write_atomically", write)
    return calls


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_write_failing_with_enospc_at_any_file_changes_nothing(env: Env, monkeypatch: pytest.MonkeyPatch,
                                                                 change: str) -> None:
    from _lib.base import errors
    from _lib.tasks import taskstore as tasks

    base_plan(env)
    before = snapshot(tasks_dir(env))
    failures = 0
    for failing in range(1, 20):
        with monkeypatch.context() as patch:
            calls = _failing_writes(patch, failing)
            try:
                CHANGES[change](tasks.TaskStore(_workspace(env)))
            except errors.NoSpace as exc:
                assert exc.message.startswith("no space left on the device holding ")
                assert exc.message.endswith("; nothing was changed") and "free some space" in (exc.hint or "")
                failures += 1
            else:
                assert calls[0] < failing, "the change succeeded although a write failed"
                break
        assert snapshot(tasks_dir(env)) == before, f"the failing write {failing} left a change"
        assert not (env.project_dir / ".cache" / "tasks.journal").exists()
        assert tasks.TaskStore(_workspace(env)).check()["problems"] == []
    assert failures >= 2, "the 2nd file of the change failed too"  # the journal, then each file
    assert snapshot(tasks_dir(env)) != before  # the last round, without a failure, made the change
    assert_whole(env)


def test_when_undoing_fails_too_the_next_command_completes_the_change(env: Env,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import errors
    from _lib.tasks import taskstore as tasks

    base_plan(env)
    with monkeypatch.context() as patch:
        _failing_writes(patch, 4, every_later=True)  # the journal, the child and 1.1 written, then the disk is full
        with pytest.raises(errors.NoSpace) as raised:
            CHANGES["add"](tasks.TaskStore(_workspace(env)))
    assert "could not be undone" in raised.value.message
    assert "then the next task command completes it" in (raised.value.hint or "")
    assert (env.project_dir / ".cache" / "tasks.journal").exists()
    env.ok("task", "list")
    assert "1.1.2" in task_file(env, "1.1")["children"] and task_file(env, "1.1")["status"] == "in-progress"
    assert_whole(env)


def test_an_index_write_failing_after_the_change_is_only_a_warning(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import fsutil
    from _lib.tasks import taskstore as tasks

    base_plan(env)
    real = fsutil._write_atomically

    def write(path: Path, *args: Any) -> None:
        if path.name == "task-index.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, *args)

    monkeypatch.setattr(fsutil, "_write_atomically", write)
    workspace = _workspace(env)
    tasks.TaskStore(workspace).set_status("2.1.1", "done")
    assert any("task-index.json was not updated" in warning for warning in workspace.warnings)
    monkeypatch.undo()
    assert task_file(env, "2.1.1")["status"] == "done"
    assert_whole(env)


def test_a_full_disk_refuses_task_changes_in_one_line_and_changes_nothing(small_disk: Path) -> None:
    """A real full disk (a small tmpfs): each change is refused with one error line, the task
    files stay as they were, reading works; with room again every change goes through."""
    (small_disk / "home").mkdir()
    subprocess.run(["git", "init", "-q", str(small_disk / "project")], check=True)
    env = Env(small_disk, small_disk / "home", small_disk / "project")
    base_plan(env)
    fill(small_disk)
    before = snapshot(tasks_dir(env))
    for argv in OPERATIONS.values():
        refused = env.fails(*argv)
        assert refused.err.startswith("error: no space left on the device") and refused.err.count("\n") == 2
        assert snapshot(tasks_dir(env)) == before, argv
    assert env.ok("task", "validate").out.startswith("OK: ")
    (small_disk / "filler").unlink()
    for name in ("add", "status", "update", "delete"):  # the delete removes the updated task
        env.ok(*OPERATIONS[name])
    assert_whole(env)


# -- SIGKILL at random moments and concurrent writers (hardening) ----------------------------------------

def _random_argv(rng: random.Random, env: Env) -> list[str]:
    """A random task command on the current store: add (under a parent), status, update or delete --cascade."""
    ids = sorted(state(tasks_dir(env)), key=lambda task_id: tuple(map(int, task_id.split("."))))
    parents = [task_id for task_id in ids if task_id.count(".") < 2]
    leaves = [task_id for task_id in ids if task_id.count(".") == 2]
    action = rng.choice(["add", "add", "status", "status", "update", "delete"])
    if action == "add" or not leaves:
        return ["task", "add", "--title", f"Task {rng.randrange(1000)}", *(["--parent", rng.choice(parents)]
                                                                         if parents and rng.random() < .9 else [])]
    if action == "status":
        return ["task", "status", rng.choice(leaves), rng.choice(["pending", "in-progress", "done"]), "--force"]
    if action == "update":
        return ["task", "update", rng.choice(leaves), "--set", f"title=Renamed {rng.randrange(1000)}",
                "--set", f"tests=make t{rng.randrange(9)}"]
    return ["task", "delete", rng.choice([task_id for task_id in ids if task_id.count(".") == 1] or leaves),
            "--cascade"]


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_broken_task_store(env: Env) -> None:
    """Kill ~150 task commands at random moments of their own lives: after each kill every task
    file is whole JSON, and after one more command the store validates, the tree shows every
    task and roll-up and progress agree.

    The kill moment is drawn from each command's measured duration on this machine, so most
    kills land mid-work (a loaded 2-core runner is several times slower than an idle one)."""
    rng = random.Random(2027)
    for epic in range(2):
        add(env, f"Epic {epic}")
        for feature in range(2):
            add(env, f"Feature {feature}", "--parent", str(epic + 1))
    durations: dict[str, list[float]] = {}
    for _ in range(12):  # calibration: whole, unkilled runs of each kind
        argv = _random_argv(rng, env)
        started = time.monotonic()
        subprocess.run([str(REPO / "bin" / "memory"), *argv], cwd=env.project, env=env.environ(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        durations.setdefault(argv[1], []).append(time.monotonic() - started)
    journal = env.project_dir / ".cache" / "tasks.journal"
    kills = rounds = halfway = 0
    for round_ in range(150):
        argv = _random_argv(rng, env)
        measured = durations.get(argv[1]) or [max(max(values) for values in durations.values())]
        journaled_before = journal.exists()
        typical = sorted(measured)[len(measured) // 2]
        started = time.monotonic()
        proc = subprocess.Popen([str(REPO / "bin" / "memory"), *argv], cwd=env.project, env=env.environ(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rounds += 1
        try:  # a random moment of its life, mostly after the interpreter started: the writes come last
            proc.wait(timeout=rng.uniform(0.25 * typical, typical))
            durations.setdefault(argv[1], []).append(time.monotonic() - started)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            halfway += journal.exists() and not journaled_before
        state(tasks_dir(env))  # every task file whole JSON, straight after the kill
        if (env.project_dir / "task-index.json").exists():
            json.loads((env.project_dir / "task-index.json").read_text())  # never half-written either
        if round_ % 15 == 14:
            env.ok("task", "list")  # one more command completes what was killed
            assert_whole(env)
    env.ok("task", "list")
    assert_whole(env)
    print(f"\ntask crash safety: {kills} of {rounds} task commands killed with SIGKILL ({halfway} amid writing "
          "several files, completed by the next command), 0 broken stores")
    assert kills >= rounds // 3, f"only {kills} of {rounds} commands were killed: the kill window missed their work"


WORKER = textwrap.dedent("""
    import json, random, sys
    sys.path.insert(0, {scripts!r})
    from _lib.base import errors
    from _lib.tasks import taskstore as tasks
    from _lib.workspace.scopes import Workspace

    worker, steps = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(worker)
    acked = {{}}  # task id -> (title, status, tests) as this worker last left it, or None once deleted
    def store():
        return tasks.TaskStore(Workspace())
    for step in range(steps):
        mine = [task_id for task_id, value in acked.items() if value is not None]
        action = rng.choice(["add", "add", "add", "update", "status", "delete"]) if mine else "add"
        try:
            if action == "add":
                title = f"w{{worker}} s{{step}}"
                created = store().add(title, parent=rng.choice(["1.1", "1.2", "2.1"]))["task"]
                acked[created["id"]] = [title, "pending", []]
            elif action == "update":
                task_id = rng.choice(mine)
                title, tests = f"w{{worker}} s{{step}} renamed", [f"make w{{worker}}-{{step}}"]
                store().update(task_id, {{"title": title, "tests": tests}})
                acked[task_id][0], acked[task_id][2] = title, tests
            elif action == "status":
                task_id, status = rng.choice(mine), rng.choice(["pending", "in-progress", "done"])
                store().set_status(task_id, status, force=True)
                acked[task_id][1] = status
            else:
                task_id = rng.choice(mine)
                store().delete(task_id)
                acked[task_id] = None
        except errors.Busy:
            pass  # the lock was held too long: refused, nothing acknowledged
    print(json.dumps(acked))
""")


def test_concurrent_task_writers_lose_nothing(env: Env) -> None:
    for epic in ("Epic 1", "Epic 2"):
        add(env, epic)
    add(env, "Feature", "--parent", "1")
    add(env, "Feature", "--parent", "1")
    add(env, "Feature", "--parent", "2")
    script = env.root / "worker.py"
    script.write_text(WORKER.format(scripts=str(SCRIPTS)))
    workers = [subprocess.Popen([sys.executable, str(script), str(n), "25"], cwd=env.project, env=env.environ(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(6)]
    live: dict[str, Any] = {}  # id -> [title, status, tests] as its worker last left it
    deleted: set[str] = set()   # a worker deletes only its own task, so a later add may reuse the id
    created = 0
    for proc in workers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]
        acked = json.loads(out.decode().strip().splitlines()[-1])
        created += len(acked)
        mine = {task_id: value for task_id, value in acked.items() if value is not None}
        assert not set(mine) & set(live), "two writers hold the same task"
        live.update(mine)
        deleted.update(task_id for task_id, value in acked.items() if value is None)
    env.ok("task", "list")
    for task_id, expected in live.items():
        entity = task_file(env, task_id)
        assert [entity["title"], entity["status"], entity["tests"]] == expected, task_id
    assert set(state(tasks_dir(env))) == {"1", "2", "1.1", "1.2", "2.1"} | set(live), "a deleted task came back"
    assert_whole(env)
    print(f"\ntask concurrency: 6 processes x 25 operations, {created} tasks created, {len(live)} kept, "
          f"{len(deleted - set(live))} deleted, 0 lost")


# -- trust for test commands -----------------------------------------------------------------------------

def subagent_stop(cwd: Path) -> dict[str, Any]:
    return {"session_id": "04c5b473-c203-4686-9b15-b07b81ab8157", "cwd": str(cwd), "hook_event_name": "SubagentStop",
            "agent_type": AGENT, "stop_hook_active": False, "last_assistant_message": "Done."}


def stop_subagent(env: Env, project: Path, **extra_env: str) -> dict[str, Any] | None:
    """Run the SubagentStop hook as Claude Code does; its JSON answer, if any."""
    environ = env.environ(CLAUDE_PROJECT_DIR=str(project), CLAUDE_PLUGIN_DATA=str(env.root / "plugin-data"),
                          **extra_env)
    proc = subprocess.run([sys.executable, "-S", str(HOOKS / "subagent-validation.py")], cwd=project, env=environ,
                          input=json.dumps(subagent_stop(project)).encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def git(cwd: Path, *args: str) -> str:
    environ = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=environ, check=True, capture_output=True, text=True).stdout


def clone_with_a_planted_test(env: Env, command: str) -> Path:
    """A repository whose committed task (in progress, for AGENT) has test `command`, cloned elsewhere."""
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    add(env, "Build it", "--parent", "1.1", "--agent", AGENT, "--test", command)
    add(env, "Other", "--parent", "1.1")
    env.ok("task", "status", "1.1.1", "in-progress")
    git(env.project, "add", "-A")
    git(env.project, "commit", "-q", "-m", "plan")
    clone = env.root / "clone"
    git(env.root, "clone", "-q", str(env.project), str(clone))
    return clone


def test_a_cloned_repositorys_test_commands_run_only_once_trusted(env: Env) -> None:
    clone = clone_with_a_planted_test(env, "touch marker-1")
    clone_task = clone / ".claude" / "memory" / "tasks" / "1.1.1.json"
    env.ok("task", "trust")  # trusting the original does not trust the clone
    answer = stop_subagent(env, clone)
    assert not (clone / "marker-1").exists(), "an untrusted command ran"
    message = answer["systemMessage"] if answer else ""
    assert "task 1.1.1 not validated" in message and "`touch marker-1`" in message
    assert "`memory task trust`" in message and str(clone.resolve()) in message
    assert set(answer) == {"systemMessage"}, "only the user is told: the agent is not asked to trust"
    assert "validationResults" not in json.loads(clone_task.read_text())

    listed = env.ok("task", "trust", "--list", "--json", cwd=clone).json()
    assert listed["changed"] is False and [(row["command"], row["trusted"]) for row in listed["commands"]] == [
        ("touch marker-1", False)]
    assert not (clone / "marker-1").exists()
    trusted = env.ok("task", "trust", cwd=clone)
    assert "touch marker-1" in trusted.out and "Trusted 1 command" in trusted.out
    assert git(clone, "status", "--porcelain") == "", "trust writes nothing into the repository"
    record = json.loads((env.global_dir / ".cache" / "task-trust.json").read_text())
    assert str(clone.resolve()) in record["repositories"]

    assert stop_subagent(env, clone) is None
    assert (clone / "marker-1").exists(), "the trusted command ran"
    assert json.loads(clone_task.read_text())["status"] == "done"

    env.ok("task", "status", "1.1.1", "in-progress", cwd=clone)
    entity = json.loads(clone_task.read_text())
    entity["tests"] = ["touch marker-2"]  # changed by a pull, a branch, an edit
    clone_task.write_text(json.dumps(entity, indent=2))
    answer = stop_subagent(env, clone)
    assert not (clone / "marker-2").exists(), "a changed command ran on the old trust"
    assert answer and "`touch marker-2`" in answer["systemMessage"]
    env.ok("task", "trust", cwd=clone)
    assert stop_subagent(env, clone) is None and (clone / "marker-2").exists()

    env.ok("task", "status", "1.1.1", "in-progress", cwd=clone)
    revoked = env.ok("task", "trust", "--revoke", "--json", cwd=clone).json()
    assert revoked == {"repository": str(clone.resolve()), "revoked": True}
    (clone / "marker-2").unlink()
    assert stop_subagent(env, clone) is not None and not (clone / "marker-2").exists()


def test_a_trust_record_inside_the_repository_is_no_trust(env: Env) -> None:
    from _lib.tasks import trust as tasktrust

    clone = clone_with_a_planted_test(env, "touch marker")
    inside = clone / ".config-in-repo"
    forged = {"version": 1, "repositories": {str(clone.resolve()): {
        "commands": {tasktrust.digest("touch marker"): "touch marker"}}}}
    (inside / "memory" / ".cache").mkdir(parents=True)
    (inside / "memory" / ".cache" / "task-trust.json").write_text(json.dumps(forged))
    answer = stop_subagent(env, clone, CLAUDE_CONFIG_DIR=str(inside))
    assert answer is not None and not (clone / "marker").exists()
    refused = env.fails("task", "trust", cwd=clone, env={"CLAUDE_CONFIG_DIR": str(inside)})
    assert "inside the repository" in refused.err


def test_tasks_with_only_deliverables_need_no_trust(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    add(env, "Write it", "--parent", "1.1", "--agent", AGENT, "--deliverable", "out.txt")
    env.ok("task", "status", "1.1.1", "in-progress")
    (env.project / "out.txt").write_text("x")
    assert stop_subagent(env, env.project) is None
    assert task_file(env, "1.1.1")["status"] == "done"


def test_adding_a_test_command_says_it_needs_trust(env: Env) -> None:
    add(env, "Epic")
    created = env.ok("task", "add", "--title", "T", "--parent", "1", "--test", "make check")
    assert "`memory task trust`" in created.out
    env.ok("task", "trust")
    assert env.ok("task", "add", "--title", "U", "--parent", "1", "--test", "make check", "--json").json()[
        "untrustedTests"] == []
    assert "`memory task trust`" in env.ok("task", "update", "1.2", "--set", "tests=make other").out
    assert env.ok("task", "trust", "--json").json()["changed"] is True


# -- redaction of task fields ----------------------------------------------------------------------------

@pytest.mark.parametrize("option, field", [
    ("--title", "title"), ("--description", "description"), ("--test", "tests"), ("--deliverable", "deliverables"),
    ("--criterion", "acceptanceCriteria"), ("--agent", "agent")])
def test_task_add_redacts_every_text_field(env: Env, option: str, field: str) -> None:
    args = ["task", "add"] + ([] if option == "--title" else ["--title", "Deploy"])
    result = env.ok(*args, option, f"deploy with {SECRET}", "--json")
    stored = (tasks_dir(env) / "1.json").read_text()
    assert SECRET not in stored and SECRET not in result.out
    value = json.loads(stored)[field]
    assert "[REDACTED:" in (value if isinstance(value, str) else value[0])
    assert "redacted" in result.err


@pytest.mark.parametrize("patch", [
    {"title": f"t {SECRET}"}, {"description": f"d {SECRET}"}, {"tests": [f"curl -H 'token: {SECRET}' x"]},
    {"deliverables": [f"out/{SECRET}.txt"]}, {"acceptanceCriteria": [f"uses {SECRET}"]}, {"agent": SECRET},
    {"validationResults": {"tests": [{"command": "x", "exitCode": 0, "timedOut": False, "outputTail": SECRET}]}}])
def test_task_update_patch_redacts_every_field(env: Env, patch: dict[str, Any]) -> None:
    add(env, "Deploy")
    env.ok("task", "update", "1", "--patch", json.dumps(patch))
    stored = (tasks_dir(env) / "1.json").read_text()
    assert SECRET not in stored and "[REDACTED:" in stored


def test_task_update_set_redacts_too(env: Env) -> None:
    add(env, "Deploy")
    env.ok("task", "update", "1", "--set", f"tests=export TOKEN={SECRET} && make")
    stored = (tasks_dir(env) / "1.json").read_text()
    assert SECRET not in stored and "[REDACTED:" in stored


def test_test_output_recorded_by_the_hook_is_redacted(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    add(env, "Leaky", "--parent", "1.1", "--agent", AGENT, "--test", "cat leak.txt")
    (env.project / "leak.txt").write_text(f"debug: {SECRET}\n")
    env.ok("task", "trust")
    env.ok("task", "status", "1.1.1", "in-progress")
    assert stop_subagent(env, env.project) is None
    results = task_file(env, "1.1.1")["validationResults"]
    assert results["testsPass"] is True and "[REDACTED:" in results["tests"][0]["outputTail"]
    assert SECRET not in (tasks_dir(env) / "1.1.1.json").read_text()
