"""The task store on disk: `tasks/<id>.json` (the source of truth) and `task-index.json` derived from them.

task-index.json is fresh when the tasks directory's file stamps and its own stamp are the
ones recorded (`<cache>/task-index.stamp`) when it was written; otherwise it is rebuilt.
Reads here take no lock; writing is for callers holding the task store's lock.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path
    from typing import Any

    from ..workspace.scopes import Workspace
    from .rules import Entries

from ..base import errors, fsutil, jsontext, stamps
from .entity import ID_RE, STATUSES, index_entry, sort_ids
from .rules import progress, with_progress

INDEX_VERSION = "1.0.0"
LOCK_NAME = "tasks.lock"
STAMP_NAME = "task-index.stamp"
INDEX_NAME = "task-index.json"
JOURNAL_NAME = "tasks.journal"
# recorded with the stamps: task-index.json's progress is current for every entry, so a change
# may sum the children's (earlier versions left an import's stale and recorded no such mark)
PROGRESS_CURRENT = "current"
REFUSED = (OSError, errors.NoSpace, errors.ReadOnly)  # how the storage refuses a write


class TaskFiles:
    """Where the project's task files, their index and the store's lock and journal live."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.scope = workspace.scope("project")
        self.root: Path = self.scope.root
        self.tasks_dir: Path = self.root / "tasks"
        outside = fsutil.escapes(self.tasks_dir, self.root)
        if outside is not None:
            raise errors.ScopeUnavailable(f"{self.tasks_dir} is a link leading out of the memory directory (to "
                                          f"{outside}); the task store is not used through it",
                                          "replace the link with a real tasks/ directory")
        self.index_path: Path = self.root / INDEX_NAME
        if fsutil.escapes(self.index_path, self.root) is not None:
            raise errors.ScopeUnavailable(f"{self.index_path} is a link leading out of the memory directory; "
                                          "it is neither read nor written through",
                                          f"remove the link: rm {self.index_path}")
        self.stamp_path: Path = self.scope.cache_dir / STAMP_NAME
        self.lock_path: Path = self.scope.cache_dir / LOCK_NAME
        self.journal_path: Path = self.scope.cache_dir / JOURNAL_NAME
        self._stamps: stamps.Scan | None = None     # the task files' stamps, once scanned
        self._touched: set[str] = set()             # file names written or removed since
        self.leftovers = False                      # the scan found temp files of killed writes

    # -- stamps ---------------------------------------------------------------------------------

    def rescan(self) -> str:
        """Look at the directory afresh; returns its fingerprint."""
        self._stamps, self._touched = None, set()
        return self.fingerprint()

    def fingerprint(self) -> str:
        """The stamps of the task files folded into one short string (rescanning only what was touched)."""
        if self._stamps is None:
            found = stamps.scan(self.tasks_dir, ".json")
            self.leftovers = found is not None and found.leftovers
            self._stamps = found
        elif self._touched:
            for name in self._touched:
                stamp = stamps.file_stamp(self.tasks_dir / name)
                if stamp is None:
                    self._stamps.pop(name, None)
                else:
                    self._stamps[name] = stamp
        self._touched = set()
        return stamps.fingerprint(self._stamps)

    def forget_stamps(self) -> None:
        self._stamps = None

    def unfinished(self) -> bool:
        """Whether a killed command left something to finish (a journal, temp files); after a scan."""
        return self.leftovers or os.path.exists(self.journal_path)

    def recorded_index_stamp(self) -> Any:
        """The index's stamp recorded at its last write by this store; None without a record."""
        try:
            with open(self.stamp_path, encoding="utf-8") as handle:
                return jsontext.loads(handle.read()).get("index")
        except (OSError, ValueError, AttributeError):
            return None

    # -- the index ------------------------------------------------------------------------------

    def fresh_index(self) -> Entries | None:
        """The index's entries when it is current with the files; None when it must be rebuilt
        (or a killed command left something to finish first: a journal, temp files)."""
        self._stamps, self._touched = None, set()  # look at the directory afresh
        try:
            with open(self.stamp_path, encoding="utf-8") as handle:
                recorded = jsontext.loads(handle.read())
            if recorded.get("index") != stamps.file_stamp(self.index_path) or \
                    recorded.get("progress") != PROGRESS_CURRENT or recorded.get("tasks") != self.fingerprint():
                return None
            if self.unfinished():
                return None
            with open(self.index_path, encoding="utf-8") as handle:
                data = jsontext.loads(handle.read())
            entries = {item["id"]: item for item in data["tasks"]}
            for item in entries.values():
                if not (item["status"] in STATUSES and "parent" in item and isinstance(item["children"], list)
                        and isinstance(item["dependencies"], list) and "progress" in item):
                    return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return entries

    def write_index(self, entries: Entries) -> None:
        """Replace task-index.json with `entries` and record the stamps it was derived from."""
        from ..catalog.catalog import replace_beside

        encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder: json.dumps makes one per call
        lines = [encode(entries[task_id]) for task_id in sort_ids(entries)]
        text = f'{{"version": "{INDEX_VERSION}", "tasks": [\n' + ",\n".join(lines) + "\n]}\n"
        replace_beside(self.workspace, self.scope, self.index_path, text, durable=False)
        record = {"tasks": self.fingerprint(), "index": stamps.file_stamp(self.index_path),
                  "progress": PROGRESS_CURRENT}
        fsutil.write_atomically(self.stamp_path, json.dumps(record), durable=False)

    def invalidate(self) -> None:
        """Forget the recorded stamps: the next command rebuilds the index (after direct file edits)."""
        fsutil.remove_file(self.stamp_path)

    def index_problems(self, entries: Entries) -> list[str]:
        """How task-index.json disagrees with the task files, when someone else changed it.

        An index this store wrote and that is merely stale (task files edited since) is
        rebuilt by the next command, like any derived file; one changed by hand, or by
        another tool, is reported.
        """
        recorded = self.recorded_index_stamp()
        current = stamps.file_stamp(self.index_path)
        if recorded is None or recorded == current or current is None:
            return []  # no record of our last write (e.g. after a direct task file write): nothing to compare
        from ..base import schema

        try:
            with open(self.index_path, encoding="utf-8") as handle:
                data = jsontext.loads(handle.read())
        except OSError:
            return []
        except ValueError as exc:
            return [f"not readable JSON: {exc}"]
        violations = schema.validate(data, schema.load("task-index"))
        if violations:
            return [f"schema: {violation}" for violation in violations[:5]]
        derived = {task_id: dict(entry, progress=progress(entries, task_id))
                   for task_id, entry in entries.items()}
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

    # -- task files ---------------------------------------------------------------------------

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
                yield stem, self._parsed(stem), None
            except (OSError, ValueError) as exc:
                yield stem, None, f"not readable JSON: {exc}"

    def read_all(self) -> tuple[Entries, dict[str, dict[str, Any]]]:
        """(id -> index entry with progress, id -> entity) from every readable task file; a file
        that cannot be indexed is skipped with a warning."""
        self.rescan()  # stamps from before the files are read
        entries: Entries = {}
        entities: dict[str, dict[str, Any]] = {}
        for stem, entity, problem in self.read_files():
            entry, why = (None, problem) if problem else index_entry(entity, stem)
            if entry is None:
                self.workspace.warn(f"skipping tasks/{stem}.json: {why} (run `memory task validate`)")
                continue
            entries[stem] = entry
            entities[stem] = entity
        return with_progress(entries), entities

    def read_entity(self, task_id: str) -> Any:
        """The parsed tasks/<id>.json; raises FileNotFoundError, or InvalidInput when it is not readable."""
        try:
            entity = self._parsed(task_id)
        except FileNotFoundError:
            raise
        except (OSError, ValueError) as exc:
            raise errors.InvalidInput(f"tasks/{task_id}.json cannot be read: {exc}",
                                      "fix the file (memory file write), then run `memory task validate`") from None
        if not isinstance(entity, dict):
            raise errors.InvalidInput(f"tasks/{task_id}.json is not a JSON object", "run `memory task validate`")
        return entity

    def _parsed(self, task_id: str) -> Any:
        """tasks/<id>.json parsed, a lone surrogate (a hand edit that cut an emoji) as U+FFFD;
        OSError or ValueError when it cannot be read."""
        with open(self.tasks_dir / f"{task_id}.json", encoding="utf-8") as handle:
            return jsontext.utf8_values(jsontext.loads(handle.read()))

    def stems(self) -> list[str]:
        """The ids of every tasks/<id>.json, readable or not (as last scanned, when nothing was written since)."""
        if self._stamps is not None and not self._touched:
            names: Iterable[str] = [*self._stamps, *self._stamps.unstatable]
        else:
            try:
                names = os.listdir(self.tasks_dir)
            except OSError:
                return []
        return [name[:-5] for name in names if name.endswith(".json") and ID_RE.match(name[:-5])]

    def put(self, name: str, data: bytes | None) -> None:
        """Write (or, for None, remove) one task file; the caller syncs the directory."""
        if data is None:
            fsutil.remove_file(self.tasks_dir / name)
        else:
            fsutil.write_atomically(self.tasks_dir / name, data, sync_dir=False)
        self._touched.add(name)

    def read_bytes(self, name: str) -> bytes | None:
        try:
            return (self.tasks_dir / name).read_bytes()
        except FileNotFoundError:
            return None


def reason(exc: OSError | errors.Error) -> str:
    return exc.message if isinstance(exc, errors.Error) else exc.strerror or str(exc)


def refused(exc: OSError | errors.Error, message: str, outcome: str = "", then: str = "") -> errors.Error:
    """The error for a write the storage refused: its typed error (no space, read-only) in its
    own words, else `message (reason)`; then `outcome`, and `then` added to the hint."""
    typed = exc if isinstance(exc, errors.Error) else errors.storage_error(exc, "the task files")
    if typed is None:
        typed = errors.Error(f"{message} ({reason(exc)})",
                             "fix the cause (the permissions of .claude/memory/tasks?), then retry")
    hint = f"{typed.hint}; then {then}" if then and typed.hint else then or typed.hint
    return type(typed)(typed.message + outcome, hint)
