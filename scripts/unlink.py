#!/usr/bin/env python3
"""Remove the link between two memories in both directions (one label, or all of them)."""

from __future__ import annotations

import _cli
from _lib.ops import links
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory unlink decision-oauth2 learning-token-refresh
  memory unlink decision-oauth2 learning-token-refresh --label implements

A link that is a [[wiki link]] in a memory's text stays until that text is edited.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("unlink", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("source", help="one memory")
    parser.add_argument("target", help="the other memory")
    parser.add_argument("--label", help="remove only this label (and its inverse); default: every label")
    _cli.add_scope(parser, "the scope holding both memories (default: the one holding SOURCE)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    result = links.unlink(workspace, args.source, args.target, label=args.label, scope=args.scope)
    _cli.print_warnings(workspace.warnings + result.notes)
    if args.json:
        _cli.emit_json(result.as_json())
    else:
        what = f"{result.label} link" if args.label else "links"
        print(f"Removed {what} between {result.source} and {result.target} ({result.scope} scope)")
    return 0


if __name__ == "__main__":
    _cli.run(main)
