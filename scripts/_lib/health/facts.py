"""What every health check shares: the problems it reports, the report, and the facts of a scope.

index.json and graph.json are read as found on disk (Snapshot) *before* the catalog is opened:
opening it brings them in step with the files, so their drift is reported once.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
from collections import Counter, defaultdict
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator

    from ..workspace.config import Config
    from .digest import FileDigest
    from ..workspace.scopes import Scope, Workspace

from ..base import clock
from ..model import graph, memory
from . import quality
from ..catalog.catalog import GRAPH_NAME, INDEX_NAME, Catalog, open_catalog

ERROR, WARNING = "error", "warning"
ALIASES_FIELD = "previous-slugs"  # slugs a memory was known by before a rename: broken links re-point to it
FUTURE_SLACK = 120     # seconds of clock skew tolerated, as `memory write` does
GRAPH_MEMO_NAME = "health-graph.json"  # the neighbours of every memory (see quality.GraphView)


class Problem:
    """One finding: what, where, how bad, and how to fix it."""

    __slots__ = ("kind", "severity", "scope", "slug", "path", "message", "hint", "fixable", "target", "field")

    def __init__(self, kind: str, severity: str, scope: str, slug: str | None, path: Path | None, message: str,
                 hint: str, *, fixable: bool = False, target: str | None = None, field: str | None = None) -> None:
        self.kind, self.severity, self.scope, self.slug, self.path = kind, severity, scope, slug, path
        self.message, self.hint, self.fixable, self.target, self.field = message, hint, fixable, target, field

    def __repr__(self) -> str:
        return f"Problem({self.kind} {self.scope}:{self.slug or self.path} {self.target or self.field or ''})"

    def json_values(self) -> list[Any]:
        """The values of `as_json`, in the order of JSON_KEYS."""
        return [self.kind, self.severity, self.scope, self.slug, str(self.path) if self.path else None, self.message,
                self.hint, self.fixable, self.target, self.field]

    def as_json(self) -> dict[str, Any]:
        return dict(zip(JSON_KEYS, self.json_values()))


JSON_KEYS = ("kind", "severity", "scope", "slug", "path", "message", "hint", "fixable", "target", "field")
PROBLEMS_PER_CHUNK = 5000  # problems encoded or rendered at a time (a chunk of the output)


class ScopeReport:
    """The findings of one scope."""

    def __init__(self, scope: Scope, types: dict[str, int], problems: list[Problem]) -> None:
        self.scope, self.types = scope, types
        # errors first, then by kind, file, target and field: sorted within each (severity, kind), which
        # compares far fewer keys than one sort of 300,000 problems by all five
        groups: dict[tuple[bool, str], list[Problem]] = defaultdict(list)
        for problem in problems:
            groups[(problem.severity != ERROR, problem.kind)].append(problem)
        self.problems = [problem for group in sorted(groups) for problem in sorted(
            groups[group], key=lambda problem: (str(problem.path or ""), problem.target or "", problem.field or ""))]

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
        self.problems: list[Problem] = [problem for scope in scopes for problem in scope.problems]
        severities = Counter(problem.severity for problem in self.problems)
        self.errors, self.warnings = severities[ERROR], severities[WARNING]

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def summary(self) -> dict[str, int]:
        """The headline counts `memory health` leads with: memories, orphans, broken links (each pair of memories once,
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
        return {**self._head_json(), "problems": [problem.as_json() for problem in self.problems]}

    def _head_json(self) -> dict[str, Any]:
        problems, summary = self.problems, self.summary()
        return {"ok": self.ok, "memories": summary["memories"], "summary": summary,
                "errors": self.errors, "warnings": self.warnings,
                "fixable": sum(problem.fixable for problem in problems),
                "byKind": dict(sorted(Counter(problem.kind for problem in problems).items())),
                "scopes": [scope.as_json() for scope in self.scopes]}

    def json_chunks(self) -> Iterator[str]:
        """`json.dumps(self.as_json(), indent=2, ensure_ascii=False)` in pieces, made without a dict
        per problem: the indenting encoder is pure Python, and 300,000 problems took it seconds. The
        values of a chunk of problems are encoded by the C encoder in one call, separated by NUL
        (which it always escapes inside a string), and set in a template."""
        head = json.dumps(self._head_json(), indent=2, ensure_ascii=False)
        problems = self.problems
        yield head[:-len("\n}")] + ',\n  "problems": ' + ("[\n" if problems else "[]\n}")
        if not problems:
            return
        template = "    {\n" + ",\n".join(f"      {json.dumps(key)}: %s" for key in JSON_KEYS) + "\n    }"
        width = len(JSON_KEYS)
        for start in range(0, len(problems), PROBLEMS_PER_CHUNK):
            batch = problems[start:start + PROBLEMS_PER_CHUNK]
            encoded = json.dumps([value for problem in batch for value in problem.json_values()],
                                 ensure_ascii=False, separators=("\0", ":"))[1:-1].split("\0")
            text = ",\n".join(template % tuple(encoded[at:at + width]) for at in range(0, len(encoded), width))
            yield (",\n" if start else "") + text
        yield "\n  ]\n}"


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


@contextlib.contextmanager
def open_catalogs(workspace: Workspace, targets: list[Scope]) -> Iterator[dict[str, Catalog]]:
    """Catalogs of `targets` and of every other readable scope (for cross-scope checks), up to date."""

    names = {target.name for target in targets}
    scopes = list(targets) + [other for other in workspace.readable_scopes() if other.name not in names]
    with contextlib.ExitStack() as stack:
        catalogs: dict[str, Catalog] = {}
        for target in scopes:
            catalog = stack.enter_context(open_catalog(workspace, target, full=True))
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


def aliases(memories: Iterable[FileDigest]) -> dict[str, list[str]]:
    """Old slug -> memories listing it in `previous-slugs` (a rename leaves the old slug there)."""
    found: dict[str, list[str]] = defaultdict(list)
    for item in memories:
        for old in item.aliases:
            found[old].append(item.slug)
    return found


def links_editable(item: FileDigest) -> bool:
    """Whether repair may rewrite `links` and `link-labels` without losing anything."""
    return bool(item.editable)


def explicit_labels(item: FileDigest | memory.Memory, target: str) -> list[str]:
    """The labels `item` gives its link to `target` in `link-labels` (empty: unlabelled)."""
    return [label for label in item.link_labels.get(target, []) if graph.LABEL_RE.fullmatch(label)]


def later(a: str, b: str) -> bool:
    """Whether ISO timestamp `a` is after `b` (canonical UTC strings compare as text)."""
    if len(a) == len(b) == 20 and a[-1] == b[-1] == "Z":
        return a > b
    first, second = clock.parse(a), clock.parse(b)
    return bool(first and second and first > second)


class ScopeFacts:
    """What the checks of one scope read: its catalog, memories, links and the derived files as found.

    Loaded once; each family of checks (files, links, organisation, exports, caches,
    duplicates) adds its problems with `add`. `memory repair` plans its fixes from it.
    """

    severities: dict[str, str] = {}  # problem kind -> severity: set by the class that runs the families

    def __init__(self, catalog: Catalog, snapshot: Snapshot, elsewhere: dict[str, str], config: Config,
                 now: _dt.datetime | None = None) -> None:
        self.catalog, self.scope, self.snapshot = catalog, catalog.scope, snapshot
        self.elsewhere, self.config = elsewhere, config
        self.now = now or clock.now()
        self.latest = clock.to_iso(self.now + _dt.timedelta(seconds=FUTURE_SLACK))  # later is "in the future"
        self.labels = catalog.labels
        # A store the earlier plugin laid out follows that plugin's conventions (free-form tags and
        # ids, timestamps with milliseconds or none, links recorded once in its graph.json): those
        # are read as they are and not reported; only what cannot be read, or is broken, is.
        self.adopted = catalog.predecessor_layout
        self.entries = {entry.slug: entry for entry in catalog.entries()}
        # every memory file the catalog lists and that can be read (one removed or broken since the
        # catalog looked is left out: the next run reports it)
        self.memories: dict[str, FileDigest] = self.read_memories()
        self.files_read: dict[str, memory.Memory] = {}
        self.hashes = {slug: item.hash for slug, item in self.memories.items()}
        self.references = {slug: set(item.references) for slug, item in self.memories.items()}
        self.aliases = aliases(self.memories.values())
        self.view = quality.GraphView(catalog, memo=self.scope.cache_dir / GRAPH_MEMO_NAME)
        self.cache_files: dict[str, Path] = {}
        self.stale: set[str] = set()  # memories the catalog holds out of step with their file
        self.unbacked: dict[tuple[str, str], list[tuple[str, str, str]]] = {}  # pair -> (source, target, label)
        self.problems: list[Problem] = []

    def read_memories(self) -> dict[str, FileDigest]:
        """slug -> what the checks read of each memory file (set by the class that runs the families)."""
        raise NotImplementedError

    def read(self, slug: str) -> memory.Memory:
        """Memory `slug` as its file holds it (read once: repair plans its edits on it)."""
        if slug not in self.files_read:
            self.files_read[slug] = memory.read_file(self.entries[slug].path, self.scope.name, root=self.scope.root)
        return self.files_read[slug]

    def report(self) -> ScopeReport:
        return ScopeReport(self.scope, dict(Counter(entry.type for entry in self.entries.values())), self.problems)

    def add(self, kind: str, slug: str | None, message: str, hint: str, *, path: Path | None = None,
             fixable: bool = False, target: str | None = None, field: str | None = None) -> None:
        if path is None and slug in self.entries:
            item = self.memories.get(slug)  # its path made once (a catalog entry makes one on each call)
            path = item.path if item is not None else self.entries[slug].path
        self.problems.append(Problem(kind, self.severities[kind], self.scope.name, slug, path, message, hint,
                                     fixable=fixable, target=target, field=field))

    def where(self, slug: str) -> str:
        """`slug is in the global scope` or `slug does not exist in the project scope`."""
        other = self.elsewhere.get(slug)
        return f"{slug} is in the {other} scope" if other else f"{slug} does not exist in the {self.scope.name} scope"

    def cache_listing(self) -> dict[str, Path]:
        """slug -> cache file, for every `<slug>.json` in the scope's embedding cache directory."""
        if not self.cache_files:
            directory = self.catalog.embedding_dir
            with contextlib.suppress(OSError):
                self.cache_files = {name[:-5]: directory / name for name in sorted(os.listdir(directory))
                                    if name.endswith(".json") and not name.startswith(".")}
        return self.cache_files
