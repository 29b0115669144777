"""The caller's side of the hook server: a hook or `memory` command hands its work over and
waits for the exit status.

Why a server: a hook that reads the catalog spends 20-30 ms importing (sqlite3, pathlib, re and
the plugin's own modules) on top of a ~10 ms interpreter start, and Claude Code starts one on
every tool call; a `memory` command as much again. The server (hookserver.py, run by
hooks/_server.py) has imported all that once. A caller only starts Python, hands its stdin,
stdout, stderr and working directory (the descriptors themselves) with its arguments,
environment and umask over a Unix socket, and waits. The server forks a child per call, which
takes them over and runs what the caller would have run: a fresh process in all but the
imports (nothing is kept from one call to the next).

Rules:
- An accelerator, never a dependency: the caller does its work itself whenever no server
  listens, it refuses, or anything goes wrong before the child took the work over. With none
  listening, the caller starts one (detached, at most once per SPAWN_SECONDS).
- One server per plugin root, interpreter and Python start-up environment (PYTHON*, LANG,
  LC_*), listening in a private per-user directory of the temp directory:
  $TMPDIR/claude-memory-<uid>, mode 0700, owned by the user; anything else there, no server.
  On Linux the server also checks that each caller is the same user in the same namespaces: a
  caller sandboxed (bubblewrap) or contained runs its work inside its sandbox; and the child
  takes the caller's resource limits, niceness and CPU affinity.
- Once the child has it, the work is the caller's in all but the process: signals sent to the
  caller go to the child, the caller exits with the child's status or dies of its signal, and
  the child dies with the caller.
- MEMORY_HOOK_SERVER=off: nothing uses or starts a server.

This runs in every hook and command before anything else: only posix, sys and _socket are
imported (`os` alone costs 1.5 ms of a 10 ms interpreter start), paths are bytes.
"""

import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from typing import Mapping

SWITCH_ENV = b"MEMORY_HOOK_SERVER"  # "off": no server
SPAWN_SECONDS = 10.0  # a caller finding no server starts one at most this often
ACCEPT_SECONDS = 2.0  # a caller waits this long for a child to take its work over, then does it itself
PROTOCOL = b"memory-hook-1"
# The child replies ACCEPTED and its pid (4 bytes), the caller GO, and only then does the child
# run it: after GO the caller never does it itself, and without GO the child never runs it, so
# exactly one of them does. When the child has ended, the server sends EXITED and its exit
# status, or SIGNALLED and the signal it died of (one byte each).
ACCEPTED, GO, EXITED, SIGNALLED = b"A", b"G", b"X", b"S"
_MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes depending on the system
_STARTUP_VARIABLES = (b"LANG", b"LC_", b"PYTHON")  # what shapes a Python process as it starts


def enabled(environ: "Mapping[bytes, bytes]") -> bool:
    return environ.get(SWITCH_ENV, b"").lower() not in (b"off", b"0", b"no", b"false")


def runtime_directory(environ: "Mapping[bytes, bytes]") -> "bytes | None":
    """The user's private directory for server sockets, made if missing; None when it is not
    safely ours (another owner, open to others, a symlink, or not a directory)."""
    uid = posix.getuid()
    temporary = environ.get(b"TMPDIR") or b""
    if not temporary.startswith(b"/"):  # relative: it would name a directory inside each caller's project
        temporary = b"/tmp"
    directory = temporary.rstrip(b"/") + b"/claude-memory-%d" % uid
    try:
        posix.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        status = posix.lstat(directory)
    except OSError:
        return None
    if (status.st_mode & 0o170000) != 0o040000 or status.st_uid != uid or status.st_mode & 0o077:
        return None
    return directory


def server_key(root: bytes, executable: bytes, environ: "Mapping[bytes, bytes]") -> str:
    """16 hex digits naming the server for this plugin root, interpreter and start-up environment."""
    parts = [PROTOCOL, root, executable]
    parts += sorted(name + b"=" + value for name, value in environ.items() if name.startswith(_STARTUP_VARIABLES))
    digest = 0xCBF29CE484222325  # FNV-1a, 64 bits: no hashlib import on the hooks' path
    for byte in b"\0".join(parts):
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{digest:016x}"


def socket_path(root: str, environ: "Mapping[bytes, bytes]") -> "bytes | None":
    """Where the server for this plugin root and this interpreter listens (None: nowhere safe)."""
    directory = runtime_directory(environ)
    if directory is None:
        return None
    key = server_key(_encoded(root), _encoded(sys.executable), environ)
    path = directory + b"/hooks-" + key.encode() + b".sock"
    return path if len(path) <= _MAX_SOCKET_PATH else None


def _encoded(path: str) -> bytes:
    return path.encode(sys.getfilesystemencoding(), "surrogateescape")


def delegate(name: str, root: str, server_script: str, argv: "list[str] | None" = None,
             died: int = 0) -> "int | None":
    """Have the server run `name` (a hook, or "memory" and its `argv`) with this process's
    stdin, stdout, stderr, directory, umask and environment: its exit status, or None when this
    process must do it itself (with no server listening, one is started for the next time).
    A child that dies of a signal takes this process with it, of the same signal. `died`: the
    status when the server goes before telling how the child ended."""
    environ = posix.environ
    if not enabled(environ):
        return None
    path = socket_path(root, environ)
    if path is None:
        return None
    import _socket

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    if connection.fileno() <= 2:  # stdin, stdout or stderr is closed: the socket would be handed over as it
        connection.close()
        return None
    try:
        connection.settimeout(ACCEPT_SECONDS)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            start_server(path, server_script)
            return None
        return _handed_over(connection, encode_request(name, argv or [], environ), died)
    except OSError:
        return None
    finally:
        connection.close()


