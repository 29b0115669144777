"""Anchors: the code a memory is about, and whether that code moved on since it was written.

An anchor is a file of the project, optionally with a symbol named in the memory that occurs in
it, recorded with the git blob id of the file's content and the commit HEAD pointed at then. A
memory keeps them in its frontmatter, so they travel with it through git:

    anchors:
      - src/auth/login.ts 3b18e512c0ff 9f2c1d0e4a1b
      - "src/auth/login.ts#verifyToken 3b18e512c0ff 9f2c1d0e4a1b"

one line per anchor: `<path>[#<symbol>] <blob> <commit>`, both ids abbreviated to 12 hex digits
(what git itself accepts: `git diff 3b18e512c0ff HEAD:src/auth/login.ts`), the commit `-` outside
a git repository. Ids are computed without git: the blob id is sha1("blob <size>\\0" + content) and
the commit is read from .git/HEAD, its ref file or packed-refs.

Where anchors come from (project and local memories only: a global memory is read from many
projects, so a path in one of them means nothing in the others): the files its `paths:` globs
match (a few per glob), a file summary's `path`, and the project files its body names, plus the
symbols (`verifyToken()`, `UserRepository`) the body names in backquotes that occur in those files.

A memory's state against the current code: `fresh` (every anchor as recorded), `changed` (a
file's content differs: the advice may need a look), `gone` (a named file was deleted, a symbol
is no longer in its file, or a glob matches none of its recorded files any more: the advice may
be obsolete). A file found through a wildcard glob that disappears alone only makes the memory
`changed`: the glob names an area, not that file. A memory without anchors has no state.
"""

from __future__ import annotations

import os
import re
from stat import S_ISLNK, S_ISREG

from ..base import digests
from ..base.globs import glob_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from typing import Any

FIELD = "anchors"
ID_LENGTH = 12           # hex digits kept of blob and commit ids
MAX_ANCHORS = 12         # per memory: enough to say what it is about, short enough to read
MAX_PER_GLOB = 4         # files recorded for one wildcard glob
MAX_SYMBOLS = 6
MAX_WALKED = 20_000      # directory entries looked at to resolve one memory's wildcard globs
MAX_HASHED_BYTES = 8 * 1024 * 1024  # a larger file is anchored by path only (its content is not compared)
UNKNOWN = "-"  # an id that could not be computed: no git repository, a file too large to compare
FRESH, CHANGED, GONE = "fresh", "changed", "gone"
SKIPPED_DIRS = frozenset([".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", "dist", "build", "target", ".next", ".cache", ".claude"])
_HEX = re.compile(r"[0-9a-f]{4,40}")
_ANCHOR = re.compile(r"(?P<path>.+?)(?:#(?P<symbol>[A-Za-z_$][\w$]*))? (?P<blob>[0-9a-f]{4,40}|-) "
                     r"(?P<commit>[0-9a-f]{4,40}|-)")
# a path with a directory, or a file name with an extension, as prose or markdown writes them
# (patterns used when recording only are compiled then: the hooks import this module on every Read)
_PATH_IN_TEXT = (r"(?<![\w/.$-])(?:\./)?((?:[\w.@-]+/)*[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}|(?:[\w.@-]+/)+[\w.@-]+)")
# a symbol in backquotes: a call `name()`, or a name shaped like code (camelCase, PascalCase, snake_case)
_SYMBOL_IN_TEXT = r"`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\(\))?`"
_WILDCARD = re.compile(r"[*?\[]")


class Anchor:
    """One recorded anchor."""

    __slots__ = ("blob", "commit", "path", "symbol")

    def __init__(self, path: str, symbol: str | None, blob: str, commit: str) -> None:
        self.path, self.symbol, self.blob, self.commit = path, symbol, blob, commit

    def text(self) -> str:
        return f"{self.path}{'#' + self.symbol if self.symbol else ''} {self.blob} {self.commit}"

    def name(self) -> str:
        return f"{self.path}#{self.symbol}" if self.symbol else self.path

    def __repr__(self) -> str:
        return f"Anchor({self.text()})"


def parse(value: Any) -> list[Anchor]:
    """The anchors of a frontmatter `anchors:` value; lines that are not anchors are skipped."""
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        match = _ANCHOR.fullmatch(item.strip()) if isinstance(item, str) else None
        if match is not None and _safe_relpath(match.group("path")):
            found.append(Anchor(match.group("path"), match.group("symbol"), match.group("blob"), match.group("commit")))
    return found


# -- git without a subprocess -------------------------------------------------------------------

def blob_id(data: bytes) -> str:
    """The id git gives a file with this content (`git hash-object`)."""
    return digests.sha1_hex(b"blob %d\0" % len(data) + data)


