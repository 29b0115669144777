"""Shared by the hook scripts: read Claude Code's JSON on stdin, run the handler, never block Claude.

A hook script does:

    from _hook import run_hook
    run_hook("memory-context")   # a key of handlers.HANDLERS: handler(payload, run) -> the JSON to print, or None

The handlers live in scripts/_lib/session/handlers.py (importable, tested in-process). Every
internal error is logged under the plugin data directory and the hook exits 0 with no output
(fail open). Malformed or empty stdin is a no-op.

A hook server answers the hook when one listens (scripts/_lib/session/hookclient.py: why, and
its rules); else this process does, as the server's child would. Until it knows which, nothing
but posix and sys is imported here: not even os.
"""

import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOOKS_DIR = __file__.rpartition("/")[0]  # (absolute: Python makes the script's directory so)
ROOT = HOOKS_DIR.rpartition("/")[0]
SERVER_SCRIPT = HOOKS_DIR + "/_server.py"
sys.path.insert(0, ROOT + "/scripts")

RAISE_ENV = "MEMORY_HOOK_RAISE"  # set by the tests: an error inside a hook exits 70 instead of failing open


def run_hook(name: str) -> None:
    """Answer hook `name` through the hook server, else here; exit 0 whatever happens."""
    try:
        from _lib.session import hookclient

        code = hookclient.delegate(name, ROOT, SERVER_SCRIPT, died=70 if posix.environ.get(RAISE_ENV.encode()) else 0)
    except Exception:  # noqa: BLE001 - the server is an accelerator: answer here instead
        code = None
    posix._exit(answer(name) if code is None else code)  # skip interpreter teardown: hooks sit on every tool call


def read_payload() -> "dict[str, Any] | None":
    """The hook's JSON input; None when stdin is empty, not JSON or not an object."""
    from _lib.base import jsontext  # (not json: see jsontext)

    try:
        raw = sys.stdin.buffer.read(8 * 1024 * 1024)
        payload = jsontext.loads(raw.decode("utf-8", "replace")) if raw.strip() else None
        if b"\\ud" in raw or b"\\uD" in raw:  # a surrogate escape, perhaps a lone one
            payload = jsontext.utf8_values(payload)
    except (OSError, ValueError, RecursionError):  # (mending a payload nested past the stack, as no tool's input is)
        return None
    return payload if isinstance(payload, dict) else None


def answer(name: str) -> int:
    """Run the handler of hook `name` on the payload and print its JSON answer: the exit status,
    0 whatever happens (70 for an internal error when the tests set MEMORY_HOOK_RAISE)."""
    from _lib.session.hookio import HookRun

    run = HookRun()
    try:
        payload = read_payload()
        if payload is not None:
            from _lib.session.handlers import HANDLERS

            reply = HANDLERS[name](payload, run)
            if reply:
                from _lib.base import jsontext
                from _lib.session.output import capped  # never more than Claude Code shows in full

                sys.stdout.buffer.write(jsontext.encoded(capped(reply)) + b"\n")  # (UTF-8 whatever the locale)
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
            import os  # (not posix.environ: a server's child has taken over the hook's environment)

            if os.environ.get(RAISE_ENV):  # the test suite: an internal error must fail the test
                traceback.print_exc()
                sys.stderr.flush()
                return 70
    return 0