def _handed_over(connection: "_socket.socket", request: bytes, died: int) -> "int | None":
    import _socket

    try:
        directory = posix.open(".", posix.O_RDONLY)
    except OSError:
        return None  # no working directory to hand over: do it here
    try:
        descriptors = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, directory))
        sent = connection.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, descriptors)])
        connection.sendall(request[sent:])
    finally:
        posix.close(directory)
    accepted = read_exactly(connection, 5)
    if len(accepted) != 5 or accepted[:1] != ACCEPTED:
        return None  # refused, or not taken over in ACCEPT_SECONDS: the child will not run it
    with _SignalsPassedOn(int.from_bytes(accepted[1:], "big")) as signals:
        connection.sendall(GO)
        signals.commit()
        connection.settimeout(None)  # the child's now; a hook's timeout (Claude Code kills us) bounds the wait
        reply = read_exactly(connection, 2)
    if len(reply) == 2 and reply[:1] == EXITED:
        return reply[1]
    if len(reply) == 2 and reply[:1] == SIGNALLED:
        _die_of(reply[1])  # as the command or hook did
    return died


class _SignalsPassedOn:
    """While the child runs, an interrupt, termination or hangup sent to this process goes to the
    child (a Ctrl-C, a hook's timeout), as if the child were this process; one this process
    ignores (it was started ignoring it) is ignored. One that comes before the child is
    committed (GO sent) waits for it, or, if the hand-over fails, comes back here. Ctrl-Z stops
    the child too."""

    def __init__(self, child: int) -> None:
        self.child = child
        self.received: list[int] = []
        self.committed = False
        self.previous: dict[int, object] = {}

    def __enter__(self) -> "_SignalsPassedOn":
        import _signal

        for signal in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
            if _signal.getsignal(signal) != _signal.SIG_IGN:  # (`nohup`, `&` in a script: ignored by the work too)
                self.previous[signal] = _signal.signal(signal, self._received)
        if _signal.getsignal(_signal.SIGTSTP) == _signal.SIG_DFL:
            self.previous[_signal.SIGTSTP] = _signal.signal(_signal.SIGTSTP, self._stopped)
        return self

    def _stopped(self, signal: int, frame: object) -> None:
        """Ctrl-Z: the child stops with this process and goes on when it does (a SIGTSTP would not
        stop the child: it is in no terminal's foreground)."""
        import _signal

        self._pass_on(_signal.SIGSTOP)
        _signal.signal(signal, _signal.SIG_DFL)
        posix.kill(posix.getpid(), signal)  # (stops here until continued)
        _signal.signal(signal, self._stopped)
        self._pass_on(_signal.SIGCONT)

    def _received(self, signal: int, frame: object) -> None:
        self.received.append(signal)
        if self.committed:
            self._pass_on(signal)

    def commit(self) -> None:
        import _signal

        # held while the ones received so far are passed on: one arriving meanwhile is passed on
        # by its handler once, not by the handler and this loop both
        held = _signal.pthread_sigmask(_signal.SIG_BLOCK, self.previous)
        try:
            self.committed = True
            for signal in self.received:
                self._pass_on(signal)
        finally:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, held)

    def _pass_on(self, signal: int) -> None:
        try:
            posix.kill(self.child, signal)
        except OSError:
            pass

    def __exit__(self, *exc: object) -> None:
        import _signal

        for signal, handler in self.previous.items():
            _signal.signal(signal, handler)
        if not self.committed:
            for signal in self.received:
                posix.kill(posix.getpid(), signal)


def _die_of(signal: int) -> None:
    import _signal

    try:
        _signal.signal(signal, _signal.SIG_DFL)
        posix.kill(posix.getpid(), signal)
    except (OSError, ValueError):
        pass


def read_exactly(connection: "_socket.socket", size: int) -> bytes:
    """`size` bytes, or fewer when the peer closes, fails or times out first."""
    data = b""
    while len(data) < size:
        try:
            chunk = connection.recv(size - len(data))
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def encode_request(name: str, argv: "list[str]", environ: "Mapping[bytes, bytes]") -> bytes:
    """The request, length first: protocol, name, umask, argument count, arguments, environment."""
    mask = posix.umask(0)
    posix.umask(mask)
    fields = [PROTOCOL, name.encode(), b"%d" % mask, b"%d" % len(argv)]
    fields += [_encoded(argument) for argument in argv]
    fields += [key + b"=" + value for key, value in environ.items()]
    body = b"\0".join(fields)
    return len(body).to_bytes(4, "big") + body


def start_server(path: bytes, server_script: str) -> None:
    """Start a detached server for `path` unless one was started in the last SPAWN_SECONDS."""
    import os
    import time

    marker = path[:-len(b".sock")] + b".started"
    try:
        if time.time() - os.stat(marker).st_mtime < SPAWN_SECONDS:
            return
    except OSError:
        pass
    try:
        with open(marker, "wb"):
            pass
        # in UTF-8 mode, as bin/memory and hooks/run start the commands and hooks it runs
        os.posix_spawn(sys.executable, [sys.executable, "-S", "-X", "utf8", server_script], os.environ, setsid=True,
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_DUP2, 1, 2)])
    except (OSError, AttributeError):  # (AttributeError: no posix_spawn on this system)
        pass
