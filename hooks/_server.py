"""The hook server: started detached by a hook that found none listening; answers hooks in forked
children until idle (why and its rules: scripts/_lib/session/hookserver.py).

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
    hookserver.preload()
    listener = hookserver.Listener(path, idle=hookserver.idle_seconds(os.environ), code=ROOT)
    print(f"listening {os.fsdecode(path)}", flush=True)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # whoever reads the line above is not kept waiting for more
        os.dup2(quiet, fd)
    os.close(quiet)
    try:
        for connection in listener.connections():
            if os.fork() == 0:
                code = 0
                try:
                    code = serve(connection, listener, lock)
                finally:
                    os._exit(code)  # whatever happened: a child never goes on serving
            connection.close()
    finally:
        listener.close()
    return 0


def serve(connection: _socket.socket, listener: hookserver.Listener, lock: int) -> int:
    """In the forked child: take the hook over and answer it; the exit status."""
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the hook's own subprocesses are waited for
    listener.release()
    os.close(lock)
    request = hookserver.take_over(connection)
    if request is None:
        return 0
    sys.argv = [os.path.join(ROOT, "hooks", f"{request.name}.py")]
    code = 0
    try:
        hookserver.adopt(request)
        code = answer(request.name)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        hookserver.report_exit(connection, code)
    return code


if __name__ == "__main__":
    os._exit(main())
