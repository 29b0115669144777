"""The hook server's side (why a server, and its rules: hookclient.py).

hooks/_server.py runs it: `preload()` what the hooks and commands import, a `Listener` yields
each caller's connection, and a child forked per connection does `take_over()`, `adopt()` and
runs the hook or command; the Listener gives the caller the child's exit status. The server
leaves when idle (MEMORY_HOOK_SERVER_IDLE seconds, 900 by default), when one of its code
files changes, or when its socket is removed or replaced; a leaving server stops listening at
once but waits for its running children (`drain()`): a command it runs outlives it.
"""

from __future__ import annotations

import os
import sys

from ..base.fsutil import unlink_quietly
from .hookclient import ACCEPT_SECONDS, ACCEPTED, EXITED, GO, PROTOCOL, SIGNALLED, read_exactly

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    import io
    from typing import Any, BinaryIO, Container, Iterable, Iterator, Mapping

IDLE_ENV = "MEMORY_HOOK_SERVER_IDLE"
IDLE_SECONDS = 900.0
CHECK_SECONDS = 30.0  # how often an idle server looks at its socket and code

PRELOAD = (  # what the hooks import between them (a module left out is imported by each child that needs it)
    "_lib.session.handlers", "_lib.session.gotchas", "_lib.session.guard", "_lib.session.injection",
    "_lib.session.capture", "_lib.session.bashguard", "_lib.session.state", "_lib.session.output",
    "_lib.model.frontmatter", "_lib.model.predecessor", "_lib.ops.entrypoint", "_lib.ops.links",
    "_lib.ops.lookup", "_lib.ops.search", "_lib.ops.store", "_lib.catalog.catalog", "_lib.catalog.queries",
    "_lib.catalog.readable", "_lib.catalog.rollback", "_lib.workspace.runtime", "_lib.base.redact",
    "_lib.tasks.validation", "_lib.tasks.trust", "_lib.ops.retention", "_lib.session.bootstrap",
    "_lib.vectors.backfill", "_lib.vectors.embedded", "unicodedata", "bisect", "fcntl", "resource", "select",
    "shlex", "signal", "traceback", "_sha256")


MAX_SERVERS = 8  # per user and temp directory (each holds some 20 MB): past it, callers do their work themselves


def servers_running(directory: bytes) -> int:
    """How many servers hold their lock in `directory` (this one included, once it holds its own):
    plugin copies, interpreters and start-up environments each have one."""
    import fcntl

    running = 0
    for name in os.listdir(directory):
        if not name.endswith(b".lock"):
            continue
        try:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            running += 1  # held: a server runs (or starts)
        finally:
            os.close(fd)
    return running


def reset_signals() -> None:
    """Signals as a process starts with them, whoever started the server: its first caller may
    ignore some (`nohup`, `&` in a script) or block them, and the children, which serve every
    later caller, would inherit that (a caller's own ignoring is kept: it does not pass them on)."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


def preload(more: Iterable[str] = ()) -> None:
    """Import what the hooks use (and the modules `more` names) and compile their regular
    expressions, then keep it all out of the garbage collector's sight: a child that walked
    those objects would copy the pages holding them."""
    import gc
    import importlib

    for name in (*PRELOAD, *more):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from ..base.text import LazyPattern

    LazyPattern.compile_declared()
    try:
        rehearse()
    except Exception:  # noqa: BLE001 - a rehearsal that fails leaves the children a little slower, no worse
        pass
    gc.freeze()


_REHEARSED_MEMORY = """---
type: gotcha
tags:
  - auth
  - tokens
created: "2026-01-01T00:00:00Z"
updated: "2026-01-01T00:00:00Z"
---

# Token refresh must be serialised per user

