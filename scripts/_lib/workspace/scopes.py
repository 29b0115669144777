"""The four scopes, where each lives on disk, and which one a command means.

global      $CLAUDE_CONFIG_DIR/memory, else ~/.claude/memory
project     <project>/.claude/memory   (<project>: $CLAUDE_PROJECT_DIR, git top level, or cwd)
local       <project>/.claude/memory/local   (gitignored automatically)
enterprise  $CLAUDE_MEMORY_ENTERPRISE_PATH, only when scopes.enterprise.enabled is true

Reads resolve enterprise -> local -> project -> global; the most specific scope wins.
"""

from __future__ import annotations

import contextlib
import os
from collections import namedtuple
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

from . import config as config_mod
from ..base import errors, fsutil, paths

SCOPE_ORDER = ("enterprise", "local", "project", "global")
WRITABLE_DEFAULTS = ("global", "project", "local")
ENTERPRISE_ENV = "CLAUDE_MEMORY_ENTERPRISE_PATH"
CACHE_DIR_NAME = ".cache"

PROJECT_GITIGNORE = """\
# Derived files: the memory plugin rebuilds them from the memory files. Never commit them.
/index.json
/graph.json
/task-index.json
/.cache/
/.embedding-cache/
/.*.tmp
/tasks/.*.tmp
/*.orig
# Personal memories (local scope) stay on this machine.
/local/
"""
# A store the earlier plugin laid out commits its index.json and graph.json (the only record of
# its edge labels), and the team may still run that plugin: only this plugin's own files are ignored.
PREDECESSOR_GITIGNORE = """\
# Derived files of the memory plugin. Never commit them.
/task-index.json
/.cache/
/.embedding-cache/
/.*.tmp
/tasks/.*.tmp
/*.orig
# Personal memories (local scope) stay on this machine.
/local/
"""

# Two clones that change the same memory (say, both link to one hub) merge without conflict:
# git keeps the lines of both sides, and the next `memory` command reads the result.
PROJECT_GITATTRIBUTES = """\
*.md merge=union
"""

ENABLE_ENTERPRISE_HINT = (
    "enable it with `memory config scopes.enterprise.enabled true --scope global`, and have your "
    f"administrator set {ENTERPRISE_ENV} in managed-settings.json (README: Enterprise deployment)"
)


class Scope(namedtuple("Scope", "name root cache_dir root_writable")):
    """One scope's memory directory (`root`) and where its derived data is kept (`cache_dir`)."""

    __slots__ = ()

    @property
    def lock_path(self) -> Path:
        return self.cache_dir / "lock"

    def derived_dir(self, name: str) -> Path:
        """Where a derived directory such as `.embedding-cache` lives: in the scope if we may write
        there (and it is not a link leading out of the scope), else beside the catalog."""
        inside = self.root / name
        if self.root_writable and fsutil.escapes(inside, self.root) is None:
            return inside
        return self.cache_dir / name

    def exists(self) -> bool:
        return self.root.is_dir()


