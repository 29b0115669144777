#!/usr/bin/env python3
"""List every edge into and out of a memory, with labels, directions and neighbours."""

from __future__ import annotations

import _cli
from _lib.ops import links
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory edges decision-oauth2
  memory edges decision-oauth2 --json

`->` marks an outgoing edge (this memory -label-> neighbour), `<-` an incoming one
(neighbour -label-> this memory). Every link appears in both directions.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("edges", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", help="the memory whose edges to show")
    _cli.add_scope(parser, "the scope holding the memory (default: the most specific one)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    report = links.edges(workspace, args.slug, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(report)
        return 0
    print(f"{report['slug']} ({report['scope']} scope): {report['title']}")
    if not report["edges"]:
        print("No edges.")
        return 0
    rows = [["->" if edge["direction"] == "outgoing" else "<-", edge["label"], edge["neighbour"],
             edge["type"] or "?", edge["title"] or "(missing)"] for edge in report["edges"]]
    print(_cli.table(["DIR", "LABEL", "NEIGHBOUR", "TYPE", "TITLE"], rows))
    return 0


if __name__ == "__main__":
    _cli.run(main)
