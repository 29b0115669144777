"""What changed in a scope's directories since the catalog last saw them, without a stat per file.

A file that comes, goes or is replaced (editors and `sed -i` write a new file and rename it
over the old one) changes its directory's stamp and shows in a listing as a new name, a
missing name or a new inode number; the listing gives inode numbers for free (readdir), so
only those files are stat-ed. A file edited in place keeps its inode: it is found when it
is next touched (a command returning it, a mutation of it) or by a full scan (maintenance,
health, reindex).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

from ..base import fsutil
from ..workspace import layout


def listing(root: Path, not_memories: frozenset[str]) -> dict[str, int] | None:
    """relpath -> inode number of the memory files' names in the flat layout (and the earlier
    plugin's folders); None when an interrupted write left a temp file (a full scan cleans up)."""
    found: dict[str, int] = {}
    for prefix, directory in [("", root)] + [(name + "/", root / name) for name in layout.memory_subdirs(root)]:
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    if name.endswith(fsutil.TEMP_SUFFIX):
                        return None
                    continue
                if name.endswith(".md") and name.lower() not in not_memories and fsutil.from_utf8(name):
                    found[prefix + name] = entry.inode()  # (a name that is not UTF-8: see catalog.scan)
    return found


def differences(root: Path, names: dict[str, int], recorded: dict[str, str]) -> dict[str, str | None]:
    """relpath -> current stamp (None: gone) of every file whose name or inode differs from what
    the catalog recorded (`recorded`: relpath -> "inode:mtime:size"). Stats those files only."""
    changed: dict[str, str | None] = {}
    for relpath, inode in names.items():
        stamp = recorded.get(relpath)
        if stamp is None or not stamp.startswith(f"{inode}:"):
            now = regular_file_stamp(root / relpath)
            if now != stamp:  # (a symbolic link's own inode differs from its target's: stat tells)
                changed[relpath] = now
    for relpath in recorded:
        if relpath not in names:
            changed[relpath] = None
    return changed


def regular_file_stamp(path: Path) -> str | None:
    """"inode:mtime:size" of a regular file (following a symbolic link, as a read would); None otherwise."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_mode & 0o170000 != 0o100000:
        return None
    return f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"
