"""Which memory directory a path is in: the part of the protect rules every Read asks, kept light.

Used by guard (file tools), bashguard (shell commands) and the hooks that skip memory files.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..workspace.scopes import Workspace


def memory_directories(workspace: Workspace) -> list[tuple[str, str]]:
    """(scope name, directory) for every scope this session could write to, as absolute paths."""
    directories = [("global", str(workspace.global_root)), ("project", str(workspace.project_root))]
    enterprise = workspace.env.get("CLAUDE_MEMORY_ENTERPRISE_PATH", "").strip()
    if enterprise:
        directories.append(("enterprise", expand_user(enterprise, workspace.env)))
    return [(name, os.path.abspath(directory)) for name, directory in directories]


def protected_scope(workspace: Workspace, path: str, cwd: str) -> str | None:
    """The scope whose memory directory `path` is in (symlinks resolved), else None."""
    candidate = os.path.abspath(os.path.join(cwd, expand_user(path, workspace.env)))
    # a NUL byte ends no path the system takes (Node refuses it too): judged as written, not resolved
    forms = {candidate} if "\0" in candidate else {candidate, os.path.realpath(candidate)}
    for name, directory in memory_directories(workspace):
        roots = {directory, os.path.realpath(directory)}
        for form in forms:
            for root in roots:
                if inside(form, root):
                    return "local" if name == "project" and inside(form, os.path.join(root, "local")) else name
    return None


def inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or below it (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def expand_user(path: str, env: Any) -> str:
    """`~`, `$VAR` and `${VAR}` as the shell would expand them in this environment."""
    if path == "~" or path.startswith("~/"):
        path = env.get("HOME", os.path.expanduser("~")) + path[1:]
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda match: env.get(match.group(1), match.group(0)), path)
