"""Crash-safe file writes and the inter-process scope lock.

Paths may be str or Path. The hooks that only keep session state import this module, so it
does without pathlib and contextlib (with what they import, some 10 ms of a process).
"""

from __future__ import annotations

import errno
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable, Iterator

from . import errors

TEMP_SUFFIX = ".tmp"


def write_atomically(path: Path | str, data: bytes | str | Iterable[str], *, durable: bool = True,
                     sync_dir: bool = True) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never a mix. `data` may
    be text given in pieces (a derived file of 100,000 lines is then never held whole).

    Writes a temp file beside `path`, fsyncs it, renames it over `path` and fsyncs
    the directory. A symlink at `path` is replaced, never followed. `sync_dir=False`
    leaves the directory fsync to the caller, who may batch several renames. A full or
    read-only storage raises errors.NoSpace or errors.ReadOnly, and `path` is as it was.
    """
    try:
        _write_atomically(path, data, durable, sync_dir)
    except OSError as exc:
        problem = errors.storage_error(exc, path)
        if problem is None:
            raise
        raise problem from None


def _write_atomically(path: Path | str, data: bytes | str | Iterable[str], durable: bool, sync_dir: bool) -> None:
    pieces = [data.encode("utf-8") if isinstance(data, str) else data] if isinstance(data, (bytes, str)) else \
        _joined(data)
    directory = _directory_of(path)
    os.makedirs(directory, exist_ok=True)
    temp = _temp_name(path)
    mode = 0o644
    try:
        existing = os.lstat(path)
        if not os.path.islink(path):
            mode = existing.st_mode & 0o777
    except OSError:
        pass
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        for piece in pieces:
            view = memoryview(piece)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        unlink_quietly(temp)
        raise
    os.close(fd)
    try:
        os.replace(temp, path)
    except BaseException:
        unlink_quietly(temp)
        raise
    if durable and sync_dir:
        sync_directory(directory)


def _directory_of(path: Path | str) -> str:
    """The directory holding `path`: the working directory for a bare file name (whose dirname is
    "", which neither makedirs nor open accepts)."""
    return os.path.dirname(path) or os.curdir


def _temp_name(path: Path | str) -> str:
    """A temp file beside `path`, named after it and this process (see _writer_alive)."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.{os.getpid()}.{time.monotonic_ns() % 10**9}{TEMP_SUFFIX}")


def unlink_quietly(path: Path | str | bytes) -> None:
    """Delete a file if it can be; whatever stops it is left alone."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _joined(pieces: Iterable[str], size: int = 1 << 20) -> Iterator[bytes]:
    """Text given in many small pieces, as about `size` bytes at a time (a write per line would cost
    a system call each)."""
    held: list[str] = []
    count = 0
    for piece in pieces:
        held.append(piece)
        count += len(piece)
        if count >= size:
            yield "".join(held).encode("utf-8")
            held, count = [], 0
    if held:
        yield "".join(held).encode("utf-8")


def escapes(path: Path | str, root: Path | str) -> str | None:
    """Where `path` really leads when a symlink (of it, or of a directory between `root` and it)
    takes it outside `root`; None when it stays inside (or does not exist yet)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep):
        return None
    return real