Two concurrent refreshes revoke each other: one in-flight refresh per user.
"""


def rehearse() -> None:
    """Run the hooks that sit on every tool call and prompt a few times, here, on a throwaway
    project in a temporary directory. Python 3.11 rewrites a function's bytecode for the types
    it meets over its first runs; done once here, each child starts from the rewritten code
    instead of writing it (1.5 ms of a per-prompt hook at 10,000 memories). Nothing outside the
    temporary directory is read or written, and every file and database it opens is closed."""
    import shutil
    import tempfile

    from .handlers import HANDLERS
    from .hookio import HookRun

    base = tempfile.mkdtemp(prefix="memory-rehearsal-")
    try:
        project = os.path.join(base, "project")
        memories = os.path.join(project, ".claude", "memory")
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(memories)
        os.makedirs(os.path.join(project, "src", "auth"))
        source = os.path.join(project, "src", "auth", "login.ts")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("export async function login() { return refreshToken(); }\n")
        for number in range(3):
            with open(os.path.join(memories, f"gotcha-token-refresh-{number}.md"), "w", encoding="utf-8") as handle:
                handle.write(_REHEARSED_MEMORY.replace("per user", f"per user {number}"))
        env = {"HOME": os.path.join(base, "home"), "CLAUDE_PLUGIN_DATA": os.path.join(base, "data"),
               "CLAUDE_PROJECT_DIR": project, "PATH": os.environ.get("PATH", "")}
        common = {"cwd": project, "transcript_path": os.path.join(base, "t.jsonl"), "permission_mode": "default"}
        calls: list[tuple[str, dict[str, Any]]] = [("memory-prompt-context", {"hook_event_name": "UserPromptSubmit",
                                            "prompt": "Why must the token refresh be serialised per user?"}),
                 ("memory-context", {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                     "tool_input": {"file_path": source}}),
                 ("memory-context-bash", {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                          "tool_input": {"command": "npm test src/auth/login.ts"},
                                          "tool_response": {"stdout": "", "stderr": "token refresh failed"}}),
                 ("protect-memory-directory", {"hook_event_name": "PreToolUse", "tool_name": "Edit",
                                               "tool_input": {"file_path": source, "old_string": "a",
                                                              "new_string": "b"}}),
                 ("clear-memory-check-flag", {"hook_event_name": "PostToolUse", "tool_name": "Edit",
                                              "tool_input": {"file_path": source}}),
                 ("memory-skill-reminder", {"hook_event_name": "UserPromptSubmit", "prompt": "go on"})]
        for round_ in range(REHEARSALS):
            for name, payload in calls:
                run = HookRun(env, name)
                HANDLERS[name]({**common, "session_id": f"rehearsal-{round_}", **payload}, run)
                for workspace in run.workspaces:  # (a journal stays open on its workspace until the process ends)
                    if workspace.opened_journal is not None:
                        workspace.opened_journal.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


REHEARSALS = 3


class Listener:
    """The server's socket at `path` (bound beside it, then renamed into place: a caller connects
    to a listening server or to nothing). `connections()` yields each caller's connection, with
    its pid (0 where it is not known), until the server has been idle `idle` seconds with no
    child running, its socket is gone or replaced, or its code (the modules it loaded from under
    `code`) changed. The child forked for a connection is `watch()`ed: when it ends, its caller
    gets its exit status, or the signal it died of."""

    def __init__(self, path: bytes, *, idle: float, code: str) -> None:
        import _socket

        self.path = path
        self.idle = idle
        temporary = path + b".%d" % os.getpid()
        unlink_quietly(temporary)
        self.socket = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.socket.bind(temporary)
        self.socket.listen(128)
        os.rename(temporary, path)
        self.inode = os.stat(path).st_ino
        self.code = code_files(code)
        self.children: dict[int, _socket.socket] = {}
        self.wakeup = os.pipe()  # a byte when a child ends (signal.set_wakeup_fd)

    def connections(self) -> Iterator[tuple[_socket.socket, int]]:
        import _socket
        import select
        import signal
        import time

        for fd in self.wakeup:
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wakeup[1], warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # (the wakeup descriptor tells)
        last = time.monotonic()
        while True:
            self._reap()
            if self.children:
                last = time.monotonic()
            wait = min(CHECK_SECONDS, last + self.idle - time.monotonic())
            if wait <= 0:
                return
            ready, _, _ = select.select([self.socket.fileno(), self.wakeup[0]], [], [], wait)
            if self.wakeup[0] in ready:
                while _drained(self.wakeup[0]):
                    pass
            if self.socket.fileno() not in ready:
                if not ready and not self.current():
                    return
                continue
            try:
                fd, _ = self.socket._accept()  # type: ignore[attr-defined]  # (C level: no socket module)
            except OSError:
                continue
            connection = _socket.socket(fileno=fd)
            if code_changed(self.code):  # this caller does it itself; the next one starts a new server
                connection.close()
                return
            peer = trusted_peer(connection)
            if peer is None:
                connection.close()
                continue
            yield connection, peer

    def watch(self, child: int, connection: _socket.socket) -> None:
        """Keep `connection` until `child` ends, then give its caller the exit status."""
        self.children[child] = connection

    def _reap(self) -> None:
        while True:
            try:
                child, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not child:
                return
            self._report(child, status)

    def drain(self) -> None:
        """Wait for the children still running (the server leaves, its socket closed): each caller
        is told how its child ended, as it would have been had the server stayed."""
        while self.children:
            try:
                child, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return
            self._report(child, status)

    def _report(self, child: int, status: int) -> None:
        connection = self.children.pop(child, None)
        if connection is None:
            return
        if os.WIFSIGNALED(status):
            reply = SIGNALLED + bytes([os.WTERMSIG(status)])
        else:
            reply = exited(os.waitstatus_to_exitcode(status))
        try:
            connection.sendall(reply)
        except OSError:
            pass
        connection.close()

    def current(self) -> bool:
        """Whether the socket file is still this server's and its code unchanged."""
        try:
            return os.stat(self.path).st_ino == self.inode and not code_changed(self.code)
        except OSError:
            return False

    def release(self) -> None:
        """In a child: let go of the server's socket, its children and signal handling."""
        import signal

        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # its own subprocesses are waited for
        self.socket.close()
        for fd in self.wakeup:
            os.close(fd)
        for connection in self.children.values():
            connection.close()
        self.children.clear()

    def close(self) -> None:
        try:
            if os.stat(self.path).st_ino == self.inode:
                unlink_quietly(self.path)
        except OSError:
            pass
        self.socket.close()


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except OSError:
        return False


