#!/usr/bin/env python3
"""Apply retention to automatically captured memories (never to hand-written ones)."""

from __future__ import annotations

import _cli
from _lib.ops import retention
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory prune --dry-run          # show what would be archived or removed
  memory prune
  memory prune --scope local --json

Config (retention): max_nodes (per scope), session_archive_days, prune_strategy
(least_connected_oldest or oldest). Only memories with `source: capture` are affected.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("prune", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    _cli.add_scope(parser)
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    actions = retention.plan(workspace, args.scope)
    done = actions if args.dry_run else retention.apply(workspace, actions)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"dryRun": args.dry_run, "actions": [action.as_json() for action in done]})
        return 0
    if not done:
        print("Nothing to prune.")
    for action in done:
        verb = {"archive": "would archive" if args.dry_run else "archived",
                "remove": "would remove" if args.dry_run else "removed"}[action.kind]
        print(f"{verb} {action.slug} ({action.scope}): {action.reason}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
