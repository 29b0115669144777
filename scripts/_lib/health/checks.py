"""`memory health`: every problem of a scope's memories, derived files and caches, with a fix hint.

Severities (README: Health, quality and repair):

- **error**: the memory files themselves are wrong, so a reader gets wrong or missing
  knowledge: unreadable files, frontmatter that breaks `schemas/frontmatter.schema.json` or
  the data model's rules, `links` to memories that do not exist or live in another scope.
  `memory health` exits 1 when there is one, so it can gate a CI job.
- **warning**: something the tools compensate for, or a curation matter: derived files out
  of step (index.json, graph.json, the catalog, embedding caches), one-sided links, orphans,
  duplicates, low quality, style (unquoted timestamps).

index.json and graph.json are read as found on disk *before* the catalog is opened: opening
it brings them in step with the files (every command does, this one too), so their drift is
reported once and is gone afterwards. Everything else is computed from the memory files and
the catalog; `memory repair` (repair.py) fixes what this module flags `fixable`.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as _dt
import json
import operator
import os
import re
import zlib
from collections import Counter, defaultdict
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator

    from ..workspace.config import Config
    from ..workspace.scopes import Scope, Workspace

from ..base import clock, errors, fsutil, redact, schema
from ..model import frontmatter, graph, memory
from . import quality
from ..catalog.catalog import GRAPH_NAME, INDEX_NAME, Catalog, file_stamp

ERROR, WARNING = "error", "warning"
ALIASES_FIELD = "previous-slugs"  # slugs a memory was known by before a rename: broken links re-point to it
NEAR_DUPLICATE = 0.8   # Jaccard similarity of two memories' distinct words (title, tags, body)
NEAR_MIN_TERMS = 8     # shorter memories are left to the exact-duplicate check
LSH_BANDS, LSH_ROWS = 10, 4  # MinHash LSH for near duplicates (see near_duplicates)
_BORROWED = 1 << 33  # added per step to a borrowed hash, so it never equals a bin's own
FUTURE_SLACK = 120     # seconds of clock skew tolerated, as `memory write` does
MEMO_NAME = "health-embeddings.json"  # per cache file stamp: what the last check found in it
MEMO_VERSION = 2

KINDS: dict[str, str] = {
    # the memory files
    "unreadable-file": ERROR,         # not UTF-8, no or broken frontmatter, unknown type, duplicate slug
    "invalid-frontmatter": ERROR,     # breaks the frontmatter schema or a timestamp rule; the field is named
    "invalid-memory": ERROR,          # title or content over the data model's limits
    "secret": ERROR,                  # a credential or key stored in a memory (written before redaction, or by hand)
    "timestamp-format": WARNING,      # created/updated not written as a quoted UTC timestamp
    "repeated-field": ERROR,          # a field written twice (a union merge): other YAML readers keep the last
    "unknown-type": WARNING,          # a type no tool here knows: read as written
    "lenient-frontmatter": WARNING,   # not valid YAML, read line by line as its writer meant it
    # links between memories
    "broken-link": ERROR,             # `links` names a memory that does not exist
    "cross-scope-link": ERROR,        # `links` names a memory of another scope (integrity rule 6)
    "broken-reference": WARNING,      # a [[wiki link]] or `related:` entry names a missing memory
    "missing-inverse-link": WARNING,  # A's `links` names B, B's file does not mention A
    "asymmetric-labels": WARNING,     # A and B label their links with labels that are not inverses
    "self-link": WARNING,             # `links` names the memory itself
    "duplicate-link": WARNING,        # `links` names the same memory twice
    # organisation and content
    "orphan": WARNING,                # linked to no hub (FR-037)
    "isolated": WARNING,              # no edge at all, older than quality.orphanThreshold days
    "empty-hub": WARNING,             # a hub without members
    "low-quality": WARNING,           # score below quality.minQualityScore
    "exact-duplicate": WARNING,       # same title and content as another memory
    "near-duplicate": WARNING,        # nearly the same words as another memory
    # derived data
    "index-missing": WARNING,
    "index-unreadable": WARNING,
    "index-drift": WARNING,           # index.json or the catalog out of step with a file
    "graph-missing": WARNING,
    "graph-unreadable": WARNING,
    "graph-broken-edge": WARNING,     # graph.json edge to or from a missing memory (FR-038)
    "graph-cross-scope-edge": WARNING,
    "graph-self-edge": WARNING,
    "graph-duplicate-edge": WARNING,
    "graph-missing-inverse": WARNING,
    "graph-label-mismatch": WARNING,  # both directions present, labels not inverses
    "graph-drift": WARNING,           # graph.json differs from what the files declare
    "graph-unbacked-edge": WARNING,   # kept from a hand-edited graph.json, declared by no file
    "cache-invalid": WARNING,
    "cache-orphaned": WARNING,
    "cache-wrong-model": WARNING,
    "cache-stale": WARNING,
    # the task store (project scope), as `memory task validate` checks it
    "task-invalid": ERROR,            # unreadable or breaking the schema; a missing parent or dependency; a cycle
    "task-structure": ERROR,          # parent, children, type or status not following from the ids and the
                                      # children (a merge, an older version's killed add): missed by roll-up, tree
    "task-index-drift": WARNING,      # task-index.json changed by hand or by another tool
}

_TIMESTAMP_LINE = re.compile(r"^(created|updated)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M)
_CANONICAL_TIMESTAMP = re.compile(r"""(["'])\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\1""")
_FIELD_HEAD = re.compile(r"[.\[]")
_HASH = re.compile(r"^[0-9a-f]{64}$")


class Problem:
    """One finding: what, where, how bad, and how to fix it."""

    __slots__ = ("kind", "severity", "scope", "slug", "path", "message", "hint", "fixable", "target", "field")

    def __init__(self, kind: str, scope: str, slug: str | None, path: Path | None, message: str, hint: str, *,
                 fixable: bool = False, target: str | None = None, field: str | None = None) -> None:
        self.kind, self.severity, self.scope, self.slug, self.path = kind, KINDS[kind], scope, slug, path
        self.message, self.hint, self.fixable, self.target, self.field = message, hint, fixable, target, field

    def __repr__(self) -> str:
        return f"Problem({self.kind} {self.scope}:{self.slug or self.path} {self.target or self.field or ''})"

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "severity": self.severity, "scope": self.scope, "slug": self.slug,
                "path": str(self.path) if self.path else None, "message": self.message, "hint": self.hint,
                "fixable": self.fixable, "target": self.target, "field": self.field}


