#!/usr/bin/env python3
"""Rebuild index.json, graph.json and the search catalog of each scope from the memory files."""

from __future__ import annotations

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory reindex
  memory reindex --scope project

Never needed for correctness: every command notices files added, edited or deleted by hand
and repairs the index itself. Link labels already in graph.json are kept.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("reindex", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser, "rebuild this scope only (default: every readable scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    results = store.reindex(workspace, args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"scopes": [{"scope": result.scope, "memories": result.memories,
                                    "problems": [{"path": str(problem.path), "message": problem.message}
                                                 for problem in result.problems]} for result in results]})
        return 0
    if not results:
        print("No memory directories found; nothing to index.")
    for result in results:
        print(f"Reindexed {result.scope} scope: {result.memories} memor{'y' if result.memories == 1 else 'ies'}")
        for problem in result.problems:
            print(f"  skipped {problem.path}: {problem.message}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
