"""Shared by the hook scripts: read Claude Code's JSON on stdin, run the handler, never block Claude.

A hook script does:

    from _hook import run_hook
    from _lib.session import handlers
    run_hook(handlers.memory_context)   # handler(payload, run) -> the JSON to print, or None

The handlers live in scripts/_lib/session/handlers.py (importable, tested in-process). Every
internal error is logged under the plugin data directory and the hook exits 0 with no output
(fail open). Malformed or empty stdin is a no-op.
"""

from __future__ import annotations

import os
import sys

HOOKS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HOOKS_DIR), "scripts"))

from _lib.base import jsontext  # noqa: E402 - needs the path above (not json: see jsontext)
from _lib.session.hookio import HookRun  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

RAISE_ENV = "MEMORY_HOOK_RAISE"  # set by the tests: an error inside a hook exits 70 instead of failing open


def read_payload() -> dict[str, Any] | None:
    """The hook's JSON input; None when stdin is empty, not JSON or not an object."""
    try:
        raw = sys.stdin.buffer.read(8 * 1024 * 1024)
        payload = jsontext.loads(raw.decode("utf-8", "replace")) if raw.strip() else None
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def run_hook(handle: Callable[[dict[str, Any], HookRun], dict[str, Any] | None]) -> None:
    """Run `handle` on the payload, print its JSON answer, exit 0 whatever happens."""
    run = HookRun()
    try:
        payload = read_payload()
        if payload is not None:
            answer = handle(payload, run)
            if answer:
                from _lib.session.output import capped  # never more than Claude Code shows in full

                answer = capped(answer)
                sys.stdout.buffer.write(jsontext.encoded(answer) + b"\n")  # (UTF-8 whatever the locale)
                sys.stdout.buffer.flush()
        for warning in run.warnings():
            run.log(f"note: {warning}")
    except BaseException as exc:  # noqa: BLE001 - fail open: a hook must never break the session
        from _lib.base import errors

        if isinstance(exc, errors.Error):  # refused as a command would be (e.g. an unusable scope)
            run.log(f"skipped: {exc.message}")
        elif not isinstance(exc, (SystemExit, KeyboardInterrupt)):
            import traceback

            run.log(f"{type(exc).__name__}: {exc} | " + " / ".join(
                line.strip() for line in traceback.format_exc().splitlines()[-6:]))
            if os.environ.get(RAISE_ENV):  # the test suite: an internal error must fail the test
                traceback.print_exc()
                os._exit(70)
    os._exit(0)  # skip interpreter teardown: hooks sit on every tool call
