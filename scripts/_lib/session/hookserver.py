"""The hook server's side (why a server, and its rules: hookclient.py).

hooks/_server.py runs it: `preload()` the hooks' modules, a `Listener` yields each hook's
connection, and a child forked per connection does `take_over()`, `adopt()`, answers the
hook and `report_exit()`s. The server leaves when idle (MEMORY_HOOK_SERVER_IDLE seconds, 900
by default), when one of its code files changes, or when its socket is removed or replaced.
"""

from __future__ import annotations

import os
import sys

from .hookclient import ACCEPT_SECONDS, ACCEPTED, EXITED, GO, PROTOCOL, read_exactly

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from typing import Iterable, Iterator, Mapping

IDLE_ENV = "MEMORY_HOOK_SERVER_IDLE"
IDLE_SECONDS = 900.0
CHECK_SECONDS = 30.0  # how often an idle server looks at its socket and code

PRELOAD = (  # what the hooks import between them (a module left out is imported by each child that needs it)
    "_lib.session.handlers", "_lib.session.gotchas", "_lib.session.guard", "_lib.session.injection",
    "_lib.session.capture", "_lib.session.bashguard", "_lib.session.state", "_lib.session.output",
    "_lib.model.frontmatter", "_lib.model.predecessor", "_lib.ops.entrypoint", "_lib.ops.links",
    "_lib.ops.lookup", "_lib.ops.search", "_lib.ops.store", "_lib.catalog.catalog", "_lib.catalog.queries",
    "_lib.catalog.readable", "_lib.catalog.rollback", "_lib.workspace.runtime", "_lib.base.redact",
    "bisect", "fcntl", "shlex", "signal", "traceback", "_sha256")


def preload() -> None:
    """Import what the hooks use and compile their regular expressions, then keep it all out of the
    garbage collector's sight: a child that walked those objects would copy the pages holding them."""
    import gc
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from ..base.text import LazyPattern

    LazyPattern.compile_declared()
    gc.freeze()


class Listener:
    """The server's socket at `path` (bound beside it, then renamed into place: a hook connects
    to a listening server or to nothing). `connections()` yields each hook's connection until the
    server has been idle `idle` seconds, its socket is gone or replaced, or its code (the
    modules it loaded from under `code`) changed."""

    def __init__(self, path: bytes, *, idle: float, code: str) -> None:
        import _socket

        self.path = path
        self.idle = idle
        temporary = path + b".%d" % os.getpid()
        _remove(temporary)
        self.socket = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.socket.bind(temporary)
        self.socket.listen(128)
        os.rename(temporary, path)
        self.inode = os.stat(path).st_ino
        self.code = code_files(code)

    def connections(self) -> Iterator[_socket.socket]:
        import _socket
        import signal
        import time

        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
        last = time.monotonic()
        while True:
            wait = min(CHECK_SECONDS, last + self.idle - time.monotonic())
            if wait <= 0:
                return
            self.socket.settimeout(wait)
            try:
                fd, _ = self.socket._accept()  # type: ignore[attr-defined]  # (C level: no socket module)
            except TimeoutError:
                if not self.current():
                    return
                continue
            except InterruptedError:
                continue
            connection = _socket.socket(fileno=fd)
            if code_changed(self.code):  # this hook answers itself; the next one starts a new server
                connection.close()
                return
            if not trusted_peer(connection):
                connection.close()
                continue
            last = time.monotonic()
            yield connection

    def current(self) -> bool:
        """Whether the socket file is still this server's and its code unchanged."""
        try:
            return os.stat(self.path).st_ino == self.inode and not code_changed(self.code)
        except OSError:
            return False

    def release(self) -> None:
        """In a child: let go of the listening socket."""
        self.socket.close()

    def close(self) -> None:
        try:
            if os.stat(self.path).st_ino == self.inode:
                _remove(self.path)
        except OSError:
            pass
        self.socket.close()


def _remove(path: bytes) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def take_over(connection: _socket.socket) -> Request | None:
    """In the child: read the hook's request and commit to answering it (the hook's GO after
    ACCEPTED); None when the request is unknown or the hook gave up waiting."""
    from .handlers import HANDLERS

    connection.settimeout(ACCEPT_SECONDS)
    try:
        request = receive_request(connection)
        if request is None:
            return None
        if request.name not in HANDLERS:
            _discard(request.descriptors)
            return None
        connection.sendall(ACCEPTED)
        if read_exactly(connection, 1) != GO:
            _discard(request.descriptors)
            return None
        connection.settimeout(None)
    except OSError:
        return None
    return request


def report_exit(connection: _socket.socket, code: int) -> None:
    try:
        connection.sendall(EXITED + bytes([code & 0xFF]))
    except OSError:
        pass


class Request:
    """A hook handed over: its name, umask, environment and descriptors (stdin, stdout, stderr, cwd)."""

    def __init__(self, name: str, umask: int, env: dict[str, str], descriptors: list[int]) -> None:
        self.name, self.umask, self.env, self.descriptors = name, umask, env, descriptors


def decode_request(body: bytes, descriptors: list[int]) -> Request | None:
    fields = body.split(b"\0")
    if len(fields) < 3 or fields[0] != PROTOCOL or len(descriptors) != 4:
        return None
    env = {}
    for field in fields[3:]:
        key, equals, value = field.partition(b"=")
        if equals and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    try:
        return Request(fields[1].decode(), int(fields[2]), env, descriptors)
    except ValueError:
        return None


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


def adopt(request: Request) -> None:
    """Become the hook process: its descriptors as 0, 1, 2, its directory, umask and environment."""
    import time

    stdin, stdout, stderr, directory = request.descriptors
    for target, fd in enumerate((stdin, stdout, stderr)):
        os.dup2(fd, target)
    os.fchdir(directory)
    _discard(fd for fd in request.descriptors if fd > 2)
    os.umask(request.umask)
    for name in [name for name in os.environ if name not in request.env]:
        del os.environ[name]
    for name, value in request.env.items():
        if os.environ.get(name) != value:  # (most are the same as the server's: it started from a hook)
            os.environ[name] = value
    time.tzset()  # local time as the hook's TZ says


NAMESPACES = ("mnt", "net", "user", "pid")  # a peer in another of these is sandboxed or contained


def trusted_peer(connection: _socket.socket) -> bool:
    """On Linux, whether the peer runs as this user and in this process's namespaces: a hook
    in a sandbox (bubblewrap) or a container of its own answers inside it, never through a
    child out here. Elsewhere the directory's mode decides."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return True
    credentials = connection.getsockopt(_socket.SOL_SOCKET, option, 12)  # pid, uid, gid
    pid = int.from_bytes(credentials[0:4], sys.byteorder)
    if int.from_bytes(credentials[4:8], sys.byteorder) != os.getuid():
        return False
    try:
        return all(os.readlink(f"/proc/{pid}/ns/{kind}") == os.readlink(f"/proc/self/ns/{kind}")
                   for kind in NAMESPACES)
    except OSError:
        return False  # cannot tell: the hook answers itself


def code_files(root: str) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every module file under `root` this process has loaded."""
    stamps = {}
    prefix = os.path.join(root, "")
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.startswith(prefix):
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