def exited(code: int) -> bytes:
    """The reply that tells a caller its work ended with exit status `code`."""
    return EXITED + bytes([code & 0xFF])


def report_exit(connection: _socket.socket, code: int) -> None:
    """In the child, its work done: the exit status, sent before the process ends (unmapping a
    process takes a millisecond). The server's own report of the end comes after, unread; it
    is the one the caller reads when the child dies without saying (a signal)."""
    try:
        connection.sendall(exited(code))
    except OSError:
        pass


def take_over(connection: _socket.socket, peer: int, known: Container[str]) -> Request | None:
    """In the child: read the request and commit to it (the caller's GO after ACCEPTED); None when
    it names nothing `known`, the caller's resource limits or scheduling cannot be had, or the
    caller gave up."""
    connection.settimeout(ACCEPT_SECONDS)
    try:
        request = receive_request(connection)
        if request is None:
            return None
        if request.name not in known or not take_limits(peer) or not take_scheduling(peer):
            _discard(request.descriptors)
            return None
        os.fchdir(request.descriptors[3])  # (a directory it may not enter: the caller finds out itself)
        connection.sendall(ACCEPTED + os.getpid().to_bytes(4, "big"))
        # No time limit on GO: a caller that sent it after one would wait for a child that left.
        # The caller either says GO or closes (it gave up, or died): both reach the child.
        connection.settimeout(None)
        if read_exactly(connection, 1) != GO:
            _discard(request.descriptors)
            return None
    except OSError:
        return None
    return request


class Request:
    """What was handed over: a name (a hook's, or "memory"), the arguments, umask, environment
    and descriptors (stdin, stdout, stderr, working directory)."""

    def __init__(self, name: str, argv: list[str], umask: int, env: dict[str, str], descriptors: list[int]) -> None:
        self.name, self.argv, self.umask, self.env, self.descriptors = name, argv, umask, env, descriptors


