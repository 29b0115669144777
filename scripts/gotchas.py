#!/usr/bin/env python3
"""Show the gotchas relevant to a file or a shell command (the same matching as the hooks)."""

from __future__ import annotations

import _cli
from _lib.base import errors
from _lib.session import gotchas
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory gotchas --path src/auth/login.ts
  memory gotchas --command "docker compose up" --output "$(cat build.log)"
  memory gotchas --path src/db/pool.py --limit 5 --json

A gotcha applies to a file when its `paths:` globs match it (`memory write ... --paths 'src/auth/**'`)
or its tags name a directory on the path, the file, or its language; to a command when its
tags name the programs or files used, or its text matches error lines of the output.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("gotchas", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("--path", help="a file (relative to the current directory or absolute)")
    parser.add_argument("--command", help="a shell command")
    parser.add_argument("--output", default="", help="the command's output, to match error messages")
    parser.add_argument("--limit", type=int, default=3, metavar="N", help="at most N gotchas (default 3)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if not args.path and not args.command:
        raise errors.InvalidInput("give --path FILE or --command CMD", "e.g. memory gotchas --path src/auth/login.ts")
    if args.limit < 1:
        parser.error("--limit must be at least 1")
    workspace = Workspace()
    results = []
    if args.path:
        import os

        path = os.path.abspath(args.path)
        results.append((gotchas.relative_path(path, str(workspace.project_dir)),
                        gotchas.for_path(workspace, path, limit=args.limit)))
    if args.command:
        results.append((f"`{args.command}`", gotchas.for_command(workspace, args.command, args.output,
                                                                 limit=args.limit)))
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"results": [{"subject": subject, "gotchas": [match.as_json() for match in matches]}
                                    for subject, matches in results]})
        return 0
    for subject, matches in results:
        if not matches:
            print(f"No gotchas for {subject}.")
            continue
        print(gotchas.format_warnings(matches, subject))
        for match in matches:
            print(f"    why {match.entry.slug}: " + "; ".join(match.reasons))
    return 0


if __name__ == "__main__":
    _cli.run(main)
