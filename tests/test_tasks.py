"""The work-breakdown task store (`memory task ...`): ids, roll-up, progress, dependencies, index, validation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import REPO, Env, schema_errors, snapshot

def add(env: Env, title: str, *args: str) -> dict[str, Any]:
    return env.ok("task", "add", "--title", title, *args, "--json").json()["task"]


def task_file(env: Env, task_id: str) -> dict[str, Any]:
    return json.loads((env.project_dir / "tasks" / f"{task_id}.json").read_text())


def index(env: Env) -> dict[str, dict[str, Any]]:
    data = json.loads((env.project_dir / "task-index.json").read_text())
    assert schema_errors(data, "task-index") == []
    return {entry["id"]: entry for entry in data["tasks"]}


def status_of(env: Env, *ids: str) -> list[str]:
    return [task_file(env, task_id)["status"] for task_id in ids]


def build_plan(env: Env) -> None:
    """1 Auth > 1.1 Login > (1.1.1 Form, 1.1.2 API), 1.2 Docs > 1.2.1 Write docs."""
    add(env, "Auth")
    add(env, "Login", "--parent", "1")
    add(env, "Form", "--parent", "1.1")
    add(env, "API", "--parent", "1.1")
    add(env, "Docs", "--parent", "1")
    add(env, "Write docs", "--parent", "1.2")


def assert_valid(env: Env) -> None:
    result = env.ok("task", "validate", "--json")
    assert result.json()["problems"] == [], result.out


# -- ids, types, hierarchy -------------------------------------------------------------------------

def test_ids_are_assigned_in_order_and_depth_sets_the_type(env: Env) -> None:
    assert add(env, "Auth")["id"] == "1"
    assert add(env, "Billing")["id"] == "2"
    feature = add(env, "Login", "--parent", "1")
    assert (feature["id"], feature["type"], feature["parent"]) == ("1.1", "feature", "1")
    task = add(env, "Form", "--parent", "1.1", "--description", "The form", "--deliverable", "src/Form.tsx",
               "--test", "npm test", "--criterion", "All tests pass", "--agent", "memory:implementer")
    assert (task["id"], task["type"], task["parent"]) == ("1.1.1", "task", "1.1")
    assert add(env, "API", "--parent", "1.1")["id"] == "1.1.2"
    assert add(env, "Signup", "--parent", "1")["id"] == "1.2"

    stored = task_file(env, "1.1.1")
    assert stored["description"] == "The form" and stored["deliverables"] == ["src/Form.tsx"]
    assert stored["tests"] == ["npm test"] and stored["acceptanceCriteria"] == ["All tests pass"]
    assert stored["agent"] == "memory:implementer" and stored["status"] == "pending"
    assert stored["startedAt"] is None and stored["completedAt"] is None
    assert task_file(env, "1")["children"] == ["1.1", "1.2"]
    assert task_file(env, "1.1")["children"] == ["1.1.1", "1.1.2"]
    assert task_file(env, "1")["parent"] is None
    entries = index(env)
    assert entries["1"]["children"] == ["1.1", "1.2"] and entries["1.1.2"]["parent"] == "1.1"
    assert entries["1.1.1"]["deliverables"] == ["src/Form.tsx"] and entries["1.1.1"]["agent"] == "memory:implementer"
    assert entries["2"] == {"id": "2", "type": "epic", "status": "pending", "title": "Billing", "parent": None,
                            "children": [], "dependencies": [], "progress": {"completed": 0, "total": 1}}
    assert_valid(env)


def test_numbers_continue_after_the_highest_and_ten_sorts_after_nine(env: Env) -> None:
    add(env, "Epic")
    for number in range(1, 11):
        add(env, f"Feature {number}", "--parent", "1")
    ids = [entry["id"] for entry in env.ok("task", "list", "--parent", "1", "--json").json()["tasks"]]
    assert ids == [f"1.{n}" for n in range(1, 11)]
    env.ok("task", "delete", "1.5")
    assert add(env, "Feature 11", "--parent", "1")["id"] == "1.11"


def test_a_fourth_level_is_refused(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    add(env, "Task", "--parent", "1.1")
    result = env.fails("task", "add", "--title", "Too deep", "--parent", "1.1.1")
    assert "deepest level" in result.err and "--parent 1.1" in result.err
    assert not (env.project_dir / "tasks" / "1.1.1.1.json").exists()
    assert "WBS id" in env.fails("task", "show", "1.1.1.1").err


def test_unknown_parent_and_bad_ids_are_refused(env: Env) -> None:
    assert "parent 7 does not exist" in env.fails("task", "add", "--title", "x", "--parent", "7").err
    assert "not a WBS id" in env.fails("task", "add", "--title", "x", "--parent", "1.0").err
    assert "no tasks yet" in env.fails("task", "show", "1").err
    assert "title" in env.fails("task", "add", "--title", "   ").err
    assert "limit is 200" in env.fails("task", "add", "--title", "x" * 201).err
    env.fails("task", "add", code=2)  # --title is required


# -- status, roll-up, progress -----------------------------------------------------------------------

def test_status_rolls_up_through_three_levels_with_progress_and_timestamps(env: Env) -> None:
    build_plan(env)
    assert status_of(env, "1", "1.1", "1.2") == ["pending"] * 3
    assert index(env)["1"]["progress"] == {"completed": 0, "total": 3}

    started = env.ok("task", "status", "1.1.1", "in-progress", "--json").json()
    assert [item["id"] for item in started["rolledUp"]] == ["1.1", "1"]
    assert status_of(env, "1.1.1", "1.1", "1", "1.2") == ["in-progress", "in-progress", "in-progress", "pending"]
    form = task_file(env, "1.1.1")
    assert form["startedAt"] and form["completedAt"] is None
    assert task_file(env, "1")["startedAt"]

    env.ok("task", "status", "1.1.1", "done")
    form = task_file(env, "1.1.1")
    assert form["completedAt"] and index(env)["1.1.1"]["progress"] == {"completed": 1, "total": 1}
    assert "progress" not in form  # derived: kept in the index only
    assert status_of(env, "1.1", "1") == ["in-progress", "in-progress"]
    assert index(env)["1.1"]["progress"] == {"completed": 1, "total": 2}
    assert index(env)["1"]["progress"] == {"completed": 1, "total": 3}

    env.ok("task", "status", "1.1.2", "done")
    assert status_of(env, "1.1", "1") == ["done", "in-progress"]
    assert task_file(env, "1.1")["completedAt"]
    env.ok("task", "status", "1.2.1", "done")
    assert status_of(env, "1.2", "1") == ["done", "done"]
    assert index(env)["1"]["progress"] == {"completed": 3, "total": 3}
    assert task_file(env, "1")["completedAt"]
    assert index(env)["1"]["status"] == "done" and index(env)["1"]["progress"] == {"completed": 3, "total": 3}

    env.ok("task", "status", "1.1.1", "pending")  # reopening rolls back up the chain
    assert status_of(env, "1.1", "1") == ["in-progress", "in-progress"]
    assert task_file(env, "1.1")["completedAt"] is None and task_file(env, "1")["completedAt"] is None
    assert task_file(env, "1.1.1")["startedAt"] is None
    env.ok("task", "status", "1.1.2", "pending")
    assert status_of(env, "1.1") == ["pending"]  # no child done or started
    assert status_of(env, "1") == ["in-progress"]  # 1.2 is still done
    assert_valid(env)


def test_no_child_done_means_pending_even_after_work_started(env: Env) -> None:
    build_plan(env)
    env.ok("task", "status", "1.1.1", "in-progress")
    env.ok("task", "status", "1.1.1", "pending")
    assert status_of(env, "1.1", "1") == ["pending", "pending"]
    assert task_file(env, "1")["startedAt"] is None


def test_a_parent_status_is_not_set_directly(env: Env) -> None:
    build_plan(env)
    result = env.fails("task", "status", "1.1", "done")
    assert "rolled up" in result.err and "1.1.1, 1.1.2" in result.err
    env.fails("task", "status", "1", "in-progress")
    env.fails("task", "status", "1.1.1", "finished", code=2)
    assert status_of(env, "1.1") == ["pending"]


def test_adding_and_deleting_children_keep_roll_up_and_progress(env: Env) -> None:
    build_plan(env)
    env.ok("task", "status", "1.1.1", "done")
    env.ok("task", "status", "1.1.2", "done")
    assert status_of(env, "1.1") == ["done"]
    add(env, "Remember me", "--parent", "1.1")  # a new pending child reopens the feature
    assert status_of(env, "1.1") == ["in-progress"]
    assert index(env)["1.1"]["progress"] == {"completed": 2, "total": 3}
    env.ok("task", "delete", "1.1.3")
    assert status_of(env, "1.1") == ["done"]
    assert index(env)["1"]["progress"] == {"completed": 2, "total": 3}
    assert_valid(env)


def test_setting_the_same_status_changes_nothing(env: Env) -> None:
    add(env, "Epic")
    env.ok("task", "status", "1", "done")
    before = (env.project_dir / "tasks" / "1.json").read_bytes()
    assert "already done" in env.ok("task", "status", "1", "done").out
    assert (env.project_dir / "tasks" / "1.json").read_bytes() == before


# -- dependencies -------------------------------------------------------------------------------------

def test_dependencies_must_exist(env: Env) -> None:
    add(env, "Epic")
    result = env.fails("task", "add", "--title", "x", "--parent", "1", "--depends", "1.9")
    assert "dependency 1.9 does not exist" in result.err
    assert not (env.project_dir / "tasks" / "1.1.json").exists()
    assert task_file(env, "1")["children"] == []
    add(env, "A", "--parent", "1")
    assert "does not exist" in env.fails("task", "update", "1.1", "--set", "dependencies=3").err


def test_depends_may_be_repeated_and_every_id_is_kept(env: Env) -> None:
    add(env, "Epic")
    add(env, "One", "--parent", "1")
    add(env, "Two", "--parent", "1")
    add(env, "Three", "--parent", "1")
    add(env, "Four", "--parent", "1", "--depends", "1.1", "--depends", "1.2,1.3")
    assert task_file(env, "1.4")["dependencies"] == ["1.1", "1.2", "1.3"]
    assert_valid(env)


def test_a_dependency_cycle_is_refused_and_named(env: Env) -> None:
    add(env, "Epic")
    add(env, "One", "--parent", "1")
    add(env, "Two", "--parent", "1")
    add(env, "Three", "--parent", "1", "--depends", "1.2")
    result = env.fails("task", "update", "1.2", "--set", "dependencies=1.3")
    assert "dependency cycle: 1.2 -> 1.3 -> 1.2" in result.err
    assert task_file(env, "1.2")["dependencies"] == []
    env.ok("task", "update", "1.3", "--set", "dependencies=1.2,1.1")
    result = env.fails("task", "update", "1.1", "--patch", '{"dependencies": ["1.3"]}')
    assert "dependency cycle: 1.1 -> 1.3 -> 1.1" in result.err
    env.ok("task", "update", "1.1", "--set", "dependencies=")
    assert "1.1 -> 1.1" in env.fails("task", "update", "1.1", "--set", "dependencies=1.1").err
    assert_valid(env)


def test_depending_on_an_ancestor_or_descendant_is_a_cycle(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    result = env.fails("task", "add", "--title", "x", "--parent", "1.1", "--depends", "1")
    assert "dependency cycle: 1.1.1 -> 1 -> 1.1 -> 1.1.1" in result.err
    assert "child" in result.err  # the hint explains the hierarchy edges
    add(env, "Task", "--parent", "1.1")
    assert "1 cannot depend on 1.1.1, which is part of it" in env.fails("task", "update", "1", "--set",
                                                                        "dependencies=1.1.1").err


def test_a_cycle_through_inherited_dependencies_is_refused(env: Env) -> None:
    for title in ("One", "Two"):
        add(env, title)
    add(env, "One.A", "--parent", "1")
    add(env, "Two.A", "--parent", "2")
    env.ok("task", "update", "2", "--set", "dependencies=1")  # all of 2 waits for all of 1
    result = env.fails("task", "update", "1.1", "--set", "dependencies=2.1")
    assert "dependency cycle: 1.1 -> 2.1 -> 1 -> 1.1" in result.err
    assert "inherits the dependency of 2 on 1" in result.err


def test_done_is_refused_while_dependencies_are_not_done_unless_forced(env: Env) -> None:
    build_plan(env)
    env.ok("task", "update", "1.1.2", "--set", "dependencies=1.1.1")
    result = env.fails("task", "status", "1.1.2", "done")
    assert "depends on 1.1.1 (pending)" in result.err and "--force" in result.err
    assert status_of(env, "1.1.2") == ["pending"]
    started = env.ok("task", "status", "1.1.2", "in-progress")  # starting early only warns
    assert "warning:" in started.err
    forced = env.ok("task", "status", "1.1.2", "done", "--force")
    assert "forced" in forced.out and status_of(env, "1.1.2") == ["done"]
    env.ok("task", "status", "1.1.1", "done")
    env.ok("task", "status", "1.2.1", "done")
    assert status_of(env, "1") == ["done"]


def test_inherited_dependencies_block_done(env: Env) -> None:
    build_plan(env)
    env.ok("task", "update", "1.2", "--set", "dependencies=1.1")
    assert "depends on 1.1 (pending)" in env.fails("task", "status", "1.2.1", "done").err


def test_ready_lists_pending_leaves_whose_dependencies_are_done(env: Env) -> None:
    build_plan(env)
    env.ok("task", "update", "1.1.2", "--set", "dependencies=1.1.1")
    env.ok("task", "update", "1.2", "--set", "dependencies=1.1")
    ready = env.ok("task", "ready", "--json").json()
    assert [entry["id"] for entry in ready["tasks"]] == ["1.1.1"]
    env.ok("task", "status", "1.1.1", "in-progress")
    assert env.ok("task", "ready", "--json").json()["count"] == 0
    assert "Nothing is ready" in env.ok("task", "ready").out
    env.ok("task", "status", "1.1.1", "done")
    assert [entry["id"] for entry in env.ok("task", "ready", "--json").json()["tasks"]] == ["1.1.2"]
    env.ok("task", "status", "1.1.2", "done")
    assert [entry["id"] for entry in env.ok("task", "ready", "--json").json()["tasks"]] == ["1.2.1"]
    assert "1.2.1" in env.ok("task", "ready").out


# -- update ----------------------------------------------------------------------------------------------

def test_update_sets_fields_and_applies_merge_patches(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1", "--description", "old", "--test", "make test")
    result = env.ok("task", "update", "1.1", "--set", "title=New title", "--set", "agent=memory:reviewer",
                    "--set", 'tests=["pytest -q", "ruff check"]', "--set", "deliverables=a.md, b.md", "--json").json()
    assert result["changed"] == ["agent", "deliverables", "tests", "title"]
    stored = task_file(env, "1.1")
    assert stored["title"] == "New title" and stored["agent"] == "memory:reviewer"
    assert stored["tests"] == ["pytest -q", "ruff check"] and stored["deliverables"] == ["a.md", "b.md"]
    assert index(env)["1.1"]["title"] == "New title"

    env.ok("task", "update", "1.1", "--patch",
           '{"description": null, "acceptanceCriteria": ["works"], "validationResults": {"testsPass": false}}')
    stored = task_file(env, "1.1")
    assert "description" not in stored and stored["acceptanceCriteria"] == ["works"]
    env.ok("task", "update", "1.1", "--patch", '{"validationResults": {"deliverablesExist": true}}')
    assert task_file(env, "1.1")["validationResults"] == {"testsPass": False, "deliverablesExist": True}
    env.ok("task", "update", "1.1", "--set", "agent=")
    assert task_file(env, "1.1")["agent"] is None
    assert "unchanged" in env.ok("task", "update", "1.1", "--set", "title=New title").out
    assert_valid(env)


@pytest.mark.parametrize("patch, message", [
    ('{"id": "9"}', "id cannot be changed"),
    ('{"type": "task"}', "type cannot be changed"),
    ('{"parent": "2"}', "parent cannot be changed"),
    ('{"children": []}', "children cannot be changed"),
    ('{"status": "done"}', "memory task status"),
    ('{"progress": {"completed": 5, "total": 5}}', "progress cannot be changed"),
    ('{"completedAt": null}', "completedAt cannot be changed"),
    ('{"priority": "high"}', "unknown task field"),
    ('{"tests": "npm test"}', "must be of type array"),
    ('{"dependencies": ["x"]}', "must be a WBS id"),
    ('{"title": ""}', "non-empty title"),
    ('{"title": null}', "non-empty title"),
    ('[1]', "must be a JSON object"),
    ('{nope', "not valid JSON"),
])
def test_update_never_breaks_invariants(env: Env, patch: str, message: str) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    before = (env.project_dir / "tasks" / "1.1.json").read_bytes()
    result = env.fails("task", "update", "1.1", "--patch", patch)
    assert message in result.err
    assert (env.project_dir / "tasks" / "1.1.json").read_bytes() == before


def test_update_needs_something_to_change(env: Env) -> None:
    add(env, "Epic")
    assert "nothing to update" in env.fails("task", "update", "1").err
    assert "KEY=VALUE" in env.fails("task", "update", "1", "--set", "title").err
    assert "status cannot be changed" in env.fails("task", "update", "1", "--set", "status=done").err


# -- delete -------------------------------------------------------------------------------------------------

def test_delete_is_refused_with_children_or_dependants_unless_cascade(env: Env) -> None:
    build_plan(env)
    env.ok("task", "update", "1.2.1", "--set", "dependencies=1.1.2")
    result = env.fails("task", "delete", "1.1")
    assert "1.1 has children: 1.1.1, 1.1.2" in result.err and "--cascade" in result.err
    result = env.fails("task", "delete", "1.1.2")
    assert "1.2.1 depends on 1.1.2" in result.err
    assert (env.project_dir / "tasks" / "1.1.2.json").exists()

    deleted = env.ok("task", "delete", "1.1", "--cascade", "--json").json()
    assert deleted["deleted"] == ["1.1", "1.1.1", "1.1.2"] and deleted["dependantsUpdated"] == ["1.2.1"]
    assert not any((env.project_dir / "tasks" / f"{task_id}.json").exists() for task_id in deleted["deleted"])
    assert task_file(env, "1.2.1")["dependencies"] == []
    assert task_file(env, "1")["children"] == ["1.2"]
    assert index(env)["1"]["progress"] == {"completed": 0, "total": 1}
    assert set(index(env)) == {"1", "1.2", "1.2.1"}
    env.ok("task", "delete", "1.2.1")
    assert task_file(env, "1.2")["children"] == []
    assert "does not exist" in env.fails("task", "delete", "1.2.1").err
    assert_valid(env)


def test_deleting_the_last_open_child_completes_the_parent(env: Env) -> None:
    build_plan(env)
    for task_id in ("1.1.1", "1.2.1"):
        env.ok("task", "status", task_id, "done")
    env.ok("task", "delete", "1.1.2")
    assert status_of(env, "1.1", "1") == ["done", "done"]


# -- list, tree, show ----------------------------------------------------------------------------------------

def test_list_filters_tree_and_show(env: Env) -> None:
    build_plan(env)
    env.ok("task", "status", "1.1.1", "done")
    listed = env.ok("task", "list", "--json").json()
    assert [entry["id"] for entry in listed["tasks"]] == ["1", "1.1", "1.1.1", "1.1.2", "1.2", "1.2.1"]
    assert [e["id"] for e in env.ok("task", "list", "--type", "task", "--json").json()["tasks"]] == \
        ["1.1.1", "1.1.2", "1.2.1"]
    assert [e["id"] for e in env.ok("task", "list", "--status", "in-progress", "--json").json()["tasks"]] == \
        ["1", "1.1"]
    assert [e["id"] for e in env.ok("task", "list", "--parent", "1.1", "--json").json()["tasks"]] == \
        ["1.1.1", "1.1.2"]
    assert [e["id"] for e in env.ok("task", "list", "--parent", "root", "--json").json()["tasks"]] == ["1"]
    text = env.ok("task", "list").out
    assert "1.1.1  task     done" in text and "1/3" in text and "6 tasks" in text

    tree = env.ok("task", "tree", "--json").json()["tasks"]
    assert tree[0]["id"] == "1" and tree[0]["progress"] == {"completed": 1, "total": 3}
    assert [child["id"] for child in tree[0]["children"]] == ["1.1", "1.2"]
    assert tree[0]["children"][0]["children"][0]["status"] == "done"
    drawn = env.ok("task", "tree").out
    assert "[~] 1 Auth  (in-progress 1/3)" in drawn and "│   ├── [x] 1.1.1 Form  (done)" in drawn
    assert env.ok("task", "tree", "1.2").out.startswith("[ ] 1.2 Docs")

    shown = env.ok("task", "show", "1.1.1", "--json").json()
    assert shown == {**task_file(env, "1.1.1"), "progress": {"completed": 1, "total": 1}}
    assert "parent:       1.1" in env.ok("task", "show", "1.1.1").out


def test_empty_store_reads_create_nothing(env: Env) -> None:
    assert "No tasks yet" in env.ok("task", "list").out
    assert env.ok("task", "tree", "--json").json() == {"tasks": []}
    assert env.ok("task", "ready", "--json").json()["count"] == 0
    assert "OK: 0 tasks" in env.ok("task", "validate").out
    assert not env.project_dir.exists()


def test_task_commands_need_a_project_scope(env: Env) -> None:
    result = env.fails("task", "list", cwd=env.home, env={"CLAUDE_PROJECT_DIR": str(env.home)})
    assert "home directory" in result.err


def test_help_lists_commands_and_examples(env: Env) -> None:
    out = env.ok("task", "--help").out
    for command in ("add", "show", "list", "tree", "ready", "status", "update", "delete", "validate",
                    "rebuild-index"):
        assert command in out
    assert "examples:" in out
    assert "--deliverable" in env.ok("task", "add", "--help").out
    assert "task" in env.ok("--help").out


# -- the derived index ----------------------------------------------------------------------------------------

def test_the_index_is_rebuilt_when_missing_corrupt_or_stale(env: Env) -> None:
    build_plan(env)
    index_path = env.project_dir / "task-index.json"
    index_path.unlink()
    assert len(env.ok("task", "list", "--json").json()["tasks"]) == 6
    assert set(index(env)) == {"1", "1.1", "1.1.1", "1.1.2", "1.2", "1.2.1"}

    env.write_broken(index_path, "{not json")
    assert env.ok("task", "list", "--json").json()["count"] == 6
    env.unchecked.discard(index_path)
    assert index(env)["1.1"]["title"] == "Login"

    path = env.project_dir / "tasks" / "1.1.json"  # a hand edit: filesystem wins
    path.write_text(path.read_text().replace('"Login"', '"Sign in"'))
    titles = [e["title"] for e in env.ok("task", "list", "--parent", "1", "--json").json()["tasks"]]
    assert titles == ["Sign in", "Docs"]
    assert index(env)["1.1"]["title"] == "Sign in"

    index_path.write_text(index_path.read_text().replace('"Sign in"', '"Tampered"'))  # the index itself edited
    assert env.ok("task", "show", "1.1", "--json").json()["title"] == "Sign in"
    assert "Tampered" not in env.ok("task", "list").out

    (env.project_dir / "tasks" / "1.2.1.json").unlink()  # a file removed by hand
    assert "1.2.1" not in [e["id"] for e in env.ok("task", "list", "--json").json()["tasks"]]


def test_rebuild_index_reconstructs_it_from_the_files(env: Env) -> None:
    build_plan(env)
    env.ok("task", "status", "1.1.1", "done")
    before = index(env)
    (env.project_dir / "task-index.json").write_text('{"version": "1.0.0", "tasks": []}\n')
    result = env.ok("task", "rebuild-index", "--json").json()
    assert result["tasks"] == 6
    assert index(env) == before
    assert "Rebuilt" in env.ok("task", "rebuild-index").out


def test_a_broken_task_file_is_skipped_with_a_warning_and_never_overwritten(env: Env) -> None:
    add(env, "Epic")
    broken = env.write_broken(env.project_dir / "tasks" / "2.json", "{oops")
    result = env.ok("task", "list", "--json")
    assert [e["id"] for e in result.json()["tasks"]] == ["1"]
    assert "warning: skipping tasks/2.json" in result.err
    assert add(env, "Next")["id"] == "3"
    assert broken.read_text() == "{oops"


def test_a_task_file_that_is_a_link_to_nothing_keeps_its_id(env: Env) -> None:
    """A tasks/<id>.json that cannot even be stat'ed (a link to nothing, say a checkout of a
    link whose target is not there) is still a file the plugin did not write: its id is not
    given to a new task, whose write would replace it."""
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    for name in ("2.json", "1.2.json"):
        (env.project_dir / "tasks" / name).symlink_to("nowhere")
        env.unchecked.add(env.project_dir / "tasks" / name)
    env.ok("task", "list")  # the index, rebuilt with the links in the directory
    assert add(env, "Next")["id"] == "3"
    assert add(env, "Other", "--parent", "1")["id"] == "1.3"
    for name in ("2.json", "1.2.json"):
        assert (env.project_dir / "tasks" / name).is_symlink()
        assert str((env.project_dir / "tasks" / name).readlink()) == "nowhere"


# -- validate ------------------------------------------------------------------------------------------------------

def _edit(env: Env, task_id: str, **changes: Any) -> None:
    path = env.project_dir / "tasks" / f"{task_id}.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def test_progress_stays_the_count_over_the_leaves_when_hand_edits_list_a_child_elsewhere(env: Env) -> None:
    """A change recounts a parent from its children's progress; when a hand edit (or a merge)
    lists a task under a second parent, or an ancestor as a child, the children's counts
    overlap, and task-index.json must still hold the count over the leaves that a rebuild
    from the files gives."""
    build_plan(env)
    _edit(env, "1.2", children=["1.2.1", "1.1.1"])      # 1.1.1 listed by 1.1 and by 1.2
    _edit(env, "1.1.2", children=["1"])                 # and its epic listed under a task
    for task_id, status in (("1.2.1", "done"), ("1.1.1", "done"), ("1.2.1", "pending")):
        env.ok("task", "status", task_id, status, "--force")
        kept = index(env)
        env.ok("task", "rebuild-index")
        assert kept == index(env), task_id
    # over the leaves: 1.1.1 (done) once though listed twice, 1.2.1; 1.1.2 lists a child, so is no leaf
    assert index(env)["1"]["progress"] == {"completed": 1, "total": 2}
    assert env.ok("task", "validate", "--fix").code == 0
    env.ok("task", "status", "1.1.2", "done")
    assert index(env)["1"]["progress"] == {"completed": 2, "total": 3}


def test_an_index_whose_progress_an_earlier_version_left_stale_is_counted_again(env: Env) -> None:
    """Earlier versions left an import's progress stale in task-index.json (a parent put
    before its children) and recorded it as current; a change now sums the children's
    progress, so such an index is counted again from the files before a change uses it."""
    from _lib.base import stamps

    build_plan(env)
    env.ok("task", "status", "1.1.1", "done")
    path = env.project_dir / "task-index.json"
    data = json.loads(path.read_text())
    for entry in data["tasks"]:
        entry["progress"] = {"completed": 0, "total": 1}  # what such an import left
    path.write_text(json.dumps(data))
    record = env.project_dir / ".cache" / "task-index.stamp"
    recorded = json.loads(record.read_text())
    record.write_text(json.dumps({"tasks": recorded["tasks"], "index": stamps.file_stamp(path)}))  # as it recorded it
    add(env, "More docs", "--parent", "1.2")
    assert index(env)["1"]["progress"] == {"completed": 1, "total": 4}
    kept = index(env)
    env.ok("task", "rebuild-index")
    assert index(env) == kept


def test_validate_names_every_violation_and_fix_repairs_the_derivable_ones(env: Env) -> None:
    build_plan(env)
    _edit(env, "1.1.1", status="done")                     # the roll-up is now stale
    _edit(env, "1.2", children=[])                          # 1.2.1 not listed by its parent
    _edit(env, "1.1.2", dependencies=["1.9"])               # a missing dependency
    _edit(env, "1", type="feature")                         # type does not match the depth
    result = env.fails("task", "validate")
    out = result.out
    assert "1.1: status is pending but its children roll up to in-progress" in out
    assert "1.2.1: its parent 1.2 does not list it among its children" in out
    assert "1.1.2: depends on 1.9, which does not exist" in out
    assert "1: type is feature but a depth-1 id is an epic" in out
    assert "problems in the task store" in result.err
    data = env.run("task", "validate", "--json").json()
    assert data["ok"] is False and len(data["problems"]) == 4

    fixed = env.fails("task", "validate", "--fix", "--json")
    report = json.loads(fixed.out)
    assert [problem["message"] for problem in report["problems"]] == ["depends on 1.9, which does not exist"]
    assert {"1", "1.1", "1.2"} <= set(report["fixed"])
    assert status_of(env, "1.1", "1") == ["in-progress", "in-progress"]
    assert task_file(env, "1.2")["children"] == ["1.2.1"] and task_file(env, "1")["type"] == "epic"
    env.ok("task", "update", "1.1.2", "--set", "dependencies=")
    assert "every invariant holds" in env.ok("task", "validate").out


def test_validate_reports_cycles_bad_files_and_orphans(env: Env) -> None:
    build_plan(env)
    _edit(env, "1.1.1", dependencies=["1.1.2"])
    _edit(env, "1.1.2", dependencies=["1.1.1"])
    env.write_broken(env.project_dir / "tasks" / "5.json", "[]")
    env.write_broken(env.project_dir / "tasks" / "notes.json", "{}")
    env.write_broken(env.project_dir / "tasks" / "3.1.json", json.dumps(
        {"id": "3.1", "type": "feature", "status": "pending", "parent": "3", "children": [], "dependencies": []}))
    env.write_broken(env.project_dir / "tasks" / "4.json", json.dumps({"id": "7", "type": "epic", "status": "pending"}))
    env.write_broken(env.project_dir / "tasks" / "6.json", json.dumps({"id": "6", "type": "epic", "status": "pending",
                                                                        "parent": "1"}))
    out = env.fails("task", "validate").out
    assert "6: parent is 1 but the parent of 6 is null" in out  # a root's parent is null
    assert "1.1.1: dependency cycle: 1.1.1 -> 1.1.2 -> 1.1.1" in out
    assert "5: schema: must be of type object" in out
    assert "notes: tasks/notes.json: the file name is not a WBS id" in out
    assert "3.1: its parent 3 does not exist" in out
    assert "4: tasks/4.json its id '7' does not match the file name" in out


def test_validate_reports_a_hand_edited_task_index_and_fix_rebuilds_it(env: Env) -> None:
    build_plan(env)
    env.ok("task", "status", "1.1.1", "done")
    index_path = env.project_dir / "task-index.json"
    derived = index_path.read_text()
    data = json.loads(derived)
    by_id = {entry["id"]: entry for entry in data["tasks"]}
    by_id["1.2"]["status"] = "done"                        # roll-up no longer matches 1.2.1
    by_id["1"]["children"] = ["1.1"]                       # 1.2 lost from its parent
    data["tasks"] = [entry for entry in data["tasks"] if entry["id"] != "1.1.2"]
    index_path.write_text(json.dumps(data))
    report = env.fails("task", "validate", "--json").json()
    messages = [problem["message"] for problem in report["problems"] if problem["id"] == "task-index.json"]
    assert any("1.2 status" in message for message in messages), messages
    assert any("1 children" in message for message in messages), messages
    assert "does not list 1.1.2" in messages
    assert "task-index.json" in env.fails("task", "validate").out
    env.ok("task", "validate", "--fix")
    assert index_path.read_text() == derived
    index_path.write_text("{oops")
    assert "task-index.json: not readable JSON" in env.fails("task", "validate").out
    env.ok("task", "rebuild-index")
    assert_valid(env)
    index_path.unlink()                                    # derived: a missing index is just rebuilt
    assert_valid(env)
    assert index_path.read_text() == derived


# -- concurrency -----------------------------------------------------------------------------------------------------

def _memory(env: Env, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(REPO / "bin" / "memory"), *args], cwd=env.project, env=env.environ(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def test_concurrent_status_changes_to_siblings_are_all_kept(env: Env) -> None:
    add(env, "Epic")
    add(env, "Feature", "--parent", "1")
    siblings = [add(env, f"Task {n}", "--parent", "1.1")["id"] for n in range(1, 9)]
    add(env, "Other feature", "--parent", "1")
    for status in ("in-progress", "done"):
        procs = [_memory(env, "task", "status", task_id, status) for task_id in siblings]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err.decode()
    assert status_of(env, *siblings) == ["done"] * len(siblings)
    assert task_file(env, "1.1")["status"] == "done"
    assert index(env)["1.1"]["progress"] == {"completed": 8, "total": 8}
    assert task_file(env, "1")["status"] == "in-progress"
    assert index(env)["1"]["progress"] == {"completed": 8, "total": 9}
    entries = index(env)
    assert all(entries[task_id]["status"] == "done" for task_id in siblings)
    assert entries["1.1"]["progress"] == {"completed": 8, "total": 8}
    assert_valid(env)
    assert (env.project_dir / ".cache" / "tasks.lock").exists()
    assert not list((env.project_dir / "tasks").glob(".*.tmp"))


def test_concurrent_adds_get_distinct_ids(env: Env) -> None:
    add(env, "Epic")
    procs = [_memory(env, "task", "add", "--title", f"Feature {n}", "--parent", "1", "--json") for n in range(8)]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        ids.append(json.loads(out)["task"]["id"])
    assert sorted(ids) == sorted(f"1.{n}" for n in range(1, 9))
    assert task_file(env, "1")["children"] == [f"1.{n}" for n in range(1, 9)]
    assert index(env)["1"]["progress"] == {"completed": 0, "total": 8}
    assert_valid(env)


# -- the invariants under random operations (in process) ------------------------------------------------------------

def _store(root: Path) -> Any:
    """A TaskStore on a fresh project, in this process (helpers put scripts/ on sys.path)."""
    from _lib.tasks import taskstore as tasks
    from _lib.workspace.scopes import Workspace

    project = root / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    workspace = Workspace(cwd=project, env={"HOME": str(root / "home"), "CLAUDE_PROJECT_DIR": str(project)},
                          load_config=False)
    return tasks, tasks.TaskStore(workspace)


operations = st.lists(st.tuples(st.sampled_from(["add", "status", "delete", "depend"]),
                                st.integers(0, 50), st.integers(0, 50),
                                st.sampled_from(["pending", "in-progress", "done"])), max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations)
def test_every_invariant_holds_after_any_sequence_of_operations(tmp_path_factory: Any, ops: list) -> None:
    root = tmp_path_factory.mktemp("tasks")
    tasks, store = _store(root)
    from _lib.base import errors

    for op, first, second, status in ops:
        ids = tasks.sort_ids(store.entries)
        before = snapshot(store.tasks_dir)
        try:
            if op == "add":
                parents = [None] + [task_id for task_id in ids if task_id.count(".") < 2]
                store.add(f"t{first}", parent=parents[first % len(parents)])
            elif not ids:
                continue
            elif op == "status":
                store.set_status(ids[first % len(ids)], status, force=second % 2 == 0)
            elif op == "delete":
                store.delete(ids[first % len(ids)], cascade=second % 2 == 0)
            else:
                target = ids[first % len(ids)]
                store.update(target, {"dependencies": [ids[second % len(ids)]]})
        except errors.Error:
            assert snapshot(store.tasks_dir) == before  # refused: nothing changed
        report = tasks.TaskStore(store.workspace).check()
        assert report["problems"] == [], (op, report["problems"])
        fresh = tasks.TaskStore(store.workspace)
        if fresh.index_path.exists():  # kept step by step (progress from the children's) as derived afresh
            on_disk = {entry["id"]: entry for entry in json.loads(fresh.index_path.read_text())["tasks"]}
            assert on_disk == fresh._read_all_entries(), op


def test_progress_kept_from_the_children_is_the_count_over_the_leaves(tmp_path: Path) -> None:
    """Each change recounts a family, not a subtree (an epic of every session's todos grows
    without end): after every step of a long mixed run, the progress task-index.json holds
    equals the one counted over the leaves from the task files."""
    import random

    from _lib.base import errors

    tasks, store = _store(tmp_path)
    rng = random.Random(5)
    for step in range(240):
        ids = tasks.sort_ids(store.entries)
        op = rng.choices(["add", "status", "delete", "import"], [6, 5, 1, 1])[0] if ids else "add"
        try:
            if op == "add":
                store.add(f"t{step}", parent=rng.choice([None] + [task_id for task_id in ids if task_id.count(".") < 2]))
            elif op == "status":
                leaves = [task_id for task_id in ids if not store.entries[task_id]["children"]]
                store.set_status(rng.choice(leaves), rng.choice(["pending", "in-progress", "done"]), force=True)
            elif op == "delete":
                store.delete(rng.choice(ids), cascade=True)
            else:  # entities put in any order (an import): a child after or before its parent
                with store.mutation():
                    for task_id in rng.sample(ids, min(3, len(ids))):
                        store.put(dict(store.task(task_id), status="done", updatedAt=f"2030-01-01T00:00:{step % 60:02d}Z"))
        except errors.Error:
            continue
        on_disk = {entry["id"]: entry["progress"] for entry in json.loads(store.index_path.read_text())["tasks"]}
        counted = {task_id: entry["progress"] for task_id, entry in tasks.TaskStore(store.workspace)._read_all_entries().items()}
        assert on_disk == counted, (step, op)
    assert max(task_id.count(".") for task_id in store.entries) == 2  # the run reached tasks under features