def write_many(files: list[tuple[Path, bytes | str]]) -> None:
    """Replace many files at once, each atomically (readers see old or new, never a mix), with
    one flush of the file system instead of one fsync per file: every temp file reaches the disk
    before any of them is renamed into place, so a crash leaves each file old or new and whole."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            if isinstance(data, str):
                data = data.encode("utf-8")
            os.makedirs(_directory_of(path), exist_ok=True)
            temp = _temp_name(path)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
            temps.append((temp, path))
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        os.sync()
        for temp, path in temps:
            os.replace(temp, path)
    except BaseException:
        for temp, _ in temps:
            unlink_quietly(temp)
        raise
    for directory in {_directory_of(path) for _, path in temps}:
        sync_directory(directory)


def sync_directory(directory: Path | str) -> None:
    """fsync a directory so a rename or unlink in it survives a power cut."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_file(path: Path | str) -> bool:
    """Delete a file if it exists; True when something was removed."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def is_temp_name(name: str) -> bool:
    """Whether `name` is a temp file left by `write_atomically`."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def from_utf8(text: str) -> bool:
    """Whether text the system gave (a file name, a command-line argument) was UTF-8: Python
    hands other bytes on as lone surrogates, which no UTF-8 file, database or JSON can hold."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """Such text as it can be printed: its bytes that are not UTF-8 as \\xNN."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def remove_stale_temps(directory: Path) -> int:
    """Remove temp files of interrupted writes. Call only while holding the lock.

    A temp file of a live process is kept: some writes beside the memories (.gitignore,
    config.json) are not made under the scope lock."""
    removed = 0
    try:
        entries = os.scandir(directory)
    except OSError:
        return 0
    with entries:
        for entry in entries:
            try:
                if (is_temp_name(entry.name) and entry.is_file(follow_symlinks=False)
                        and not _writer_alive(entry.name)):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def _writer_alive(temp_name: str) -> bool:
    """Whether the process that named this temp file (`.<name>.<pid>.<n>.tmp`) still runs."""
    parts = temp_name.rsplit(".", 3)
    if len(parts) != 4 or not parts[1].isdigit() or int(parts[1]) == os.getpid():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    return True


HOOK_LOCK_SECONDS = 1.0  # a hook waits this long for a lock, then answers from what it has


HOLDER_SIZE = 512  # bytes of "pid start-time command" a lock holder writes into the lock file


class exclusive_lock:  # noqa: N801 - used as a function: `with exclusive_lock(path):`
    """Hold an exclusive advisory lock on `lock_path` for the duration of the block.

    Uses flock(2): the kernel drops the lock when the holder exits or is killed, so a crashed
    process can never leave the lock stuck. The holder writes who it is into the lock file, so
    a process that waits in vain can say who holds the lock and since when (a stopped process,
    Ctrl-Z, keeps it until it is resumed or ended).
    """

    def __init__(self, lock_path: Path | str, *, timeout: float = 30.0, what: str = "memory") -> None:
        self.lock_path, self.timeout, self.what = lock_path, timeout, what
        self.fd: int | None = None

    def __enter__(self) -> None:
        import fcntl

        os.makedirs(_directory_of(self.lock_path), exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            deadline = time.monotonic() + self.timeout
            pause = 0.001
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise
                    if time.monotonic() >= deadline:
                        raise errors.Busy(f"the {self.what} lock is held by {_holder(fd)}",
                                          "wait for it to finish; if that process is stopped (Ctrl-Z), resume it "
                                          "(`fg`, or `kill -CONT <pid>`) or end it, then retry") from None
                    time.sleep(pause)  # back off: polling keeps the wait killable and bounded
                    pause = min(pause * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        try:
            import sys

            # padded to a fixed size rather than truncated first: on ext4 a truncate to zero
            # followed by a write makes close() flush the file, on every lock taken
            holder = f"{os.getpid()} {time.time():.0f} {' '.join(sys.argv)[:200]}"
            os.pwrite(fd, holder.encode("utf-8", "replace")[:HOLDER_SIZE].ljust(HOLDER_SIZE), 0)
        except OSError:
            pass

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None


def _holder(fd: int) -> str:
    """Who holds a lock, from what the holder wrote into the lock file."""
    try:
        pid, started, command = (os.pread(fd, HOLDER_SIZE, 0).decode("utf-8", "replace").split(" ", 2) + ["", ""])[:3]
        seconds = max(0, int(time.time() - float(started)))
    except (OSError, ValueError):
        return "another process"
    return f"process {pid} ({command.strip() or 'unknown command'}) for {seconds} s"
