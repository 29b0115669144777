#!/usr/bin/env python3
"""Statistics of the memory stores: counts by type and scope, hubs, sinks, orphans, oldest, stalest."""

from __future__ import annotations

import _cli
from _lib.ops import insight
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory stats
  memory stats --scope project --json
  memory stats --top 10

hubs: the most linked memories; sinks: linked to but linking nowhere; orphans: no links at
all (candidates for `memory suggest-links`); stalest: least recently updated.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("stats", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser)
    parser.add_argument("--top", type=int, default=insight.TOP, metavar="N",
                        help=f"how many hubs, oldest and stalest to list (default {insight.TOP})")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error("--top must be 1 or more")
    workspace = Workspace()
    result = insight.stats(workspace, args.scope, top=args.top)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(result)
        return 0
    if not result["total"]:
        print("No memories" + (f" in the {args.scope} scope" if args.scope else "") +
              ' yet: `memory write "TITLE" --content ...` records one')
        return 0
    noun = "memory" if result["total"] == 1 else "memories"
    print(f"{result['total']} {noun}: " + ", ".join(f"{count} {name}" for name, count in result["byScope"].items()))
    print("by type: " + ", ".join(f"{name} {count}" for name, count in result["byType"].items()))
    print("by status: " + ", ".join(f"{name} {count}" for name, count in result["byStatus"].items()))
    links = result["links"]
    print(f"links: {links['total']} ({links['perMemory']} per memory, median {links['median']}, max {links['max']})")
    print("hubs: " + (", ".join(f"{hub['slug']} ({hub['links']})" for hub in result["hubs"]) or "none"))
    for name in ("sinks", "orphans"):
        items = result[name]
        shown = ", ".join(item["slug"] for item in items[:args.top])
        print(f"{name}: {len(items)}" + (f" ({shown}{', ...' if len(items) > args.top else ''})" if items else ""))
    print("oldest: " + ", ".join(f"{item['slug']} ({item['created'][:10]})" for item in result["oldest"]))
    print("stalest: " + ", ".join(f"{item['slug']} ({item['updated'][:10]})" for item in result["stalest"]))
    return 0


if __name__ == "__main__":
    _cli.run(main)
