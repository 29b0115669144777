"""What every hook handler is given: the environment of one hook run, its log, workspace and session.

A hook process builds one HookRun (hooks/_hook.py); a test builds one with its own environment
and calls a handler in-process. Only `os` is imported here: the hooks sit on every tool call.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

    from ..workspace.scopes import Workspace
    from .state import Session

LOG_NAME = "hooks.log"
LOG_LIMIT = 256 * 1024  # bytes; the log is truncated to its newest half beyond this


class HookRun:
    """One run of one hook: `env` stands for os.environ; `name` labels the hook's log lines."""

    def __init__(self, env: Mapping[str, str] | None = None, name: str | None = None) -> None:
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.name = os.path.basename(sys.argv[0]) if name is None else name
        self.workspaces: list[Workspace] = []  # their warnings go to the log, never to Claude

    def log(self, message: str) -> None:
        """Append one line to hooks.log in the plugin data directory (best effort)."""
        import time

        from .state import data_directory

        try:
            directory = data_directory(self.env)
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, LOG_NAME)
            line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {self.name}: {message}\n"
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(line)
                size = handle.tell()
            if size > LOG_LIMIT:
                with open(path, "rb") as handle:
                    handle.seek(size - LOG_LIMIT // 2)
                    tail = handle.read()
                with open(path, "wb") as handle:
                    handle.write(tail[tail.find(b"\n") + 1:])
        except OSError:
            pass

    def workspace(self, payload: dict[str, Any], *, notices: bool = False) -> tuple[Workspace, str]:
        """(Workspace, cwd) for the session's working directory; an invalid config falls back to defaults.
        `notices`: this hook shows Claude what went missing from memory (see `additional_context`)."""
        from ..base import errors
        from ..workspace.scopes import Workspace

        cwd = payload.get("cwd")
        if not (isinstance(cwd, str) and os.path.isdir(cwd)):
            cwd = os.getcwd()
        try:
            workspace = Workspace(cwd, self.env)
        except errors.Error as exc:
            self.log(f"config problem, using defaults: {exc.message}")
            workspace = Workspace(cwd, self.env, load_config=False)
        workspace.in_hook = True
        workspace.reports_losses = notices
        self.workspaces.append(workspace)
        return workspace, cwd

    def session(self, payload: dict[str, Any]) -> Session | None:
        """The Session for the payload's session_id, or None when it has none (or an unsafe one)."""
        from .state import Session, safe_id

        session_id = safe_id(payload.get("session_id"))
        return Session(session_id, self.env) if session_id else None

    def warnings(self) -> list[str]:
        """What the workspaces of this run warned about, once each."""
        return list(dict.fromkeys(warning for workspace in self.workspaces for warning in workspace.warnings))


def additional_context(event: str, text: str, workspace: Workspace | None = None) -> dict[str, Any] | None:
    """The JSON that adds `text` to the model's context for `event`, after what went missing from
    memory since the last report (the workspace's notices); None when there is neither."""
    notices = "\n".join(workspace.notices) if workspace is not None else ""
    text = "\n\n".join(part for part in (notices, text) if part)
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
