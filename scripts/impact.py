#!/usr/bin/env python3
"""What depends on a memory: who links to it (transitively) and what would break if it went."""

from __future__ import annotations

import _cli
from _lib.ops import insight
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory impact decision-use-oauth2
  memory impact hub-authentication --depth 1
  memory impact gotcha-x --json

linked from: depth 1 are the memories linking to it, depth 2 those linking to them, ...
would break: links that would dangle, hubs that would be left empty, tasks that mention it.
Run it before `memory delete`, `memory move` or `memory rename`.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("impact", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", help="the memory to look at")
    parser.add_argument("--depth", type=int, default=3, help="how many hops of incoming links to follow (default 3)")
    _cli.add_scope(parser, "the scope holding the memory (default: the most specific one)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    result = insight.impact(workspace, args.slug, scope=args.scope, depth=args.depth)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(result)
        return 0
    print(f"{result['slug']} ({result['type']}, {result['scope']} scope): {result['title']}")
    if not result["linkedFrom"]:
        print("linked from: nothing")
    for level in result["linkedFrom"]:
        print(f"linked from (depth {level['depth']}): " + ", ".join(level["slugs"]))
    broken = result["wouldBreak"]
    print("if it went:")
    print("  dangling links: " + (", ".join(f"{item['slug']} ({item['label']})"
                                             for item in broken["danglingLinks"]) or "none"))
    print("  hubs left empty: " + (", ".join(broken["emptiedHubs"]) or "none"))
    print("  tasks mentioning it: " + (", ".join(broken["tasks"]) or "none"))
    return 0


if __name__ == "__main__":
    _cli.run(main)
