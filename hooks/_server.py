"""The hook server: started detached by a hook or `memory` command that found none listening; runs
hooks and `memory` commands in forked children until idle (why, and its rules:
scripts/_lib/session/hookclient.py).

Usage: python -S hooks/_server.py   (prints "listening <socket>" once it accepts hooks)
"""

from __future__ import annotations

import os
import sys

# No descriptor of whoever started this: a pipe kept open here would keep its reader waiting.
os.closerange(3, 1024)
os.chdir("/")  # nor a working directory: it would pin a directory someone means to remove

from _hook import ROOT, answer  # noqa: E402 - puts scripts/ on sys.path

from _lib.session import hookclient, hookserver  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket

COMMAND = "memory"  # what scripts/memory.py hands over (any other name is a hook's)
# what the commands import between them, beside what the hooks do (scripts/ is on sys.path)
COMMANDS = ("memory", "_cli", "argparse", "difflib", "write", "read", "update", "delete", "link", "unlink",
            "list", "search", "edges", "graph", "tag", "untag", "query", "gotchas", "semantic", "task", "stats")


def main() -> int:
    import fcntl

    path = hookclient.socket_path(ROOT, os.environb)
    if path is None or not hookclient.enabled(os.environb):
        print("no server: switched off, or no private directory with room for a socket under $TMPDIR",
              file=sys.stderr)
        return 0
    lock = os.open(path[:-len(b".sock")] + b".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("no server: another one is running or starting", file=sys.stderr)
        return 0
    if hookserver.servers_running(os.path.dirname(path)) > hookserver.MAX_SERVERS:
        print(f"no server: {hookserver.MAX_SERVERS} others are running", file=sys.stderr)
        return 0
    hookserver.reset_signals()
    hookserver.preload(COMMANDS)
    listener = hookserver.Listener(path, idle=hookserver.idle_seconds(os.environ), code=ROOT)
    print(f"listening {os.fsdecode(path)}", flush=True)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # whoever reads the line above is not kept waiting for more
        os.dup2(quiet, fd)
    os.close(quiet)
    try:
        for connection, peer in listener.connections():
            child = os.fork()
            if child == 0:
                code = 0
                try:
                    code = serve(connection, peer, listener, lock)
                finally:
                    os._exit(code)  # whatever happened: a child never goes on serving
            listener.watch(child, connection)
    finally:
        listener.close()
        os.close(lock)  # a new server may start while this one waits for its children
    listener.drain()  # (their callers are still waiting to learn how they ended)
    return 0


def serve(connection: _socket.socket, peer: int, listener: hookserver.Listener, lock: int) -> int:
    """In the forked child: take the hook or command over and run it; the exit status."""
    from _lib.session.handlers import HANDLERS

    listener.release()
    os.close(lock)
    request = hookserver.take_over(connection, peer, {*HANDLERS, COMMAND})
    if request is None:
        return 0
    code = 1
    try:
        hookserver.adopt(request, connection)
        if request.name == COMMAND:
            code = command(request.argv)
        else:
            sys.argv = [os.path.join(ROOT, "hooks", f"{request.name}.py")]
            code = answer(request.name)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        hookserver.report_exit(connection, code)  # now: the caller need not wait for this process to end
    return code


def command(argv: list[str]) -> int:
    """`memory ARGV` as scripts/memory.py runs it in a process of its own: the exit status."""
    import memory

    try:
        return memory.main(argv)
    except SystemExit as exc:  # as the interpreter turns one into a status
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - as the interpreter reports one
        import traceback

        traceback.print_exc()
        return 1


if __name__ == "__main__":
    os._exit(main())
