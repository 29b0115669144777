"""What a scope directory holds: which layout its memories follow and which derived files are foreign.

Three layouts are read where they lie, with no migration:

- ours: flat `<slug>.md` files (this plugin's own format);
- memory-graph: `nodes/<kind>/<id>.md` (read like flat files);
- predecessor: the earlier plugin's `permanent/`, `temporary/` and `archive/` folders, with its
  own index.json (an array) and graph.json (`nodes`/`edges`), which it treats as the only record
  of most edges and of every edge label.

A derived file in a format this plugin does not write is foreign: it is read for what it holds
and never replaced by a read-only command or a hook.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PREDECESSOR_DIRS = ("permanent", "temporary", "archive")
ARCHIVE_DIR = "archive"
NODES_DIR = "nodes"
# derived files of the predecessor that this plugin never writes; read for what they hold, left alone
PREDECESSOR_ONLY_FILES = ("embeddings.json", "thought.json", ".think-current", "graph.md")

OURS, PREDECESSOR, MEMORY_GRAPH, EMPTY = "ours", "predecessor", "memory-graph", "empty"

# formats of index.json / graph.json
FORMAT_OURS = "ours"                # {"version", "lastUpdated", "memories": {slug: entry}} / {slug: [edges]}
FORMAT_PREDECESSOR = "predecessor"  # {"memories": [entries]} / {"nodes": [...], "edges": [...]}
FORMAT_UNKNOWN = "unknown"          # valid JSON in neither shape
FORMAT_BROKEN = "broken"            # not JSON at all (truncated, binary)
FORMAT_LINK = "link"                # a symbolic link: never read or written through
REPLACEABLE = (FORMAT_UNKNOWN, FORMAT_BROKEN, FORMAT_LINK)  # a command may set these aside and rebuild


def real_subdir(root: Path, name: str) -> bool:
    """Whether `root/name` is a directory that is not a symlink (links may lead out of the scope)."""
    path = os.path.join(root, name)
    return os.path.isdir(path) and not os.path.islink(path)


def memory_subdirs(root: Path) -> list[str]:
    """The predecessor folders present under `root` (each read non-recursively)."""
    return [name for name in PREDECESSOR_DIRS if real_subdir(root, name)]


def index_format(data: Any) -> str:
    """The format of parsed index.json content."""
    if isinstance(data, dict):
        memories = data.get("memories")
        if isinstance(memories, dict):
            return FORMAT_OURS
        if isinstance(memories, list):
            return FORMAT_PREDECESSOR
    return FORMAT_UNKNOWN


def graph_format(data: Any) -> str:
    """The format of parsed graph.json content."""
    if not isinstance(data, dict):
        return FORMAT_UNKNOWN
    if isinstance(data.get("edges"), list):
        return FORMAT_PREDECESSOR
    if all(isinstance(value, list) for value in data.values()):
        return FORMAT_OURS
    return FORMAT_UNKNOWN


def file_format(path: Path, classify: Any) -> str | None:
    """The format of a derived JSON file (None when it does not exist)."""
    if os.path.islink(path):
        return FORMAT_LINK
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return FORMAT_BROKEN
    try:
        return classify(json.loads(raw))
    except (ValueError, UnicodeDecodeError):
        return FORMAT_BROKEN


class Layout:
    """How one scope directory is organised."""

    __slots__ = ("root", "name", "subdirs", "index", "graph", "extras")

    def __init__(self, root: Path, name: str, subdirs: list[str], index: str | None, graph: str | None,
                 extras: list[str]) -> None:
        self.root, self.name, self.subdirs = root, name, subdirs
        self.index, self.graph = index, graph  # formats of index.json / graph.json (None: absent)
        self.extras = extras                   # predecessor-only files present

    @property
    def predecessor(self) -> bool:
        return self.name == PREDECESSOR

    def describe(self) -> str:
        """One line for `memory doctor`."""
        if self.name == EMPTY:
            return "no memories yet"
        parts = {OURS: "this plugin's flat layout", MEMORY_GRAPH: "memory-graph layout (nodes/<kind>/)",
                 PREDECESSOR: "the earlier plugin's layout (" + ", ".join(f"{name}/" for name in self.subdirs)
                 + ")"}[self.name]
        derived = [f"{name} {fmt}" for name, fmt in (("index.json", self.index), ("graph.json", self.graph))
                   if fmt is not None]
        if derived:
            parts += "; " + ", ".join(derived)
        if self.extras:
            parts += "; also " + ", ".join(self.extras) + " (left alone)"
        return parts


def detect(root: Path) -> Layout:
    """Look at a scope directory (a few stats, plus reading index.json and graph.json)."""
    root = Path(root)
    subdirs = memory_subdirs(root)
    index = file_format(root / "index.json", index_format)
    graph = file_format(root / "graph.json", graph_format)
    extras = [name for name in PREDECESSOR_ONLY_FILES if os.path.lexists(root / name)]
    if subdirs or FORMAT_PREDECESSOR in (index, graph):
        name = PREDECESSOR
    elif real_subdir(root, NODES_DIR):
        name = MEMORY_GRAPH
    elif any(entry.endswith(".md") for entry in _names(root)):
        name = OURS
    else:
        name = EMPTY
    return Layout(root, name, subdirs, index, graph, extras)


def _names(root: Path) -> list[str]:
    try:
        return os.listdir(root)
    except OSError:
        return []
