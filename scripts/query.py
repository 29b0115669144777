#!/usr/bin/env python3
"""Query memory like the memory-graph engine: by id, related, recent, text, type, tag, status, date."""

from __future__ import annotations

import _cli
from _lib.ops import query
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory query --recent 5 --status active             # what happened lately
  memory query --tag auth                              # everything about auth (newest first)
  memory query --related decision-001-jwt-auth         # links, backlinks, then shared tags
  memory query --type decision --status active --format full
  memory query --search "circular import" --type error
  memory query --id file-src-auth-ts --format json     # JSON carries query_time_ms

Formats: summary (one line each: [type] title - gist), json, full (with content).
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("query", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("--id", metavar="SLUG", help="one memory")
    parser.add_argument("--related", metavar="SLUG", help="memories linked to SLUG or sharing its tags")
    parser.add_argument("--recent", nargs="?", type=int, const=query.DEFAULT_RECENT, metavar="N",
                        help=f"the N most recently updated (default {query.DEFAULT_RECENT})")
    parser.add_argument("--search", metavar="TEXT", help="full-text search (BM25)")
    _cli.add_filters(parser)
    parser.add_argument("--limit", type=int, metavar="N", help="at most N results")
    parser.add_argument("--format", choices=query.FORMATS, default="summary", help="output format")
    args = parser.parse_args(argv)
    for name in ("recent", "limit"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    workspace = Workspace()
    result = query.run(workspace, node_id=args.id, related=args.related, text=args.search, recent=args.recent,
                       filters=_cli.filters_from(args), limit=args.limit)
    _cli.print_warnings(workspace.warnings)
    if args.format == "json":
        _cli.emit_json({"nodes": [node.as_json() for node in result.nodes], "count": len(result.nodes),
                        "query_time_ms": round(result.elapsed_ms, 1)})
        return 0
    if not result.nodes:
        print("No memories match.")
        return 0
    for node in result.nodes:
        if args.format == "summary":
            print(query.summary_line(node) + (f"  [{node.reason}]" if node.reason else ""))
        else:
            data = node.as_json(full=True)
            print(f"## [{data['type']}] {data['title']} ({data['id']}, {data['scope']}, {data['status']})")
            print(data.get("content") or "")
    return 0


if __name__ == "__main__":
    _cli.run(main)
