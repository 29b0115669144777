"""Which task test commands the user allows to run, per repository.

When a subagent stops, the tasks assigned to it get their `tests` run: shell commands
read from `.claude/memory/tasks/*.json`, which arrive with the repository (a clone, a
pull, a branch) and so may have been written by anyone. A command runs only once the
user has trusted it for this repository (`memory task trust`). The record is kept
outside every repository, in the global memory cache (`task-trust.json`), keyed by the
repository's real path, and holds a digest of each command allowed: a command that
changes, or a new one, is not trusted until the user trusts the commands again.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..workspace.scopes import Workspace
    from .taskstore import TaskStore

TRUST_NAME = "task-trust.json"
LOCK_NAME = "task-trust.lock"
VERSION = 1
TRUST_COMMAND = "memory task trust"


def test_commands(entity: dict[str, Any]) -> list[str]:
    """The test commands of a task entity (non-empty strings, as they will be run)."""
    return [test for test in entity.get("tests") or [] if isinstance(test, str) and test.strip()]


def digest(command: str) -> str:
    import hashlib

    return hashlib.sha256(command.encode("utf-8")).hexdigest()


def record_path(workspace: Workspace) -> Path:
    return workspace.global_root / ".cache" / TRUST_NAME


def repository(workspace: Workspace) -> str:
    """The key of the project's trust: its real path (a clone elsewhere is trusted separately)."""
    return os.path.realpath(workspace.project_dir)


def _outside_repository(workspace: Workspace) -> bool:
    """Whether the trust record lies outside the project: a record the repository could write is no trust."""
    project = repository(workspace)
    where = os.path.realpath(record_path(workspace))
    return os.path.commonpath([project, where]) != project


def _load(workspace: Workspace) -> dict[str, Any]:
    """The whole record ({"version", "repositories": {path: {"commands": {digest: command}, ...}}})."""
    empty: dict[str, Any] = {"version": VERSION, "repositories": {}}
    if not _outside_repository(workspace):
        return empty
    try:
        with open(record_path(workspace), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict) or not isinstance(data.get("repositories"), dict):
        return empty
    return data


def trusted(workspace: Workspace) -> dict[str, str]:
    """digest -> command of every command trusted for this repository."""
    entry = _load(workspace)["repositories"].get(repository(workspace))
    commands = entry.get("commands") if isinstance(entry, dict) else None
    if not isinstance(commands, dict):
        return {}
    return {key: value for key, value in commands.items() if isinstance(value, str)}


def untrusted(workspace: Workspace, commands: list[str]) -> list[str]:
    """The commands of `commands` not trusted for this repository, each once, in order."""
    allowed = trusted(workspace)
    return list(dict.fromkeys(command for command in commands if digest(command) not in allowed))


def store_commands(store: TaskStore) -> dict[str, list[str]]:
    """command -> ids of the tasks that run it, for every test command of the store."""
    from .entity import sort_ids

    found: dict[str, list[str]] = {}
    for task_id in sort_ids(store.entries):
        for command in test_commands(store.task(task_id)):
            found.setdefault(command, []).append(task_id)
    return found


def trust(workspace: Workspace, commands: list[str]) -> None:
    """Trust exactly `commands` for this repository (commands trusted before and gone are forgotten)."""
    from ..base import clock

    _set_entry(workspace, {"trustedAt": clock.now_iso(),
                           "commands": {digest(command): command for command in commands}})


def revoke(workspace: Workspace) -> bool:
    """Forget every trusted command of this repository; True when there were some."""
    found = repository(workspace) in _load(workspace)["repositories"]
    if found:
        _set_entry(workspace, None)
    return found


def _set_entry(workspace: Workspace, entry: dict[str, Any] | None) -> None:
    """Replace (None: remove) this repository's entry, under the record's lock."""
    from ..base import errors, fsutil

    path = record_path(workspace)
    if not _outside_repository(workspace):
        raise errors.Conflict(f"the trust record {path} would be inside the repository it is about",
                              "run the command with your own HOME / CLAUDE_CONFIG_DIR, outside the project")
    with fsutil.exclusive_lock(path.parent / LOCK_NAME, what="task trust"):
        data = _load(workspace)
        if entry is None:
            data["repositories"].pop(repository(workspace), None)
        else:
            data["repositories"][repository(workspace)] = entry
        data["version"] = VERSION
        fsutil.write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def shown(command: str, limit: int = 160) -> str:
    """A command on one line, for a message: control characters as spaces, long ones shortened."""
    text = "".join(" " if ord(char) < 32 or ord(char) == 127 else char for char in command)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def refusal(workspace: Workspace, refused: dict[str, list[str]], most: int = 5) -> str:
    """What the user is told when tasks were not validated because their test commands are not trusted."""
    commands = list(dict.fromkeys(command for listed in refused.values() for command in listed))
    quoted = "; ".join(f"`{shown(command)}`" for command in commands[:most])
    if len(commands) > most:
        quoted += f" and {len(commands) - most} more"
    tasks = f"task{'s' if len(refused) != 1 else ''} {', '.join(refused)}"
    these = "this test command is" if len(commands) == 1 else "these test commands are"
    return (f"memory: {tasks} not validated: {these} not trusted for {repository(workspace)} (new, changed, or "
            f"from a clone): {quoted}. Review them with `{TRUST_COMMAND} --list`, then allow them by running "
            f"`{TRUST_COMMAND}` in that directory.")
