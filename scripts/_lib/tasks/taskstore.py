"""The work breakdown: epics > features > tasks in the project's `.claude/memory/tasks/`.

Each entity is `tasks/<id>.json` (schemas/task.schema.json), the source of truth, with
a WBS id (entity.py). `task-index.json` (schemas/task-index.schema.json) is derived from
the files (files.py): when it is missing, corrupt or stale it is rebuilt before any
command uses it.

Invariants kept by every change (and checked by `TaskStore.check`):

- parent/children integrity: `B.parent == A` exactly when A lists B in `children`, and
  the parent is the WBS parent of the id; depth sets the type (epic, feature, task);
- status roll-up (rules.py): a parent's status is rolled up from its children's and is
  never set directly;
- progress: derived from the statuses, so it lives in task-index.json (as in the seed)
  and in command output, never in the entity files;
- dependencies exist and never deadlock: a cycle in the wait-for graph (rules.py) is
  refused and named (`1.2 -> 1.3 -> 1.2`);
- a task whose dependencies (own or inherited) are not done is set done only with force.

Every mutation holds the task store's lock (`<memory>/.cache/tasks.lock`) and changes
nothing on disk until it has succeeded: the files it changes (a status change writes the
task, plus each ancestor whose rolled-up status changes) are written together at the end
(journal.py: all or nothing, completed by the next command when one is killed halfway),
then the index once. Stores damaged otherwise (merges, hand edits, older versions) are
reported by `memory task validate` and `memory health`, and fixed by `--fix` and
`memory repair`.
"""

from __future__ import annotations

import contextlib
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from ..workspace.scopes import Workspace
    from .rules import Entries

from ..base import clock, errors, fsutil
from . import integrity, journal, queries, rules
# the entity's names are also the store's API (scripts and tests use tasks.STATUSES, tasks.sort_ids, ...)
from .entity import (  # noqa: F401
    ID_RE, LIST_FIELDS, MAX_DEPTH, MAX_TITLE, NOT_PATCHABLE, PATCHABLE, STATUSES, TYPES, apply_status, article,
    check_id, check_status, clean_strings, clean_title, dumps, id_key, index_entry, merge_patch, parent_of, sort_ids,
    type_of)
from .files import INDEX_NAME, LOCK_NAME, REFUSED, TaskFiles, reason, refused  # noqa: F401  (LOCK_NAME: API)


