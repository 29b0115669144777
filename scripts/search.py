#!/usr/bin/env python3
"""Keyword search over titles, tags and content, ranked by relevance (BM25)."""

from __future__ import annotations

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory search "authentication"
  memory search "token refresh" --type learning --limit 5
  memory search oauth --scope project --json

Case-insensitive; a memory matching only some of the words still ranks, below those
matching more. For search by meaning, use `memory semantic`.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("search", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("query", nargs="+", help="words to look for")
    _cli.add_filters(parser)
    parser.add_argument("--limit", type=int, default=10, metavar="N", help="show at most N results (default 10)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--limit must be at least 1")
    query = " ".join(args.query)
    workspace = Workspace()
    hits = store.search_memories(workspace, query, _cli.filters_from(args), limit=args.limit)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"query": query, "mode": "keyword", "count": len(hits),
                        "results": [hit.as_json() for hit in hits]})
        return 0
    _cli.print_hits(hits, query, lambda hit: f"score {hit.score:.2f}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
