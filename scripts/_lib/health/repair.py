"""`memory repair`: fix what `memory health` flags fixable, and nothing that needs a guess.

Rules (README: Health, quality and repair):

- index.json and graph.json: brought in step with the files (the catalog refresh that every
  command runs); memories the catalog holds out of step with their file are re-read.
- `links`: a link to a missing memory is removed, or re-pointed when exactly one memory lists
  the old slug in `previous-slugs` (also `[[old]]` wiki links); self links and repeated entries
  are removed; a link that only one side declares gets the other side (with the inverse label);
  edges kept from a hand-edited graph.json are written into both files.
- frontmatter: tags lower-cased (spaces and underscores become hyphens), missing `created` /
  `updated` filled from the file's modification time, timestamps rewritten as quoted UTC.
- embedding caches: invalid, orphaned, stale or wrong-model files removed (recomputed on use).
- the task store (project scope): parent, children, type and rolled-up status derived from the
  ids and statuses (`memory task validate --fix`: a child its parent does not list is adopted, a
  listed child that does not exist is dropped), task-index.json rebuilt. It runs after the scope
  lock is released, under the task store's own lock.

Repair never deletes or renames a memory and does not bump `updated` (it changes no knowledge).
It holds the scope lock throughout, writes each file atomically and keeps a copy of every file it
rewrites or removes in `<scope>/.cache/repair-backup-*` until the run has succeeded.
`dry_run` plans the same fixes and changes no memory or cache file, and leaves index.json and
graph.json as it found them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Scope, Workspace

from ..base import clock, errors, fsutil
from ..model import frontmatter, graph, memory
from . import caches, exports, files, links, tasks
from .checks import Analysis
from .facts import (ERROR, WARNING, Problem, Snapshot, explicit_labels, later, links_editable, normal_tags,
                    open_catalogs, other_scopes)
from ..catalog.catalog import GRAPH_NAME, INDEX_NAME

_INDEX_KINDS = (exports.INDEX_MISSING, exports.INDEX_UNREADABLE, exports.INDEX_DRIFT)
_GRAPH_KINDS = tuple(kind for kind in exports.KINDS
                     if kind not in _INDEX_KINDS and kind != exports.GRAPH_UNBACKED_EDGE)
_CACHE_KINDS = tuple(caches.KINDS)
_TASK_KINDS = (tasks.TASK_STRUCTURE, tasks.TASK_INDEX_DRIFT)


class Action:
    """One fix, planned or done."""

    __slots__ = ("action", "scope", "slug", "path", "detail")

    def __init__(self, action: str, scope: str, slug: str | None, path: Path | None, detail: str) -> None:
        self.action, self.scope, self.slug, self.path, self.detail = action, scope, slug, path, detail

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "scope": self.scope, "slug": self.slug,
                "path": str(self.path) if self.path else None, "detail": self.detail}


class ScopeRepair:
    """What repair did (or would do) in one scope, and what it left alone."""

    def __init__(self, scope: Scope, actions: list[Action], remaining: list[Problem],
                 skipped: str | None = None) -> None:
        self.scope, self.actions, self.remaining, self.skipped = scope, actions, remaining, skipped

    def as_json(self) -> dict[str, Any]:
        return {"scope": self.scope.name, "root": str(self.scope.root), "skipped": self.skipped,
                "actions": [action.as_json() for action in self.actions],
                "remaining": [problem.as_json() for problem in self.remaining]}


class RepairReport:
    def __init__(self, dry_run: bool, scopes: list[ScopeRepair]) -> None:
        self.dry_run, self.scopes = dry_run, scopes

    @property
    def actions(self) -> list[Action]:
        return [action for scope in self.scopes for action in scope.actions]

    @property
    def remaining(self) -> list[Problem]:
        return [problem for scope in self.scopes for problem in scope.remaining]

    def as_json(self) -> dict[str, Any]:
        return {"dryRun": self.dry_run, "fixed" if not self.dry_run else "planned": len(self.actions),
                "remainingErrors": sum(problem.severity == ERROR for problem in self.remaining),
                "remainingWarnings": sum(problem.severity == WARNING for problem in self.remaining),
                "scopes": [scope.as_json() for scope in self.scopes]}


def repair(workspace: Workspace, scope: str | None = None, *, dry_run: bool = False) -> RepairReport:
    """Repair every writable scope (or one); see the module docstring for the rules."""
    targets = [target for target in workspace.readable_scopes(scope) if target.exists()]
    snapshots = {target.name: Snapshot.take(target) for target in targets}
    results = []
    opened = [other for other in workspace.readable_scopes() if other.exists()] if dry_run else []
    found = {other.name: Snapshot.take(other) for other in opened}  # what a dry run leaves as found
    with open_catalogs(workspace, targets) as catalogs:
        for target in targets:
            catalog = catalogs.get(target.name)
            if catalog is None:
                continue
            if not target.root_writable:
                results.append(ScopeRepair(target, [], [], f"the {target.name} scope is read-only for you; an "
                                           f"administrator can run `memory repair --scope {target.name}`"))
                continue
            task_problems = tasks.task_problems(workspace, target)  # before the scope lock (see there)
            with _holding(catalog, dry_run):
                analysis = Analysis(catalog, snapshots[target.name],
                                           other_scopes(catalogs, target.name), workspace.config).run()
                analysis.problems += task_problems
                plan = Plan(analysis)
                if not dry_run:
                    plan.apply()
            if not dry_run:
                plan.apply_tasks(workspace)
            remaining = [problem for problem in analysis.problems if not problem.fixable]
            results.append(ScopeRepair(target, plan.actions, remaining))
        for other in opened:
            if other.name in catalogs and other.root_writable:
                _put_back(catalogs[other.name], found[other.name])
    return RepairReport(dry_run, results)


def _put_back(catalog: Catalog, snapshot: Snapshot) -> None:
    """Leave index.json and graph.json as a dry run found them (opening the catalog rewrote them).

    Their stamps then differ from the catalog's, so the next command rewrites them again (and
    reads a hand-edited graph.json the same way the real repair will)."""
    with catalog.locked():
        for name, data in ((INDEX_NAME, snapshot.index), (GRAPH_NAME, snapshot.graph)):
            path = catalog.scope.root / name
            with contextlib.suppress(OSError):
                if (path.read_bytes() if path.exists() else None) == data:
                    continue
                if data is None:
                    path.unlink()
                else:
                    fsutil.write_atomically(path, data, durable=False)


@contextlib.contextmanager
def _holding(catalog: Catalog, dry_run: bool) -> Iterator[None]:
    """The scope lock for a repair; a dry run only reads and needs none."""
    if dry_run:
        yield
        return
    with catalog.locked():
        yield


class FileEdit:
    """The changes planned for one memory file."""

    def __init__(self, item: memory.Memory) -> None:
        self.item = item
        self.links = list(item.links)
        raw = item.fields.get(memory.LABELS_FIELD)
        self.labels: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        self.fields: dict[str, Any] = {}
        self.renames: dict[str, str] = {}  # wiki link targets to re-point

    def label_list(self, target: str) -> list[str]:
        value = self.labels.get(target)
        values = value if isinstance(value, list) else [value] if value is not None else []
        return [label for label in values if isinstance(label, str) and graph.LABEL_RE.fullmatch(label)]

    def add_link(self, target: str, labels: list[str]) -> None:
        """Link `target` with `labels` (relates-to needs no `link-labels` entry)."""
        if target not in self.links:
            self.links.append(target)
        named = [label for label in dict.fromkeys(self.label_list(target) + labels) if label != graph.DEFAULT_LABEL]
        if named:
            self.labels[target] = named[0] if len(named) == 1 else named

    def links_changed(self) -> bool:
        return self.links != list(self.item.links)

    def labels_changed(self) -> bool:
        raw = self.item.fields.get(memory.LABELS_FIELD)
        return self.labels != (dict(raw) if isinstance(raw, dict) else {})

    def changed(self) -> bool:
        return bool(self.fields or self.renames) or self.links_changed() or self.labels_changed()

    def text(self) -> str:
        """The file's new text: only the changed keys are rewritten (checked: see frontmatter.rewrite),
        the rest is kept byte for byte. Raises InvalidInput when that cannot be done without loss."""
        item = self.item
        changes = dict(self.fields)
        if self.links_changed():
            changes["links"] = self.links if self.links or "links" in item.fields else frontmatter.DELETE
        if self.labels_changed():
            changes[memory.LABELS_FIELD] = self.labels if self.labels else frontmatter.DELETE
        text = frontmatter.rewrite(item.document, changes, quoted=memory.TIMESTAMP_FIELDS,
                                   name=f"memory file {item.path}")
        if not self.renames:
            return text
        document = frontmatter.split(text)
        head, body = document.frontmatter or "", document.body
        for old, new in self.renames.items():
            head, body = _repoint(head, old, new), _repoint(body, old, new)
        frontmatter.parse(head)  # a re-pointed [[link]] leaves valid YAML
        return frontmatter.Document(document.prefix, head, body, document.newline).text()


def _repoint(text: str, old: str, new: str) -> str:
    """Rewrite `[[old]]`, `[[old|text]]` and `[[old#section]]` to name `new`."""
    return re.sub(r"\[\[(\s*)" + re.escape(old) + r"(\s*)(?=\]\]|\||#)", lambda m: f"[[{m.group(1)}{new}{m.group(2)}",
                  text)


class Plan:
    """The fixes for one analysed scope; `apply` carries them out (holding the scope lock)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.scope = analysis.scope
        self.edits: dict[str, FileEdit] = {}
        self.actions: list[Action] = []
        self.cache_removals: dict[Path, str | None] = {}  # cache file -> slug it belonged to
        self.reread: list[str] = sorted(analysis.stale)
        fixable = [problem for problem in analysis.problems if problem.fixable]
        self._derived(fixable)
        self._links(fixable)
        self._adopt(fixable)
        self._inverses()
        self._label_pairs(fixable)
        self._frontmatter(fixable)
        self._references(fixable)
        self._caches(fixable)
        self.task_fixes = self._tasks(fixable)
        for slug in self.reread:
            self._act("reread-memory", slug, "re-read into the catalog: it was out of step with the file")

    def _act(self, action: str, slug: str | None, detail: str, path: Path | None = None) -> None:
        if path is None and slug in self.analysis.entries:
            path = self.analysis.entries[slug].path
        self.actions.append(Action(action, self.scope.name, slug, path, detail))

    def edit(self, slug: str) -> FileEdit:
        if slug not in self.edits:
            self.edits[slug] = FileEdit(self.analysis.read(slug))
        return self.edits[slug]

    def links_of(self, slug: str) -> list[str]:
        return self.edits[slug].links if slug in self.edits else self.analysis.memories[slug].links

    # -- planning -------------------------------------------------------------------------------

    def _derived(self, fixable: list[Problem]) -> None:
        root = self.scope.root
        index_problems = [problem for problem in fixable if problem.kind in _INDEX_KINDS
                          and problem.slug not in self.analysis.stale]
        graph_problems = [problem for problem in fixable if problem.kind in _GRAPH_KINDS]
        if index_problems:
            self._act("rewrite-index", None, f"index.json brought in step with the files "
                      f"({len(index_problems)} problem{'s' if len(index_problems) != 1 else ''}; every command "
                      "but a dry run does this)", root / "index.json")
        if graph_problems:
            self._act("rewrite-graph", None, f"graph.json rebuilt from the files ({len(graph_problems)} "
                      f"problem{'s' if len(graph_problems) != 1 else ''}; every command but a dry run does this)",
                      root / "graph.json")

    def _links(self, fixable: list[Problem]) -> None:
        """Remove self links, repeated entries and links to missing memories; re-point renamed ones."""
        kinds = (links.BROKEN_LINK, links.SELF_LINK, links.DUPLICATE_LINK)
        entries, elsewhere, aliases = self.analysis.entries, self.analysis.elsewhere, self.analysis.aliases
        for slug in sorted({problem.slug for problem in fixable if problem.kind in kinds and problem.slug}):
            edit = self.edit(slug)
            kept: list[str] = []
            for target in edit.item.links:
                final = target
                if target == slug:
                    edit.labels.pop(target, None)
                    self._act("drop-self-link", slug, "removed its own slug from `links`")
                    continue
                renamed = aliases.get(target, [])
                if target not in entries and target not in elsewhere and len(renamed) <= 1:
                    labels = edit.label_list(target)
                    edit.labels.pop(target, None)
                    if not renamed:
                        self._act("drop-link", slug, f"removed {target} from `links`: no such memory")
                        continue
                    final = renamed[0]
                    self._act("repoint-link", slug, f"re-pointed {target} -> {final} in `links` (renamed: "
                              f"{final} lists {target} in `previous-slugs`)")
                    if target in self.analysis.references[slug]:
                        edit.renames[target] = final  # its [[wiki links]] too, or they would dangle
                    if final == slug:
                        continue
                    if labels and final not in edit.labels:
                        edit.labels[final] = labels[0] if len(labels) == 1 else labels
                if final in kept:
                    self._act("drop-duplicate-link", slug, f"removed a repeated {final} from `links`")
                    continue
                kept.append(final)
            edit.links = kept

    def _adopt(self, fixable: list[Problem]) -> None:
        """Write edges kept from a hand-edited graph.json into the files that should declare them."""
        for problem in fixable:
            if problem.kind != exports.GRAPH_UNBACKED_EDGE or problem.slug is None or problem.target is None:
                continue
            for source, target, label in self.analysis.unbacked.get((problem.slug, problem.target), []):
                self.edit(source).add_link(target, [label] if label else [])
                self._act("adopt-graph-edge", source, f"wrote {source} -{label or graph.DEFAULT_LABEL}-> {target} "
                          "(from graph.json) into `links`")

    def _inverses(self) -> None:
        """Give every link between two memories of the scope its other side."""
        memories, labels = self.analysis.memories, self.analysis.labels
        for slug in sorted(memories):
            for target in list(self.links_of(slug)):
                if target == slug or target not in memories:
                    continue
                if slug in self.links_of(target) or slug in self.analysis.references[target]:
                    continue
                if not links_editable(memories[target]):
                    continue
                mine = (self.edits[slug].label_list(target) if slug in self.edits
                        else explicit_labels(memories[slug], target))
                inverse = [labels.inverse(label) for label in mine]
                self.edit(target).add_link(slug, inverse)
                self._act("add-inverse-link", target, f"added {slug} to `links` "
                          f"({', '.join(inverse) or graph.DEFAULT_LABEL}): {slug} links here")

    def _label_pairs(self, fixable: list[Problem]) -> None:
        """Two memories whose labels for their link disagree: each file is right about the labels it
        declares, so each side gets the inverse of every label the other declares. Deterministic, and it
        completes a labelled link a killed command wrote into one file only."""
        labels = self.analysis.labels
        for problem in fixable:
            if problem.kind != links.ASYMMETRIC_LABELS or problem.slug is None or problem.target is None:
                continue
            a, b = problem.slug, problem.target
            mine, theirs = (self.edit(a).label_list(b), self.edit(b).label_list(a))
            want_a = [labels.inverse(label) for label in theirs if labels.inverse(label) not in mine]
            want_b = [labels.inverse(label) for label in mine if labels.inverse(label) not in theirs]
            for slug, other, added in ((a, b, want_a), (b, a, want_b)):
                if added:
                    self.edit(slug).add_link(other, added)
                    self._act("complete-labels", slug, f"labels its link to {other} {', '.join(added)} too: the "
                              f"inverse of what {other} declares")

    def _frontmatter(self, fixable: list[Problem]) -> None:
        for problem in fixable:
            if problem.slug is None or problem.slug not in self.analysis.memories:
                continue
            item = self.analysis.read(problem.slug)
            head = (problem.field or "").split("[")[0].split(".")[0]
            if problem.kind == files.INVALID_FRONTMATTER and head == "tags":
                tags = normal_tags(item.fields.get("tags"))
                if tags is not None and self.edit(item.slug).fields.get("tags") != tags:
                    self.edit(item.slug).fields["tags"] = tags
                    self._act("normalise-tags", item.slug, f"tags {item.fields.get('tags')!r} -> {tags!r}")
            elif problem.kind == files.INVALID_FRONTMATTER and head in memory.TIMESTAMP_FIELDS:
                self._fill_timestamps(item)
            elif problem.kind == files.REPEATED_FIELD and head in item.fields:
                if head not in self.edit(item.slug).fields:
                    self.edit(item.slug).fields[head] = item.fields[head]  # every copy's values (the parser merged them)
                    self._act("merge-repeated-field", item.slug, f"`{head}` written once, with every copy's values")
            elif problem.kind == files.TIMESTAMP_FORMAT and head in memory.TIMESTAMP_FIELDS:
                value = clock.normalise(item.fields.get(head))
                if value is not None and head not in self.edit(item.slug).fields:
                    self.edit(item.slug).fields[head] = value
                    self._act("normalise-timestamp", item.slug, f'{head} written as "{value}"')

    def _fill_timestamps(self, item: memory.Memory) -> None:
        """Missing `created` / `updated` from the file's modification time, keeping created <= updated."""
        edit = self.edit(item.slug)
        try:
            file_time = clock.from_epoch(item.path.stat().st_mtime)
        except OSError:
            return
        created = edit.fields.get("created") or clock.normalise(item.fields.get("created"))
        updated = edit.fields.get("updated") or clock.normalise(item.fields.get("updated"))
        if created is None and item.fields.get("created") in (None, ""):
            created = updated if updated and later(file_time, updated) else file_time
            edit.fields["created"] = created
            self._act("fill-timestamp", item.slug, f'created set to "{created}" (the file time)')
        if updated is None and item.fields.get("updated") in (None, "") and created is not None:
            updated = created if later(created, file_time) else file_time
            edit.fields["updated"] = updated
            self._act("fill-timestamp", item.slug, f'updated set to "{updated}" (the file time)')

    def _references(self, fixable: list[Problem]) -> None:
        for problem in fixable:
            if problem.kind != links.BROKEN_REFERENCE or not problem.slug or not problem.target:
                continue
            old, new = problem.target, self.analysis.aliases[problem.target][0]
            edit = self.edit(problem.slug)
            edit.renames[old] = new  # [[old]], [[old|text]], [[old#part]] in the body and frontmatter
            related = edit.item.fields.get("related")
            if isinstance(related, list) and old in related and f"[[{old}" not in (edit.item.document.frontmatter
                                                                                      or ""):
                edit.fields["related"] = [new if value == old else value for value in related]  # plain entries
            self._act("repoint-reference", problem.slug, f"[[{old}]] -> [[{new}]] (renamed)")

    def _caches(self, fixable: list[Problem]) -> None:
        for problem in fixable:
            if problem.kind in _CACHE_KINDS and problem.path is not None:
                self.cache_removals[problem.path] = problem.slug if problem.kind != caches.CACHE_ORPHANED else None
                reason = problem.kind.replace("cache-", "").replace("-", " ")
                self._act("remove-cache", problem.slug, f"removed {problem.path.name} ({reason})", problem.path)

    def _tasks(self, fixable: list[Problem]) -> bool:
        """Plan the task store's fixes; whether there are any."""
        found = [problem for problem in fixable if problem.kind in _TASK_KINDS]
        for problem in found:
            how = ("rebuilt from the task files" if problem.kind == tasks.TASK_INDEX_DRIFT
                   else "derived from the ids and statuses")
            self._act("fix-task", None, f"{problem.message}: {how}", problem.path)
        return bool(found)

    # -- applying -------------------------------------------------------------------------------

    def apply_tasks(self, workspace: Workspace) -> None:
        """Carry out the task store's fixes. Call without the scope lock: the task store takes
        its own lock, then the scope's to replace task-index.json."""
        if self.task_fixes:
            from ..tasks import taskstore as tasks

            tasks.TaskStore(workspace).fix()

    def apply(self) -> None:
        """Carry out the plan (the caller holds the scope lock)."""
        edits = [edit for edit in self.edits.values() if edit.changed()]
        if not (edits or self.cache_removals or self.reread):
            return
        catalog = self.analysis.catalog
        backup = self.scope.cache_dir / f"repair-backup-{clock.now_iso().replace(':', '')}-{os.getpid()}"
        try:
            for edit in edits:
                _keep_copy(edit.item.path, self.scope.root, backup)
            changed_content: list[str] = []
            for edit in edits:
                fsutil.write_atomically(edit.item.path, edit.text(), sync_dir=False)  # export() syncs the directory
                rewritten = memory.read_file(edit.item.path, self.scope.name, root=self.scope.root)
                if rewritten.content_hash() != edit.item.content_hash():
                    changed_content.append(rewritten.slug)
                catalog.record(rewritten)
            for slug in changed_content:  # a re-pointed wiki link changed the embedded text
                path = catalog.embedding_dir / f"{slug}.json"
                if path.exists():
                    self.cache_removals[path] = slug
            dropped = []
            for path, owner in sorted(self.cache_removals.items()):
                with contextlib.suppress(FileNotFoundError):
                    target = backup / "embedding-cache" / path.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(path, target)
                    if owner:
                        dropped.append(owner)
            if dropped:
                catalog.set_has_embedding(dropped, False)
            for slug in self.reread:
                entry = self.analysis.entries[slug]
                catalog.record(memory.read_file(entry.path, self.scope.name, root=self.scope.root))
            catalog.export()
        except (OSError, errors.Error) as exc:
            reason = exc.message if isinstance(exc, errors.Error) else f"{exc.strerror or exc}"
            raise errors.Error(f"repair of the {self.scope.name} scope stopped: {reason}",
                               f"copies of the files it changed are in {backup}; fix the cause and run "
                               "`memory repair` again") from None
        shutil.rmtree(backup, ignore_errors=True)


def _keep_copy(path: Path, root: Path, backup: Path) -> None:
    """Copy `path` into the backup directory, under its path relative to the scope."""
    target = backup / path.relative_to(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