class ScopeReport:
    """The findings of one scope."""

    def __init__(self, scope: Scope, types: dict[str, int], problems: list[Problem]) -> None:
        self.scope, self.types = scope, types
        self.problems = sorted(problems, key=lambda problem: (problem.severity != ERROR, problem.kind,
                                                              str(problem.path or ""), problem.target or "",
                                                              problem.field or ""))

    @property
    def memories(self) -> int:
        return sum(self.types.values())

    def as_json(self) -> dict[str, Any]:
        return {"scope": self.scope.name, "root": str(self.scope.root), "memories": self.memories,
                "types": dict(sorted(self.types.items())),
                "errors": sum(problem.severity == ERROR for problem in self.problems),
                "warnings": sum(problem.severity == WARNING for problem in self.problems)}


class Report:
    """The findings of every scope checked."""

    def __init__(self, scopes: list[ScopeReport]) -> None:
        self.scopes = scopes

    @property
    def problems(self) -> list[Problem]:
        return [problem for scope in self.scopes for problem in scope.problems]

    @property
    def errors(self) -> int:
        return sum(problem.severity == ERROR for problem in self.problems)

    @property
    def warnings(self) -> int:
        return sum(problem.severity == WARNING for problem in self.problems)

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def summary(self) -> dict[str, int]:
        """The US5 headline counts: memories, orphans, broken links (each pair of memories once,
        however many of `links`, wiki links and graph.json edges name it), frontmatter issues."""
        problems = self.problems
        broken = {(problem.scope, frozenset((problem.slug, problem.target))) for problem in problems
                  if problem.kind in ("broken-link", "broken-reference", "graph-broken-edge")}
        return {"memories": sum(scope.memories for scope in self.scopes),
                "orphans": sum(problem.kind == "orphan" for problem in problems),
                "brokenLinks": len(broken),
                "frontmatterIssues": sum(problem.kind in ("unreadable-file", "invalid-frontmatter", "timestamp-format",
                                                           "repeated-field")
                                         for problem in problems)}

    def as_json(self) -> dict[str, Any]:
        problems, summary = self.problems, self.summary()
        return {"ok": self.ok, "memories": summary["memories"], "summary": summary,
                "errors": self.errors, "warnings": self.warnings,
                "fixable": sum(problem.fixable for problem in problems),
                "byKind": dict(sorted(Counter(problem.kind for problem in problems).items())),
                "scopes": [scope.as_json() for scope in self.scopes],
                "problems": [problem.as_json() for problem in problems]}


class Snapshot:
    """index.json and graph.json of a scope as found on disk, before a catalog refresh rewrites them."""

    __slots__ = ("index", "graph")

    def __init__(self, index: bytes | None, graph: bytes | None) -> None:
        self.index, self.graph = index, graph

    @classmethod
    def take(cls, scope: Scope) -> "Snapshot":
        return cls(_read_bytes(scope.root / INDEX_NAME), _read_bytes(scope.root / GRAPH_NAME))


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# -- entry point --------------------------------------------------------------------------

def check(workspace: Workspace, scope: str | None = None) -> Report:
    """Check every readable scope (or one); see the module docstring for what is checked."""
    targets = [target for target in workspace.readable_scopes(scope) if target.exists()]
    snapshots = {target.name: Snapshot.take(target) for target in targets}  # before any catalog opens
    with open_catalogs(workspace, targets) as catalogs:
        reports = []
        for target in targets:
            catalog = catalogs.get(target.name)
            if catalog is not None:
                elsewhere = other_scopes(catalogs, target.name)
                analysis = Analysis(catalog, snapshots[target.name], elsewhere, workspace.config).run()
                analysis.problems += task_problems(workspace, target)
                reports.append(analysis.report())
    return Report(reports)


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
            kind, path, message = "task-index-drift", scope.root / task_id, f"{task_id} {item['message']}"
            hint = "`memory repair` (or `memory task rebuild-index`) rebuilds it from the task files"
        else:
            kind = "task-structure" if fixable else "task-invalid"
            path, message = scope.root / "tasks" / f"{task_id}.json", f"task {task_id}: {item['message']}"
            hint = ("`memory repair` (or `memory task validate --fix`) derives it from the ids and statuses"
                    if fixable else "fix the task with `memory task update` or the file with `memory file write`, "
                                    "then run `memory task validate`")
        found.append(Problem(kind, scope.name, None, path, message, hint, fixable=fixable))
    return found


@contextlib.contextmanager
def open_catalogs(workspace: Workspace, targets: list[Scope]) -> Iterator[dict[str, Catalog]]:
    """Catalogs of `targets` and of every other readable scope (for cross-scope checks), up to date."""
    from ..ops.store import catalog_for

    names = {target.name for target in targets}
    scopes = list(targets) + [other for other in workspace.readable_scopes() if other.name not in names]
    with contextlib.ExitStack() as stack:
        catalogs: dict[str, Catalog] = {}
        for target in scopes:
            catalog = stack.enter_context(catalog_for(workspace, target, full=True))
            if catalog is not None:
                catalogs[target.name] = catalog
        yield catalogs


def other_scopes(catalogs: dict[str, Catalog], name: str) -> dict[str, str]:
    """slug -> the most specific other scope holding it."""
    found: dict[str, str] = {}
    for other, catalog in reversed(list(catalogs.items())):
        if other != name:
            found.update(dict.fromkeys(catalog.slugs(), other))
    return found


# -- normal forms (what `memory repair` writes) ----------------------------------------------

def normal_tags(value: Any) -> list[str] | None:
    """Tags lower-cased with spaces and underscores as hyphens; None unless that makes them all valid."""
    if isinstance(value, str):
        pieces: list[Any] = value.split(",")
    elif isinstance(value, list):
        pieces = value
    else:
        return None
    tags: dict[str, None] = {}
    for piece in pieces:
        if isinstance(piece, (bool, dict, list)) or piece is None:
            return None
        tag = re.sub(r"[\s_]+", "-", str(piece).strip().lower())
        if not tag and isinstance(value, str):
            continue
        if not memory.SLUG_RE.fullmatch(tag) or len(tag) > memory.MAX_TAG:
            return None
        tags.setdefault(tag, None)
    return list(tags) or None


def aliases(memories: Iterable[memory.Memory]) -> dict[str, list[str]]:
    """Old slug -> memories listing it in `previous-slugs` (a rename leaves the old slug there)."""
    found: dict[str, list[str]] = defaultdict(list)
    for item in memories:
        value = item.fields.get(ALIASES_FIELD)
        for old in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(old, str) and old and old != item.slug:
                found[old].append(item.slug)
    return found


