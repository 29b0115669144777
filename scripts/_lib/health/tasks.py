"""The task store of the project scope, as `memory task validate` checks it."""

from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..workspace.scopes import Scope, Workspace

from .facts import ERROR, WARNING, Problem

TASK_INVALID = "task-invalid"
TASK_STRUCTURE = "task-structure"
TASK_INDEX_DRIFT = "task-index-drift"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    TASK_INVALID: ERROR,  # unreadable or breaking the schema; a missing parent or dependency; a cycle
    TASK_STRUCTURE: ERROR,  # parent, children, type or status not following from the ids and the
    # children (a merge, an older version's killed add): missed by roll-up, tree
    TASK_INDEX_DRIFT: WARNING,  # task-index.json changed by hand or by another tool
}


def task_problems(workspace: Workspace, scope: Scope) -> list[Problem]:
    """The task store's problems (project scope), from `TaskStore.check`; fixable is what
    `TaskStore.fix` derives from the ids and statuses. Call without holding the scope lock:
    the task store takes its own lock, then the scope's to replace task-index.json."""
    if scope.name != "project" or not (scope.root / "tasks").is_dir():
        return []
    from ..tasks import taskstore as tasks

    found = []
    for item in tasks.TaskStore(workspace).check()["problems"]:
        task_id, fixable = item["id"], item["fixable"]
        if task_id == tasks.INDEX_NAME:
            kind, path, message = TASK_INDEX_DRIFT, scope.root / task_id, f"{task_id} {item['message']}"
            hint = "`memory repair` (or `memory task rebuild-index`) rebuilds it from the task files"
        else:
            kind = TASK_STRUCTURE if fixable else TASK_INVALID
            path, message = scope.root / "tasks" / f"{task_id}.json", f"task {task_id}: {item['message']}"
            hint = ("`memory repair` (or `memory task validate --fix`) derives it from the ids and statuses"
                    if fixable else "fix the task with `memory task update` or the file with `memory file write`, "
                                    "then run `memory task validate`")
        found.append(Problem(kind, KINDS[kind], scope.name, None, path, message, hint, fixable=fixable))
    return found
