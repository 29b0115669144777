"""Shared by the hook scripts: read Claude Code's JSON on stdin, run, and never block Claude.

A hook script does:

    from _hook import run_hook
    def handle(payload: dict) -> dict | None: ...   # the JSON to print, or None for no output
    run_hook(handle)

Every internal error is logged under the plugin data directory and the hook exits 0
with no output (fail open). Malformed or empty stdin is a no-op.
"""

from __future__ import annotations

import json
import os
import sys
import time

HOOKS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HOOKS_DIR), "scripts"))

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

LOG_LIMIT = 256 * 1024  # bytes; the log is truncated to its newest half beyond this
RAISE_ENV = "MEMORY_HOOK_RAISE"  # set by the tests: an error inside a hook exits 70 instead of failing open


def data_dir() -> str:
    """Where the plugin keeps state and logs (base/paths.py)."""
    from _lib.base.paths import data_dir  # pathlib: only when something is logged

    return str(data_dir())


def log(message: str) -> None:
    """Append one line to hooks.log in the data directory (best effort)."""
    try:
        directory = data_dir()
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "hooks.log")
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.path.basename(sys.argv[0])}: {message}\n"
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


def read_payload() -> dict[str, Any] | None:
    """The hook's JSON input; None when stdin is empty, not JSON or not an object."""
    try:
        raw = sys.stdin.buffer.read(8 * 1024 * 1024)
        payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else None
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


_WORKSPACES: list[Any] = []  # the hook's workspaces: their warnings go to the log, never to Claude


def run_hook(handle: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """Run `handle` on the payload, print its JSON answer, exit 0 whatever happens."""
    try:
        payload = read_payload()
        if payload is not None:
            answer = handle(payload)
            if answer:
                from _lib.session.output import capped  # never more than Claude Code shows in full

                answer = capped(answer)
                sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
                sys.stdout.flush()
        for warning in dict.fromkeys(warning for workspace in _WORKSPACES for warning in workspace.warnings):
            log(f"note: {warning}")
    except BaseException as exc:  # noqa: BLE001 - fail open: a hook must never break the session
        from _lib.base import errors

        if isinstance(exc, errors.Error):  # refused as a command would be (e.g. an unusable scope)
            log(f"skipped: {exc.message}")
        elif not isinstance(exc, (SystemExit, KeyboardInterrupt)):
            import traceback

            log(f"{type(exc).__name__}: {exc} | " + " / ".join(
                line.strip() for line in traceback.format_exc().splitlines()[-6:]))
            if os.environ.get(RAISE_ENV):  # the test suite: an internal error must fail the test
                traceback.print_exc()
                os._exit(70)
    os._exit(0)  # skip interpreter teardown: hooks sit on every tool call


def workspace_for(payload: dict[str, Any], *, notices: bool = False) -> tuple[Any, str]:
    """(Workspace, cwd) for the session's working directory; an invalid config falls back to defaults.
    `notices`: this hook shows Claude what went missing from memory (see `context`)."""
    from _lib.base import errors
    from _lib.workspace.scopes import Workspace

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and os.path.isdir(payload["cwd"]) else os.getcwd()
    try:
        workspace = Workspace(cwd)
    except errors.Error as exc:
        log(f"config problem, using defaults: {exc.message}")
        workspace = Workspace(cwd, load_config=False)
    workspace.in_hook = True
    workspace.reports_losses = notices
    _WORKSPACES.append(workspace)
    return workspace, cwd


def session_of(payload: dict[str, Any]) -> Any:
    """The Session for the payload's session_id, or None when it has none (or an unsafe one)."""
    from _lib.session import state as session

    session_id = session.safe_id(payload.get("session_id"))
    return session.Session(session_id) if session_id else None


def context(event: str, text: str, workspace: Any = None) -> dict[str, Any] | None:
    """The JSON that adds `text` to the model's context for `event`, after what went missing from
    memory since the last report (the workspace's notices); None when there is neither."""
    notices = "\n".join(workspace.notices) if workspace is not None else ""
    text = "\n\n".join(part for part in (notices, text) if part)
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
