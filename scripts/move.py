#!/usr/bin/env python3
"""Move (or copy) memories to another scope, with their provenance: promote a lesson to the project."""

from __future__ import annotations

import _cli
from _lib.ops import promote
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory move learning-retry-backoff --to project          # personal lesson -> shared with the team
  memory move gotcha-flaky-ci --to project --dry-run        # show the new file and edits as a diff
  memory move decision-x --to global --copy                 # keep the original too
  memory move --tag auth --to project --yes                 # every memory tagged auth
  memory move --type gotcha --since 7d --to project --json

The memory arrives with `promoted-from: <scope>:<slug>` and `promoted-at`. Links to memories
that stay behind cannot cross scopes: they are listed, kept as a sentence in the moved
memory's body, and removed from the memories left behind (their wiki links become plain
text). Memories moved together keep their links. A slug already taken in the target scope is
refused. Moving into the project scope adds one file to `git status`, ready for review.
With filters instead of SLUG, the count is confirmed first (--yes skips the question).
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("move", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to move (or use --tag/--type/--since)")
    parser.add_argument("--to", required=True, choices=("project", "local", "global", "enterprise"),
                        help="the scope it moves to (enterprise only where you may write)")
    parser.add_argument("--copy", action="store_true", help="keep the original where it is")
    _cli.add_bulk(parser, "move")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    if args.slug is not None:
        _cli.refuse_filters_with_slug(parser, args)
        result = promote.move(workspace, args.slug, args.to, scope=args.scope, copy=args.copy, dry_run=args.dry_run)
    else:
        from _lib.ops import bulk

        entries = bulk.select(workspace, _cli.bulk_filters(parser, args))
        if args.dry_run or not args.yes:
            preview = promote.move_many(workspace, entries, args.to, copy=args.copy, dry_run=True)
            what = f"{'be copied' if args.copy else 'move'} to the {args.to} scope"
            if args.dry_run:
                return _report(workspace, args, preview)
            if not _cli.confirm(args, len(preview.moved), what):
                _report(workspace, args, preview)
                raise _cli.unconfirmed(len(preview.moved), what)
        result = promote.move_many(workspace, entries, args.to, copy=args.copy)
    return _report(workspace, args, result)


def _report(workspace: Workspace, args, result: promote.Moves) -> int:  # type: ignore[no-untyped-def]
    _cli.print_warnings(workspace.warnings)
    if args.json:
        document = result.as_json()
        if result.dry_run:
            document["diff"] = result.diff()
        _cli.emit_json(document)
        return 0
    if result.dry_run:
        print(result.diff(), end="")
    verb = ("would be copied" if result.copy else "would move") if result.dry_run else \
        ("copied" if result.copy else "moved")
    for item in result.moved:
        print(f"{item.slug}: {item.source} -> {item.target} {verb}{' (interrupted move finished)' if item.resumed else ''}")
        if item.left:
            print("  links left behind (kept as text in its body): "
                  + ", ".join(f"{label} {slug}" for slug, label in item.left))
        if item.unlinked:
            print("  links to it removed from: " + ", ".join(item.unlinked))
    if result.dry_run:
        print(f"Dry run: {len(result.moved)} memor{'y' if len(result.moved) == 1 else 'ies'}; nothing was changed")
    elif not result.moved:
        print("Nothing matched; nothing was changed")
    return 0


if __name__ == "__main__":
    _cli.run(main)
