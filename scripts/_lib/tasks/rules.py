"""Roll-up and dependency rules of the work breakdown, as pure functions of the index entries.

`entries` maps each id to its task-index.json entry ({id, type, status, parent,
children, dependencies, ...}); nothing here reads or writes a file.

- status roll-up: an entity with children is `done` when all of them are, `in-progress`
  when any is done or in progress, else `pending`;
- progress: `{completed, total}` counts the leaf entities under an entity (a leaf counts
  itself: {1, 1} when done, else {0, 1});
- a dependency on X means "after all of X is done", and a task inherits its ancestors'
  dependencies; so the wait-for graph has an edge to each dependency (own and inherited)
  and from each parent to its children, and a cycle in it is a deadlock.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    Entries = dict[str, dict[str, Any]]

from ..base import errors
from .entity import article, check_id, id_key, parent_of, sort_ids, type_of


def rolled_status(statuses: Iterable[str]) -> str:
    """A parent's status from its children's: all done -> done; any started -> in-progress; else pending."""
    statuses = list(statuses)
    if statuses and all(status == "done" for status in statuses):
        return "done"
    if any(status in ("done", "in-progress") for status in statuses):
        return "in-progress"
    return "pending"


def progress(entries: Entries, task_id: str) -> dict[str, int]:
    """{completed, total} of the leaves under `task_id` (a leaf counts itself)."""
    completed = total = 0
    stack = [task_id]
    seen: set[str] = set()
    while stack:
        node = stack.pop()
        if node in seen or node not in entries:
            continue
        seen.add(node)
        entry = entries[node]
        children = [child for child in entry["children"] if child in entries]
        if children:
            stack.extend(children)
        else:
            total += 1
            completed += entry["status"] == "done"
    return {"completed": completed, "total": total}


def progress_from_children(entries: Entries, task_id: str) -> dict[str, int]:
    """`progress`, summed from the children's own progress (a leaf child counts itself): what
    a change costs is then the size of a family, not of the subtree (an epic of every session's
    todos grows without end). Every change recomputes its ancestors bottom-up, so a child's
    progress is current; one that has none is counted over its leaves. Only where the
    listings are a tree (`listed_as_tree`): else the children's counts overlap."""
    entry = entries.get(task_id)
    if entry is None:
        return progress(entries, task_id)
    completed = total = 0
    for child_id in dict.fromkeys(entry["children"]):
        child = entries.get(child_id)
        if child is None or child_id == task_id:
            continue
        if any(grandchild in entries for grandchild in child["children"]):
            counted = child.get("progress") or progress(entries, child_id)
            completed += counted["completed"]
            total += counted["total"]
        else:
            total += 1
            completed += child["status"] == "done"
    if not total:
        return progress(entries, task_id)  # a leaf (or children all missing): itself
    return {"completed": completed, "total": total}


def listed_as_tree(entries: Entries) -> bool:
    """Whether each task listed as a child is listed by its own parent only: the one its id and
    its `parent` name. Then no two children's subtrees overlap and none holds an ancestor, and
    a change rolled up along `parent` reaches every count it is part of. A hand edit, a merge
    or an import can list a task elsewhere (validate reports it)."""
    for task_id, entry in entries.items():
        for child_id in entry["children"]:
            child = entries.get(child_id)
            if child is not None and (child["parent"] != task_id or parent_of(child_id) != task_id):
                return False
    return True


def with_progress(entries: Entries) -> Entries:
    """The entries, each given its progress (in place)."""
    for task_id, entry in entries.items():
        entry["progress"] = progress(entries, task_id)
    return entries


# -- structure ------------------------------------------------------------------------------------

def ancestors(entries: Entries, task_id: str) -> list[str]:
    found, node = [], entries[task_id]["parent"]
    while node is not None and node in entries and node not in found:
        found.append(node)
        node = entries[node]["parent"]
    return found


def descendants(entries: Entries, task_id: str) -> list[str]:
    """Every entity under `task_id`, parents before their children."""
    found: list[str] = []
    stack = list(reversed(entries[task_id]["children"]))
    while stack:
        node = stack.pop()
        if node in entries and node not in found and node != task_id:
            found.append(node)
            stack.extend(reversed(entries[node]["children"]))
    return found


def effective_dependencies(entries: Entries, task_id: str) -> list[str]:
    """Its own dependencies and its ancestors' (a task inherits them)."""
    found: list[str] = []
    for node in [task_id, *ancestors(entries, task_id)]:
        found += [dep for dep in entries[node]["dependencies"] if dep not in found]
    return found


def blockers(entries: Entries, task_id: str) -> list[str]:
    """Dependencies (own and inherited) that are not done yet."""
    return [dep for dep in effective_dependencies(entries, task_id)
            if entries.get(dep, {}).get("status") != "done"]


def dependants(entries: Entries, task_ids: Iterable[str]) -> list[str]:
    """Tasks outside `task_ids` that list one of them as a dependency."""
    targets = set(task_ids)
    return sort_ids(task_id for task_id, entry in entries.items()
                    if task_id not in targets and targets.intersection(entry["dependencies"]))


def describe(entries: Entries, ids: list[str]) -> str:
    """`1.2 (pending), 1.3 (missing)`: ids with their statuses."""
    return ", ".join(f"{task_id} ({entries.get(task_id, {}).get('status', 'missing')})" for task_id in ids)


# -- the wait-for graph ----------------------------------------------------------------------------

