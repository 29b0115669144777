"""Several task files written as one change, and the journal that completes a change a killed command left.

Two or more files are journaled first (`<memory>/.cache/tasks.journal`: each file's old
checksum and new text), so a command killed while writing them is completed by the next
one under the lock. A file changed by someone else since (a checkout) is left as it is
and reported. A write that fails puts back what was already written and drops the
journal; only when that fails too (the disk still full) does the journal stay, for the
next command to complete the change.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .files import TaskFiles

from ..base import fsutil
from .entity import is_task_file_name
from .files import REFUSED, reason, refused

JOURNAL_VERSION = 1


def digest(data: bytes | None) -> str | None:
    """Length and CRC-32 of a file's bytes: enough to tell whether someone changed it since
    (whoever can write task files needs no collision to change them), and cheaper to import
    than hashlib for a command that must start fast."""
    import zlib

    return None if data is None else f"{len(data)}:{zlib.crc32(data):08x}"


def commit(files: TaskFiles, pending: dict[str, str | None]) -> None:
    """Write the pending task files (name -> new text, None: remove): all of them, or none."""
    if not pending:
        return
    journaled = len(pending) > 1
    try:
        before = {name: files.read_bytes(name) for name in pending}
        if journaled:
            record = {"version": JOURNAL_VERSION,
                      "files": [{"name": name, "before": digest(before[name]), "after": text}
                                for name, text in pending.items()]}
            fsutil.write_atomically(files.journal_path, json.dumps(record, ensure_ascii=False))
    except REFUSED as exc:
        raise refused(exc, "the task files could not be written", "; nothing was changed") from None
    written: list[str] = []
    try:
        for name, text in pending.items():
            files.put(name, None if text is None else text.encode("utf-8"))
            written.append(name)
        fsutil.sync_directory(files.tasks_dir)
    except REFUSED as exc:
        if not _put_back(files, written, before):
            raise refused(exc, "the task files could not be written",
                          "; the change was written halfway and could not be undone",
                          "the next task command completes it") from None
        if journaled:
            fsutil.remove_file(files.journal_path)
        raise refused(exc, "the task files could not be written", "; nothing was changed") from None
    if journaled:
        fsutil.remove_file(files.journal_path)


def _put_back(files: TaskFiles, names: list[str], before: dict[str, bytes | None]) -> bool:
    """Restore files to what they held before this commit; False when one could not be."""
    restored = True
    for name in reversed(names):
        try:
            files.put(name, before[name])
        except REFUSED:
            restored = False
    fsutil.sync_directory(files.tasks_dir)
    return restored


def recover(files: TaskFiles) -> None:
    """With the lock held: remove temp files of killed writes and complete a journaled change.

    Each journaled file already holding its new text is left; one still holding its old
    text (by checksum) is written; one changed by someone else since is kept as it is and
    reported, since the journal is older than that change.
    """
    warn = files.workspace.warn
    if fsutil.remove_stale_temps(files.tasks_dir):
        files.forget_stamps()
    try:
        raw = files.journal_path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        warn(f"cannot read {files.journal_path}: {reason(exc)}")
        return
    try:
        record = json.loads(raw)
        changes = [(item["name"], item["before"], item["after"]) for item in record["files"]]
        if record.get("version") != JOURNAL_VERSION or not all(
                is_task_file_name(name) and isinstance(after, (str, type(None))) for name, _, after in changes):
            raise ValueError("unknown format")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        warn(f"ignored an unreadable task journal ({exc}); `memory task validate` checks what it may have left")
        fsutil.remove_file(files.journal_path)
        return
    kept: list[str] = []
    for name, old, new in changes:
        data = None if new is None else new.encode("utf-8")
        current = digest(files.read_bytes(name))
        if current == digest(data):
            continue
        if current != old:
            kept.append(name)
            continue
        files.put(name, data)
    fsutil.sync_directory(files.tasks_dir)
    fsutil.remove_file(files.journal_path)
    files.forget_stamps()
    if kept:
        warn(f"an interrupted task change was completed except for {', '.join(kept)}, "
             "changed since; `memory task validate --fix` repairs what follows from the ids")
