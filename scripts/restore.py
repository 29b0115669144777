#!/usr/bin/env python3
"""Bring back a memory exactly as it was last seen: from the trash, or deleted or changed outside."""

from __future__ import annotations

import _cli
from _lib.ops import recovery
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory restore learning-token-refresh   # the newest copy the journal keeps (trash, or lost)
  memory restore --all                    # every memory deleted outside the memory tool
  memory restore --all --dry-run          # what that would bring back
  memory trash                            # what can be restored

Every memory's last known content is kept outside the memory directories, so a file removed
by `rm`, `git clean` or a checkout comes back byte for byte. A memory `memory delete` removed
also gets its links back. Restoring a memory changed outside the tool keeps the current
version too (restore again to get it back).
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("restore", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to bring back")
    parser.add_argument("--all", action="store_true", help="every memory deleted outside the memory tool")
    parser.add_argument("--dry-run", action="store_true", help="show what would come back, change nothing")
    _cli.add_scope(parser, "restore into this scope only (default: every writable scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if bool(args.slug) == args.all:
        parser.error("give a SLUG or --all (not both)")
    workspace = Workspace()
    restored = recovery.restore(workspace, args.slug, scope=args.scope, dry_run=args.dry_run)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"dryRun": args.dry_run, "restored": [item.as_json() for item in restored]})
        return 0
    if not restored:
        print("Nothing to restore: no memory was deleted outside the memory tool.")
    verb = "Would restore" if args.dry_run else "Restored"
    for item in restored:
        print(f"{verb} {item.item.slug} ({item.scope} scope): {item.path}")
        if item.relinked:
            print(f"  links again: {', '.join(item.relinked)}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
