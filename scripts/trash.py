#!/usr/bin/env python3
"""List what `memory restore` can bring back (the trash, and memories lost outside the tool); purge it."""

from __future__ import annotations

import time

import _cli
from _lib.ops import recovery
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory trash                                 # deleted, and lost outside the tool
  memory trash --purge learning-old-idea       # forget one trashed memory for good
  memory trash --purge-all                     # empty the trash

The journal keeping these copies lives outside the memory directories and is bounded by
journal.maxMegabytes (the oldest copies go first).
"""

KINDS = {"trashed": "memory delete", "deleted": "deleted outside", "changed": "changed outside"}


def main(argv: list[str]) -> int:
    parser = _cli.parser("trash", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("--purge", nargs="+", metavar="SLUG", help="forget these trashed memories for good")
    parser.add_argument("--purge-all", action="store_true", help="empty the trash")
    _cli.add_scope(parser, "this scope only (default: every writable scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    if args.purge or args.purge_all:
        count = recovery.purge(workspace, args.purge or [], scope=args.scope)
        if args.json:
            _cli.emit_json({"purged": count})
        else:
            print(f"Purged {count} trashed memor{'y' if count == 1 else 'ies'}.")
        return 0
    found = recovery.kept(workspace, args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"count": len(found), "kept": [{"scope": scope, **item.as_json()} for scope, item in found]})
        return 0
    if not found:
        print("The trash is empty, and nothing was lost outside the memory tool.")
        return 0
    rows = [[scope, KINDS[item.kind], time.strftime("%Y-%m-%d %H:%M", time.localtime(item.at)), item.slug]
            for scope, item in found]
    print(_cli.table(["SCOPE", "HOW", "WHEN", "SLUG"], rows))
    print("\n`memory restore SLUG` brings one back; `memory restore --all`, everything deleted outside the tool.")
    return 0


if __name__ == "__main__":
    _cli.run(main)
