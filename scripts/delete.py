#!/usr/bin/env python3
"""Delete a memory with its index entry, graph edges (both directions) and cached embedding."""

from __future__ import annotations

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory delete decision-api-uses-oauth2
  memory delete decision-api-uses-oauth2 --scope global

Memories that linked to it have the slug removed from their `links`.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("delete", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", help="the memory to delete")
    _cli.add_scope(parser, "the scope holding the memory (default: the most specific one)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    deleted = store.delete(workspace, args.slug, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"slug": deleted.slug, "scope": deleted.scope, "path": str(deleted.path),
                        "unlinked": deleted.unlinked})
    else:
        print(f"Deleted {deleted.slug} ({deleted.scope} scope): {deleted.path}")
        if deleted.unlinked:
            print("Removed its links from: " + ", ".join(deleted.unlinked))
    return 0


if __name__ == "__main__":
    _cli.run(main)
