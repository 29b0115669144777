"""Deterministic file operations inside the project's `.claude/memory/`: read, write, update-json.

Path rules (for every path argument):

- `.claude/memory/<rest>` is taken relative to the project root (the seed's form), an
  absolute path must lie inside `<project>/.claude/memory/`, and any other relative
  path is taken relative to `.claude/memory/` itself (`tasks/1.json`, `notes.md`);
- a `..` component is refused outright, whatever it would resolve to;
- only `.json .md .txt .yaml .yml` files;
- reads resolve symlinks and refuse a target outside the memory directory; writes
  never follow a symlink (a symlinked file or directory on the way is refused);
- derived and internal places are never written: `.cache/`, `.embedding-cache/`,
  `index.json`, `graph.json` (also in `local/`) and `task-index.json`.

Writes are verified first (UTF-8, no NUL; JSON must parse; YAML must parse; task
files must match the task schema and config.json the config schema; markdown where memories live, i.e. top-level,
`local/` and `nodes/**`, must be a memory), then written atomically (temp, fsync, rename)
under a lock: the task store's for `tasks/`, else `<memory>/.cache/files.lock`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import namedtuple
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

    from ..workspace.scopes import Workspace

from ..base import errors, fsutil, jsontext, redact
from ..base.text import decode as decode_text

EXTENSIONS = (".json", ".md", ".txt", ".yaml", ".yml")
PREFIX = ".claude/memory/"
MAX_BYTES = 4 * 1024 * 1024
_TOO_LARGE_HINT = "memory files are notes, not data: split it, or keep the data in the repository and link to it"
DERIVED_DIRS = {".cache": "it holds caches and locks the plugin keeps itself",
                ".embedding-cache": "it holds cached embeddings, recomputed when needed"}
DERIVED_FILES = {"index.json": "`memory reindex` rebuilds it from the memory files",
                 "graph.json": "`memory reindex` rebuilds it; change links with `memory link` / `memory unlink`",
                 "task-index.json": "`memory task rebuild-index` rebuilds it; change tasks with `memory task ...`"}
JQ_TIMEOUT = 10.0


class MemoryPath(namedtuple("MemoryPath", "given relative path")):
    """A checked path: as given, relative to the memory directory, and absolute."""

    __slots__ = ()

    @property
    def display(self) -> str:
        return PREFIX + self.relative

    @property
    def is_memory_location(self) -> bool:
        """Where the store reads memories: `*.md` at the top, in `local/`, and under `nodes/`."""
        parts = self.relative.split("/")
        if parts[-1].lower() in ("index.md", "readme.md") and len(parts) <= 2:
            return False
        return len(parts) == 1 or (len(parts) == 2 and parts[0] == "local") or parts[0] == "nodes"

    @property
    def is_task_file(self) -> bool:
        parts = self.relative.split("/")
        return len(parts) == 2 and parts[0] == "tasks" and parts[1].endswith(".json")


def memory_dir(workspace: Workspace) -> Path:
    """The project's `.claude/memory` (raises ScopeUnavailable where there is no project scope)."""
    return workspace.scope("project").root


