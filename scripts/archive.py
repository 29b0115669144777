#!/usr/bin/env python3
"""Archive memories (status archived: kept, out of the way) or bring them back with --undo."""

from __future__ import annotations

import _cli
from _lib.ops import curate
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory archive breadcrumb-old-debug-session
  memory archive breadcrumb-old-debug-session --undo
  memory archive --type breadcrumb --since 90d --dry-run     # what would be archived
  memory archive --tag sprint-12 --yes --json

An archived memory keeps its file, links and history; it is no longer injected as advice.
In a store of the earlier plugin that has an archive/ folder, the file moves there unchanged.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("archive", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to archive (or use filters)")
    parser.add_argument("--undo", action="store_true", help="make archived memories active again")
    _cli.add_bulk(parser, "archive")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    return _cli.curate_command(parser, args, "unarchive" if args.undo else "archive",
                               lambda workspace, selection, dry_run: curate.archive(
                                   workspace, selection, undo=args.undo, dry_run=dry_run))


if __name__ == "__main__":
    _cli.run(main)
