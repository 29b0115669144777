"""The task entity: WBS ids, types, statuses, the file format and the index entry of a task.

Ids are WBS style: `1` (epic), `1.2` (feature), `1.2.3` (task); the parent of `a.b.c`
is `a.b`, and the depth of the id sets the type. Everything here is a pure rule: no
file is read or written.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

from ..base import errors

TYPES = ("epic", "feature", "task")  # by depth
STATUSES = ("pending", "in-progress", "done")
MAX_DEPTH = len(TYPES)
MAX_TITLE = 200
ID_RE = re.compile(r"^[1-9][0-9]*(\.[1-9][0-9]*){0,2}$")
LIST_FIELDS = ("dependencies", "acceptanceCriteria", "deliverables", "tests")
PATCHABLE = ("title", "description", "agent", "validationResults") + LIST_FIELDS
NOT_PATCHABLE = {
    "id": "ids are assigned by `memory task add` and never change",
    "type": "the type follows from the depth of the id (epic > feature > task)",
    "parent": "the parent follows from the id; add a new task under the other parent and delete this one",
    "children": "children are added with `memory task add --parent ID` and removed with `memory task delete`",
    "status": "use `memory task status ID pending|in-progress|done` (it rolls the status up)",
    "startedAt": "set by `memory task status`",
    "completedAt": "set by `memory task status`",
    "progress": "progress is derived from the statuses of the leaf tasks (see task-index.json)",
    "createdAt": "maintained automatically",
    "updatedAt": "maintained automatically",
    "origin": "set by the tool that created the task",
    "sessionId": "set by the TodoWrite capture",
}
KEY_ORDER = ("id", "type", "title", "description", "status", "parent", "children", "dependencies",
             "acceptanceCriteria", "deliverables", "tests", "agent", "startedAt", "completedAt",
             "createdAt", "updatedAt", "validationResults")


# -- ids ------------------------------------------------------------------------------------

def check_id(value: object, *, what: str = "task id") -> str:
    """A WBS id such as 1, 1.2 or 1.2.3; raises InvalidInput otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    if not ID_RE.match(text):
        deeper = isinstance(value, str) and re.fullmatch(r"[1-9][0-9]*(\.[1-9][0-9]*){3,}", text.strip())
        raise errors.InvalidInput(
            f"{what} {value!r} is not a WBS id" + (" (at most three levels: epic.feature.task)" if deeper else ""),
            "use ids such as 1 (epic), 1.2 (feature) or 1.2.3 (task); `memory task list` shows them")
    return text


def id_key(task_id: str) -> tuple[int, ...]:
    """Sort key: numeric order per level (1.2 < 1.10 < 2)."""
    return tuple(int(part) for part in task_id.split("."))


def parent_of(task_id: str) -> str | None:
    """The WBS parent: `a.b` for `a.b.c`, None for a root."""
    head, dot, _ = task_id.rpartition(".")
    return head if dot else None


def type_of(task_id: str) -> str:
    """epic, feature or task, from the depth of the id."""
    return TYPES[task_id.count(".")]


def sort_ids(ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=id_key)


def is_task_file_name(name: object) -> bool:
    return isinstance(name, str) and name.endswith(".json") and bool(ID_RE.match(name[:-5]))


# -- fields ---------------------------------------------------------------------------------

def check_status(status: object) -> str:
    """One of STATUSES; raises InvalidInput otherwise."""
    if status not in STATUSES:
        raise errors.InvalidInput(f"status {status!r} is not one of {', '.join(STATUSES)}")
    return str(status)


def clean_title(value: object) -> str:
    """A one-line title of 1-200 characters; raises InvalidInput otherwise."""
    title = " ".join(value.split()) if isinstance(value, str) else ""
    if not title:
        raise errors.InvalidInput("a task needs a non-empty title", "give --title TEXT")
    if len(title) > MAX_TITLE:
        raise errors.InvalidInput(f"the title is {len(title)} characters long; the limit is {MAX_TITLE}",
                                  "put the details in --description")
    return title


def clean_strings(values: Iterable[str], option: str) -> list[str]:
    """The values stripped; raises InvalidInput for an empty one (named by its `option`)."""
    found = []
    for value in values:
        value = value.strip() if isinstance(value, str) else ""
        if not value:
            raise errors.InvalidInput(f"{option} needs a non-empty value")
        found.append(value)
    return found


def apply_status(entity: dict[str, Any], status: str, now: str) -> None:
    """Set `status` with its timestamps: startedAt when work starts, completedAt when done."""
    previous = entity.get("status")
    entity["status"] = status
    if status == "pending":
        entity["startedAt"] = None
        entity["completedAt"] = None
    elif status == "in-progress":
        entity["startedAt"] = entity.get("startedAt") or now
        entity["completedAt"] = None
    else:
        entity["startedAt"] = entity.get("startedAt") or now
        if previous != "done" or not entity.get("completedAt"):
            entity["completedAt"] = now


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def article(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


# -- file format ------------------------------------------------------------------------------

def ordered(entity: dict[str, Any]) -> dict[str, Any]:
    """The entity with its keys in the seed's order (unknown keys last, as they were)."""
    result = {key: entity[key] for key in KEY_ORDER if key in entity}
    result.update((key, value) for key, value in entity.items() if key not in result)
    return result


def dumps(entity: dict[str, Any]) -> str:
    return json.dumps(ordered(entity), indent=2, ensure_ascii=False) + "\n"


def _id_list(value: object) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(item, str) and ID_RE.match(item) for item in value):
        return list(value)
    return None


def index_entry(entity: Any, stem: str) -> tuple[dict[str, Any] | None, str | None]:
    """The task-index.json entry of a parsed task file, or (None, why it cannot be indexed).

    The entry has no `progress` yet: the store adds it from the statuses (`rules.progress`).
    """
    if not isinstance(entity, dict):
        return None, "is not a JSON object"
    task_id = entity.get("id")
    if task_id != stem:
        return None, f"its id {task_id!r} does not match the file name"
    if entity.get("type") not in TYPES:
        return None, f"type {entity.get('type')!r} is not one of {', '.join(TYPES)}"
    if entity.get("status") not in STATUSES:
        return None, f"status {entity.get('status')!r} is not one of {', '.join(STATUSES)}"
    parent = entity.get("parent", parent_of(stem))
    if parent is not None and not (isinstance(parent, str) and ID_RE.match(parent)):
        return None, f"parent {parent!r} is not a WBS id or null"
    children, dependencies = _id_list(entity.get("children")), _id_list(entity.get("dependencies"))
    if children is None or dependencies is None:
        return None, "children and dependencies must be lists of WBS ids"
    entry: dict[str, Any] = {"id": stem, "type": entity["type"], "status": entity["status"]}
    if isinstance(entity.get("title"), str):
        entry["title"] = entity["title"]
    entry.update(parent=parent, children=children, dependencies=dependencies)
    deliverables = entity.get("deliverables")
    if isinstance(deliverables, list) and deliverables and all(isinstance(item, str) for item in deliverables):
        entry["deliverables"] = list(deliverables)
    if isinstance(entity.get("agent"), str) and entity["agent"]:
        entry["agent"] = entity["agent"]
    return entry, None