def decode_request(body: bytes, descriptors: list[int]) -> Request | None:
    fields = body.split(b"\0")
    if len(fields) < 4 or fields[0] != PROTOCOL or len(descriptors) != 4:
        return None
    try:
        name, umask, count = fields[1].decode(), int(fields[2]), int(fields[3])
    except ValueError:
        return None
    if not 0 <= count <= len(fields) - 4:
        return None
    argv = [os.fsdecode(argument) for argument in fields[4:4 + count]]
    env = {}
    for field in fields[4 + count:]:
        key, equals, value = field.partition(b"=")
        if equals and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    return Request(name, argv, umask, env, descriptors)


def receive_request(connection: _socket.socket) -> Request | None:
    """Read one request (the child does, so a slow client delays no other hook); None if malformed."""
    import _socket

    space = _socket.CMSG_SPACE(4 * 4)
    descriptors: list[int] = []
    data, ancillary, _, _ = connection.recvmsg(65536, space)
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            descriptors += [int.from_bytes(payload[i:i + 4], sys.byteorder) for i in range(0, len(payload) - 3, 4)]
    if len(data) < 4:
        data += read_exactly(connection, 4 - len(data))
    size = int.from_bytes(data[:4], "big")
    if size > 16 * 1024 * 1024:
        _discard(descriptors)
        return None
    body = data[4:]
    if len(body) < size:
        body += read_exactly(connection, size - len(body))
    request = decode_request(body, descriptors) if len(body) == size else None
    if request is None:
        _discard(descriptors)
    return request


def _discard(descriptors: Iterable[int]) -> None:
    for fd in descriptors:
        try:
            os.close(fd)
        except OSError:
            pass


def adopt(request: Request, connection: _socket.socket) -> None:
    """Become the caller's process: its descriptors as 0, 1, 2 (and sys.stdin, stdout, stderr
    made on them as Python makes them at start-up), umask and environment; and die with it."""
    import time

    for target, fd in enumerate(request.descriptors[:3]):  # (take_over has entered its directory)
        os.dup2(fd, target)
    _discard(fd for fd in request.descriptors if fd > 2)
    os.umask(request.umask)
    for name in [name for name in os.environ if name not in request.env]:
        del os.environ[name]
    for name, value in request.env.items():
        if os.environ.get(name) != value:  # (most are the same as the server's: it started from a hook)
            os.environ[name] = value
    time.tzset()  # local time as the caller's TZ says
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        stream = _stdio(fd, getattr(sys, name))  # (the server's own: made by Python at start-up)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    _die_with_caller(connection)


def _stdio(fd: int, old: io.TextIOWrapper) -> io.TextIOWrapper:
    """sys.stdin, stdout or stderr on descriptor `fd`, as Python makes it at start-up: encoding
    and errors as the server's (the same start-up environment), buffering as the descriptor
    asks (a terminal's lines at once), stdout and stderr unbuffered under -u."""
    import io

    raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
    unbuffered = fd > 0 and old.write_through  # (PYTHONUNBUFFERED: in the start-up environment too)
    buffer: BinaryIO = raw if unbuffered else io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffer, encoding=old.encoding, errors=old.errors, newline="\n",
                            line_buffering=not unbuffered and (fd == 2 or raw.isatty()), write_through=unbuffered)


def _die_with_caller(connection: _socket.socket) -> None:
    """End this process when the caller's does, as if the caller's own process were killed. The
    caller sends nothing after GO, so its connection turns readable only when it closes; with
    O_ASYNC that raises SIGIO, which ends a process (by default on Linux; elsewhere a handler)."""
    import _socket
    import fcntl
    import signal

    fd = connection.fileno()
    signal.signal(signal.SIGIO, signal.SIG_DFL if sys.platform.startswith("linux") else lambda *_: os._exit(1))
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    try:
        if connection.recv(1, _socket.MSG_PEEK | _socket.MSG_DONTWAIT) == b"":
            os._exit(1)  # it closed before O_ASYNC was set: no signal will come
    except OSError:  # (BlockingIOError: it is there)
        pass


