"""The pure rules of the work breakdown (tasks/entity.py, tasks/rules.py), in process."""

from __future__ import annotations

from typing import Any

import pytest

import helpers  # noqa: F401  (puts scripts/ on sys.path)
from _lib.base import errors
from _lib.tasks import entity, rules


def entries(*specs: tuple[str, str, list[str]]) -> dict[str, dict[str, Any]]:
    """Index entries from (id, status, dependencies); parents and children follow from the ids."""
    found = {task_id: {"id": task_id, "type": entity.type_of(task_id), "status": status,
                       "parent": entity.parent_of(task_id), "children": [], "dependencies": list(deps)}
             for task_id, status, deps in specs}
    for task_id in entity.sort_ids(found):
        parent = entity.parent_of(task_id)
        if parent in found:
            found[parent]["children"].append(task_id)
    return found


@pytest.mark.parametrize(("statuses", "rolled"), [
    ([], "pending"), (["pending", "pending"], "pending"), (["done", "done"], "done"),
    (["done", "pending"], "in-progress"), (["pending", "in-progress"], "in-progress"),
])
def test_a_parent_status_rolls_up_from_its_children(statuses: list[str], rolled: str) -> None:
    assert rules.rolled_status(statuses) == rolled


def test_progress_counts_the_leaves_under_an_entity() -> None:
    plan = entries(("1", "in-progress", []), ("1.1", "in-progress", []), ("1.1.1", "done", []),
                   ("1.1.2", "pending", []), ("1.2", "done", []))
    assert rules.progress(plan, "1") == {"completed": 2, "total": 3}
    assert rules.progress(plan, "1.1.1") == {"completed": 1, "total": 1}
    assert rules.progress(plan, "9") == {"completed": 0, "total": 0}


def test_a_task_inherits_the_dependencies_of_its_ancestors() -> None:
    plan = entries(("1", "pending", ["2"]), ("1.1", "pending", ["3"]), ("1.1.1", "pending", []),
                   ("2", "done", []), ("3", "pending", []))
    assert rules.effective_dependencies(plan, "1.1.1") == ["3", "2"]
    assert rules.blockers(plan, "1.1.1") == ["3"]
    assert rules.dependants(plan, ["2", "3"]) == ["1", "1.1"]
    assert rules.describe(plan, ["3", "7"]) == "3 (pending), 7 (missing)"


def test_a_wait_for_cycle_is_found_once_and_explained() -> None:
    plan = entries(("1", "pending", []), ("1.1", "pending", ["1.2"]), ("1.2", "pending", ["1.1"]))
    assert rules.cycles(plan) == [["1.1", "1.2", "1.1"]]
    inherited = entries(("1", "pending", ["2"]), ("1.1", "pending", []), ("2", "pending", ["1.1"]))
    path, notes = rules.cycle_through(inherited, "2") or ([], [])
    assert path == ["2", "1.1", "2"] and notes == ["1.1 inherits the dependency of 1 on 2"]
    with pytest.raises(errors.Conflict, match="dependency cycle: 2 -> 1.1 -> 2"):
        rules.refuse_cycles(inherited, ["2"])
    assert rules.cycles(entries(("1", "pending", []), ("2", "pending", ["1"]))) == []


def test_dependencies_on_itself_a_part_of_it_or_a_missing_task_are_refused() -> None:
    plan = entries(("1", "pending", []), ("1.1", "pending", []), ("2", "pending", []))
    assert rules.checked_dependencies(plan, "1.1", ["2", "2"]) == ["2"]
    with pytest.raises(errors.Conflict, match="dependency cycle: 2 -> 2") as raised:
        rules.checked_dependencies(plan, "2", ["2"])
    assert raised.value.hint == "a task cannot depend on itself"
    with pytest.raises(errors.Conflict, match="which is part of it"):
        rules.checked_dependencies(plan, "1", ["1.1"])
    with pytest.raises(errors.NotFound):
        rules.checked_dependencies(plan, "1", ["3"])


def test_structure_problems_name_what_breaks_each_invariant() -> None:
    plan = entries(("1", "pending", []), ("1.1", "done", []), ("2", "done", ["1"]))
    plan["1"]["children"] = []               # the parent does not list its child
    plan["2"]["type"] = "feature"            # a root is an epic
    found: list[tuple[str, str, bool]] = []
    warnings: list[dict[str, str]] = []
    rules.structure_problems(plan, lambda task_id, message, fixable=False: found.append((task_id, message, fixable)),
                             warnings)
    assert ("1.1", "its parent 1 does not list it among its children", True) in found
    assert ("2", "type is feature but a depth-1 id is an epic", True) in found
    assert warnings == [{"id": "2", "message": "done although 1 (dependencies) are not (forced?)"}]
    plan = entries(("1", "pending", []), ("1.1", "done", []))
    found.clear()
    rules.structure_problems(plan, lambda task_id, message, fixable=False: found.append((task_id, message, fixable)),
                             [])
    assert found == [("1", "status is pending but its children roll up to done", True)]


def test_ids_sort_by_number_and_give_parent_and_type() -> None:
    assert entity.sort_ids(["1.10", "2", "1.2", "1"]) == ["1", "1.2", "1.10", "2"]
    assert (entity.parent_of("1.2.3"), entity.parent_of("1")) == ("1.2", None)
    assert [entity.type_of(task_id) for task_id in ("4", "4.1", "4.1.1")] == list(entity.TYPES)
    assert entity.check_id(" 1.2 ") == "1.2"
    with pytest.raises(errors.InvalidInput, match="at most three levels"):
        entity.check_id("1.2.3.4")
    with pytest.raises(errors.InvalidInput, match="is not one of pending, in-progress, done"):
        entity.check_status("finished")


def test_an_index_entry_is_refused_for_a_file_it_cannot_describe() -> None:
    good = {"id": "1.2", "type": "feature", "status": "pending", "title": "T", "children": [], "dependencies": []}
    entry, why = entity.index_entry(good, "1.2")
    assert why is None and entry == {"id": "1.2", "type": "feature", "status": "pending", "title": "T",
                                     "parent": "1", "children": [], "dependencies": []}
    assert entity.index_entry(good, "1.3") == (None, "its id '1.2' does not match the file name")
    assert entity.index_entry(dict(good, children=["x"]), "1.2")[1] == \
        "children and dependencies must be lists of WBS ids"