def git_dir(top: Path) -> Path | None:
    """The git directory of the repository holding `top` (a worktree's `.git` file followed)."""
    for directory in (top, *top.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            target = line[len("gitdir:"):].strip()
            return (directory / target) if not os.path.isabs(target) else type(top)(target)
    return None


def head_commit(top: Path) -> str | None:
    """The commit HEAD points at in the repository holding `top`; None outside git or before a first commit."""
    directory = git_dir(top)
    if directory is None:
        return None
    try:
        head = (directory / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("ref:"):
        return head if _HEX.fullmatch(head) else None  # detached
    ref = head[len("ref:"):].strip()
    common = directory
    try:  # a worktree keeps its branches in the main repository's directory
        common = directory / (directory / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        pass
    for base in dict.fromkeys((directory, common)):
        try:
            value = (base / ref).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if _HEX.fullmatch(value):
            return value
    try:
        with open(common / "packed-refs", encoding="utf-8") as handle:
            for line in handle:
                sha, _, name = line.strip().partition(" ")
                if name == ref and _HEX.fullmatch(sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        pass
    return None


# -- recording ----------------------------------------------------------------------------------

def _safe_relpath(path: str) -> bool:
    """A path inside the project: relative, no `..`, no empty or dot segments."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _relative(path: str, project_dir: Path) -> str | None:
    """`path` (absolute, `./`-prefixed or relative) as a safe path relative to the project, or None."""
    path = path.strip().strip("`'\"").rstrip(".,;:)")
    if os.path.isabs(path):
        root = str(project_dir).rstrip(os.sep) + os.sep
        if not path.startswith(root):
            return None
        path = path[len(root):]
    while path.startswith("./"):
        path = path[2:]
    return path if _safe_relpath(path) else None


def _project_file(project_dir: Path, relpath: str) -> bool:
    """A regular file inside the project (a link leading out of it is not the project's code)."""
    full = project_dir / relpath
    try:
        return full.is_file() and os.path.realpath(full).startswith(os.path.realpath(project_dir) + os.sep)
    except OSError:
        return False


def _glob_files(project_dir: Path, pattern: str, limit: int) -> list[str]:
    """Up to `limit` project files matching a wildcard glob, in a stable order, walking only below
    the glob's literal directory and at most MAX_WALKED entries."""
    clean = pattern.strip().lstrip("/")
    while clean.startswith("./"):
        clean = clean[2:]
    literal = []
    for part in clean.split("/")[:-1]:
        if _WILDCARD.search(part) or part == "**":
            break
        literal.append(part)
    start = "/".join(literal)
    if start and not _safe_relpath(start):
        return []
    found: list[str] = []
    walked = 0
    for directory, subdirs, files in os.walk(project_dir / start if start else project_dir):
        subdirs[:] = sorted(name for name in subdirs if name not in SKIPPED_DIRS)
        walked += len(subdirs) + len(files)
        relative_dir = os.path.relpath(directory, project_dir).replace(os.sep, "/")
        for name in sorted(files):
            relpath = name if relative_dir == "." else f"{relative_dir}/{name}"
            if glob_match(pattern, relpath):
                found.append(relpath)
                if len(found) >= limit:
                    return found
        if walked > MAX_WALKED:
            break
    return found


def targets(project_dir: Path, fields: dict[str, Any], body: str) -> list[tuple[str, str | None]]:
    """(path, symbol) pairs a memory is about, in the order they are anchored, at most MAX_ANCHORS."""
    paths: list[str] = []

    def add(relpath: str | None) -> None:
        if relpath and relpath not in paths and len(paths) < MAX_ANCHORS and _project_file(project_dir, relpath):
            paths.append(relpath)

    source = fields.get("path")
    if isinstance(source, str):
        add(_relative(source, project_dir))
    globs = fields.get("paths")
    for pattern in globs if isinstance(globs, list) else []:
        if not isinstance(pattern, str) or not pattern.strip():
            continue
        if _WILDCARD.search(pattern):
            for relpath in _glob_files(project_dir, pattern, MAX_PER_GLOB):
                add(relpath)
        else:
            add(_relative(pattern, project_dir))
    for match in re.finditer(_PATH_IN_TEXT, body):
        add(_relative(match.group(1), project_dir))
    pairs: list[tuple[str, str | None]] = [(path, None) for path in paths]
    symbols = [match.group(1).rsplit(".", 1)[-1] for match in re.finditer(_SYMBOL_IN_TEXT, body)
               if match.group(2) or re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]|[a-z]_[a-z]", match.group(1))]
    texts: dict[str, str] = {}
    for symbol in list(dict.fromkeys(symbols))[:MAX_SYMBOLS]:
        for path in paths:
            if path not in texts:
                texts[path] = _read_text(project_dir / path)
            if symbol_in(symbol, texts[path]):
                pairs.append((path, symbol))
                break
    return pairs[:MAX_ANCHORS + MAX_SYMBOLS]


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_HASHED_BYTES:
            return ""
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def symbol_in(symbol: str, text: str) -> bool:
    """`symbol` occurs in `text` as a whole identifier."""
    start = text.find(symbol)
    while start >= 0:
        end = start + len(symbol)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
            return True
        start = text.find(symbol, start + 1)
    return False


def record(project_dir: Path, fields: dict[str, Any], body: str, *, keep: Iterable[Anchor] = (),
           blob_of: Callable[[Path], str | None] | None = None) -> list[str]:
    """The `anchors:` lines for a memory now. An anchor in `keep` for the same path and symbol
    keeps its recorded ids (an edit of the memory does not accept code changes: `--reanchor` does)."""
    kept = {anchor.name(): anchor for anchor in keep}
    commit = head_commit(project_dir)
    commit_text = commit[:ID_LENGTH] if commit else UNKNOWN
    blob_of = blob_of or file_blob
    lines = []
    for path, symbol in targets(project_dir, fields, body):
        name = f"{path}#{symbol}" if symbol else path
        if name in kept:
            lines.append(kept[name].text())
            continue
        blob = blob_of(project_dir / path)
        lines.append(Anchor(path, symbol, blob[:ID_LENGTH] if blob else UNKNOWN, commit_text).text())
    return lines


def file_blob(path: Path) -> str | None:
    """The git blob id of a file, None when it cannot be read or is too large to compare."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_HASHED_BYTES:
                return None
            return blob_id(handle.read())
    except OSError:
        return None


# -- checking -----------------------------------------------------------------------------------

class Finding:
    """One anchor's state."""

    __slots__ = ("anchor", "state")

    def __init__(self, anchor: Anchor, state: str) -> None:
        self.anchor, self.state = anchor, state

    def as_json(self) -> dict[str, Any]:
        return {"path": self.anchor.path, "symbol": self.anchor.symbol, "blob": self.anchor.blob,
                "commit": self.anchor.commit, "state": self.state}


class Verdict:
    """A memory's state against the code, and each anchor's."""

    __slots__ = ("findings", "state")

    def __init__(self, state: str, findings: list[Finding]) -> None:
        self.state, self.findings = state, findings

    def changed(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.state != FRESH]


class Checker:
    """Checks anchors against the files of one project; each file is looked at once per checker.

    `blob_of(path, stat)` gives a file's blob id (a stat cache may answer without reading it)."""

    def __init__(self, project_dir: Path, blob_of: Callable[[str, os.stat_result], str | None] | None = None) -> None:
        self.project_dir = project_dir
        self.blob_of = blob_of or (lambda relpath, _stat: file_blob(project_dir / relpath))
        self._blobs: dict[str, str | None] = {}
        self._texts: dict[str, str] = {}
        self._exists: dict[str, bool] = {}

    def _blob(self, relpath: str) -> str | None:
        if relpath not in self._blobs:
            try:
                path = self.project_dir / relpath
                found = os.lstat(path)
                stat = found if not S_ISLNK(found.st_mode) else \
                    os.stat(path) if _project_file(self.project_dir, relpath) else None  # no link out of the project
                present = stat is not None and S_ISREG(stat.st_mode)
            except OSError:
                stat, present = None, False
            self._exists[relpath] = present
            self._blobs[relpath] = self.blob_of(relpath, stat) if present and stat is not None else None
        return self._blobs[relpath]

    def exists(self, relpath: str) -> bool:
        self._blob(relpath)
        return self._exists[relpath]

    def anchor_state(self, anchor: Anchor) -> str:
        blob = self._blob(anchor.path)
        if not self._exists[anchor.path]:
            return GONE
        same = blob is not None and anchor.blob != UNKNOWN and blob.startswith(anchor.blob)
        if anchor.symbol is None or same:
            return FRESH if same or anchor.blob == UNKNOWN else CHANGED
        if anchor.path not in self._texts:
            self._texts[anchor.path] = _read_text(self.project_dir / anchor.path)
        return CHANGED if symbol_in(anchor.symbol, self._texts[anchor.path]) else GONE

    def verdict(self, anchors: list[Anchor], globs: Any = None) -> Verdict | None:
        """The memory's state (None without anchors). Files found through its wildcard `globs`
        make it gone only when none of them is left."""
        if not anchors:
            return None
        wildcards = [glob for glob in (globs if isinstance(globs, list) else [])
                     if isinstance(glob, str) and _WILDCARD.search(glob)]
        findings = [Finding(anchor, self.anchor_state(anchor)) for anchor in anchors]
        for finding in findings:
            if finding.state == GONE and finding.anchor.symbol is None:
                area = [glob for glob in wildcards if glob_match(glob, finding.anchor.path)]
                if any(other.anchor.symbol is None and other.state != GONE and any(
                        glob_match(glob, other.anchor.path) for glob in area) for other in findings):
                    finding.state = CHANGED  # one file of an area went, others remain
        states = {finding.state for finding in findings}
        state = GONE if GONE in states else CHANGED if CHANGED in states else FRESH
        return Verdict(state, findings)

    def of_fields(self, extra: dict[str, Any]) -> Verdict | None:
        """The state of a memory from its catalog fields (`anchors`, `paths`)."""
        value = extra.get(FIELD)
        return self.verdict(parse(value), extra.get("paths")) if value else None
