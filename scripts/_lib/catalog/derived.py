"""The names of a scope's derived files and the catalog's marks about them."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

INDEX_NAME = "index.json"
GRAPH_NAME = "graph.json"
# meta of index.json / graph.json while catalog changes are not exported yet: a process killed
# in between leaves it, and the next one rewrites both files whole
PENDING = "pending:"
# meta: "<stamp> <format>" of an index.json or graph.json another tool wrote (see layout), as last read
FOREIGN = "foreign:"
# meta: bytes of spaces that patches in place have left in index.json / graph.json since last written whole
SLACK = "slack:"

# JSON text for the derived files and the catalog's columns, non-ASCII characters kept as they
# are: json.dumps(..., ensure_ascii=False) would build an encoder on every call
encode_json = json.JSONEncoder(ensure_ascii=False).encode


class LineObject:
    """A JSON object file written one `"key": value` entry per line (graph.json as this plugin
    writes it), read an entry at a time: 75 MB of graph.json at 100,000 memories would take
    hundreds of megabytes as one parsed object. `items()` reads the file again on each call."""

    def __init__(self, path: Any) -> None:
        self.path = path

    @classmethod
    def of(cls, path: Any, value_type: type) -> LineObject | None:
        """The file read this way when every entry is on its own line with a `value_type` value
        (checked by reading it through once); None otherwise (read it whole instead)."""
        found = cls(path)
        try:
            return found if all(isinstance(value, value_type) for _, value in found.items()) else None
        except (OSError, ValueError):
            return None

    def items(self) -> Iterator[tuple[str, Any]]:
        """(key, value) of each entry, in file order; ValueError when the file is not in that shape."""
        decode = json.JSONDecoder().decode
        with open(self.path, encoding="utf-8") as handle:
            if handle.readline() != "{\n":
                raise ValueError("not one entry per line")
            for line in handle:
                if line == "}\n":
                    if handle.read().strip():
                        raise ValueError("text after the object")
                    return
                entry = decode("{" + line.rstrip().removesuffix(",") + "}")
                if len(entry) != 1:
                    raise ValueError("not one entry per line")
                yield next(iter(entry.items()))
        raise ValueError("no closing brace")
