#!/usr/bin/env python3
"""List memories of every readable scope (or one), with scope, type, date and title."""

from __future__ import annotations

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory list
  memory list --type decision
  memory list --tag auth --scope project --since 30d --sort title --limit 20
  memory list --json

Memories of all scopes are merged; when two scopes hold the same slug the most specific
one (enterprise, local, project, global) is shown.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("list", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_filters(parser)
    parser.add_argument("--sort", choices=store.SORT_KEYS, default="updated",
                        help="order (default: updated, newest first)")
    parser.add_argument("--limit", type=int, metavar="N", help="show at most N memories")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 0:
        parser.error("--limit must be 0 or more")
    workspace = Workspace()
    entries = store.list_memories(workspace, _cli.filters_from(args), sort=args.sort, limit=args.limit)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"count": len(entries), "memories": [entry.as_json() for entry in entries]})
        return 0
    if not entries:
        print("No memories found.")
        return 0
    rows = [[entry.scope, entry.type, entry.created[:10], entry.updated[:10], entry.slug, entry.title]
            for entry in entries]
    print(_cli.table(["SCOPE", "TYPE", "CREATED", "UPDATED", "SLUG", "TITLE"], rows))
    print(f"\n{len(entries)} memor{'y' if len(entries) == 1 else 'ies'}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
