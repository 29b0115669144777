"""What `memory task list`, `ready` and `tree` show, from the index entries (nothing is read here)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .rules import Entries

from .entity import sort_ids
from .rules import effective_dependencies, progress


def listing(entries: Entries, *, status: str | None = None, type: str | None = None,
            parent: str | None = None) -> list[dict[str, Any]]:
    """Entries in WBS order, filtered; `parent` keeps its direct children ("root" for epics)."""
    found = []
    for task_id in sort_ids(entries):
        entry = entries[task_id]
        if status and entry["status"] != status or type and entry["type"] != type:
            continue
        if parent is not None and entry["parent"] != (None if parent == "root" else parent):
            continue
        found.append(entry)
    return found


def ready(entries: Entries) -> list[dict[str, Any]]:
    """Pending leaves whose dependencies (own and inherited) are all done: the next work."""
    done = {task_id for task_id, entry in entries.items() if entry["status"] == "done"}
    return [entry for entry in (entries[task_id] for task_id in sort_ids(entries))
            if entry["status"] == "pending" and not any(child in entries for child in entry["children"])
            and done.issuperset(effective_dependencies(entries, entry["id"]))]


def tree(entries: Entries, root: str | None = None) -> list[dict[str, Any]]:
    """Nested {id, type, status, title, progress, children: [...]} from `root` (all roots when None)."""
    if root is not None:
        starts = [root]
    else:
        starts = [task_id for task_id in sort_ids(entries) if entries[task_id]["parent"] not in entries]

    def node(task_id: str, seen: frozenset[str]) -> dict[str, Any]:
        entry = entries[task_id]
        children = [child for child in sort_ids(entry["children"]) if child in entries and child not in seen]
        return {"id": task_id, "type": entry["type"], "status": entry["status"], "title": entry.get("title", ""),
                "progress": progress(entries, task_id),
                "children": [node(child, seen | {child}) for child in children]}

    return [node(task_id, frozenset([task_id])) for task_id in starts]
