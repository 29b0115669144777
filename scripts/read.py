#!/usr/bin/env python3
"""Print a memory: the whole file, frontmatter and body."""

from __future__ import annotations

import sys

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory read decision-api-uses-oauth2
  memory read decision-api-uses-oauth2 --scope global
  memory read decision-api-uses-oauth2 --json      # fields, content and frontmatter as JSON

Without --scope the most specific scope holding the slug wins: enterprise, local, project, global.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("read", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", help="the memory's slug, e.g. decision-api-uses-oauth2")
    _cli.add_scope(parser, "read from this scope only")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    item = store.read(workspace, args.slug, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(item.as_json())
    else:
        text = item.document.text()
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


if __name__ == "__main__":
    _cli.run(main)
