#!/usr/bin/env python3
"""Rename a memory: its file, and every link, wiki link and task that names it."""

from __future__ import annotations

import _cli
from _lib.ops import rename
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory rename learning-tokn-refresh learning-token-refresh
  memory rename decision-db decision-use-postgres --dry-run
  memory rename gotcha-x gotcha-cache-invalidation --scope global --json

Every memory of the scope that links to OLD is rewritten: `links`, `link-labels`, `related:`
and wiki links [[OLD]], [[OLD|text]], [[OLD#section]]. The renamed memory keeps OLD in its
`previous-slugs`, and `memory read OLD` still finds it. Project tasks that mention OLD are
rewritten too. Refused when NEW is not a valid slug or is taken in the scope.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("rename", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("old", help="the memory's current slug")
    parser.add_argument("new", help="its new slug (lowercase words joined by hyphens)")
    _cli.add_scope(parser, "the scope holding the memory (default: the most specific one)")
    parser.add_argument("--dry-run", action="store_true", help="show the changes as a diff; change nothing")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    result = rename.rename(workspace, args.old, args.new, scope=args.scope, dry_run=args.dry_run)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        document = result.as_json()
        if args.dry_run:
            document["diff"] = result.plan.diff()
        _cli.emit_json(document)
        return 0
    if args.dry_run:
        print(result.plan.diff(), end="")
        print(f"Dry run: renaming {result.old} to {result.new} ({result.scope} scope) would change "
              f"{len(result.plan.changes)} file(s) and {len(result.tasks)} task(s); nothing was changed")
        return 0
    print(f"Renamed {result.old} to {result.new} ({result.scope} scope)")
    if result.referrers:
        print("Links rewritten in: " + ", ".join(result.referrers))
    if result.tasks:
        print("Tasks rewritten: " + ", ".join(result.tasks))
    return 0


if __name__ == "__main__":
    _cli.run(main)