def links_editable(item: memory.Memory) -> bool:
    """Whether repair may rewrite `links` and `link-labels` without losing anything."""
    links, labels = item.fields.get("links"), item.fields.get(memory.LABELS_FIELD)
    return (links is None or isinstance(links, list)) and (labels is None or isinstance(labels, dict))


def explicit_labels(item: memory.Memory, target: str) -> list[str]:
    """The labels `item` gives its link to `target` in `link-labels` (empty: unlabelled)."""
    return [label for label in item.link_labels.get(target, []) if graph.LABEL_RE.fullmatch(label)]


# -- the analysis of one scope ----------------------------------------------------------------

class Analysis:
    """Everything health finds in one scope; `repair` plans its fixes from it."""

    def __init__(self, catalog: Catalog, snapshot: Snapshot, elsewhere: dict[str, str], config: Config,
                 now: _dt.datetime | None = None) -> None:
        self.catalog, self.scope, self.snapshot = catalog, catalog.scope, snapshot
        self.elsewhere, self.config = elsewhere, config
        self.now = now or clock.now()
        self.latest = clock.to_iso(self.now + _dt.timedelta(seconds=FUTURE_SLACK))  # later is "in the future"
        self.labels = catalog.labels
        self.entries = {entry.slug: entry for entry in catalog.entries()}
        self.memories: dict[str, memory.Memory] = {}
        for slug, entry in self.entries.items():
            try:
                self.memories[slug] = memory.read_file(entry.path, self.scope.name, root=self.scope.root)
            except errors.Error:
                continue  # removed or broken since the catalog looked: the next run reports it
        self.hashes = {slug: item.content_hash() for slug, item in self.memories.items()}
        self.references = {slug: set(item.references) for slug, item in self.memories.items()}
        self.aliases = aliases(self.memories.values())
        self.view = quality.GraphView(catalog)
        self.cache_files: dict[str, Path] = {}
        self.stale: set[str] = set()  # memories the catalog holds out of step with their file
        self.unbacked: dict[tuple[str, str], list[tuple[str, str, str]]] = {}  # pair -> (source, target, label)
        self.problems: list[Problem] = []
        # A store the earlier plugin laid out follows that plugin's conventions (free-form tags and
        # ids, timestamps with milliseconds or none, links recorded once in its graph.json): those
        # are read as they are and not reported; only what cannot be read, or is broken, is.
        self.adopted = catalog.predecessor_layout

    def run(self) -> "Analysis":
        for step in (self._files, self._frontmatter, self._links, self._organisation, self._index, self._graph,
                     self._unbacked, self._caches, self._duplicates):
            step()
        return self

    def report(self) -> ScopeReport:
        return ScopeReport(self.scope, dict(Counter(entry.type for entry in self.entries.values())), self.problems)

    def _add(self, kind: str, slug: str | None, message: str, hint: str, *, path: Path | None = None,
             fixable: bool = False, target: str | None = None, field: str | None = None) -> None:
        if path is None and slug in self.entries:
            path = self.entries[slug].path
        self.problems.append(Problem(kind, self.scope.name, slug, path, message, hint, fixable=fixable,
                                     target=target, field=field))

    def _where(self, slug: str) -> str:
        """`slug is in the global scope` or `slug does not exist in the project scope`."""
        other = self.elsewhere.get(slug)
        return f"{slug} is in the {other} scope" if other else f"{slug} does not exist in the {self.scope.name} scope"

    # -- the files ------------------------------------------------------------------------------

    def _files(self) -> None:
        for problem in self.catalog.problems():
            self._add("unreadable-file", None, problem.message, _unreadable_hint(problem.message), path=problem.path)

    def _frontmatter(self) -> None:
        rules = schema.load("frontmatter")
        quick = QuickSchema(rules)
        for slug, item in self.memories.items():
            if not quick.surely_valid(item.fields):
                for violation in schema.validate(item.fields, rules):
                    self._violation(item, violation)
            self._timestamp_rules(item)
            self._timestamp_format(item)
            for key in frontmatter.repeated_keys(item.document.frontmatter or ""):
                self._add("repeated-field", slug, f"`{key}` is written more than once (as git's union merge leaves "
                          "a field two clones changed); other YAML readers see only the last copy",
                          "memory repair writes it once, with the values of every copy", fixable=True, field=key)
            if item.lenient:
                self._add("lenient-frontmatter", slug, f"the frontmatter is not valid YAML ({item.lenient}); it is "
                          "read line by line, as its writer meant it", "quote the values that hold `: ` or `#` "
                          "(e.g. title: \"Fix: quote it\"); until then other YAML readers cannot read it",
                          field="frontmatter")
            if not item.title_in_field and len(item.title) > memory.MAX_TITLE:
                self._add("invalid-memory", slug, f"the title is {len(item.title)} characters; the limit is "
                          f"{memory.MAX_TITLE}", "shorten the `# ` heading and move details into the content",
                          field="title")
            if len(item.content) > memory.MAX_BODY:
                self._add("invalid-memory", slug, f"the content is {len(item.content)} characters; the limit is "
                          f"{memory.MAX_BODY}", "split it into several memories and link them", field="content")
            kinds = redact.kinds_in(item.document.text())
            if kinds:
                self._add("secret", slug, f"it holds what looks like a secret ({', '.join(kinds)})",
                          f"rotate the secret, then rewrite the memory without it (`memory update {slug} --content "
                          "...`: new text is redacted) or wrap it in <private>...</private>")

    def _violation(self, item: memory.Memory, violation: schema.Violation) -> None:
        field = violation.path or "(frontmatter)"
        head = _FIELD_HEAD.split(field)[0]
        if head == "type" and isinstance(item.fields.get("type"), str):
            if item.fields["type"].strip() not in memory.LEGACY_TYPES:
                self._add("unknown-type", item.slug, f"type {item.fields['type']!r} is none of "
                          f"{', '.join(memory.TYPES)}; it is read as written",
                          f"set `type:` to one of them: memory update {item.slug} --type <type>", field="type")
            return
        if self.adopted:
            return  # the earlier plugin's conventions (see __init__)
        fixable, hint = False, "edit the frontmatter by hand (schemas/frontmatter.schema.json describes it)"
        if head == "tags" and violation.message.startswith(("must be a lowercase", "must be of type")):
            fixable = normal_tags(item.fields.get("tags")) is not None
            if fixable:
                hint = "memory repair writes tags in lower case with hyphens"
        elif head in memory.TIMESTAMP_FIELDS and (violation.message == "is required"
                                                  or item.fields.get(head) in (None, "")):
            fixable, hint = True, "memory repair fills it in from the file's modification time"
        elif head in memory.TIMESTAMP_FIELDS:
            hint = 'write an ISO 8601 timestamp such as "2026-01-10T10:00:00Z"'
        self._add("invalid-frontmatter", item.slug, f"`{field}` {violation.message}", hint, fixable=fixable,
                  field=field)

    def _timestamp_rules(self, item: memory.Memory) -> None:
        if self.adopted:
            return
        values = {key: item.fields.get(key) for key in memory.TIMESTAMP_FIELDS}
        moments = {key: (item.created if key == "created" else item.updated) if isinstance(value, str) else ""
                   for key, value in values.items()}  # normalised by memory.parse ("" when not a timestamp)
        for key, moment in moments.items():
            if moment and later(moment, self.latest):
                self._add("invalid-frontmatter", item.slug, f"`{key}` {values[key]} is in the future",
                          "use the time the knowledge was gained or last changed", field=key)
        if moments["created"] and moments["updated"] and later(moments["created"], moments["updated"]):
            self._add("invalid-frontmatter", item.slug, f"`updated` {values['updated']} is before `created` "
                      f"{values['created']}", "updated must be the same as or later than created; correct the "
                      "wrong one", field="updated")

    def _timestamp_format(self, item: memory.Memory) -> None:
        if self.adopted:
            return
        for match in _TIMESTAMP_LINE.finditer(item.document.frontmatter or ""):
            key, raw = match.group(1), match.group(2)
            if _CANONICAL_TIMESTAMP.fullmatch(raw):
                continue
            value = item.fields.get(key)
            normal = clock.normalise(value) if isinstance(value, str) else None
            if normal is None:
                continue  # not a timestamp at all: the schema check reports it
            self._add("timestamp-format", item.slug, f"`{key}` is written {raw}, not as a quoted UTC timestamp "
                      f'("{normal}")', "memory repair rewrites it in the data model's form", fixable=True,
                      field=key)

    # -- links between memories -------------------------------------------------------------------

    def _links(self) -> None:
        for slug, item in self.memories.items():
            editable = links_editable(item)
            for target, count in Counter(item.links).items():
                if count > 1:
                    self._add("duplicate-link", slug, f"`links` names {target} {count} times",
                              "memory repair keeps one", fixable=editable, target=target)
                if target == slug:
                    self._add("self-link", slug, "`links` names the memory itself",
                              "memory repair removes it", fixable=editable, target=target)
                elif target not in self.entries:
                    if not self._written_meanwhile(target):
                        self._missing_link(item, target, editable)
                else:
                    self._inverse(item, target)
            for target in sorted(self.references[slug] - set(item.links)):
                if target not in self.entries:
                    self._missing_reference(item, target)

    def _written_meanwhile(self, slug: str) -> bool:
        """Whether a memory this check did not see exists now: another process wrote it while the
        files were being read (its link is then not broken; the next check sees it whole)."""
        if self.scope.root_writable and not self.catalog._lock_depth:
            try:
                self.catalog.refresh()
            except errors.Error:
                return False
        return self.catalog.has_slug(slug)

    def _missing_link(self, item: memory.Memory, target: str, editable: bool) -> None:
        if target in self.elsewhere:
            self._add("cross-scope-link", item.slug, f"`links` names {target}, but {self._where(target)}",
                      "links join memories of one scope: move one of them, or remove the link by hand",
                      target=target)
            return
        renamed = self.aliases.get(target, [])
        if len(renamed) == 1:
            message = f"`links` names {target}, which was renamed to {renamed[0]}"
            hint = f"memory repair re-points it to {renamed[0]} (its `previous-slugs` lists {target})"
        elif renamed:
            message = f"`links` names {target}, listed in `previous-slugs` of {', '.join(renamed)}"
            hint = "pick the right one by hand: more than one memory claims the old slug"
            editable = False
        else:
            message = f"`links` names {target}, but {self._where(target)}"
            hint = f"memory repair removes the link; or write the memory {target} again"
        self._add("broken-link", item.slug, message, hint, fixable=editable, target=target)

    def _missing_reference(self, item: memory.Memory, target: str) -> None:
        renamed = self.aliases.get(target, [])
        if len(renamed) == 1:
            self._add("broken-reference", item.slug, f"[[{target}]] names a memory renamed to {renamed[0]}",
                      f"memory repair re-points it to [[{renamed[0]}]]", fixable=True, target=target)
            return
        self._add("broken-reference", item.slug, f"[[{target}]] (a wiki link or `related:` entry) names a "
                  f"missing memory: {self._where(target)}",
                  f"write the memory {target}, or edit the text that mentions it", target=target)

    def _inverse(self, item: memory.Memory, target: str) -> None:
        other = self.memories.get(target)
        if other is None:
            return
        if item.slug not in other.links and item.slug not in self.references[target]:
            if self.adopted:
                return  # the earlier plugin records a link once, in the source's `links` and its graph.json
            labels = explicit_labels(item, target)
            inverse = ", ".join(self.labels.inverse(label) for label in labels) or graph.DEFAULT_LABEL
            self._add("missing-inverse-link", target, f"{item.slug} links here, but `links` does not name it",
                      f"memory repair adds {item.slug} to `links` ({inverse})", fixable=links_editable(other),
                      target=item.slug)
        elif item.slug < target and item.slug in other.links:
            mine, theirs = explicit_labels(item, target), explicit_labels(other, item.slug)
            if mine and theirs and {self.labels.inverse(label) for label in mine} != set(theirs):
                self._add("asymmetric-labels", item.slug,
                          f"labels its link to {target} {', '.join(mine)}, but {target} labels the link back "
                          f"{', '.join(theirs)} (the inverse of {mine[0]} is {self.labels.inverse(mine[0])})",
                          "memory repair gives each side the inverse of every label the other declares (a link "
                          "half-written by a killed command is completed); or correct `link-labels` by hand",
                          fixable=links_editable(item) and links_editable(other), target=target)

    # -- organisation and content -----------------------------------------------------------------

    def _organisation(self) -> None:
        threshold = self.config.get("quality.orphanThreshold", 30)
        minimum = self.config.get("quality.minQualityScore", 50)
        cutoff = clock.to_iso(self.now - _dt.timedelta(days=threshold))
        hubs_by_tag: dict[str, list[str]] = defaultdict(list)
        for slug, entry in self.entries.items():
            if entry.type == "hub":
                for tag in entry.tags:
                    hubs_by_tag[tag].append(slug)
        for slug, item in sorted(self.memories.items()):
            facts = self.view.facts(slug)
            active = item.status == "active"
            hint_hub = None
            if item.type == "hub":
                if facts.members == 0:
                    self._add("empty-hub", slug, "a hub without members",
                              f"link memories to it (memory link MEMBER {slug} --label part-of), or delete it")
            else:
                if not facts.hubs:
                    hint_hub = _best_hub(item.tags, hubs_by_tag, slug)
                if active and not facts.hubs and item.type in memory.CANONICAL_TYPES:
                    self._orphan(item, facts, hint_hub)
                created = self.entries[slug].created
                if active and facts.edges == 0 and later(cutoff, created):
                    moment = clock.parse(created)
                    age = (self.now - moment).days if moment else threshold
                    self._add("isolated", slug, f"no links at all, created {age} days ago "
                              f"(quality.orphanThreshold: {threshold} days)",
                              f"link it (memory link {slug} OTHER), or delete it if it no longer helps")
            score = quality.assess(item, facts, now=self.now, hub_hint=hint_hub)
            if active and score.score < minimum:
                first = score.suggestions[0] if score.suggestions else ""
                self._add("low-quality", slug, f"quality {score.score}/100, below quality.minQualityScore "
                          f"({minimum}); {first}", f"memory quality {slug} shows the breakdown and every suggestion")

    def _orphan(self, item: memory.Memory, facts: quality.GraphFacts, hub: str | None) -> None:
        links = f"{facts.edges} link{'s' if facts.edges != 1 else ''}, none to a hub" if facts.edges else "no links"
        if hub:
            hint = f"memory link {item.slug} {hub} --label part-of ({hub} shares its tags)"
        else:
            hint = (f"memory link {item.slug} HUB --label part-of, or create a hub: "
                    f'memory write "TOPIC" --type hub --links {item.slug}')
        self._add("orphan", item.slug, f"linked to no hub ({links})", hint)

    # -- index.json and the catalog -----------------------------------------------------------

    def _index(self) -> None:
        if self.adopted:
            return  # the earlier plugin's index.json: its own, kept as found (see predecessor.py)
        drift: dict[str, list[str]] = defaultdict(list)
        stale: dict[str, list[str]] = defaultdict(list)
        path = self.scope.root / INDEX_NAME
        if self.snapshot.index is None:
            if self.entries:
                self._add("index-missing", None, "index.json is missing", self._derived_hint("index.json"),
                          path=path, fixable=self.scope.root_writable)
        else:
            raw = _json_object(self.snapshot.index, "memories")
            if raw is None:
                self._add("index-unreadable", None, "index.json is not valid JSON with a `memories` object",
                          self._derived_hint("index.json"), path=path, fixable=self.scope.root_writable)
            else:
                for slug, entry in self.entries.items():
                    if slug not in raw:
                        drift[slug].append(f"index.json lacks {slug}")
                    elif raw[slug] != entry.index_entry():
                        fields = sorted(key for key, value in entry.index_entry().items()
                                        if not isinstance(raw[slug], dict) or raw[slug].get(key) != value)
                        drift[slug].append(f"index.json's entry for {slug} is out of date ({', '.join(fields)})")
                for slug in raw:
                    if slug not in self.entries:
                        drift[slug].append(f"index.json lists {slug}, but there is no such memory file")
        cached = self._cache_listing()
        for slug, item in self.memories.items():
            entry = self.entries[slug]
            fields = [name for name, known, actual in (
                ("title", entry.title, item.title), ("type", entry.type, item.type), ("tags", entry.tags, item.tags),
                ("content", entry.content_hash, self.hashes[slug]),
                ("created", entry.created, item.created or entry.created),
                ("updated", entry.updated, item.updated or entry.updated),
                ("hasEmbedding", entry.has_embedding, slug in cached)) if known != actual]
            if fields:
                stale[slug].append(f"the catalog is out of step with the file ({', '.join(fields)})")
        self.stale = set(stale)
        for slug in sorted(set(drift) | set(stale)):
            hint = "memory repair re-reads the file" if stale.get(slug) else self._derived_hint("index.json")
            self._add("index-drift", slug, "; ".join(drift[slug] + stale[slug]), hint,
                      path=self.entries[slug].path if slug in self.entries else path,
                      fixable=self.scope.root_writable)

    def _derived_hint(self, name: str) -> str:
        if self.scope.root_writable:
            return f"none needed: every command rewrites {name} from the files (this check just did)"
        return f"this scope is read-only for you: an administrator can run `memory reindex --scope {self.scope.name}`"

    # -- graph.json -------------------------------------------------------------------------------

    def _graph(self) -> None:
        if self.adopted:
            self._earlier_graph()
            return
        path = self.scope.root / GRAPH_NAME
        derived: dict[tuple[str, str], set[str]] = defaultdict(set)
        for source, edges in self.view.neighbours.items():
            for target, label in edges:
                derived[(source, target)].add(label)
        if self.snapshot.graph is None:
            if derived:
                self._add("graph-missing", None, "graph.json is missing", self._derived_hint("graph.json"),
                          path=path, fixable=self.scope.root_writable)
            return
        raw_data = _json_object(self.snapshot.graph, None)
        if raw_data is None:
            self._add("graph-unreadable", None, "graph.json is not a valid JSON object",
                      self._derived_hint("graph.json"), path=path, fixable=self.scope.root_writable)
            return
        raw, malformed = self._raw_edges(raw_data, path)
        if malformed:
            self._add("graph-unreadable", None, f"graph.json has {len(malformed)} malformed entr"
                      f"{'y' if len(malformed) == 1 else 'ies'}, e.g. {malformed[0]}",
                      self._derived_hint("graph.json"), path=path, fixable=self.scope.root_writable)
        for a, b in sorted({tuple(sorted(pair)) for pair in set(raw) | set(derived)}):
            self._compare_pair(a, b, raw, derived, path)

    def _raw_edges(self, data: dict[str, Any], path: Path) -> tuple[dict[tuple[str, str], set[str]], list[str]]:
        """Well-formed edges between existing memories; reports self, duplicate and broken edges."""
        raw: dict[tuple[str, str], set[str]] = defaultdict(set)
        malformed: list[str] = []
        fixable = self.scope.root_writable
        hint = self._derived_hint("graph.json")
        for source, edges in data.items():
            if not isinstance(edges, list):
                malformed.append(f"{source}: not a list of edges")
                continue
            seen: set[tuple[str, str]] = set()
            for edge in edges:
                target = edge.get("target") if isinstance(edge, dict) else None
                label = edge.get("label") if isinstance(edge, dict) else None
                if not isinstance(target, str) or not isinstance(label, str):
                    malformed.append(f"{source}: {json.dumps(edge)[:60]}")
                    continue
                where = path if source not in self.entries else None
                if target == source:
                    self._add("graph-self-edge", source, f"graph.json has an edge from {source} to itself ({label})",
                              hint, path=where, fixable=fixable, target=target)
                    continue
                missing = [slug for slug in (source, target) if slug not in self.entries]
                if missing:
                    kind = ("graph-cross-scope-edge" if all(slug in self.elsewhere for slug in missing)
                            else "graph-broken-edge")
                    self._add(kind, source, f"graph.json has an edge {source} -{label}-> {target}, but "
                              f"{self._where(missing[-1])}", hint, path=where, fixable=fixable, target=target)
                    continue
                if (target, label) in seen:
                    self._add("graph-duplicate-edge", source, f"graph.json lists the edge {source} -{label}-> "
                              f"{target} more than once", hint, fixable=fixable, target=target)
                    continue
                seen.add((target, label))
                raw[(source, target)].add(label)
        return raw, malformed

    def _compare_pair(self, a: str, b: str, raw: dict[tuple[str, str], set[str]],
                      derived: dict[tuple[str, str], set[str]], path: Path) -> None:
        ab, ba = raw.get((a, b), set()), raw.get((b, a), set())
        want_ab, want_ba = derived.get((a, b), set()), derived.get((b, a), set())
        if ab == want_ab and ba == want_ba:
            return
        fixable, hint = self.scope.root_writable, self._derived_hint("graph.json")
        if ab and not ba and want_ba:
            self._add("graph-missing-inverse", b, f"graph.json has {a} -{_labels(ab)}-> {b} but no edge back "
                      f"from {b} to {a}", hint, fixable=fixable, target=a)
        elif ba and not ab and want_ab:
            self._add("graph-missing-inverse", a, f"graph.json has {b} -{_labels(ba)}-> {a} but no edge back "
                      f"from {a} to {b}", hint, fixable=fixable, target=b)
        elif ab and ba and {self.labels.inverse(label) for label in ab} != ba:
            self._add("graph-label-mismatch", a, f"graph.json labels {a} -{_labels(ab)}-> {b} but {b} "
                      f"-{_labels(ba)}-> {a}; the files say {a} -{_labels(want_ab)}-> {b}", hint,
                      fixable=fixable, target=b)
        else:
            self._add("graph-drift", a, f"graph.json joins {a} and {b} with "
                      f"{_describe(ab, ba) or 'no edge'}; the files declare {_describe(want_ab, want_ba) or 'none'}",
                      hint, fixable=fixable, target=b)

    def _earlier_graph(self) -> None:
        """The earlier plugin's graph.json: edges stored once, in its format; only broken ones are reported."""
        data = _json_object(self.snapshot.graph, None) if self.snapshot.graph is not None else None
        if data is None:
            if self.snapshot.graph is not None:
                self._add("graph-unreadable", None, "graph.json is not a valid JSON object", "restore it from git "
                          "(it holds the edges and labels of the earlier plugin)", path=self.scope.root / GRAPH_NAME)
            return
        from ..model import predecessor

        seen: set[tuple[str, str, str]] = set()
        for source, target, label in predecessor.graph_edges(data):
            missing = [slug for slug in (source, target) if slug not in self.entries]
            hint = f"remove it: memory unlink {source} {target}" if not missing else \
                "memory repair removes edges to memories that no longer exist"
            if source == target:
                self._add("graph-self-edge", source, f"graph.json has an edge from {source} to itself ({label})",
                          hint, target=target)
            elif missing:
                self._add("graph-broken-edge", source if source in self.entries else None,
                          f"graph.json has an edge {source} -{label}-> {target}, but {self._where(missing[-1])}",
                          hint, path=None if source in self.entries else self.scope.root / GRAPH_NAME,
                          fixable=self.scope.root_writable, target=target)
            elif (source, target, label) in seen:
                self._add("graph-duplicate-edge", source, f"graph.json lists the edge {source} -{label}-> {target} "
                          "more than once", hint, target=target)
            seen.add((source, target, label))

    def _unbacked(self) -> None:
        """Edges (or labels) the catalog kept from a hand-edited graph.json that no memory file declares."""
        if self.adopted:
            return  # the earlier plugin's graph.json is where its edges are recorded
        declared = {slug: {(target, label) for target, label, _ in graph.declarations(item)}
                    for slug, item in self.memories.items()}
        pairs: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
        for source, target, label in self.catalog.conn.execute("SELECT src, dst, label FROM declared"):
            if source not in declared or target not in self.entries or source == target:
                continue
            known = declared[source]
            if (target, label) in known or (label == graph.DEFAULT_LABEL and (target, graph.UNLABELLED) in known):
                continue
            pairs[(min(source, target), max(source, target))].append((source, target, label))
        self.unbacked = dict(pairs)
        for (a, b), edges in sorted(pairs.items()):
            shown = "; ".join(f"{source} -{label or graph.DEFAULT_LABEL}-> {target}"
                              for source, target, label in sorted(edges))
            self._add("graph-unbacked-edge", a, f"graph.json holds {shown}, which no memory file declares "
                      "(kept from a graph.json edited by hand)",
                      f"memory repair writes it into the files' `links`; or remove it with memory unlink {a} {b}",
                      fixable=self.adoptable(edges), target=b)

    def adoptable(self, edges: list[tuple[str, str, str]]) -> bool:
        """Whether repair can write these edges into the files without contradicting a label there."""
        for source, target, label in edges:
            if not (links_editable(self.memories[source]) and target in self.memories
                    and links_editable(self.memories[target])):
                return False
            theirs = explicit_labels(self.memories[target], source)
            if label not in (graph.UNLABELLED, graph.DEFAULT_LABEL) and theirs and \
                    self.labels.inverse(label) not in theirs:
                return False
        return True

    # -- embedding caches -------------------------------------------------------------------------

    def _cache_listing(self) -> dict[str, Path]:
        """slug -> cache file, for every `<slug>.json` in the scope's embedding cache directory."""
        if not self.cache_files:
            directory = self.catalog.embedding_dir
            with contextlib.suppress(OSError):
                self.cache_files = {name[:-5]: directory / name for name in sorted(os.listdir(directory))
                                    if name.endswith(".json") and not name.startswith(".")}
        return self.cache_files

    def _caches(self) -> None:
        from ..vectors.embedder import Settings, canonical_model, configured_model

        files = self._cache_listing()
        if not files:
            return
        settings = Settings(self.config.section("embedding"))
        memo = CacheMemo(self.scope.cache_dir / MEMO_NAME)
        found = {stem: memo.verdict(path) for stem, path in files.items()}
        memo.save()
        sizes: dict[str, Counter[int]] = defaultdict(Counter)  # model -> vector sizes seen
        for verdict in found.values():
            if "error" not in verdict:
                sizes[canonical_model(verdict["model"])][verdict["dim"]] += 1
        hint = "memory repair removes it; the next semantic search embeds the memory again"
        for stem, path in files.items():
            verdict = found[stem]
            slug = stem if stem in self.entries else None
            problem = None
            if "error" in verdict:
                problem = ("cache-invalid", verdict["error"])
            elif verdict["slug"] != stem:
                problem = ("cache-invalid", f"it holds the embedding of {verdict['slug']!r}")
            elif slug is None:
                problem = ("cache-orphaned", f"it belongs to no memory ({self._where(stem)})")
            elif not configured_model(settings, verdict["model"]):
                problem = ("cache-wrong-model", f"made with {verdict['model']}, which is neither embedding.model "
                           f"({settings.model}), one of embedding.fallbackModels nor embedding.embeddedModel")
            else:
                usual = sizes[canonical_model(verdict["model"])].most_common(1)[0][0]
                if verdict["dim"] != usual:
                    problem = ("cache-invalid", f"its vector has {verdict['dim']} numbers; the other "
                               f"{verdict['model']} caches have {usual}")
                elif verdict["hash"] != self.hashes.get(stem, self.entries[stem].content_hash):
                    problem = ("cache-stale", "the memory changed since it was embedded")
            if problem:
                kind, why = problem
                self._add(kind, slug, f"embedding cache {path.name}: {why}",
                          "memory repair removes it" if kind == "cache-orphaned" else hint,
                          path=path, fixable=True, target=path.name)

    # -- duplicates -------------------------------------------------------------------------------

    def _duplicates(self) -> None:
        groups: dict[str, list[str]] = defaultdict(list)
        for slug in sorted(self.memories):
            groups[self.hashes[slug]].append(slug)
        for slugs in groups.values():
            for slug in slugs[1:]:
                self._add("exact-duplicate", slug, f"same title and content as {slugs[0]}",
                          f"merge them by hand (keep one, add its tags and links), then memory delete {slug}",
                          target=slugs[0])
        terms = {slug: frozenset(text.split()) for slug, text in
                 self.catalog.conn.execute("SELECT slug, terms FROM docs") if slug in self.memories}
        for a, b, similarity in near_duplicates(terms, {slug: self.hashes[slug] for slug in terms}):
            self._add("near-duplicate", a, f"{round(similarity * 100)}% of its words are shared with {b}",
                      f"merge them by hand if they say the same thing, or link them: memory link {a} {b} "
                      "--label similar-to", target=b)


