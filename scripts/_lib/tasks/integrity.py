"""`memory task validate`: every invariant of the task store, checked from the files."""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .taskstore import TaskStore

from ..base import errors
from . import rules
from .entity import index_entry
from .files import INDEX_NAME


def check(store: TaskStore) -> dict[str, Any]:
    """{tasks, problems: [{id, message, fixable}], warnings}: what breaks each invariant, from the
    task files (schema, ids, parents and children, roll-up, dependencies) and task-index.json
    (when someone else changed it). What a killed command left is completed first."""
    from ..base import schema

    if store.tasks_dir.is_dir():
        store.recover()
    task_schema = schema.load("task")
    problems: list[dict[str, Any]] = []
    warnings: list[dict[str, str]] = []
    entities: dict[str, dict[str, Any]] = {}

    def problem(task_id: str, message: str, fixable: bool = False) -> None:
        problems.append({"id": task_id, "message": message, "fixable": fixable})

    for stem, entity, trouble in store.files.read_files():
        if trouble:
            problem(stem, f"tasks/{stem}.json: {trouble}")
            continue
        violations = schema.validate(entity, task_schema)
        for violation in violations:
            problem(stem, f"schema: {violation}")
        entry, why = index_entry(entity, stem)
        if entry is None:
            if not violations or "does not match the file name" in str(why):
                problem(stem, f"tasks/{stem}.json {why}")
            continue
        entities[stem] = entry
    rules.structure_problems(entities, problem, warnings)
    index_problems = store.files.index_problems(entities)
    for message in index_problems:
        problem(INDEX_NAME, message, True)
    if not index_problems:  # leave a stale or missing index rebuilt, as every command does
        count = len(store.workspace.warnings)
        with contextlib.suppress(errors.Error):
            store.entries  # noqa: B018
        del store.workspace.warnings[count:]  # its "skipping tasks/..." notes repeat the problems above
    return {"tasks": len(entities), "problems": problems, "warnings": warnings}