_LIMITS = {"Max cpu time": "RLIMIT_CPU", "Max file size": "RLIMIT_FSIZE", "Max data size": "RLIMIT_DATA",
           "Max stack size": "RLIMIT_STACK", "Max core file size": "RLIMIT_CORE", "Max processes": "RLIMIT_NPROC",
           "Max open files": "RLIMIT_NOFILE", "Max locked memory": "RLIMIT_MEMLOCK",
           "Max address space": "RLIMIT_AS"}


def take_limits(peer: int) -> bool:
    """Take the caller's resource limits (`ulimit`), read from /proc on Linux: False when one
    cannot be had (above this process's hard limit). Elsewhere they are not known: True."""
    try:
        wanted, own = _read(f"/proc/{peer}/limits"), _read("/proc/self/limits")
    except OSError:
        return not peer  # a known peer whose limits cannot be read: it does the work itself
    if wanted == own:  # (nearly always: the server started from a caller like this one)
        return True
    import resource

    for line in wanted.decode("ascii", "replace").splitlines()[1:]:
        name = line[:26].strip()
        if name not in _LIMITS:
            continue
        kind = getattr(resource, _LIMITS[name])
        try:
            soft, hard = (resource.RLIM_INFINITY if value == "unlimited" else int(value) for value in line[26:].split()[:2])
            if (soft, hard) != resource.getrlimit(kind):
                resource.setrlimit(kind, (soft, hard))
        except (ValueError, OSError):
            return False
    return True


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536)
    finally:
        os.close(fd)


def take_scheduling(peer: int) -> bool:
    """Take the caller's niceness and the CPUs it may run on (`nice`, `taskset`): a command
    started to run in the background of the machine stays there. False when they cannot be had
    (a niceness below this process's needs privilege); where the caller is not known, True."""
    if not peer:
        return True
    try:
        niceness = os.getpriority(os.PRIO_PROCESS, peer)
        if niceness != os.getpriority(os.PRIO_PROCESS, 0):
            os.setpriority(os.PRIO_PROCESS, 0, niceness)
        if hasattr(os, "sched_getaffinity"):  # (Linux)
            cpus = os.sched_getaffinity(peer)
            if cpus != os.sched_getaffinity(0):
                os.sched_setaffinity(0, cpus)
    except OSError:
        return False
    return True


NAMESPACES = ("mnt", "net", "user", "pid")  # a peer in another of these is sandboxed or contained


def trusted_peer(connection: _socket.socket) -> int | None:
    """The peer's pid when it runs as this user and in this process's namespaces (on Linux: a
    caller in a sandbox, bubblewrap, or a container of its own does its work inside it, never
    through a child out here); elsewhere 0, the directory's mode deciding; None: not trusted."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return 0
    credentials = connection.getsockopt(_socket.SOL_SOCKET, option, 12)  # pid, uid, gid
    pid = int.from_bytes(credentials[0:4], sys.byteorder)
    if int.from_bytes(credentials[4:8], sys.byteorder) != os.getuid():
        return None
    try:
        if all(os.readlink(f"/proc/{pid}/ns/{kind}") == os.readlink(f"/proc/self/ns/{kind}") for kind in NAMESPACES):
            return pid
    except OSError:
        pass
    return None  # cannot tell: the caller does its work itself


def code_files(root: str) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every module file under `root` this process has loaded, and of the
    interpreter (an upgrade, or a virtualenv removed)."""
    stamps = {}
    prefix = os.path.join(root, "")
    for path in [getattr(module, "__file__", None) for module in list(sys.modules.values())] + [sys.executable]:
        if isinstance(path, str) and (path.startswith(prefix) or path == sys.executable):
            try:
                status = os.stat(path)
            except OSError:
                continue
            stamps[path] = (status.st_mtime_ns, status.st_size)
    return stamps


def code_changed(stamps: Mapping[str, tuple[int, int]]) -> bool:
    for path, stamp in stamps.items():
        try:
            status = os.stat(path)
        except OSError:
            return True
        if (status.st_mtime_ns, status.st_size) != stamp:
            return True
    return False


def idle_seconds(env: Mapping[str, str]) -> float:
    try:
        return max(0.0, float(env.get(IDLE_ENV, IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS
