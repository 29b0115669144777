#!/usr/bin/env python3
"""Bring memories in from an export file, a store directory or Claude Code's auto memory."""

from __future__ import annotations

import sys

import _cli
from _lib.ops import exchange
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory import memories.json                       # a file written by `memory export`
  memory import memories.json --dry-run             # what would change
  memory import old/.claude/memory --scope project  # a store directory (also the earlier plugin's)
  memory import --auto-memory                       # this project's Claude Code auto memory
  memory import ~/.claude/projects/-home-me-app/memory --auto-memory --scope global

Merging: new slugs are added; an existing slug is replaced when the imported copy is newer
(its `updated`), otherwise kept; identical ones are left alone, so importing twice changes
nothing. Every imported text is redacted. A file that is not a valid export is refused
before anything is written. Nothing is ever written into the source.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("import", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("source", nargs="?", help="export file (- for stdin), store directory, or auto memory directory")
    parser.add_argument("--auto-memory", action="store_true",
                        help="read Claude Code's auto memory (MEMORY.md and topic files); without SOURCE: this project's")
    _cli.add_scope(parser, "the scope to import into (default: project inside a git repository, else global)")
    parser.add_argument("--merge", action="store_true", default=True,
                        help="add new slugs, keep the newer copy of a slug both have (the default and only mode)")
    parser.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    document = exchange.read_source(workspace, args.source, auto_memory=args.auto_memory)
    progress = None
    if not args.json and sys.stderr.isatty():
        def progress(done: int, total: int) -> None:
            if done == total or done % 200 == 0:
                sys.stderr.write(f"\rimporting {done}/{total}" + ("\n" if done == total else ""))
    outcome = exchange.import_document(workspace, document, args.scope, dry_run=args.dry_run, progress=progress)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(outcome.as_json())
        return 0
    verb = "Would import" if args.dry_run else "Imported"
    print(f"{verb} into the {outcome.scope} scope: {len(outcome.added)} added, {len(outcome.replaced)} replaced "
          f"(newer), {len(outcome.kept)} kept (ours newer or different), {len(outcome.unchanged)} unchanged; "
          f"{len(outcome.edges_added)} edges, {len(outcome.tasks_added) + len(outcome.tasks_replaced)} tasks")
    for title, slugs in (("replaced", outcome.replaced), ("kept", outcome.kept), ("refused", outcome.refused)):
        for slug in slugs:
            print(f"  {title}: {slug}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