def resolve(workspace: Workspace, given: str, *, for_write: bool) -> MemoryPath:
    """Check `given` against the path rules; raises InvalidInput naming the rule it breaks."""
    root = memory_dir(workspace)
    if not isinstance(given, str) or not given.strip() or "\x00" in given:
        raise errors.InvalidInput("give a file path inside .claude/memory/", "e.g. .claude/memory/notes.md")
    text = given.replace(os.sep, "/")
    parts = text.split("/")
    if ".." in parts:
        raise errors.InvalidInput(f"{given}: `..` is not allowed in a memory file path",
                                  "give the path inside .claude/memory/ directly, e.g. .claude/memory/tasks/1.json")
    if os.path.isabs(given):
        relative = _inside(Path(given), root)
        if relative is None:
            raise errors.InvalidInput(f"{given} is outside {root}",
                                      "memory file operations only touch files under the project's .claude/memory/")
    else:
        stripped = text[2:] if text.startswith("./") else text
        relative = stripped[len(PREFIX):] if stripped.startswith(PREFIX) else stripped
    relative = "/".join(part for part in relative.split("/") if part not in ("", "."))
    if not relative:
        raise errors.InvalidInput(f"{given} names the memory directory, not a file", "e.g. .claude/memory/notes.md")
    name = relative.rsplit("/", 1)[-1]
    if not name.lower().endswith(EXTENSIONS) or name.lower() in EXTENSIONS:
        raise errors.InvalidInput(f"{given}: only {' '.join(EXTENSIONS)} files are allowed",
                                  "memory files are text: JSON, markdown, plain text or YAML")
    path = root / relative
    if for_write:
        _refuse_derived(given, relative)
        _refuse_symlinks(given, root, relative)
    else:
        real_root = os.path.realpath(root)
        real = os.path.realpath(path)
        if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
            raise errors.InvalidInput(f"{given} resolves (through a symlink) to {real}, outside {root}",
                                      "memory file operations only touch files under the project's .claude/memory/")
    return MemoryPath(given, relative, path)