def successors(entries: Entries, node: str) -> Iterator[tuple[str, str]]:
    """Wait-for edges out of `node`: (target, why), why = "" for an own dependency."""
    entry = entries[node]
    for child in entry["children"]:
        if child in entries:
            yield child, f"{node} is done only when its child {child} is"
    for dep in entry["dependencies"]:
        yield dep, ""
    for ancestor in ancestors(entries, node):
        for dep in entries[ancestor]["dependencies"]:
            yield dep, f"{node} inherits the dependency of {ancestor} on {dep}"


def cycle_through(entries: Entries, start: str) -> tuple[list[str], list[str]] | None:
    """The shortest wait-for cycle from `start` back to it: (ids, explanations), or None."""
    previous: dict[str, tuple[str, str]] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        following = []
        for node in frontier:
            if node not in entries:
                continue
            for target, why in successors(entries, node):
                if target == start:
                    path, notes, cursor = [start], [why] if why else [], node
                    while cursor != start:
                        path.append(cursor)
                        back, note = previous[cursor]
                        if note:
                            notes.append(note)
                        cursor = back
                    path.append(start)
                    return list(reversed(path)), list(reversed(notes))
                if target not in seen:
                    seen.add(target)
                    previous[target] = (node, why)
                    following.append(target)
        frontier = following
    return None


def cycles(entries: Entries) -> list[list[str]]:
    """Distinct wait-for cycles (each once, from its smallest id), via one depth-first pass."""
    state: dict[str, int] = {}  # 1 on the stack, 2 finished
    found: dict[tuple[str, ...], list[str]] = {}
    for start in sort_ids(entries):
        if start in state:
            continue
        stack = [(start, iter(list(successors(entries, start))))]
        path = [start]
        state[start] = 1
        while stack:
            node, following = stack[-1]
            advanced = False
            for target, _ in following:
                if target not in entries:
                    continue
                if state.get(target) == 1:
                    cycle = path[path.index(target):]
                    smallest = min(range(len(cycle)), key=lambda i: id_key(cycle[i]))
                    rotated = cycle[smallest:] + cycle[:smallest]
                    found.setdefault(tuple(rotated), rotated + [rotated[0]])
                elif target not in state:
                    state[target] = 1
                    path.append(target)
                    stack.append((target, iter(list(successors(entries, target)))))
                    advanced = True
                    break
            if not advanced:
                state[node] = 2
                path.pop()
                stack.pop()
    return [found[key] for key in sorted(found, key=lambda key: id_key(key[0]))]


def refuse_cycles(entries: Entries, starts: Iterable[str]) -> None:
    """Raise Conflict naming the first wait-for cycle through one of `starts`."""
    for start in starts:
        found = cycle_through(entries, start)
        if found:
            path, notes = found
            hint = "remove one of these dependencies"
            if notes:
                hint = "; ".join(notes) + ": a task cannot wait for its own ancestor or descendant"
            raise errors.Conflict(f"dependency cycle: {' -> '.join(path)}", hint)


def checked_dependencies(entries: Entries, task_id: str, dependencies: list[str]) -> list[str]:
    """The dependencies of `task_id`, each once; raises for a missing one, itself or a part of it."""
    checked: list[str] = []
    for dep in dependencies:
        dep = check_id(dep, what="dependency")
        if dep == task_id:
            raise errors.Conflict(f"dependency cycle: {task_id} -> {task_id}", "a task cannot depend on itself")
        if dep not in entries:
            raise errors.NotFound(f"dependency {dep} does not exist",
                                  "`memory task list` shows the task ids; add the missing task first")
        if dep.startswith(task_id + "."):
            raise errors.Conflict(f"{task_id} cannot depend on {dep}, which is part of it",
                                  f"{task_id} is done only when everything under it is; "
                                  f"make a sibling of {dep} depend on it instead")
        if dep not in checked:
            checked.append(dep)
    return checked


def structure_problems(entries: Entries, problem: Callable[..., None], warnings: list[dict[str, str]]) -> None:
    """Report every broken invariant of `entries`: problem(id, message, fixable) for each, and a
    warning for a task done although its dependencies are not."""
    for task_id in sort_ids(entries):
        entry = entries[task_id]
        if entry["type"] != type_of(task_id):
            problem(task_id, f"type is {entry['type']} but a depth-{task_id.count('.') + 1} id is "
                             f"{article(type_of(task_id))}", True)
        expected = parent_of(task_id)
        if entry["parent"] != expected:
            problem(task_id, f"parent is {entry['parent'] or 'null'} but the parent of {task_id} "
                             f"is {expected or 'null'}", True)
        if expected is not None:
            if expected not in entries:
                problem(task_id, f"its parent {expected} does not exist")
            elif task_id not in entries[expected]["children"]:
                problem(task_id, f"its parent {expected} does not list it among its children", True)
        for child in entry["children"]:
            if child not in entries:
                problem(task_id, f"lists child {child}, which does not exist", True)
            elif parent_of(child) != task_id or entries[child]["parent"] != task_id:
                problem(task_id, f"lists child {child}, whose parent is {entries[child]['parent']}", True)
        for dep in entry["dependencies"]:
            if dep not in entries:
                problem(task_id, f"depends on {dep}, which does not exist")
        children = [child for child in entry["children"] if child in entries]
        if children:
            rolled = rolled_status(entries[child]["status"] for child in children)
            if rolled != entry["status"]:
                problem(task_id, f"status is {entry['status']} but its children roll up to {rolled}", True)
        if entry["status"] == "done" and not children:
            blocked = [dep for dep in blockers(entries, task_id) if dep in entries]
            if blocked:
                warnings.append({"id": task_id, "message": f"done although {', '.join(blocked)} "
                                                           "(dependencies) are not (forced?)"})
    for cycle in cycles(entries):
        problem(cycle[0], f"dependency cycle: {' -> '.join(cycle)}")
