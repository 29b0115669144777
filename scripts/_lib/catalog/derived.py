"""The names of a scope's derived files and the catalog's marks about them."""

from __future__ import annotations

import json

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