def _inside(path: Path, root: Path) -> str | None:
    """`path` relative to `root` (lexically, or after resolving both), or None when outside."""
    for base in (os.path.abspath(root), os.path.realpath(root)):
        candidate = os.path.abspath(path)
        if candidate == base:
            return ""
        if candidate.startswith(base.rstrip(os.sep) + os.sep):
            return candidate[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")
    return None


def _refuse_derived(given: str, relative: str) -> None:
    parts = relative.split("/")
    for part in parts[:-1]:
        if part in DERIVED_DIRS:
            raise errors.InvalidInput(f"{given} is inside {part}/, which is not written by hand",
                                      f"nothing to do: {DERIVED_DIRS[part]}")
    owner = parts[:-1]
    if parts[-1] in DERIVED_FILES and (not owner or (owner == ["local"] and parts[-1] != "task-index.json")):
        raise errors.InvalidInput(f"{given} is derived and is not written by hand",
                                  DERIVED_FILES[parts[-1]])


def _refuse_symlinks(given: str, root: Path, relative: str) -> None:
    """Refuse when the file or any directory between it and the memory directory is a symlink."""
    current = root
    for part in relative.split("/"):
        current = current / part
        if os.path.islink(current):
            raise errors.InvalidInput(f"{given}: {current} is a symlink; writes never follow symlinks",
                                      "write to the real file inside .claude/memory/ instead")
    if current.is_dir():
        raise errors.InvalidInput(f"{given} is a directory", "give a file path")


# -- operations -------------------------------------------------------------------------------------

def read(workspace: Workspace, given: str) -> tuple[MemoryPath, str]:
    """The text of a memory file."""
    target = resolve(workspace, given, for_write=False)
    try:
        import stat

        if not stat.S_ISREG(os.stat(target.path).st_mode) and not os.path.isdir(target.path):
            raise errors.InvalidInput(f"{target.display} is not a regular file (a pipe, socket or device)",
                                      "memory files are plain files; remove it")
        with open(target.path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise errors.NotFound(f"{target.display} does not exist",
                              "create it with `memory file write`") from None
    except IsADirectoryError:
        raise errors.InvalidInput(f"{target.display} is a directory", "give a file path") from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read {target.display}: {exc.strerror}",
                                  "check the path: `memory file read` takes a file under .claude/memory/") from None
    return target, decode(raw, target.display)


def write(workspace: Workspace, given: str, content: str) -> MemoryPath:
    """Create or replace a memory file after verifying `content`."""
    target = resolve(workspace, given, for_write=True)
    text = verify(target, _without_secrets(workspace, target, content))
    with _lock_for(workspace, target):
        _refuse_symlinks(given, memory_dir(workspace), target.relative)  # again, under the lock
        fsutil.write_atomically(target.path, text)
        _after_write(workspace, target)
    return target


def update_json(workspace: Workspace, given: str, *, patch: str | None = None,
                jq: str | None = None) -> tuple[MemoryPath, Any]:
    """Change a JSON file with a merge patch (RFC 7386) or a jq expression; returns the new value."""
    if (patch is None) == (jq is None):
        raise errors.InvalidInput("give exactly one of --patch JSON or --jq EXPR")
    target = resolve(workspace, given, for_write=True)
    if not target.relative.lower().endswith(".json"):
        raise errors.InvalidInput(f"{given} is not a .json file", "update-json changes JSON files only")
    if patch is not None:
        patch_value = _json_value(patch, "--patch is not valid JSON", """e.g. --patch '{"status": "done"}'""")
    with _lock_for(workspace, target):
        _, current_text = read(workspace, given)
        current = _json_value(current_text, f"{target.display} is not valid JSON",
                              "fix it with `memory file write` first")
        if patch is not None:
            from ..tasks.entity import merge_patch

            updated = merge_patch(current, patch_value)
        else:
            assert jq is not None
            updated = run_jq(jq, current_text)
        updated = _clean_json(workspace, target, updated)
        text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
        verify(target, text)
        _refuse_symlinks(given, memory_dir(workspace), target.relative)
        fsutil.write_atomically(target.path, text)
        _after_write(workspace, target)
    return target, updated


def _without_secrets(workspace: Workspace, target: MemoryPath, content: str) -> str:
    """`content` with its secrets redacted: JSON value by value (see _clean_json), other text whole."""
    if target.relative.lower().endswith(".json"):
        try:
            value = _json_value(content, "", "")
        except errors.InvalidInput:
            return content  # verify() says what is wrong with it
        cleaned = _clean_json(workspace, target, value)
        return content if cleaned == value else json.dumps(cleaned, indent=2, ensure_ascii=False) + "\n"
    return redact.clean(workspace, content, target.display)


def _clean_json(workspace: Workspace, target: MemoryPath, value: Any) -> Any:
    """A JSON value with its secrets redacted, each string judged under its key
    (`{"password": "hunter2"}`), so the file stays valid JSON. config.json is left to verify(),
    which refuses a secret there: it is committed, and a redacted setting would not work."""
    if target.relative == "config.json":
        return value
    return redact.clean_values(workspace, value, target.display)


def verify(target: MemoryPath, content: str) -> str:
    """The text to write: UTF-8 with LF line endings, parsed when JSON or YAML; raises InvalidInput."""
    if "\x00" in content:
        raise errors.InvalidInput(f"the content for {target.display} holds NUL bytes", "memory files are text")
    text = content.replace("\r\n", "\n")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise errors.InvalidInput(f"the content for {target.display} is larger than {MAX_BYTES // (1024 * 1024)} MiB",
                                  _TOO_LARGE_HINT)
    lower = target.relative.lower()
    if lower.endswith(".json"):
        value = _json_value(text, f"the content for {target.display} is not valid JSON",
                            "nothing was written; fix the JSON and retry")
        if target.is_task_file:
            _verify_task(target, value)
        elif target.relative == "config.json":  # a broken config would stop every command
            from ..workspace import config

            if not isinstance(value, dict):
                raise errors.ConfigError(f"{target.display} must hold a JSON object",
                                         "`memory config KEY VALUE --scope project` changes one setting safely")
            config.check(value, target.display)
            config.refuse_secrets(value, target.display)
    elif lower.endswith(".md") and target.is_memory_location:
        from ..model import memory

        try:
            memory.parse(text, target.path, "project")
        except errors.InvalidInput as exc:
            raise errors.InvalidInput(f"{target.display} is where memories live, and this content is not a memory: "
                                      f"{exc.message}", "write memories with `memory write`, or put other notes in a "
                                      "subdirectory such as .claude/memory/notes/") from None
    elif lower.endswith((".yaml", ".yml")):
        from ..base import deps

        yaml = deps.load("yaml")
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise errors.InvalidInput(f"the content for {target.display} is not valid YAML: "
                                      f"{' '.join(str(exc).split())}", "nothing was written") from None
        except RecursionError:
            raise errors.InvalidInput(f"the content for {target.display} is not valid YAML: {_TOO_DEEP}",
                                      "nothing was written") from None
    return text


MAX_DEPTH = 100  # far past any file of the memory directory; the redaction and merge walks recurse
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


def _json_value(text: str, problem: str, hint: str) -> Any:
    """`text` parsed as JSON; InvalidInput saying `problem` and why when it is not JSON, or is
    nested deeper than MAX_DEPTH."""
    try:
        value = jsontext.loads(text)
    except ValueError as exc:
        raise errors.InvalidInput(f"{problem}: {exc}", hint) from None
    level = [value]
    for _ in range(MAX_DEPTH + 1):  # level by level, without recursing
        level = [item for node in level if isinstance(node, (dict, list))
                 for item in (node.values() if isinstance(node, dict) else node)]
        if not level:
            return value
    raise errors.InvalidInput(f"{problem}: {_TOO_DEEP}", hint)


def _verify_task(target: MemoryPath, value: Any) -> None:
    from ..base import schema

    stem = target.relative.split("/")[1][:-5]
    problems = schema.validate(value, schema.load("task"))
    if problems:
        raise errors.InvalidInput(f"{target.display} would break the task schema: {problems[0]}",
                                  "see schemas/task.schema.json; `memory task update` changes tasks safely")
    if value.get("id") != stem:
        raise errors.InvalidInput(f"{target.display} must hold the task whose id is {stem!r} (got {value.get('id')!r})",
                                  "the file name is the task id")


def run_jq(expression: str, document: str) -> Any:
    """Apply a jq expression to `document` with the `jq` program; its single JSON result."""
    import shutil
    import subprocess

    program = shutil.which("jq")
    if program is None:
        raise errors.DependencyMissing("--jq needs the jq program, which is not installed",
                                       "install jq (apt-get install jq, brew install jq), or use --patch with a "
                                       "JSON merge patch")
    try:
        # a leading space keeps an expression such as `-.a` from being read as an option (jq 1.6 has no `--`)
        proc = subprocess.run([program, " " + expression], input=document.encode("utf-8"), capture_output=True,
                              timeout=JQ_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise errors.InvalidInput(f"jq did not finish within {JQ_TIMEOUT:.0f} s", "simplify the expression") from None
    if proc.returncode != 0:
        message = " ".join(proc.stderr.decode("utf-8", "replace").split()) or f"exit code {proc.returncode}"
        raise errors.InvalidInput(f"jq failed: {message}", "nothing was written; check the expression") from None
    output = proc.stdout.decode("utf-8", "replace").strip()
    try:
        return json.loads(output)
    except ValueError:
        raise errors.InvalidInput("the jq expression must produce exactly one JSON value",
                                  "e.g. --jq '.status = \"done\"' (wrap several results in [ ... ])") from None


@contextlib.contextmanager
def _lock_for(workspace: Workspace, target: MemoryPath) -> Iterator[None]:
    scope = workspace.scope("project")
    from ..workspace import scopes

    if target.is_task_file:
        from ..tasks.files import LOCK_NAME

        lock = fsutil.exclusive_lock(scope.cache_dir / LOCK_NAME, what="task store")
    else:  # memory files, config.json, index.md: the lock `memory update`, `memory config` and the catalog hold
        lock = fsutil.exclusive_lock(scope.lock_path, what=f"{scope.name} memory")
    with scopes.scaffolded(workspace, scope), lock:
        yield


def _after_write(workspace: Workspace, target: MemoryPath) -> None:
    if target.is_task_file:
        from ..tasks.taskstore import TaskStore

        TaskStore(workspace).invalidate()  # the index is rebuilt from the files by the next task command
        workspace.warn(f"{target.display} was written directly: statuses and progress were not rolled up; "
                       "`memory task validate` checks the invariants (--fix repairs roll-up and progress)")


def decode(raw: bytes, display: str) -> str:
    """The text of a memory file's bytes (`display` names them in errors): refused when over
    MAX_BYTES or not UTF-8 text."""
    if len(raw) > MAX_BYTES:
        raise errors.InvalidInput(f"{display} is larger than {MAX_BYTES // (1024 * 1024)} MiB", _TOO_LARGE_HINT)
    return decode_text(raw, display, hint="memory files are text")
