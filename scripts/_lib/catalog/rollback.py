"""All or nothing for the memory files of one command: when a step fails, every file is put back.

A command may change several files: a link writes both memories, a write adds back-links and
marks a superseded memory, a delete edits every memory that links to the one it removes. Inside
`all_or_nothing`, the files written or removed through `write` and `remove` are put back as they
were when anything raises (a full disk, a failed check, the catalog or an export failing,
Ctrl-C), and the catalog is told. The old file is kept as a hard link beside it until the command
ends: putting it back is a rename, which needs no free space. Where hard links are not supported
its bytes are kept in memory instead.

The hard links are named like `write_atomically`'s temp files, so those of a killed process are
removed by the next command that takes the lock.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

    from .catalog import Catalog

from ..base import errors, fsutil
from ..model import frontmatter, memory

_ABSENT = None  # the file did not exist: putting it back removes it
_copies = itertools.count(1)  # numbers the kept copies of this process


class Journal:
    """What the files changed so far looked like before."""

    def __init__(self) -> None:
        self.kept: dict[Path, Path | bytes | None] = {}  # path -> hard link to the old file, its bytes, or absent

    def keep(self, path: Path) -> None:
        """Remember `path` as it is now, unless already remembered (the first state is the one to restore)."""
        if path in self.kept:
            return
        if not os.path.lexists(path):
            self.kept[path] = _ABSENT
            return
        copy = path.parent / f".{path.name}.{os.getpid()}.undo{next(_copies)}{fsutil.TEMP_SUFFIX}"
        try:
            os.link(path, copy, follow_symlinks=False)
        except OSError:
            self.kept[path] = path.read_bytes()
        else:
            self.kept[path] = copy

    def adopt(self, inner: Journal) -> None:
        """Take over what a nested block kept, for the files this one had not kept yet."""
        for path, old in inner.kept.items():
            if path in self.kept:
                _discard(old)
            else:
                self.kept[path] = old

    def discard(self) -> None:
        """The command succeeded: drop the kept copies."""
        for old in self.kept.values():
            _discard(old)
        self.kept = {}

    def undo(self) -> list[Path]:
        """Put every file back (latest change first); returns the files that could not be."""
        failed = []
        for path, old in reversed(list(self.kept.items())):
            try:
                if old is _ABSENT:
                    fsutil.remove_file(path)
                elif isinstance(old, Path):
                    if _same_file(old, path):  # never replaced (rename would do nothing: same inode)
                        os.unlink(old)
                    else:
                        os.replace(old, path)
                else:
                    fsutil.write_atomically(path, old, sync_dir=False)
            except OSError:
                failed.append(path)
        for directory in {path.parent for path in self.kept}:
            fsutil.sync_directory(directory)
        return failed


def _same_file(first: Path, second: Path) -> bool:
    try:
        one, other = os.lstat(first), os.lstat(second)
    except OSError:
        return False
    return (one.st_dev, one.st_ino) == (other.st_dev, other.st_ino)


def _discard(old: Path | bytes | None) -> None:
    if isinstance(old, Path):
        with contextlib.suppress(OSError):
            os.unlink(old)


_open: list[Journal] = []  # innermost last; a command runs in one thread


def keep(path: Path) -> None:
    """Inside `all_or_nothing`, have `path` put back too if the command fails (a file that holds
    knowledge but is written elsewhere: the earlier plugin's graph.json)."""
    if _open:
        _open[-1].keep(path)


def write(path: Path, text: str | bytes) -> None:
    """Replace (or create) a memory file atomically; inside `all_or_nothing` it can be put back.
    The directory is synced by Catalog.export() at the end of the command."""
    keep(path)
    fsutil.write_atomically(path, text, sync_dir=False)


def rewrite(catalog: Catalog, item: memory.Memory, changes: dict[str, Any], *,
            body: str | None = None) -> memory.Memory:
    """Make `changes` to the frontmatter of a memory file (and, given `body`, its body), losslessly
    (frontmatter.rewrite), written with `write`; the file is read back and recorded in the catalog."""
    text = frontmatter.rewrite(item.document, changes, body=body, quoted=memory.TIMESTAMP_FIELDS,
                               name=f"memory file {item.path}")
    write(item.path, text)
    rewritten = memory.read_file(item.path, catalog.scope.name, root=catalog.scope.root)
    catalog.record(rewritten)
    return rewritten


def remove(path: Path) -> bool:
    """Delete a memory file; inside `all_or_nothing` it can be put back."""
    keep(path)
    return fsutil.remove_file(path)


@contextlib.contextmanager
def all_or_nothing(catalog: Catalog) -> Iterator[None]:
    """Run the block holding the scope lock; if it raises, put the memory files it changed back,
    re-read them into the catalog, and re-raise."""
    journal = Journal()
    _open.append(journal)
    try:
        yield
    except BaseException as exc:
        import sqlite3

        _open.remove(journal)
        slugs = _slugs(journal)
        failed = journal.undo()
        _resync(catalog, journal, slugs)
        if failed:
            reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise errors.Error(f"the command failed ({reason}) and {len(failed)} file(s) could not be put back: "
                               + ", ".join(str(path) for path in failed),
                               "run `memory health` to see what the files hold now") from exc
        storage = errors.storage_error(exc, catalog.scope.root) if isinstance(exc, (OSError, sqlite3.Error)) \
            else None
        if storage is not None:  # a full or read-only disk refused a step: the typed error, with its hint
            raise storage from exc
        raise
    else:
        _open.remove(journal)
        if _open:
            _open[-1].adopt(journal)
        else:
            journal.discard()


def _slugs(journal: Journal) -> dict[Path, str]:
    """The slugs of the files the command created (read before they are removed again)."""
    found = {}
    for path, old in journal.kept.items():
        if old is _ABSENT:
            with contextlib.suppress(errors.Error, OSError):
                found[path] = memory.read_file(path, "").slug
    return found


def _resync(catalog: Catalog, journal: Journal, created: dict[Path, str]) -> None:
    """Bring the catalog and its exports back in step with the files put back (best effort: when
    this fails too, the next command's scan finds the changed stamps)."""
    import sqlite3

    for path in journal.kept:
        if path.suffix != ".md":
            continue  # e.g. the earlier plugin's graph.json: the next sync sees it changed and reads it
        with contextlib.suppress(errors.Error, OSError, sqlite3.Error):
            if path in created:
                entry = catalog.get(created[path])
                if entry is not None and entry.path == path:
                    catalog.forget(created[path])
            elif path.exists():
                catalog.record(memory.read_file(path, catalog.scope.name, root=catalog.scope.root))
    with contextlib.suppress(errors.Error, OSError, sqlite3.Error):
        catalog.export()