def _find_git_top(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


class Workspace:
    """All scopes visible from one working directory, with the merged config."""

    # progress(line): told when a long step begins (a catch-up of many files); the CLI sets it
    progress: Callable[[str], None] | None = None

    def __init__(self, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
                 *, load_config: bool = True) -> None:
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.warnings: list[str] = []
        self.home = paths.home(self.env)
        self.global_root = paths.claude_dir(self.env) / "memory"
        explicit = self.env.get("CLAUDE_PROJECT_DIR")
        git_top = _find_git_top(self.cwd.resolve() if self.cwd.exists() else self.cwd)
        if explicit:
            self.project_dir = Path(explicit).expanduser()
            self.in_git_repo = _find_git_top(self.project_dir) is not None
        else:
            self.project_dir = git_top or self.cwd
            self.in_git_repo = git_top is not None
        self.project_root = self.project_dir / ".claude" / "memory"
        self.local_root = self.project_root / "local"
        self.in_hook = False  # set by hooks: they never replace a file another tool wrote
        self.reports_losses = True  # say what went missing (hooks that cannot show it to Claude turn it off)
        self.notices: list[str] = []  # what hooks show Claude (memories that went missing)
        self.opened_journal: Any = None  # the user's journal once catalog.journal.of() opened it
        # a config.json behind a link leading out of its scope (or a project one out of the project) is not read
        global_config = self.global_root / config_mod.CONFIG_NAME
        project_config = self.project_root / config_mod.CONFIG_NAME
        sources = [global_config] if fsutil.escapes(global_config, self.global_root) is None else []
        if fsutil.escapes(project_config, self.project_root) is None \
                and fsutil.escapes(self.project_root, self.project_dir) is None:
            sources.append(project_config)
        self.config = config_mod.load(sources) if load_config else config_mod.load([])

    # -- which scopes exist -------------------------------------------------------------

    @property
    def project_is_global(self) -> bool:
        """True when the project memory directory is the global one (e.g. cwd is $HOME)."""
        return _same_path(self.project_root, self.global_root)

    @property
    def enterprise_enabled(self) -> bool:
        return bool(self.config.get("scopes.enterprise.enabled", False))

    def default_scope_name(self) -> str:
        """`scopes.default`, where `auto` means project inside a git repository, else global."""
        chosen = self.config.get("scopes.default", "auto")
        if chosen != "auto":
            return chosen
        if self.in_git_repo and not self.project_is_global:
            return "project"
        return "global"

    def scope(self, name: str | None = None) -> Scope:
        """The named scope (default scope when None); raises ScopeUnavailable when it cannot be used."""
        name = name or self.default_scope_name()
        if name == "global":
            return self._make("global", self.global_root)
        if name in ("project", "local"):
            if self.project_is_global:
                raise errors.ScopeUnavailable(
                    f"there is no {name} scope here: {self.project_dir} is your home directory, whose "
                    ".claude/memory is the global scope",
                    "run the command from inside a project, or use --scope global")
            return self._make(name, self.project_root if name == "project" else self.local_root)
        if name == "enterprise":
            return self._enterprise()
        raise errors.InvalidInput(f"unknown scope {name!r}",
                                  "use one of: " + ", ".join(SCOPE_ORDER))

    def readable_scopes(self, only: str | None = None) -> list[Scope]:
        """Scopes to read from, most specific first. Problems with enterprise become warnings."""
        if only:
            return [self.scope(only)]
        found: list[Scope] = []
        for name in SCOPE_ORDER:
            if name == "enterprise" and not self.enterprise_enabled:
                continue
            try:
                found.append(self.scope(name))
            except errors.ScopeUnavailable as exc:
                if name == "enterprise" or isinstance(exc, errors.ScopeRefused):
                    self.warn(f"skipping {name} scope: {exc.message}")  # (no project scope in $HOME: silent)
        return found

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- helpers --------------------------------------------------------------------------

    def _enterprise(self) -> Scope:
        if not self.enterprise_enabled:
            raise errors.ScopeUnavailable("enterprise scope is disabled (scopes.enterprise.enabled is false)",
                                          ENABLE_ENTERPRISE_HINT)
        raw = self.env.get(ENTERPRISE_ENV, "").strip()
        if not raw:
            raise errors.ScopeUnavailable(f"enterprise scope is enabled but {ENTERPRISE_ENV} is not set",
                                          f"set {ENTERPRISE_ENV} in the env section of managed-settings.json")
        root = Path(raw).expanduser()
        if not root.is_dir():
            raise errors.ScopeUnavailable(f"enterprise memory path {root} does not exist or is not a directory",
                                          "ask your administrator to create it, or fix " + ENTERPRISE_ENV)
        if not os.access(root, os.R_OK | os.X_OK):
            raise errors.ScopeUnavailable(f"enterprise memory path {root} is not readable",
                                          "ask your administrator for read access")
        return self._make("enterprise", root)

    def _make(self, name: str, root: Path) -> Scope:
        root = Path(os.path.abspath(root))
        if not fsutil.from_utf8(str(root)):  # its catalog, journal and JSON files name it in UTF-8
            raise errors.ScopeRefused(
                f"the {name} memory directory {fsutil.printable(str(root))} is not UTF-8 text; it is not used",
                "move it (or the directory holding it) to a path in UTF-8"
                + (", or set HOME to one" if name == "global" else ", or work with --scope global"))
        if name in ("project", "local"):
            self._refuse_escaping_root(name, root)
        if _writable(root) and fsutil.escapes(root / CACHE_DIR_NAME, root) is None:
            return Scope(name, root, root / CACHE_DIR_NAME, True)
        # e.g. an enterprise directory only admins may write, or a .cache that is a link leading
        # out of the scope: keep our derived data privately, never through the link
        import hashlib

        digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
        return Scope(name, root, self.global_root / CACHE_DIR_NAME / "external" / f"{name}-{digest}",
                     _writable(root))

    def _refuse_escaping_root(self, name: str, root: Path) -> None:
        """A project's memory directory is the repository's: a link taking it (or .claude, or
        local/) outside the repository would make every command and hook read and write there."""
        outside = fsutil.escapes(root, self.project_dir)
        if outside is not None:
            raise errors.ScopeRefused(
                f"the {name} memory directory {root} leads outside the project {self.project_dir} "
                f"(a symbolic link to {outside}); it is not used",
                "replace the link with a real directory (or a link that stays inside the project), "
                "or work with --scope global")


def _same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _writable(path: Path) -> bool:
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    return os.access(probe, os.W_OK)


def prepare_for_write(workspace: Workspace, scope: Scope) -> None:
    """Create the scope directory; make sure local memories and derived files stay out of git."""
    if scope.name == "enterprise":
        if not os.access(scope.root, os.W_OK):
            raise errors.ScopeUnavailable(f"enterprise memory path {scope.root} is read-only for you",
                                          "ask your administrator to add enterprise memories")
        return
    try:
        scope.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise errors.ScopeUnavailable(f"cannot create {scope.name} memory directory {scope.root}: {exc.strerror}",
                                      "check the directory's permissions") from None
    if scope.name in ("project", "local"):
        for name in (".gitignore", ".gitattributes"):
            path = workspace.project_root / name
            if not path.exists():
                fsutil.write_atomically(path, _project_file(workspace, name))
    if scope.name == "local":
        ensure_local_gitignored(workspace.project_dir)


SCAFFOLDING = frozenset({".gitignore", ".gitattributes", CACHE_DIR_NAME, "index.json", "graph.json",
                         "task-index.json", "tasks"})


@contextlib.contextmanager
def scaffolded(workspace: Workspace, scope: Scope) -> Iterator[None]:
    """prepare_for_write for an operation that may still be refused: when it fails, a memory
    directory it created is removed again, as long as nothing but scaffolding is in it."""
    made = scope.root
    while not made.parent.exists() and made.parent != made:
        made = made.parent
    created = not made.exists()
    prepare_for_write(workspace, scope)
    try:
        yield
    except BaseException:
        if created:
            _remove_if_only_scaffolding(scope, made)
        raise


def _remove_if_only_scaffolding(scope: Scope, made: Path) -> None:
    """Remove `made` when the scope holds nothing but scaffolding. Checked and removed under the
    scope lock: a memory another process writes into the new directory meanwhile (it writes under
    that lock) is either seen, and the directory kept, or written after, into a directory that is
    gone, which fails loudly instead of losing it."""
    import shutil

    try:
        with fsutil.exclusive_lock(scope.lock_path, timeout=1.0, what=f"{scope.name} memory"):
            if _only_scaffolding(scope.root):
                shutil.rmtree(made, ignore_errors=True)
    except (errors.Error, OSError):
        pass  # busy or unreadable: leave the scaffolding, it is harmless


def _only_scaffolding(root: Path) -> bool:
    try:
        names = os.listdir(root)
    except OSError:
        return False
    tasks = root / "tasks"
    return set(names) <= SCAFFOLDING and not (tasks.is_dir() and any(tasks.iterdir()))


def _project_file(workspace: Workspace, name: str) -> str:
    if name == ".gitattributes":
        return PROJECT_GITATTRIBUTES
    from . import layout

    return PREDECESSOR_GITIGNORE if layout.detect(workspace.project_root).predecessor else PROJECT_GITIGNORE


def ensure_local_gitignored(project_dir: Path) -> bool:
    """Add `.claude/memory/local/` to the project's .gitignore (local memories stay
    out of git). True when it was added."""
    entry = ".claude/memory/local/"
    ignore_file = project_dir / ".gitignore"
    try:
        existing = ignore_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    except (OSError, UnicodeDecodeError):
        return False
    accepted = {entry, entry.rstrip("/"), "/" + entry, "/" + entry.rstrip("/")}
    if any(line.strip() in accepted for line in existing.splitlines()):
        return False
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    fsutil.write_atomically(
        ignore_file, existing + prefix + "# Personal memories of the memory plugin (local scope)\n" + entry + "\n")
    return True


def change_config(workspace: Workspace, scope_name: str, key: str, value: object = None, *,
                  unset: bool = False) -> tuple[Path, bool]:
    """Set (or with `unset`, remove) one dotted key in a scope's config.json, holding the scope's
    lock so that concurrent changes never lose one another; (the file, whether anything changed)."""
    scope = workspace.scope(scope_name)  # refuses a scope directory that leads out of the project
    path = scope.root / config_mod.CONFIG_NAME
    if fsutil.escapes(path, scope.root) is not None:
        raise errors.InvalidInput(f"{path} is a link leading out of the memory directory; it is not written through",
                                  "replace the link with the file itself")
    if unset and not path.exists():
        return path, False
    with scaffolded(workspace, scope), fsutil.exclusive_lock(scope.lock_path, what=f"{scope.name} memory"):
        if unset:
            return path, config_mod.unset_key(path, key)
        config_mod.set_key(path, key, value, shared=scope_name == "project")
        return path, True
