"""The task hooks as Claude Code runs them: `python -S hooks/<name>.py` with the event's JSON on stdin.

Payloads have the shape Claude Code sends (recorded in the reference hook payloads):
SubagentStop carries `agent_type` (`plugin:agent`, a built-in name, or "" during
compaction); PostToolUse for TodoWrite carries `tool_input: {"todos": [...]}`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import HOOKS, Env, snapshot

SESSION = "04c5b473-c203-4686-9b15-b07b81ab8157"


def subagent_stop(env: Env, agent_type: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": f"{env.home}/.claude/projects/-project/{SESSION}.jsonl",
        "cwd": str(env.project), "prompt_id": "a95f1720-5112-4ebd-9331-bb5648207c39", "permission_mode": "default",
        "agent_id": "ae258d1585810e1e5", "agent_type": agent_type, "effort": {"level": "medium"},
        "hook_event_name": "SubagentStop", "stop_hook_active": False,
        "agent_transcript_path":
            f"{env.home}/.claude/projects/-project/{SESSION}/subagents/agent-ae258d1585810e1e5.jsonl",
        "last_assistant_message": "Done.",
        "background_tasks": [{"id": "ae258d1585810e1e5", "type": "subagent", "status": "running",
                              "description": "Implement", "agent_type": agent_type}],
        "session_crons": [],
    }


def todo_write(env: Env, todos: list[dict[str, str]], session: str = SESSION) -> dict[str, Any]:
    return {
        "session_id": session, "transcript_path": f"{env.home}/.claude/projects/-project/{session}.jsonl",
        "cwd": str(env.project), "prompt_id": "18621ecf-6243-453e-a08f-c3c80be74a61", "permission_mode": "default",
        "effort": {"level": "medium"}, "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
        "tool_input": {"todos": todos},
        "tool_response": {"oldTodos": [], "newTodos": todos},
        "tool_use_id": "toolu_01", "duration_ms": 3,
    }


def todo(content: str, status: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": content + "ing"}


def run_hook(env: Env, name: str, stdin: str | bytes | dict[str, Any], **extra_env: str) -> subprocess.CompletedProcess:
    data = json.dumps(stdin) if isinstance(stdin, dict) else stdin
    environ = env.environ(**{"CLAUDE_PROJECT_DIR": str(env.project),
                             "CLAUDE_PLUGIN_DATA": str(env.root / "plugin-data"), **extra_env})
    proc = subprocess.run([sys.executable, "-S", str(HOOKS / f"{name}.py")], cwd=env.project, env=environ,
                          input=data.encode() if isinstance(data, str) else data, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b"", proc.stdout.decode()  # these hooks never add anything to Claude's context
    return proc


def task(env: Env, task_id: str) -> dict[str, Any]:
    return json.loads((env.project_dir / "tasks" / f"{task_id}.json").read_text())


def hook_log(env: Env) -> str:
    path = env.root / "plugin-data" / "hooks.log"
    return path.read_text() if path.exists() else ""


# -- SubagentStop validation --------------------------------------------------------------------------

def plan_for(env: Env, *task_args: str, agent: str = "testplugin:implementer", start: bool = True) -> None:
    """Epic 1 > feature 1.1 > tasks 1.1.1 (for `agent`, with `task_args`) and 1.1.2; the
    test commands trusted, as the user does once (tests/test_task_safety.py covers refusal)."""
    env.ok("task", "add", "--title", "Epic")
    env.ok("task", "add", "--title", "Feature", "--parent", "1")
    env.ok("task", "add", "--title", "Build it", "--parent", "1.1", "--agent", agent, *task_args)
    env.ok("task", "add", "--title", "Other", "--parent", "1.1")
    env.ok("task", "trust")
    if start:
        env.ok("task", "status", "1.1.1", "in-progress")


def test_passing_tests_and_present_deliverables_complete_the_task_and_roll_up(env: Env) -> None:
    plan_for(env, "--test", "test -f out.txt", "--test", "echo checking", "--deliverable", "out.txt",
             "--deliverable", "docs/*.md")
    (env.project / "out.txt").write_text("x")
    (env.project / "docs").mkdir()
    (env.project / "docs" / "guide.md").write_text("x")
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    stored = task(env, "1.1.1")
    assert stored["status"] == "done" and stored["completedAt"]
    results = stored["validationResults"]
    assert results["testsPass"] is True and results["deliverablesExist"] is True
    assert results["agent"] == "testplugin:implementer" and results["missingDeliverables"] == []
    assert [run["exitCode"] for run in results["tests"]] == [0, 0]
    assert "checking" in results["tests"][1]["outputTail"]
    assert task(env, "1.1")["status"] == "in-progress"  # 1.1.2 is still pending
    progress = {entry["id"]: entry["progress"] for entry in env.ok("task", "list", "--json").json()["tasks"]}
    assert progress["1.1"] == progress["1"] == {"completed": 1, "total": 2}
    assert "marked done" in hook_log(env)
    assert env.ok("task", "validate").code == 0


def test_failing_tests_or_missing_deliverables_leave_it_in_progress(env: Env) -> None:
    plan_for(env, "--test", "echo boom >&2; exit 3", "--deliverable", "missing.txt")
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    stored = task(env, "1.1.1")
    assert stored["status"] == "in-progress"
    results = stored["validationResults"]
    assert results["testsPass"] is False and results["deliverablesExist"] is False
    assert results["tests"][0]["exitCode"] == 3 and "boom" in results["tests"][0]["outputTail"]
    assert results["missingDeliverables"] == ["missing.txt"]

    (env.project / "missing.txt").write_text("x")  # deliverable now there, tests still failing
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    results = task(env, "1.1.1")["validationResults"]
    assert (results["testsPass"], results["deliverablesExist"]) == (False, True)
    assert task(env, "1.1.1")["status"] == "in-progress"


def test_tests_run_in_the_project_directory_with_a_time_limit(env: Env) -> None:
    plan_for(env, "--test", "pwd > where.txt", "--test", "sleep 30")
    started = time.monotonic()
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"),
             CLAUDE_MEMORY_TASK_TEST_TIMEOUT="1")
    assert time.monotonic() - started < 15
    assert (env.project / "where.txt").read_text().strip() == str(env.project.resolve())
    runs = task(env, "1.1.1")["validationResults"]["tests"]
    assert runs[0]["exitCode"] == 0 and runs[1]["timedOut"] is True and runs[1]["exitCode"] is None
    assert task(env, "1.1.1")["status"] == "in-progress"


def test_a_plain_agent_name_matches_the_plugin_agent(env: Env) -> None:
    plan_for(env, "--test", "true", agent="implementer")
    run_hook(env, "subagent-validation", subagent_stop(env, "memory:implementer"))
    assert task(env, "1.1.1")["status"] == "done"


@pytest.mark.parametrize("agent_type", ["", "   ", "testplugin:reviewer", "implementer-two", None, 7])
def test_other_agents_and_compaction_stops_change_nothing(env: Env, agent_type: Any) -> None:
    plan_for(env, "--test", "true")
    before = snapshot(env.project_dir)
    payload = subagent_stop(env, "x")
    payload["agent_type"] = agent_type
    run_hook(env, "subagent-validation", payload)
    assert snapshot(env.project_dir) == before


def test_only_in_progress_tasks_with_something_to_check_are_validated(env: Env) -> None:
    plan_for(env, "--test", "true", start=False)  # pending: not validated
    env.ok("task", "add", "--title", "Nothing to check", "--parent", "1.1", "--agent", "testplugin:implementer")
    env.ok("task", "status", "1.1.3", "in-progress")
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    assert task(env, "1.1.1")["status"] == "pending" and "validationResults" not in task(env, "1.1.1")
    assert task(env, "1.1.3")["status"] == "in-progress" and "validationResults" not in task(env, "1.1.3")


def test_unfinished_dependencies_keep_a_validated_task_open(env: Env) -> None:
    plan_for(env, "--test", "true")
    env.ok("task", "update", "1.1.1", "--set", "dependencies=1.1.2")
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    stored = task(env, "1.1.1")
    assert stored["validationResults"]["testsPass"] is True and stored["status"] == "in-progress"


def test_subagent_stop_without_a_task_store_creates_nothing(env: Env) -> None:
    run_hook(env, "subagent-validation", subagent_stop(env, "testplugin:implementer"))
    assert not env.project_dir.exists()


# -- TodoWrite capture ---------------------------------------------------------------------------------

def tree(env: Env) -> list[dict[str, Any]]:
    return env.ok("task", "tree", "--json").json()["tasks"]


def test_todos_become_tasks_under_a_session_feature(env: Env) -> None:
    todos = [todo("Write the parser", "completed"), todo("Add tests", "in_progress"), todo("Update docs", "pending")]
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    (epic,) = tree(env)
    assert epic["title"] == "Claude sessions" and epic["type"] == "epic"
    (feature,) = epic["children"]
    assert feature["title"].startswith("Session 20") and feature["title"].endswith(SESSION[:8])
    assert [(t["title"], t["status"]) for t in feature["children"]] == [
        ("Write the parser", "done"), ("Add tests", "in-progress"), ("Update docs", "pending")]
    assert feature["status"] == "in-progress" and feature["progress"] == {"completed": 1, "total": 3}
    assert task(env, "1.1")["sessionId"] == SESSION and task(env, "1")["origin"] == "todowrite"
    assert task(env, "1.1.1")["completedAt"] and task(env, "1.1.2")["startedAt"]
    assert env.ok("task", "validate").code == 0


def test_repeated_calls_are_idempotent_and_later_calls_update_statuses(env: Env) -> None:
    todos = [todo("Write the parser", "in_progress"), todo("Add tests", "pending")]
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    before = snapshot(env.project_dir)
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    assert snapshot(env.project_dir) == before

    todos = [todo("Write the parser", "completed"), todo("Add tests", "completed"), todo("Ship it", "pending")]
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    (feature,) = tree(env)[0]["children"]
    assert [(t["id"], t["title"], t["status"]) for t in feature["children"]] == [
        ("1.1.1", "Write the parser", "done"), ("1.1.2", "Add tests", "done"), ("1.1.3", "Ship it", "pending")]
    run_hook(env, "todowrite-capture", todo_write(env, [dict(t, status="completed") for t in todos]))
    assert tree(env)[0]["status"] == "done"
    assert env.ok("task", "validate").code == 0


def test_dropped_todos_are_removed_only_while_pending(env: Env) -> None:
    run_hook(env, "todowrite-capture", todo_write(env, [todo("A", "completed"), todo("B", "in_progress"),
                                                        todo("C", "pending")]))
    run_hook(env, "todowrite-capture", todo_write(env, [todo("D", "pending")]))
    (feature,) = tree(env)[0]["children"]
    assert [(t["title"], t["status"]) for t in feature["children"]] == [
        ("A", "done"), ("B", "in-progress"), ("D", "pending")]


def test_each_session_gets_its_own_feature_under_one_epic(env: Env) -> None:
    run_hook(env, "todowrite-capture", todo_write(env, [todo("First", "pending")]))
    other = "504a77a6-78c7-4248-a1f8-0366310199d3"
    run_hook(env, "todowrite-capture", todo_write(env, [todo("Second", "pending")], session=other))
    (epic,) = tree(env)
    assert [feature["title"][-8:] for feature in epic["children"]] == [SESSION[:8], other[:8]]
    assert [t["title"] for t in epic["children"][1]["children"]] == ["Second"]


def test_capture_keeps_user_tasks_and_skips_bad_todos(env: Env) -> None:
    env.ok("task", "add", "--title", "My own epic")
    todos = [todo("Good", "pending"), {"content": "", "status": "pending"}, {"content": "No status"},
             {"content": "Bad status", "status": "blocked"}, "not a dict", todo("  Spaced \n out  ", "pending")]
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    epics = tree(env)
    assert [epic["title"] for epic in epics] == ["My own epic", "Claude sessions"]
    assert [t["title"] for t in epics[1]["children"][0]["children"]] == ["Good", "Spaced out"]


@pytest.mark.parametrize("change", ["other tool", "no todos", "no session", "capture off", "not a project"])
def test_capture_is_skipped(env: Env, change: str) -> None:
    payload = todo_write(env, [todo("Something", "pending")])
    extra: dict[str, str] = {}
    if change == "other tool":
        payload["tool_name"] = "Write"
    elif change == "no todos":
        payload["tool_input"] = {"todos": "nope"}
    elif change == "no session":
        payload["session_id"] = ""
    elif change == "capture off":
        env.ok("config", "capture.capture_todos", "false", "--scope", "project")
    else:
        plain = env.root / "plain"
        plain.mkdir()
        payload["cwd"] = str(plain)
        extra["CLAUDE_PROJECT_DIR"] = str(plain)
    run_hook(env, "todowrite-capture", payload, **extra)
    assert not (env.project_dir / "tasks").exists()
    assert not (env.root / "plain" / ".claude").exists()


def test_an_empty_todo_list_creates_nothing(env: Env) -> None:
    run_hook(env, "todowrite-capture", todo_write(env, []))
    assert not env.project_dir.exists()


# -- malformed input: both hooks fail open ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["subagent-validation", "todowrite-capture"])
@pytest.mark.parametrize("stdin", [b"", b"   \n", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe\x00garbage",
                                   b'{"tool_input": "x", "agent_type": 5}', b'{"hook_event_name": "PostToolUse"}',
                                   b'{"tool_name": "TodoWrite", "tool_input": {"todos": [{"content": 1}]}, '
                                   b'"session_id": "s"}'])
def test_malformed_or_empty_stdin_is_a_quiet_no_op(env: Env, name: str, stdin: bytes) -> None:
    run_hook(env, name, stdin)
    assert not env.project_dir.exists() or not (env.project_dir / "tasks").exists()


def test_a_broken_config_falls_back_to_the_defaults(env: Env) -> None:
    env.write_broken(env.project_dir / "config.json", "{broken")
    run_hook(env, "todowrite-capture", todo_write(env, [todo("Something", "pending")]))
    assert "config problem" in hook_log(env)
    assert [t["title"] for t in tree(env)[0]["children"][0]["children"]] == ["Something"]
    env.ok("file", "write", "config.json", "--content", "{}")  # the file command can repair it


def test_an_internal_error_is_logged_and_the_hook_still_exits_0(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    (env.project_dir / "tasks").write_text("not a directory")  # the task store cannot be created
    env.unchecked.add(env.project_dir / "tasks")
    run_hook(env, "todowrite-capture", todo_write(env, [todo("Something", "pending")]))
    assert "Not a directory" in hook_log(env)  # the cause, whether raised as it came or as a refused write


def test_hooks_only_use_the_standard_library(env: Env) -> None:
    for name in ("subagent-validation", "todowrite-capture"):
        source = (HOOKS / f"{name}.py").read_text()
        assert "yaml" not in source and "requests" not in source and "jsonschema" not in source
    for module in ("tasks/taskstore", "tasks/entity", "tasks/rules", "tasks/files", "tasks/journal",
                   "tasks/queries", "tasks/integrity"):
        text = (Path(HOOKS).parent / "scripts" / "_lib" / f"{module}.py").read_text()
        assert "deps.load" not in text
