"""The work breakdown: epics > features > tasks in the project's `.claude/memory/tasks/`.

Each entity is `tasks/<id>.json` (schemas/task.schema.json), the source of truth.
Ids are WBS style: `1` (epic), `1.2` (feature), `1.2.3` (task); the parent of `a.b.c`
is `a.b`. `task-index.json` (schemas/task-index.schema.json) is derived from the files:
when it is missing, corrupt or stale (the tasks directory's file stamps differ from the
ones recorded when it was written) it is rebuilt before any command uses it.

Invariants kept by every change (and checked by `TaskStore.check`):

- parent/children integrity: `B.parent == A` exactly when A lists B in `children`, and
  the parent is the WBS parent of the id; depth sets the type (epic, feature, task);
- status roll-up: an entity with children is `done` when all of them are, `in-progress`
  when any is done or in progress, else `pending`; its status is never set directly;
- progress: `{completed, total}` counts the leaf entities under an entity (a leaf
  counts itself: {1, 1} when done, else {0, 1}), so a parent's progress is the sum of
  its children's. It is derived from the statuses, so it lives in task-index.json (as
  in the seed) and in command output, never in the entity files;
- dependencies exist and never deadlock. A dependency on X means "after all of X is
  done", and a task inherits its ancestors' dependencies; so the wait-for graph has
  an edge to each dependency (own and inherited) and from each parent to its children,
  and a cycle in it is refused and named (`1.2 -> 1.3 -> 1.2`);
- a task whose dependencies (own or inherited) are not done is set done only with force.

Every mutation holds the task store's lock (`<memory>/.cache/tasks.lock`) and changes
nothing on disk until it has succeeded: the files it changes (a status change writes the
task, plus each ancestor whose rolled-up status changes) are written together at the end,
then the index once. Several files are one change, so they are committed through a
journal (`<memory>/.cache/tasks.journal`, each file's old checksum and new text) written
before the first of them: a command killed halfway leaves the journal, and the next
command (a read too) completes the change under the lock before it uses the store, so it
never sees a child its parent does not list, a parent listing a deleted child, or a half
cascade. A file changed by someone else since (a checkout) is left as it is and the
rest is reported to `memory task validate --fix`. A write that fails (a full disk) puts
back the files already written; temp files of killed writes in tasks/ are removed by the
next command. Stores damaged otherwise (merges, hand edits, older versions) are reported
by `memory task validate` and `memory health`, and fixed by `--fix` and `memory repair`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Iterable, Iterator

    from ..workspace.scopes import Workspace

from ..base import clock, errors, fsutil

TYPES = ("epic", "feature", "task")  # by depth
STATUSES = ("pending", "in-progress", "done")
INDEX_VERSION = "1.0.0"
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
LOCK_NAME = "tasks.lock"
STAMP_NAME = "task-index.stamp"
INDEX_NAME = "task-index.json"
JOURNAL_NAME = "tasks.journal"
JOURNAL_VERSION = 1
REFUSED = (OSError, errors.NoSpace, errors.ReadOnly)  # how the storage refuses a write


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


# -- roll-up rules ----------------------------------------------------------------------------

def rolled_status(statuses: Iterable[str]) -> str:
    """A parent's status from its children's: all done -> done; any started -> in-progress; else pending."""
    statuses = list(statuses)
    if statuses and all(status == "done" for status in statuses):
        return "done"
    if any(status in ("done", "in-progress") for status in statuses):
        return "in-progress"
    return "pending"


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

    The entry has no `progress` yet: the store adds it from the statuses (`TaskStore.progress`).
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


def clean_title(value: object) -> str:
    """A one-line title of 1-200 characters; raises InvalidInput otherwise."""
    title = " ".join(value.split()) if isinstance(value, str) else ""
    if not title:
        raise errors.InvalidInput("a task needs a non-empty title", "give --title TEXT")
    if len(title) > MAX_TITLE:
        raise errors.InvalidInput(f"the title is {len(title)} characters long; the limit is {MAX_TITLE}",
                                  "put the details in --description")
    return title


# -- the store --------------------------------------------------------------------------------

class TaskStore:
    """The project's task files and their index. Reads are lock-free; mutations use `mutation()`."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.changed = False  # a mutation wrote task files (the caller may regenerate what shows tasks)
        self.scope = workspace.scope("project")
        self.root: Path = self.scope.root
        self.tasks_dir: Path = self.root / "tasks"
        outside = fsutil.escapes(self.tasks_dir, self.root)
        if outside is not None:
            raise errors.ScopeUnavailable(f"{self.tasks_dir} is a link leading out of the memory directory (to "
                                          f"{outside}); the task store is not used through it",
                                          "replace the link with a real tasks/ directory")
        for derived in (INDEX_NAME,):
            if fsutil.escapes(self.root / derived, self.root) is not None:
                raise errors.ScopeUnavailable(f"{self.root / derived} is a link leading out of the memory directory; "
                                              "it is neither read nor written through",
                                              f"remove the link: rm {self.root / derived}")
        # a hook waits about a second for the lock, then leaves the change (Claude is never stalled)
        self.lock_seconds = fsutil.HOOK_LOCK_SECONDS if workspace.in_hook else \
            float(workspace.config.get("locks.waitSeconds", 30))
        self.index_path: Path = self.root / INDEX_NAME
        self.stamp_path: Path = self.scope.cache_dir / STAMP_NAME
        self.lock_path: Path = self.scope.cache_dir / LOCK_NAME
        self.journal_path: Path = self.scope.cache_dir / JOURNAL_NAME
        self._entries: dict[str, dict[str, Any]] | None = None
        self._entities: dict[str, dict[str, Any]] = {}
        self._locked = False
        self._dirty = False
        self._stamps: dict[str, str] | None = None  # the task files' stamps, once scanned
        self._touched: set[str] = set()             # file names written or removed since
        self._leftovers = False                     # the scan found temp files of killed writes
        self._pending: dict[str, str | None] = {}   # file name -> new text (None: remove), until commit

    # -- the index ------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, dict[str, Any]]:
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

    def _scan(self) -> dict[str, str] | None:
        """name -> "inode:mtime:size" of every tasks/*.json; None without a tasks directory.

        Also notes temp files of killed writes (`_leftovers`), which the next locked pass removes."""
        self._leftovers = False
        try:
            names = os.listdir(self.tasks_dir)
            fd = os.open(self.tasks_dir, os.O_RDONLY)
        except OSError:
            return None
        self._leftovers = any(fsutil.is_temp_name(name) for name in names)
        stamps = {}
        try:
            for name in names:
                if name.endswith(".json") and not name.startswith("."):
                    with contextlib.suppress(OSError):
                        info = os.stat(name, dir_fd=fd)
                        stamps[name] = f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"
        finally:
            os.close(fd)
        return stamps

    def fingerprint(self) -> str:
        """The stamps of the task files folded into one short string (rescanning only what we touched)."""
        import zlib

        if self._stamps is None:
            self._stamps = self._scan()
        elif self._touched:
            for name in self._touched:
                try:
                    info = os.stat(self.tasks_dir / name)
                    self._stamps[name] = f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"
                except OSError:
                    self._stamps.pop(name, None)
        self._touched = set()
        if self._stamps is None:
            return "none"
        parts = sorted(f"{name}:{stamp}" for name, stamp in self._stamps.items())
        return f"{len(parts)}-{zlib.crc32(chr(10).join(parts).encode()):08x}"

    def _index_stamp(self) -> list[int] | None:
        try:
            info = os.stat(self.index_path)
        except OSError:
            return None
        return [info.st_ino, info.st_mtime_ns, info.st_size]

    def _fresh_index(self) -> dict[str, dict[str, Any]] | None:
        """The index's entries when it is current with the files; None when it must be rebuilt
        (or a killed command left something to finish first: a journal, temp files)."""
        self._stamps, self._touched = None, set()  # look at the directory afresh
        try:
            with open(self.stamp_path, encoding="utf-8") as handle:
                stamp = json.load(handle)
            if stamp.get("index") != self._index_stamp() or stamp.get("tasks") != self.fingerprint():
                return None
            if self._leftovers or os.path.exists(self.journal_path):
                return None
            with open(self.index_path, encoding="utf-8") as handle:
                data = json.load(handle)
            entries = {item["id"]: item for item in data["tasks"]}
            for item in entries.values():
                if not (item["status"] in STATUSES and "parent" in item and isinstance(item["children"], list)
                        and isinstance(item["dependencies"], list) and "progress" in item):
                    return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return entries

    def _load(self) -> None:
        entries = self._fresh_index()
        if entries is not None:
            self._entries = entries
            return
        if not self.tasks_dir.is_dir() and not self.index_path.exists():
            self._entries = {}  # no task store here yet: create nothing on a read
            return
        if self._locked:
            self._recover()
            self.rebuild()
            return
        try:
            with fsutil.exclusive_lock(self.lock_path, timeout=self.lock_seconds, what="task store"):
                self._locked = True
                try:
                    self._recover()
                    entries = self._fresh_index()  # someone may have rebuilt it while we waited
                    if entries is None:
                        self.rebuild()
                    else:
                        self._entries = entries
                finally:
                    self._locked = False
        except REFUSED as exc:  # e.g. a read-only checkout, a full disk: use the files without writing the index
            self.workspace.warn(f"cannot update {INDEX_NAME} ({_reason(exc)}): using the task files as they are")
            self._entries = self._read_all_entries()

    def _read_all_entries(self) -> dict[str, dict[str, Any]]:
        self._stamps, self._touched = None, set()  # stamps from before the files are read
        self.fingerprint()
        entries: dict[str, dict[str, Any]] = {}
        self._entities = {}
        for stem, entity, problem in self.read_files():
            entry, why = (None, problem) if problem else index_entry(entity, stem)
            if entry is None:
                self.workspace.warn(f"skipping tasks/{stem}.json: {why} (run `memory task validate`)")
                continue
            entries[stem] = entry
            self._entities[stem] = entity
        self._entries, saved = entries, self._entries
        try:
            for stem, entry in entries.items():
                entry["progress"] = self.progress(stem)
        finally:
            self._entries = saved
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
        try:
            names = [name for name in os.listdir(self.tasks_dir)
                     if name.endswith(".json") and not name.startswith(".")]
        except OSError:
            return
        stems = [name[:-5] for name in names]
        valid = sort_ids(stem for stem in stems if ID_RE.match(stem))
        for stem in valid + sorted(stem for stem in stems if not ID_RE.match(stem)):
            if not ID_RE.match(stem):
                yield stem, None, "the file name is not a WBS id (1, 1.2 or 1.2.3)"
                continue
            try:
                with open(self.tasks_dir / f"{stem}.json", encoding="utf-8") as handle:
                    yield stem, json.load(handle), None
            except (OSError, ValueError) as exc:
                yield stem, None, f"not readable JSON: {exc}"

    def _write_index(self) -> None:
        assert self._entries is not None
        lines = [json.dumps(self._entries[task_id], ensure_ascii=False) for task_id in sort_ids(self._entries)]
        text = f'{{"version": "{INDEX_VERSION}", "tasks": [\n' + ",\n".join(lines) + "\n]}\n"
        from ..catalog.catalog import replace_beside

        replace_beside(self.workspace, self.scope, self.index_path, text, durable=False)
        stamp = {"tasks": self.fingerprint(), "index": self._index_stamp()}
        fsutil.write_atomically(self.stamp_path, json.dumps(stamp), durable=False)
        self._dirty = False

    def invalidate(self) -> None:
        """Forget the recorded stamps: the next command rebuilds the index (after direct file edits)."""
        fsutil.remove_file(self.stamp_path)

    # -- entity files ----------------------------------------------------------------------

    def task(self, task_id: str) -> dict[str, Any]:
        """The full entity of an existing task, from its file."""
        task_id = check_id(task_id)
        if task_id in self._entities:
            return self._entities[task_id]
        if task_id not in self.entries:
            raise self._not_found(task_id)
        try:
            with open(self.tasks_dir / f"{task_id}.json", encoding="utf-8") as handle:
                entity = json.load(handle)
        except FileNotFoundError:
            raise self._not_found(task_id) from None
        except (OSError, ValueError) as exc:
            raise errors.InvalidInput(f"tasks/{task_id}.json cannot be read: {exc}",
                                      "fix the file (memory file write), then run `memory task validate`") from None
        if not isinstance(entity, dict):
            raise errors.InvalidInput(f"tasks/{task_id}.json is not a JSON object", "run `memory task validate`")
        self._entities[task_id] = entity
        return entity

    @contextlib.contextmanager
    def mutation(self, *, load: bool = True) -> Iterator[TaskStore]:
        """Hold the task store lock with the index fresh; when the block succeeds, its changed
        files are committed together (`_commit`) and the index is rewritten. When it raises,
        nothing was written."""
        if self._locked:
            yield self
            return
        from ..workspace import scopes

        with scopes.scaffolded(self.workspace, self.scope), \
                fsutil.exclusive_lock(self.lock_path, timeout=self.lock_seconds, what="task store"):
            self._locked = True
            self._dirty = False
            self._pending = {}
            try:
                self._entities = {}
                self._entries = None
                try:
                    if load:
                        self._load()  # finishes what a killed command left, if anything
                    else:
                        self._recover()
                except REFUSED as exc:
                    raise _refused(exc, "the task store cannot be brought up to date (a killed command left a "
                                        "change to complete)") from None
                yield self
                self._commit()
                if self._dirty:
                    self.changed = True
                    try:
                        self._write_index()
                    except REFUSED as exc:  # the change is made; the derived index follows next time
                        self.workspace.warn(f"{INDEX_NAME} was not updated ({_reason(exc)}); "
                                            "the next task command rebuilds it")
            except BaseException:
                self._entities, self._entries = {}, None  # forget what was not written
                raise
            finally:
                self._pending = {}
                self._locked = False

    def _save(self, entity: dict[str, Any]) -> None:
        """Change an entity file (written at commit) and its index entry (progress: the caller
        rolls it up the chain)."""
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
        self._save(dict(entity))

    def _remove(self, task_id: str) -> None:
        self._pending[f"{task_id}.json"] = None
        self._entities.pop(task_id, None)
        self.entries.pop(task_id, None)
        self._dirty = True

    # -- committing and recovering ----------------------------------------------------------

    def _commit(self) -> None:
        """Write the pending task files: all of them, or none.

        Two or more files are journaled first (their old checksums and new texts), so a
        command killed while writing them is completed by the next one (`_recover`). A
        write that fails puts back what was already written and drops the journal; only
        when that fails too (the disk still full) does the journal stay, for the next
        command to complete the change.
        """
        pending, self._pending = self._pending, {}
        if not pending:
            return
        journaled = len(pending) > 1
        try:
            before = {name: _read_bytes(self.tasks_dir / name) for name in pending}
            if journaled:
                record = {"version": JOURNAL_VERSION,
                          "files": [{"name": name, "before": _digest(before[name]), "after": text}
                                    for name, text in pending.items()]}
                fsutil.write_atomically(self.journal_path, json.dumps(record, ensure_ascii=False))
        except REFUSED as exc:
            raise _refused(exc, "the task files could not be written", "; nothing was changed") from None
        written: list[str] = []
        try:
            for name, text in pending.items():
                self._put(name, None if text is None else text.encode("utf-8"))
                written.append(name)
            fsutil.sync_directory(self.tasks_dir)
        except REFUSED as exc:
            if not self._put_back(written, before):
                raise _refused(exc, "the task files could not be written",
                               "; the change was written halfway and could not be undone",
                               "the next task command completes it") from None
            if journaled:
                fsutil.remove_file(self.journal_path)
            raise _refused(exc, "the task files could not be written", "; nothing was changed") from None
        if journaled:
            fsutil.remove_file(self.journal_path)

    def _put(self, name: str, data: bytes | None) -> None:
        """Write (or, for None, remove) one task file; the caller syncs the directory."""
        if data is None:
            fsutil.remove_file(self.tasks_dir / name)
        else:
            fsutil.write_atomically(self.tasks_dir / name, data, sync_dir=False)
        self._touched.add(name)

    def _put_back(self, names: list[str], before: dict[str, bytes | None]) -> bool:
        """Restore files to what they held before this commit; False when one could not be."""
        restored = True
        for name in reversed(names):
            try:
                self._put(name, before[name])
            except REFUSED:
                restored = False
        fsutil.sync_directory(self.tasks_dir)
        return restored

    def recover(self) -> None:
        """Finish what a killed command left (see `_recover`); cheap when it left nothing."""
        self._stamps = None
        self.fingerprint()
        if self._leftovers or os.path.exists(self.journal_path):
            with self.mutation(load=False):
                pass

    def _recover(self) -> None:
        """With the lock held: remove temp files of killed writes and complete a journaled change.

        Each journaled file already holding its new text is left; one still holding its old
        text (by checksum) is written; one changed by someone else since is kept as it is and
        reported, since the journal is older than that change.
        """
        if fsutil.remove_stale_temps(self.tasks_dir):
            self._stamps = None
        try:
            raw = self.journal_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.workspace.warn(f"cannot read {self.journal_path}: {_reason(exc)}")
            return
        try:
            record = json.loads(raw)
            files = [(item["name"], item["before"], item["after"]) for item in record["files"]]
            if record.get("version") != JOURNAL_VERSION or not all(
                    _is_task_file_name(name) and isinstance(after, (str, type(None))) for name, _, after in files):
                raise ValueError("unknown format")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.workspace.warn(f"ignored an unreadable task journal ({exc}); "
                                "`memory task validate` checks what it may have left")
            fsutil.remove_file(self.journal_path)
            return
        kept: list[str] = []
        for name, old, new in files:
            data = None if new is None else new.encode("utf-8")
            current = _digest(_read_bytes(self.tasks_dir / name))
            if current == _digest(data):
                continue
            if current != old:
                kept.append(name)
                continue
            self._put(name, data)
        fsutil.sync_directory(self.tasks_dir)
        fsutil.remove_file(self.journal_path)
        self._stamps = None
        if kept:
            self.workspace.warn(f"an interrupted task change was completed except for {', '.join(kept)}, "
                                "changed since; `memory task validate --fix` repairs what follows from the ids")

    # -- structure queries -------------------------------------------------------------------

    def ancestors(self, task_id: str) -> list[str]:
        entries = self.entries
        found, node = [], entries[task_id]["parent"]
        while node is not None and node in entries and node not in found:
            found.append(node)
            node = entries[node]["parent"]
        return found

    def descendants(self, task_id: str) -> list[str]:
        """Every entity under `task_id`, parents before their children."""
        found: list[str] = []
        stack = list(reversed(self.entries[task_id]["children"]))
        while stack:
            node = stack.pop()
            if node in self.entries and node not in found and node != task_id:
                found.append(node)
                stack.extend(reversed(self.entries[node]["children"]))
        return found

    def effective_dependencies(self, task_id: str) -> list[str]:
        """Its own dependencies and its ancestors' (a task inherits them)."""
        entries = self.entries
        found: list[str] = []
        for node in [task_id, *self.ancestors(task_id)]:
            found += [dep for dep in entries[node]["dependencies"] if dep not in found]
        return found

    def blockers(self, task_id: str) -> list[str]:
        """Dependencies (own and inherited) that are not done yet."""
        return [dep for dep in self.effective_dependencies(task_id)
                if self.entries.get(dep, {}).get("status") != "done"]

    def dependants(self, task_ids: Iterable[str]) -> list[str]:
        """Tasks outside `task_ids` that list one of them as a dependency."""
        targets = set(task_ids)
        return sort_ids(task_id for task_id, entry in self.entries.items()
                        if task_id not in targets and targets.intersection(entry["dependencies"]))

    def progress(self, task_id: str) -> dict[str, int]:
        """{completed, total} of the leaves under `task_id` (a leaf counts itself)."""
        completed = total = 0
        stack = [task_id]
        seen: set[str] = set()
        while stack:
            node = stack.pop()
            if node in seen or node not in self.entries:
                continue
            seen.add(node)
            entry = self.entries[node]
            children = [child for child in entry["children"] if child in self.entries]
            if children:
                stack.extend(children)
            else:
                total += 1
                completed += entry["status"] == "done"
        return {"completed": completed, "total": total}

    def _successors(self, node: str) -> Iterator[tuple[str, str]]:
        """Wait-for edges out of `node`: (target, why), why = "" for an own dependency."""
        entry = self.entries[node]
        for child in entry["children"]:
            if child in self.entries:
                yield child, f"{node} is done only when its child {child} is"
        for dep in entry["dependencies"]:
            yield dep, ""
        for ancestor in self.ancestors(node):
            for dep in self.entries[ancestor]["dependencies"]:
                yield dep, f"{node} inherits the dependency of {ancestor} on {dep}"

    def cycle_through(self, start: str) -> tuple[list[str], list[str]] | None:
        """The shortest wait-for cycle from `start` back to it: (ids, explanations), or None."""
        previous: dict[str, tuple[str, str]] = {}
        frontier = [start]
        seen = {start}
        while frontier:
            following = []
            for node in frontier:
                if node not in self.entries:
                    continue
                for target, why in self._successors(node):
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

    def _refuse_cycles(self, starts: Iterable[str]) -> None:
        for start in starts:
            found = self.cycle_through(start)
            if found:
                path, notes = found
                hint = "remove one of these dependencies"
                if notes:
                    hint = "; ".join(notes) + ": a task cannot wait for its own ancestor or descendant"
                raise errors.Conflict(f"dependency cycle: {' -> '.join(path)}", hint)

    def _check_dependencies(self, task_id: str, dependencies: list[str]) -> list[str]:
        checked: list[str] = []
        for dep in dependencies:
            dep = check_id(dep, what="dependency")
            if dep == task_id:
                raise errors.Conflict(f"dependency cycle: {task_id} -> {task_id}", "a task cannot depend on itself")
            if dep not in self.entries:
                raise errors.NotFound(f"dependency {dep} does not exist",
                                      "`memory task list` shows the task ids; add the missing task first")
            if dep.startswith(task_id + "."):
                raise errors.Conflict(f"{task_id} cannot depend on {dep}, which is part of it",
                                      f"{task_id} is done only when everything under it is; "
                                      f"make a sibling of {dep} depend on it instead")
            if dep not in checked:
                checked.append(dep)
        return checked

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
            status = rolled_status(child["status"] for child in children) if children else entry["status"]
            changed = status != entry["status"]
            if changed or (edited is not None and node == start):
                entity = self.task(node)
                if status != entity.get("status"):
                    apply_status(entity, status, now)
                entity["updatedAt"] = now
                self._save(entity)
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
        """The next free child number under `parent` (roots when None): one past the highest."""
        taken = [int(task_id.rpartition(".")[2]) for task_id in self.entries if parent_of(task_id) == parent]
        if parent is not None:
            taken += [int(child.rpartition(".")[2]) for child in self.entries[parent]["children"]]
        with contextlib.suppress(OSError):  # never reuse the name of a file the index skipped (e.g. broken)
            taken += [int(stem.rpartition(".")[2]) for stem in (name[:-5] for name in os.listdir(self.tasks_dir)
                                                              if name.endswith(".json"))
                      if ID_RE.match(stem) and parent_of(stem) == parent]
        number = max(taken, default=0) + 1
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
                "acceptanceCriteria": _strings(criteria, "--criterion"),
                "deliverables": _strings(deliverables, "--deliverable"), "tests": _strings(tests, "--test"),
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
                entity["dependencies"] = entry["dependencies"] = self._check_dependencies(task_id, list(dependencies))
                self._refuse_cycles([task_id])
            except errors.Error:
                self._entries = None  # drop the tentative changes: reload from the files
                raise
            self._save(entity)
            rolled: list[tuple[str, bool]] = []
            if parent is not None:
                parent_entity = self.task(parent)
                parent_entity["children"] = self.entries[parent]["children"]
                rolled = self._roll_up(parent, now, edited=parent_entity)
            return {"task": entity, "rolledUp": self._rolled(rolled)}

    def set_status(self, task_id: str, status: str, *, force: bool = False) -> dict[str, Any]:
        """Set a leaf's status, then roll it up. Returns {task, previous, rolledUp, blockedBy}."""
        if status not in STATUSES:
            raise errors.InvalidInput(f"status {status!r} is not one of {', '.join(STATUSES)}")
        with self.mutation():
            entry = self.entry(task_id)
            task_id = entry["id"]
            children = [child for child in entry["children"] if child in self.entries]
            if children:
                raise errors.InvalidInput(
                    f"{task_id} is {_article(entry['type'])} with children: its status is rolled up from them",
                    f"set the status of its children ({', '.join(children)}); `memory task tree {task_id}` shows them")
            blocked = self.blockers(task_id)
            if status == "done" and blocked and not force:
                raise errors.Conflict(
                    f"{task_id} cannot be done: it depends on {self._describe(blocked)}",
                    "finish those first, or pass --force to mark it done anyway")
            if status == "in-progress" and blocked:
                self.workspace.warn(f"{task_id} is started before its dependencies are done: "
                                    f"{self._describe(blocked)}")
            entity = self.task(task_id)
            previous = entity.get("status")
            now = clock.now_iso()
            rolled: list[tuple[str, bool]] = []
            if previous != status:
                apply_status(entity, status, now)
                entity["updatedAt"] = now
                self._save(entity)
                rolled = self._roll_up(entry["parent"], now)
            return {"task": entity, "previous": previous, "rolledUp": self._rolled(rolled), "blockedBy": blocked}

    def _describe(self, ids: list[str]) -> str:
        return ", ".join(f"{task_id} ({self.entries.get(task_id, {}).get('status', 'missing')})" for task_id in ids)

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
                updated["dependencies"] = self._check_dependencies(task_id, updated["dependencies"])
                original = self.entries[task_id]
                self.entries[task_id] = dict(original, dependencies=updated["dependencies"])
                try:
                    self._refuse_cycles([task_id, *self.descendants(task_id)])
                finally:
                    self.entries[task_id] = original
            updated["updatedAt"] = clock.now_iso()
            entity.clear()
            entity.update(updated)
            self._save(entity)
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
                self._save(entity)
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
        found = []
        for task_id in sort_ids(self.entries):
            entry = self.entries[task_id]
            if status and entry["status"] != status or type and entry["type"] != type:
                continue
            if parent is not None and entry["parent"] != (None if parent == "root" else parent):
                continue
            found.append(entry)
        return found

    def ready(self) -> list[dict[str, Any]]:
        """Pending leaves whose dependencies (own and inherited) are all done: the next work."""
        entries = self.entries
        done = {task_id for task_id, entry in entries.items() if entry["status"] == "done"}
        return [entry for entry in (entries[task_id] for task_id in sort_ids(entries))
                if entry["status"] == "pending" and not any(child in entries for child in entry["children"])
                and done.issuperset(self.effective_dependencies(entry["id"]))]

    def tree(self, root: str | None = None) -> list[dict[str, Any]]:
        """Nested {id, type, status, title, progress, children: [...]} from `root` (all roots when None)."""
        if root is not None:
            starts = [self.entry(root)["id"]]
        else:
            starts = [task_id for task_id in sort_ids(self.entries)
                      if self.entries[task_id]["parent"] not in self.entries]

        def node(task_id: str, seen: frozenset[str]) -> dict[str, Any]:
            entry = self.entries[task_id]
            children = [child for child in sort_ids(entry["children"]) if child in self.entries and child not in seen]
            return {"id": task_id, "type": entry["type"], "status": entry["status"], "title": entry.get("title", ""),
                    "progress": self.progress(task_id),
                    "children": [node(child, seen | {child}) for child in children]}

        return [node(task_id, frozenset([task_id])) for task_id in starts]

    # -- validation ------------------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Every invariant, checked from the files: {tasks, problems: [{id, message, fixable}], warnings}.

        `fixable`: `fix` repairs it (it follows from the ids and statuses). What a killed
        command left is completed first, as every command does.
        """
        from ..base import schema

        if self.tasks_dir.is_dir():
            self.recover()
        task_schema = schema.load("task")
        problems: list[dict[str, Any]] = []
        warnings: list[dict[str, str]] = []
        entities: dict[str, dict[str, Any]] = {}

        def problem(task_id: str, message: str, fixable: bool = False) -> None:
            problems.append({"id": task_id, "message": message, "fixable": fixable})

        for stem, entity, trouble in self.read_files():
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
        self._check_structure(entities, problem, warnings)
        index_problems = self._index_problems(entities)
        for message in index_problems:
            problem(INDEX_NAME, message, True)
        if not index_problems:  # leave a stale or missing index rebuilt, as every command does
            count = len(self.workspace.warnings)
            with contextlib.suppress(errors.Error):
                self.entries  # noqa: B018
            del self.workspace.warnings[count:]  # its "skipping tasks/..." notes repeat the problems above
        return {"tasks": len(entities), "problems": problems, "warnings": warnings}

    def _index_problems(self, entries: dict[str, dict[str, Any]]) -> list[str]:
        """How task-index.json disagrees with the task files, when someone else changed it.

        An index this store wrote and that is merely stale (task files edited since) is
        rebuilt by the next command, like any derived file; one changed by hand, or by
        another tool, is reported.
        """
        try:
            with open(self.stamp_path, encoding="utf-8") as handle:
                recorded = json.load(handle).get("index")
        except (OSError, ValueError, AttributeError):
            return []  # no record of our last write (e.g. after a direct task file write): nothing to compare
        if recorded == self._index_stamp() or self._index_stamp() is None:
            return []
        from ..base import schema

        try:
            with open(self.index_path, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError:
            return []
        except ValueError as exc:
            return [f"not readable JSON: {exc}"]
        violations = schema.validate(data, schema.load("task-index"))
        if violations:
            return [f"schema: {violation}" for violation in violations[:5]]
        saved, self._entries = self._entries, entries
        try:
            derived = {task_id: dict(entry, progress=self.progress(task_id)) for task_id, entry in entries.items()}
        finally:
            self._entries = saved
        listed: dict[str, dict[str, Any]] = {item["id"]: item for item in data["tasks"]}
        found: list[str] = []
        for task_id in sort_ids(set(listed) | set(derived)):
            if task_id not in derived:
                found.append(f"lists {task_id}, which has no valid tasks/{task_id}.json")
            elif task_id not in listed:
                found.append(f"does not list {task_id}")
            else:
                for key in ("type", "status", "parent", "children", "dependencies", "progress", "deliverables"):
                    if key in listed[task_id] and listed[task_id][key] != derived[task_id].get(key):
                        found.append(f"gives {task_id} {key} {json.dumps(listed[task_id][key])}, but tasks/*.json "
                                     f"give {json.dumps(derived[task_id].get(key))}")
        return found

    def _check_structure(self, entries: dict[str, dict[str, Any]], problem: Any,
                         warnings: list[dict[str, str]]) -> None:
        saved, self._entries = self._entries, entries
        try:
            for task_id in sort_ids(entries):
                entry = entries[task_id]
                if entry["type"] != type_of(task_id):
                    problem(task_id, f"type is {entry['type']} but a depth-{task_id.count('.') + 1} id is "
                                     f"{_article(type_of(task_id))}", True)
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
                    blocked = [dep for dep in self.blockers(task_id) if dep in entries]
                    if blocked:
                        warnings.append({"id": task_id, "message": f"done although {', '.join(blocked)} "
                                                                   "(dependencies) are not (forced?)"})
            for cycle in self._cycles():
                problem(cycle[0], f"dependency cycle: {' -> '.join(cycle)}")
        finally:
            self._entries = saved

    def _cycles(self) -> list[list[str]]:
        """Distinct wait-for cycles (each once, from its smallest id), via one depth-first pass."""
        state: dict[str, int] = {}  # 1 on the stack, 2 finished
        found: dict[tuple[str, ...], list[str]] = {}
        for start in sort_ids(self.entries):
            if start in state:
                continue
            stack = [(start, iter(list(self._successors(start))))]
            path = [start]
            state[start] = 1
            while stack:
                node, successors = stack[-1]
                advanced = False
                for target, _ in successors:
                    if target not in self.entries:
                        continue
                    if state.get(target) == 1:
                        cycle = path[path.index(target):]
                        smallest = min(range(len(cycle)), key=lambda i: id_key(cycle[i]))
                        rotated = cycle[smallest:] + cycle[:smallest]
                        found.setdefault(tuple(rotated), rotated + [rotated[0]])
                    elif target not in state:
                        state[target] = 1
                        path.append(target)
                        stack.append((target, iter(list(self._successors(target)))))
                        advanced = True
                        break
                if not advanced:
                    state[node] = 2
                    path.pop()
                    stack.pop()
        return [found[key] for key in sorted(found, key=lambda key: id_key(key[0]))]

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
                    self._save(entity)
                    fixed.add(task_id)
            for task_id in sorted(self.entries, key=lambda item: (-item.count("."), id_key(item))):  # deepest first
                if self.entries[task_id]["children"]:
                    fixed.update(item for item, changed in self._roll_up(task_id, now) if changed)
            for task_id, entry in self.entries.items():
                entry["progress"] = self.progress(task_id)
            self._dirty = True
            return sort_ids(fixed)


# -- helpers --------------------------------------------------------------------------------

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


def _strings(values: Iterable[str], option: str) -> list[str]:
    found = []
    for value in values:
        value = value.strip() if isinstance(value, str) else ""
        if not value:
            raise errors.InvalidInput(f"{option} needs a non-empty value")
        found.append(value)
    return found


def _article(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _is_task_file_name(name: object) -> bool:
    return isinstance(name, str) and name.endswith(".json") and bool(ID_RE.match(name[:-5]))


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _digest(data: bytes | None) -> str | None:
    """Length and CRC-32 of a file's bytes: enough to tell whether someone changed it since
    (whoever can write task files needs no collision to change them), and cheaper to import
    than hashlib for a command that must start fast."""
    import zlib

    return None if data is None else f"{len(data)}:{zlib.crc32(data):08x}"


def _reason(exc: OSError | errors.Error) -> str:
    return exc.message if isinstance(exc, errors.Error) else exc.strerror or str(exc)


def _refused(exc: OSError | errors.Error, message: str, outcome: str = "", then: str = "") -> errors.Error:
    """The error for a write the storage refused: its typed error (no space, read-only) in its
    own words, else `message (reason)`; then `outcome`, and `then` added to the hint."""
    typed = exc if isinstance(exc, errors.Error) else errors.storage_error(exc, "the task files")
    if typed is None:
        typed = errors.Error(f"{message} ({_reason(exc)})",
                             "fix the cause (the permissions of .claude/memory/tasks?), then retry")
    hint = f"{typed.hint}; then {then}" if then and typed.hint else then or typed.hint
    return type(typed)(typed.message + outcome, hint)