def near_duplicates(terms: dict[str, frozenset[str]], hashes: dict[str, str], *,
                    threshold: float = NEAR_DUPLICATE) -> list[tuple[str, str, float]]:
    """Pairs whose word sets have a Jaccard similarity >= `threshold` (exact duplicates excluded).

    MinHash LSH finds candidates, then each candidate's similarity is computed exactly, so
    nothing below the threshold is ever reported. A signature is LSH_BANDS x LSH_ROWS minimum
    hashes made in one pass (one-permutation hashing: a word's hash picks a bin and competes
    there; an empty bin borrows from the next filled one); memories agreeing on every row of
    some band are candidates. A pair at similarity s becomes one with probability
    1 - (1 - s^4)^10: 99.5% at 0.8, 99.99% at 0.85. Words found in more than
    max(5% of the memories, 50) are left out of the signatures: they say nothing about
    duplication and would put most memories in the same buckets. Hashes are CRC-32 of
    the words, so every run gives the same answer.
    """
    bins = LSH_BANDS * LSH_ROWS
    sets = {slug: words for slug, words in terms.items() if len(words) >= NEAR_MIN_TERMS}
    frequency = Counter(word for words in sets.values() for word in words)
    common = max(50, len(sets) // 20)
    hashed = {word: (value % bins, value)  # (bin, hash): within a bin, hash order is the permutation's
              for word, value in ((word, zlib.crc32(word.encode("utf-8", "surrogatepass")))
                                  for word, count in frequency.items() if count <= common)}
    by_hash = operator.itemgetter(1)
    buckets: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for slug, words in sets.items():
        # the smallest hash per bin: dict() keeps the last pair of each bin, so feed the largest first
        smallest = dict(sorted(filter(None, map(hashed.get, words)), key=by_hash, reverse=True))
        if not smallest:
            continue
        signature = [smallest.get(position, -1) for position in range(bins)]
        if len(smallest) < bins:
            filled = sorted(smallest)
            for position in range(bins):
                if signature[position] < 0:
                    donor = filled[bisect.bisect_left(filled, position) % len(filled)]
                    signature[position] = smallest[donor] + ((donor - position) % bins) * _BORROWED
        for band in range(LSH_BANDS):
            buckets[(band, *signature[band * LSH_ROWS:(band + 1) * LSH_ROWS])].append(slug)
    pairs = {(a, b) if a < b else (b, a) for members in buckets.values() if len(members) > 1
             for i, a in enumerate(members) for b in members[i + 1:]}
    found = []
    for a, b in pairs:
        if hashes.get(a) == hashes.get(b):
            continue
        shared = len(terms[a] & terms[b])
        similarity = shared / (len(terms[a]) + len(terms[b]) - shared)
        if similarity >= threshold:
            found.append((a, b, similarity))
    return sorted(found)


class CacheMemo:
    """What each embedding cache file held when last checked, keyed by its stamp.

    Parsing a 768-number JSON file costs ~150 us; 10,000 of them would dominate a check. The
    memo (in the scope's `.cache/`, derived and disposable) lets unchanged files be skipped.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            valid = data.get("version") == MEMO_VERSION and isinstance(data.get("files"), dict)
            self.entries: dict[str, list[Any]] = data["files"] if valid else {}
        except (OSError, ValueError, AttributeError, KeyError):
            self.entries = {}
        self.seen: set[str] = set()

    def verdict(self, path: Path) -> dict[str, str]:
        """{"slug", "model", "hash", "dim"} of a valid cache file, else {"error": why}."""
        stamp = file_stamp(path) or ""
        self.seen.add(path.name)
        known = self.entries.get(path.name)
        if isinstance(known, list) and len(known) == 2 and known[0] == stamp and isinstance(known[1], dict):
            return known[1]
        found = inspect_cache_file(path)
        self.entries[path.name] = [stamp, found]
        self.changed = True
        return found

    def save(self) -> None:
        stale = set(self.entries) - self.seen
        for name in stale:
            del self.entries[name]
        if self.changed or stale:
            with contextlib.suppress(OSError):
                text = json.dumps({"version": MEMO_VERSION, "files": self.entries})
                fsutil.write_atomically(self.path, text, durable=False)


def inspect_cache_file(path: Path) -> dict[str, str]:
    """Check one `.embedding-cache/<slug>.json` against the EmbeddingCache shape."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        return {"error": f"cannot read it ({exc.strerror})"}
    except ValueError:
        return {"error": "not valid JSON"}
    if not isinstance(data, dict):
        return {"error": "not a JSON object"}
    vectors = [data.get("vector")] + (data["chunks"] if isinstance(data.get("chunks"), list) else [])
    for vector in vectors:
        if not isinstance(vector, list) or not vector or not all(
                type(value) is float or type(value) is int for value in vector):
            return {"error": "`vector` is not a non-empty list of numbers"}
    probe = {key: ([0.0] if key == "vector" else [[0.0]] if key == "chunks" else value)
             for key, value in data.items()}
    violations = schema.validate(probe, schema.load("embedding-cache"))
    if violations:
        return {"error": str(violations[0])}
    return {"slug": data["slug"], "model": data["model"], "hash": data["contentHash"], "dim": len(data["vector"])}


# -- small helpers ------------------------------------------------------------------------------

def later(a: str, b: str) -> bool:
    """Whether ISO timestamp `a` is after `b` (canonical UTC strings compare as text)."""
    if len(a) == len(b) == 20 and a[-1] == b[-1] == "Z":
        return a > b
    first, second = clock.parse(a), clock.parse(b)
    return bool(first and second and first > second)


class QuickSchema:
    """A fast yes for frontmatter that certainly satisfies the schema (the common case).

    It knows the usual fields and takes their patterns from the schema itself; anything else
    (another field the schema describes, an unusual value) answers "not sure", and the full
    validator decides. So it never hides a violation, and 10,000 files cost milliseconds.
    """

    HANDLED = frozenset({"type", "tags", "created", "updated", "links", memory.LABELS_FIELD, "title", "status",
                         "id"})

    def __init__(self, rules: dict[str, Any]) -> None:
        props, defs = rules["properties"], rules["$defs"]
        self.required = tuple(rules.get("required", ()))
        self.described = frozenset(props)
        self.types = frozenset(props["type"]["enum"])
        self.slug = re.compile(defs["slug"]["pattern"])
        self.tag = re.compile(defs["tag"]["pattern"])
        self.label = re.compile(defs["label"]["pattern"])
        self.timestamp = re.compile(defs["timestamp"]["pattern"])
        self.status = re.compile(props["status"]["pattern"])
        self.limits = (defs["slug"]["maxLength"], defs["tag"]["maxLength"], defs["label"]["maxLength"],
                       props["title"]["maxLength"])

    def surely_valid(self, fields: dict[str, Any]) -> bool:
        if any(key not in fields for key in self.required):
            return False
        if any(key in self.described and key not in self.HANDLED for key in fields):
            return False
        slug_max, tag_max, label_max, title_max = self.limits
        tags = fields["tags"]
        if fields["type"] not in self.types or not isinstance(tags, list) or not tags:
            return False
        if not all(isinstance(tag, str) and len(tag) <= tag_max and self.tag.fullmatch(tag) for tag in tags):
            return False
        if not all(isinstance(fields[key], str) and self.timestamp.fullmatch(fields[key])
                   for key in ("created", "updated")):
            return False
        links = fields.get("links", [])
        if not isinstance(links, list) or not all(
                isinstance(link, str) and len(link) <= slug_max and self.slug.fullmatch(link) for link in links):
            return False
        labels = fields.get(memory.LABELS_FIELD, {})
        if not isinstance(labels, dict):
            return False
        for target, value in labels.items():
            values = value if isinstance(value, list) else [value]
            if not (len(target) <= slug_max and self.slug.fullmatch(target) and values and all(
                    isinstance(label, str) and len(label) <= label_max and self.label.fullmatch(label)
                    for label in values)):
                return False
        title, status, declared = fields.get("title", "x"), fields.get("status", "x"), fields.get("id", "x")
        return (isinstance(title, str) and 0 < len(title) <= title_max and isinstance(status, str)
                and self.status.fullmatch(status) is not None and isinstance(declared, str)
                and len(declared) <= slug_max and self.slug.fullmatch(declared) is not None)

def _json_object(data: bytes, key: str | None) -> dict[str, Any] | None:
    """The JSON object in `data` (or its `key` member), None when it is not one."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else None


def _labels(labels: Iterable[str]) -> str:
    return "/".join(sorted(labels)) or "?"


def _describe(forward: set[str], backward: set[str]) -> str:
    parts = []
    if forward:
        parts.append(f"-{_labels(forward)}->")
    if backward:
        parts.append(f"<-{_labels(backward)}-")
    return " and ".join(parts)


def _best_hub(tags: list[str], hubs_by_tag: dict[str, list[str]], slug: str) -> str | None:
    counts: Counter[str] = Counter(hub for tag in tags for hub in hubs_by_tag.get(tag, ()) if hub != slug)
    if not counts:
        return None
    return min(counts, key=lambda hub: (-counts[hub], hub))


def _unreadable_hint(message: str) -> str:
    if message.startswith("duplicate slug"):
        return "rename one of the two files (or change its `id:`) so each slug is used once"
    if message.startswith("unknown type"):
        return "set `type:` to one of: " + ", ".join(memory.TYPES)
    if "UTF-8" in message or "binary" in message:
        return "re-save the file as UTF-8 markdown text"
    if "frontmatter" in message or "YAML" in message:
        return "fix the YAML block between the --- lines (type, tags, created, updated)"
    return "fix the file by hand; `memory reindex` then reads it again"