class TaskStore:
    """The project's task files and their index. Reads are lock-free; mutations use `mutation()`.

    `changed` is set once a mutation has changed the store (callers refresh what shows the
    tasks, such as index.md, after it)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.files = TaskFiles(workspace)
        self.scope = self.files.scope
        self.root = self.files.root
        self.tasks_dir = self.files.tasks_dir
        self.index_path = self.files.index_path
        # a hook waits about a second for the lock, then leaves the change (Claude is never stalled)
        self.lock_seconds = fsutil.HOOK_LOCK_SECONDS if workspace.in_hook else \
            float(workspace.config.get("locks.waitSeconds", 30))
        self.changed = False
        self._entries: Entries | None = None
        self._entities: dict[str, dict[str, Any]] = {}
        self._locked = False
        self._dirty = False
        self._pending: dict[str, str | None] = {}   # file name -> new text (None: remove), until commit
        self._recount = False  # entities were put in any order: count every progress again at commit
        self._tree: bool | None = None  # rules.listed_as_tree, once per mutation (False after a put)
        self._highest: dict[str | None, int] | None = None  # parent -> highest child number, in a mutation

    # -- the index ------------------------------------------------------------------------

    @property
    def entries(self) -> Entries:
        """id -> index entry, up to date with the files."""
        if self._entries is None:
            self._load()
        assert self._entries is not None
        return self._entries

    def entry(self, task_id: str) -> dict[str, Any]:
        """The index entry of an existing task; raises NotFound."""
        task_id = check_id(task_id)
        found = self.entries.get(task_id)
        if found is None:
            raise self._not_found(task_id)
        return found

    def _not_found(self, task_id: str) -> errors.NotFound:
        if not self.entries:
            return errors.NotFound(f"task {task_id} does not exist: there are no tasks yet",
                                   'create one with `memory task add --title "..."`')
        return errors.NotFound(f"task {task_id} does not exist", "`memory task list` shows the task ids")

    def _load(self) -> None:
        entries = self.files.fresh_index()
        if entries is not None:
            self._entries = entries
            return
        if not self.tasks_dir.is_dir() and not self.index_path.exists():
            self._entries = {}  # no task store here yet: create nothing on a read
            return
        if self._locked:
            journal.recover(self.files)
            self.rebuild()
            return
        try:
            with fsutil.exclusive_lock(self.files.lock_path, timeout=self.lock_seconds, what="task store"):
                self._locked = True
                try:
                    journal.recover(self.files)
                    entries = self.files.fresh_index()  # someone may have rebuilt it while we waited
                    if entries is None:
                        self.rebuild()
                    else:
                        self._entries = entries
                finally:
                    self._locked = False
        except REFUSED as exc:  # e.g. a read-only checkout, a full disk: use the files without writing the index
            self.workspace.warn(f"cannot update {INDEX_NAME} ({reason(exc)}): using the task files as they are")
            self._entries = self._read_all_entries()

    def _read_all_entries(self) -> Entries:
        entries, self._entities = self.files.read_all()
        return entries

    def rebuild(self) -> int:
        """Rebuild task-index.json from tasks/*.json (call with the lock held, or it takes it)."""
        if not self._locked:
            with self.mutation(load=False):
                return self.rebuild()
        self._entries = self._read_all_entries()
        self._write_index()
        return len(self._entries)

    def read_files(self) -> Iterator[tuple[str, Any, str | None]]:
        """(id, parsed JSON or None, problem or None) for every tasks/*.json, in WBS order."""
        return self.files.read_files()

    def _write_index(self) -> None:
        assert self._entries is not None
        self.files.write_index(self._entries)
        self._dirty = False

    def invalidate(self) -> None:
        """Forget the recorded stamps: the next command rebuilds the index (after direct file edits)."""
        self.files.invalidate()

    # -- entity files ----------------------------------------------------------------------

    def task(self, task_id: str) -> dict[str, Any]:
        """The full entity of an existing task, from its file."""
        task_id = check_id(task_id)
        if task_id in self._entities:
            return self._entities[task_id]
        if task_id not in self.entries:
            raise self._not_found(task_id)
        try:
            entity = self.files.read_entity(task_id)
        except FileNotFoundError:
            raise self._not_found(task_id) from None
        self._entities[task_id] = entity
        return entity

    @contextlib.contextmanager
    def mutation(self, *, load: bool = True) -> Iterator[TaskStore]:
        """Hold the task store lock with the index fresh; when the block succeeds, its changed
        files are committed together (journal.commit) and the index is rewritten. When it
        raises, nothing was written."""
        if self._locked:
            yield self
            return
        from ..workspace import scopes

        with scopes.scaffolded(self.workspace, self.scope), \
                fsutil.exclusive_lock(self.files.lock_path, timeout=self.lock_seconds, what="task store"):
            self._locked = True
            self._dirty = False
            self._pending = {}
            self._recount = False
            self._tree = None
            self._highest = None
            try:
                self._entities = {}
                self._entries = None
                try:
                    if load:
                        self._load()  # finishes what a killed command left, if anything
                    else:
                        journal.recover(self.files)
                except REFUSED as exc:
                    raise refused(exc, "the task store cannot be brought up to date (a killed command left a "
                                       "change to complete)") from None
                yield self
                if self._recount or (self._dirty and not self._listed_as_tree()):
                    rules.with_progress(self.entries)
                pending, self._pending = self._pending, {}
                journal.commit(self.files, pending)
                if self._dirty:
                    self.changed = True
                    try:
                        self._write_index()
                    except REFUSED as exc:  # the change is made; the derived index follows next time
                        self.workspace.warn(f"{INDEX_NAME} was not updated ({reason(exc)}); "
                                            "the next task command rebuilds it")
            except BaseException:
                self._entities, self._entries = {}, None  # forget what was not written
                raise
            finally:
                self._pending = {}
                self._tree = self._highest = None
                self._locked = False

    def save(self, entity: dict[str, Any]) -> None:
        """Change an entity file (written at commit) and its index entry (progress: the caller
        rolls it up the chain). Inside `mutation()`."""
        entity.pop("progress", None)  # derived: kept in the index only
        self._pending[f"{entity['id']}.json"] = dumps(entity)
        self._entities[entity["id"]] = entity
        entry, _ = index_entry(entity, entity["id"])
        assert entry is not None, entity
        self.entries[entity["id"]] = entry
        entry["progress"] = self.progress(entity["id"])
        self._dirty = True

    def put(self, entity: dict[str, Any]) -> None:
        """Store a whole task entity as given (an import): written with the others at commit, in
        one journalled step; `memory task validate` checks what the imported tree implies."""
        if not self._locked:
            raise RuntimeError("put() needs mutation()")
        entry, problem = index_entry(entity, str(entity.get("id")))
        if entry is None:
            raise errors.InvalidInput(f"task {entity.get('id')!r} cannot be stored: {problem}",
                                      "fix it in the export file; no task was imported")
        # it may list anything: counted over the leaves (not checked again per put), and all again at commit
        self._recount, self._tree, self._highest = True, False, None
        self.save(dict(entity))

    def _remove(self, task_id: str) -> None:
        self._pending[f"{task_id}.json"] = None
        self._entities.pop(task_id, None)
        self.entries.pop(task_id, None)
        self._dirty = True

    def recover(self) -> None:
        """Finish what a killed command left (journal.recover); cheap when it left nothing."""
        self.files.rescan()
        if self.files.unfinished():
            with self.mutation(load=False):
                pass

    # -- structure queries (rules.py over the current entries) ---------------------------------

    def ancestors(self, task_id: str) -> list[str]:
        return rules.ancestors(self.entries, task_id)

    def descendants(self, task_id: str) -> list[str]:
        """Every entity under `task_id`, parents before their children."""
        return rules.descendants(self.entries, task_id)

    def effective_dependencies(self, task_id: str) -> list[str]:
        """Its own dependencies and its ancestors' (a task inherits them)."""
        return rules.effective_dependencies(self.entries, task_id)

    def blockers(self, task_id: str) -> list[str]:
        """Dependencies (own and inherited) that are not done yet."""
        return rules.blockers(self.entries, task_id)

    def dependants(self, task_ids: Iterable[str]) -> list[str]:
        """Tasks outside `task_ids` that list one of them as a dependency."""
        return rules.dependants(self.entries, task_ids)

    def progress(self, task_id: str) -> dict[str, int]:
        """{completed, total} of the leaves under `task_id` (a leaf counts itself), from its
        children's where the listings are a tree (else counted over the leaves)."""
        if self._listed_as_tree():
            return rules.progress_from_children(self.entries, task_id)
        return rules.progress(self.entries, task_id)

    def _listed_as_tree(self) -> bool:
        """rules.listed_as_tree, found once per mutation: its changes keep it (an add lists a
        task under its own parent, a delete unlists); after a put it is not assumed."""
        if self._tree is None or not self._locked:
            self._tree = rules.listed_as_tree(self.entries)
        return self._tree

    def cycle_through(self, start: str) -> tuple[list[str], list[str]] | None:
        """The shortest wait-for cycle from `start` back to it: (ids, explanations), or None."""
        return rules.cycle_through(self.entries, start)

    def describe(self, ids: list[str]) -> str:
        """`1.2 (pending), 1.3 (missing)`: ids with their statuses."""
        return rules.describe(self.entries, ids)

    # -- roll-up ---------------------------------------------------------------------------

    def _roll_up(self, start: str | None, now: str, *,
                 edited: dict[str, Any] | None = None) -> list[tuple[str, bool]]:
        """Recompute status and progress from `start` up to its root: [(id, whether its status changed)].

        Progress changes only the index; an entity file is written when its rolled-up
        status changes, or for `start` when the caller `edited` its entity (e.g. its children).
        """
        visited: list[tuple[str, bool]] = []
        node = start
        while node is not None and node in self.entries and node not in dict(visited):
            entry = self.entries[node]
            if edited is not None and node == start:
                entry = self.entries[node] = dict(entry, children=list(edited.get("children") or []))
            children = [self.entries[child] for child in entry["children"] if child in self.entries]
            status = rules.rolled_status(child["status"] for child in children) if children else entry["status"]
            changed = status != entry["status"]
            if changed or (edited is not None and node == start):
                entity = self.task(node)
                if status != entity.get("status"):
                    apply_status(entity, status, now)
                entity["updatedAt"] = now
                self.save(entity)
            else:
                progress = self.progress(node)
                if progress != entry.get("progress"):
                    entry["progress"] = progress
                    self._dirty = True
            visited.append((node, changed))
            node = entry["parent"]
        return visited

    def _rolled(self, visited: list[tuple[str, bool]]) -> list[dict[str, Any]]:
        """The ancestors a change reached: {id, status, statusChanged, progress}."""
        return [{"id": task_id, "status": self.entries[task_id]["status"], "statusChanged": changed,
                 "progress": self.entries[task_id]["progress"]} for task_id, changed in visited]

    # -- operations ---------------------------------------------------------------------------

    def next_id(self, parent: str | None) -> str:
        """The next free child number under `parent` (roots when None): one past the highest
        among the ids, the children each entry lists, and the task files (never reuse the name
        of a file the index skipped, e.g. broken). The highest are found once per mutation."""
        if self._highest is None or not self._locked:
            highest: dict[str | None, int] = {}

            def note(owner: str | None, task_id: str) -> None:
                number = int(task_id.rpartition(".")[2])
                if number > highest.get(owner, 0):
                    highest[owner] = number

            for task_id, entry in self.entries.items():
                note(parent_of(task_id), task_id)
                for child in entry["children"]:
                    note(task_id, child)
            for stem in self.files.stems():
                note(parent_of(stem), stem)
            self._highest = highest
        number = self._highest.get(parent, 0) + 1
        return f"{parent}.{number}" if parent else str(number)

    def add(self, title: str, *, parent: str | None = None, dependencies: Iterable[str] = (),
            description: str | None = None, deliverables: Iterable[str] = (), tests: Iterable[str] = (),
            criteria: Iterable[str] = (), agent: str | None = None,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create an entity under `parent` (a root epic when None). Returns {task, rolledUp}."""
        from ..base import redact

        title = clean_title(redact.clean(self.workspace, title, "title"))
        description = redact.clean(self.workspace, description, "description") if description else description
        criteria = redact.clean_values(self.workspace, list(criteria), "acceptance criteria")
        deliverables = redact.clean_values(self.workspace, list(deliverables), "deliverables")
        tests = redact.clean_values(self.workspace, list(tests), "test commands")
        agent = redact.clean(self.workspace, agent, "agent") if isinstance(agent, str) else agent
        with self.mutation():
            if parent is not None:
                parent = check_id(parent, what="parent")
                if parent not in self.entries:
                    raise errors.NotFound(f"parent {parent} does not exist",
                                          "`memory task list` shows the task ids")
                if parent.count(".") + 1 >= MAX_DEPTH:
                    raise errors.InvalidInput(
                        f"{parent} is a task, the deepest level (epic > feature > task); it cannot have children",
                        f"add the new task to feature {parent_of(parent)} instead: --parent {parent_of(parent)}")
            task_id = self.next_id(parent)
            now = clock.now_iso()
            entity: dict[str, Any] = {
                "id": task_id, "type": type_of(task_id), "title": title, "status": "pending",
                "parent": parent, "children": [], "dependencies": [],
                "acceptanceCriteria": clean_strings(criteria, "--criterion"),
                "deliverables": clean_strings(deliverables, "--deliverable"), "tests": clean_strings(tests, "--test"),
                "agent": agent or None, "startedAt": None, "completedAt": None, "createdAt": now,
                "updatedAt": now,
            }
            if description:
                entity["description"] = description
            entity.update(extra or {})
            entry, _ = index_entry(entity, task_id)
            assert entry is not None
            self.entries[task_id] = entry  # tentatively, to check the dependencies with it in place
            try:
                if parent is not None:
                    self.entries[parent] = dict(self.entries[parent],
                                                children=sort_ids([*self.entries[parent]["children"], task_id]))
                entity["dependencies"] = entry["dependencies"] = rules.checked_dependencies(
                    self.entries, task_id, list(dependencies))
                rules.refuse_cycles(self.entries, [task_id])
            except errors.Error:
                self._entries = None  # drop the tentative changes: reload from the files
                raise
            self.save(entity)
            if self._highest is not None:
                self._highest[parent] = int(task_id.rpartition(".")[2])
            rolled: list[tuple[str, bool]] = []
            if parent is not None:
                parent_entity = self.task(parent)
                parent_entity["children"] = self.entries[parent]["children"]
                rolled = self._roll_up(parent, now, edited=parent_entity)
            return {"task": entity, "rolledUp": self._rolled(rolled)}

    def set_status(self, task_id: str, status: str, *, force: bool = False) -> dict[str, Any]:
        """Set a leaf's status, then roll it up. Returns {task, previous, rolledUp, blockedBy}."""
        check_status(status)
        with self.mutation():
            entry = self.entry(task_id)
            task_id = entry["id"]
            children = [child for child in entry["children"] if child in self.entries]
            if children:
                raise errors.InvalidInput(
                    f"{task_id} is {article(entry['type'])} with children: its status is rolled up from them",
                    f"set the status of its children ({', '.join(children)}); `memory task tree {task_id}` shows them")
            blocked = self.blockers(task_id)
            if status == "done" and blocked and not force:
                raise errors.Conflict(
                    f"{task_id} cannot be done: it depends on {self.describe(blocked)}",
                    "finish those first, or pass --force to mark it done anyway")
            if status == "in-progress" and blocked:
                self.workspace.warn(f"{task_id} is started before its dependencies are done: "
                                    f"{self.describe(blocked)}")
            entity = self.task(task_id)
            previous = entity.get("status")
            now = clock.now_iso()
            rolled: list[tuple[str, bool]] = []
            if previous != status:
                apply_status(entity, status, now)
                entity["updatedAt"] = now
                self.save(entity)
                rolled = self._roll_up(entry["parent"], now)
            return {"task": entity, "previous": previous, "rolledUp": self._rolled(rolled), "blockedBy": blocked}

    def update(self, task_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        """Apply a JSON merge patch (RFC 7386) to the patchable fields. Returns {task, changed}."""
        if not isinstance(patch, dict):
            raise errors.InvalidInput("the patch must be a JSON object", 'e.g. --patch \'{"title": "New title"}\'')
        for key in patch:
            if key in NOT_PATCHABLE:
                raise errors.InvalidInput(f"{key} cannot be changed by update", NOT_PATCHABLE[key])
            if key not in PATCHABLE:
                raise errors.InvalidInput(f"unknown task field {key!r}",
                                          "fields you can update: " + ", ".join(PATCHABLE))
        from ..base import redact

        patch = {key: redact.clean_values(self.workspace, value, key) for key, value in patch.items()}
        with self.mutation():
            task_id = self.entry(task_id)["id"]
            entity = self.task(task_id)
            updated = merge_patch(dict(entity), patch)
            for key in LIST_FIELDS:
                if key in patch and updated.get(key) is None:
                    updated[key] = []
            if "title" in patch:
                updated["title"] = clean_title(updated.get("title"))
            if "agent" in patch and not updated.get("agent"):
                updated["agent"] = None
            from ..base import schema

            problems = [problem for problem in schema.validate(updated, schema.load("task"))
                        if re.split(r"[.\[]", problem.path)[0] in patch]
            if problems:
                raise errors.InvalidInput(f"the update would make tasks/{task_id}.json invalid: {problems[0]}",
                                          "see schemas/task.schema.json for the field types")
            changed = sorted(key for key in set(entity) | set(updated) if entity.get(key) != updated.get(key))
            if not changed:
                return {"task": entity, "changed": []}
            if "dependencies" in changed:
                updated["dependencies"] = rules.checked_dependencies(self.entries, task_id, updated["dependencies"])
                original = self.entries[task_id]
                self.entries[task_id] = dict(original, dependencies=updated["dependencies"])
                try:
                    rules.refuse_cycles(self.entries, [task_id, *self.descendants(task_id)])
                finally:
                    self.entries[task_id] = original
            updated["updatedAt"] = clock.now_iso()
            entity.clear()
            entity.update(updated)
            self.save(entity)
            return {"task": entity, "changed": changed}

    def delete(self, task_id: str, *, cascade: bool = False) -> dict[str, Any]:
        """Delete a task; with `cascade` also everything under it, and drop it from dependants' lists."""
        with self.mutation():
            task_id = self.entry(task_id)["id"]
            doomed = [task_id, *self.descendants(task_id)]
            children = [child for child in self.entries[task_id]["children"] if child in self.entries]
            dependants = self.dependants(doomed)
            if not cascade:
                if children:
                    raise errors.Conflict(f"{task_id} has children: {', '.join(children)}",
                                          "delete them first, or pass --cascade to delete "
                                          f"{task_id} with everything under it")
                if dependants:
                    raise errors.Conflict(
                        f"{', '.join(dependants)} depend{'s' if len(dependants) == 1 else ''} on {task_id}",
                        f"remove the dependency first (memory task update ID --set dependencies=...), "
                        f"or pass --cascade to also drop {task_id} from their dependencies")
            now = clock.now_iso()
            for doomed_id in reversed(doomed):  # children before their parents
                self._remove(doomed_id)
            gone = set(doomed)
            for dependant in dependants:
                entity = self.task(dependant)
                entity["dependencies"] = [dep for dep in entity.get("dependencies", []) if dep not in gone]
                entity["updatedAt"] = now
                self.save(entity)
            parent = parent_of(task_id)
            rolled: list[tuple[str, bool]] = []
            if parent in self.entries:
                parent_entity = self.task(parent)
                parent_entity["children"] = [child for child in parent_entity.get("children", []) if child != task_id]
                rolled = self._roll_up(parent, now, edited=parent_entity)
            return {"deleted": doomed, "dependantsUpdated": dependants, "rolledUp": self._rolled(rolled)}

    # -- read operations ------------------------------------------------------------------------

    def listing(self, *, status: str | None = None, type: str | None = None,
                parent: str | None = None) -> list[dict[str, Any]]:
        """Index entries in WBS order, filtered; `parent` keeps its direct children ("root" for epics)."""
        if parent not in (None, "root"):
            parent = self.entry(parent)["id"]
        return queries.listing(self.entries, status=status, type=type, parent=parent)

    def ready(self) -> list[dict[str, Any]]:
        """Pending leaves whose dependencies (own and inherited) are all done: the next work."""
        return queries.ready(self.entries)

    def tree(self, root: str | None = None) -> list[dict[str, Any]]:
        """Nested {id, type, status, title, progress, children: [...]} from `root` (all roots when None)."""
        return queries.tree(self.entries, None if root is None else self.entry(root)["id"])

    # -- validation ------------------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Every invariant, checked from the files: {tasks, problems: [{id, message, fixable}], warnings}.

        `fixable`: `fix` repairs it (it follows from the ids and statuses). What a killed
        command left is completed first, as every command does.
        """
        return integrity.check(self)

    def fix(self) -> list[str]:
        """Repair what follows from the ids: parent, children, type and rolled-up status."""
        with self.mutation():
            self._entries = self._read_all_entries()
            now = clock.now_iso()
            fixed: set[str] = set()
            children: dict[str | None, list[str]] = {}
            for task_id in sort_ids(self.entries):
                children.setdefault(parent_of(task_id), []).append(task_id)
            for task_id in sort_ids(self.entries):
                entity = self.task(task_id)
                wanted = {"type": type_of(task_id), "parent": parent_of(task_id), "children": children.get(task_id, [])}
                if any(entity.get(key) != value for key, value in wanted.items()):
                    entity.update(wanted)
                    entity["updatedAt"] = now
                    self.save(entity)
                    fixed.add(task_id)
            for task_id in sorted(self.entries, key=lambda item: (-item.count("."), id_key(item))):  # deepest first
                if self.entries[task_id]["children"]:
                    fixed.update(item for item, changed in self._roll_up(task_id, now) if changed)
            rules.with_progress(self.entries)  # counted over the leaves: whatever the index held
            self._dirty = True
            return sort_ids(fixed)
