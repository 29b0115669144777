"""Task-store logic behind two hooks: SubagentStop validation and TodoWrite capture.

SubagentStop: the stopping agent's in-progress tasks get their `tests` run (with a time
limit) and their `deliverables` checked; results are recorded and a task that passes
both is marked done and rolled up. Test commands come from files a repository brings
along, so they run only once the user has trusted them for this repository
(tasktrust.py); a task with a command not trusted is left as it is. TodoWrite: Claude's
todo list is mirrored into tasks under a per-session feature, so the plan survives the
session.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..workspace.scopes import Workspace

from ..base import clock, redact
from . import trust as tasktrust
from .entity import MAX_TITLE, sort_ids
from .taskstore import TaskStore


# -- hooks: SubagentStop validation ---------------------------------------------------------

TEST_TIMEOUT = 60.0         # seconds per test command
VALIDATION_BUDGET = 150.0   # seconds for all the test commands of one SubagentStop
OUTPUT_TAIL = 2000          # characters of a test's output kept in validationResults


def agent_matches(assigned: str, stopping: str) -> bool:
    """Whether a task assigned to `assigned` belongs to the stopping agent `stopping`.

    Exact match, or a plain name (`reviewer`) against a plugin agent (`memory:reviewer`).
    """
    return assigned == stopping or (":" not in assigned and stopping.rpartition(":")[2] == assigned)


def run_test(command: str, cwd: Path, timeout: float) -> dict[str, Any]:
    """Run one test command with `sh -c` in `cwd`; its whole process group is killed at the time limit."""
    import signal
    import subprocess
    import time

    started = time.monotonic()
    result: dict[str, Any] = {"command": command, "exitCode": None, "timedOut": False}
    if timeout <= 0:
        result.update(timedOut=True, durationMs=0, outputTail="not run: the validation time budget was used up")
        return result
    try:
        proc = subprocess.Popen(command, shell=True, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        result.update(durationMs=0, outputTail=f"could not start: {exc}")
        return result
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        result["timedOut"] = True
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            output, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a detached grandchild keeps the pipe open: give up on it
            proc.kill()
            output = b""
    result["exitCode"] = None if result["timedOut"] else proc.returncode
    result["durationMs"] = int((time.monotonic() - started) * 1000)
    result["outputTail"] = (output or b"").decode("utf-8", "replace")[-OUTPUT_TAIL:]
    return result


def deliverable_exists(project_dir: Path, deliverable: str) -> bool:
    """A deliverable path (relative to the project, or absolute; glob patterns allowed) exists."""
    path = os.path.join(str(project_dir), os.path.expanduser(deliverable))
    if any(char in deliverable for char in "*?["):
        import glob

        return bool(glob.glob(path, recursive=True))
    return os.path.exists(path)


def validate_agent_tasks(workspace: Workspace, agent_type: str, *, test_timeout: float | None = None,
                         budget: float = VALIDATION_BUDGET) -> list[dict[str, Any]]:
    """SubagentStop: check the in-progress tasks assigned to the stopping agent.

    Runs each task's `tests` in the project directory (time-limited), checks its
    `deliverables` exist, records `validationResults` (test output redacted), and marks
    the task done when both pass and its dependencies are done (then rolls up). Tasks with
    neither tests nor deliverables have nothing to check and are left alone; a task with
    a test command the user has not trusted for this repository is not checked at all
    (its outcome lists the commands under `untrusted`). The tests run without the lock;
    the results are recorded under it, if the task is still in progress.
    """
    import time

    store = TaskStore(workspace)
    if not agent_type or not store.tasks_dir.is_dir():
        return []
    per_test = TEST_TIMEOUT if test_timeout is None else test_timeout
    deadline = time.monotonic() + budget
    checked: list[tuple[str, dict[str, Any]]] = []
    refused: list[dict[str, Any]] = []
    for task_id in sort_ids(store.entries):
        entry = store.entries[task_id]
        if entry["status"] != "in-progress" or not agent_matches(entry.get("agent") or "", agent_type):
            continue
        if any(child in store.entries for child in entry["children"]):
            continue
        entity = store.task(task_id)
        tests = tasktrust.test_commands(entity)
        deliverables = [item for item in entity.get("deliverables") or [] if isinstance(item, str) and item.strip()]
        if not tests and not deliverables:
            continue
        untrusted = tasktrust.untrusted(workspace, tests)
        if untrusted:
            refused.append({"id": task_id, "testsPass": None, "deliverablesExist": None, "done": False,
                            "blockedBy": [], "untrusted": untrusted})
            continue
        started = time.monotonic()
        runs = [run_test(test, workspace.project_dir, min(per_test, deadline - time.monotonic())) for test in tests]
        if runs:
            from ..base import redact

            for run in runs:  # what a test prints may hold a secret, and task files are committed
                run["outputTail"] = redact.scrub(run["outputTail"], "redact", "test output")[0]
        missing = [item for item in deliverables if not deliverable_exists(workspace.project_dir, item)]
        checked.append((task_id, {
            "testsPass": all(run["exitCode"] == 0 for run in runs),
            "deliverablesExist": not missing,
            "checkedAt": clock.now_iso(),
            "agent": agent_type,
            "durationMs": int((time.monotonic() - started) * 1000),
            "tests": runs,
            "missingDeliverables": missing,
        }))
    outcomes: list[dict[str, Any]] = list(refused)
    if not checked:
        return outcomes
    with store.mutation():
        for task_id, results in checked:
            current = store.entries.get(task_id)
            if current is None or current["status"] != "in-progress":
                continue  # changed while the tests ran
            entity = store.task(task_id)
            entity["validationResults"] = results
            entity["updatedAt"] = clock.now_iso()
            store.save(entity)
            outcome = {"id": task_id, "testsPass": results["testsPass"],
                       "deliverablesExist": results["deliverablesExist"], "done": False, "blockedBy": []}
            if results["testsPass"] and results["deliverablesExist"]:
                outcome["blockedBy"] = store.blockers(task_id)
                if not outcome["blockedBy"]:
                    store.set_status(task_id, "done")
                    outcome["done"] = True
            outcomes.append(outcome)
    return outcomes


# -- hooks: TodoWrite capture ---------------------------------------------------------------

TODO_STATUSES = {"pending": "pending", "in_progress": "in-progress", "completed": "done"}
TODO_ORIGIN = "todowrite"
SESSIONS_EPIC = "Claude sessions"
MAX_TODOS = 200


def todo_items(todos: object) -> list[tuple[str, str]]:
    """(title, status) of each well-formed todo of a TodoWrite `tool_input.todos` list."""
    items: list[tuple[str, str]] = []
    if not isinstance(todos, list):
        return items
    for todo in todos[:MAX_TODOS]:
        if not isinstance(todo, dict) or todo.get("status") not in TODO_STATUSES:
            continue
        content = todo.get("content")
        # redacted as the task store will store it, so a todo holding a secret matches its task next time
        title = " ".join(redact.scrub(content)[0].split())[:MAX_TITLE].rstrip() if isinstance(content, str) else ""
        if title:
            items.append((title, TODO_STATUSES[todo["status"]]))
    return items


def _sessions_epic(store: TaskStore) -> str | None:
    """The root epic holding captured sessions (the one marked as ours first)."""
    roots = sort_ids(task_id for task_id, entry in store.entries.items()
                     if entry["parent"] is None and entry.get("title") == SESSIONS_EPIC)
    marked = [task_id for task_id in roots if store.task(task_id).get("origin") == TODO_ORIGIN]
    return next(iter(marked or roots), None)


def _session_feature(store: TaskStore, epic: str, session_id: str) -> str | None:
    short = session_id[:8]
    for child in store.entries[epic]["children"]:
        entry = store.entries.get(child)
        if entry and entry.get("title", "").endswith(short) and store.task(child).get("sessionId") == session_id:
            return child
    return None


def capture_todos(workspace: Workspace, session_id: str, todos: object) -> dict[str, list[str]]:
    """Mirror a session's todo list into tasks: epic "Claude sessions" > feature "Session <date> <id>" > tasks.

    Todos are matched to the feature's tasks by their text; statuses follow the list
    (pending, in_progress -> in-progress, completed -> done) and roll up. A task whose
    todo left the list is deleted while it is still pending (and nothing depends on
    it); started and done ones stay. Repeating a call changes nothing.
    """
    summary: dict[str, list[str]] = {"created": [], "updated": [], "removed": []}
    if not isinstance(session_id, str) or not session_id.strip():
        return summary
    items = todo_items(todos)
    store = TaskStore(workspace)
    if not items and not store.tasks_dir.is_dir():
        return summary
    with store.mutation():
        epic = _sessions_epic(store)
        feature = _session_feature(store, epic, session_id) if epic else None
        if feature is None and not items:
            return summary
        if epic is None:
            epic = store.add(SESSIONS_EPIC, description="Todo lists of Claude Code sessions, kept by the memory plugin",
                             extra={"origin": TODO_ORIGIN})["task"]["id"]
            summary["created"].append(epic)
        if feature is None:
            title = f"Session {clock.now_iso()[:10]} {session_id[:8]}"
            extra = {"origin": TODO_ORIGIN, "sessionId": session_id}
            feature = store.add(title, parent=epic, extra=extra)["task"]["id"]
            summary["created"].append(feature)
        existing: dict[str, list[str]] = {}
        for child in store.entries[feature]["children"]:
            if child in store.entries:
                existing.setdefault(store.entries[child].get("title", ""), []).append(child)
        for title, status in items:
            matches = existing.get(title)
            if matches:
                task_id = matches.pop(0)
            else:
                task_id = store.add(title, parent=feature, extra={"origin": TODO_ORIGIN})["task"]["id"]
                summary["created"].append(task_id)
            if store.entries[task_id]["status"] != status and not store.entries[task_id]["children"]:
                store.set_status(task_id, status, force=True)
                summary["updated"].append(task_id)
        for leftovers in existing.values():
            for task_id in leftovers:
                entry = store.entries.get(task_id)
                if entry and entry["status"] == "pending" and not entry["children"] and not store.dependants([task_id]):
                    store.delete(task_id)
                    summary["removed"].append(task_id)
    return summary
