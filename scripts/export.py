#!/usr/bin/env python3
"""Write memories, edges with labels and tasks as one JSON document (for backup or moving)."""

from __future__ import annotations

import json
from pathlib import Path

import _cli
from _lib.base import errors, fsutil
from _lib.ops import exchange
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory export > memories.json                     # every readable scope, to stdout
  memory export --scope project --output team.json
  memory import team.json --scope global            # and back, into another scope

The document keeps each memory file's exact text beside its fields, every edge with its
label, and the project's tasks (schemas/export.schema.json). Importing it into an empty
scope gives the same memories, fields and edges.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("export", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser, "export this scope only (default: every readable scope)")
    parser.add_argument("--output", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    args = parser.parse_args(argv)
    workspace = Workspace()
    document = exchange.export(workspace, args.scope)
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    _cli.print_warnings(workspace.warnings)
    if args.output is None:
        print(text, end="")
        return 0
    try:
        fsutil.write_atomically(Path(args.output), text)
    except OSError as exc:
        raise errors.InvalidInput(f"cannot write {args.output}: {exc.strerror}",
                                  "check the directory exists and is writable") from None
    counts = ", ".join(f"{len(part['memories'])} {part['scope']}" for part in document["scopes"]) or "nothing"
    print(f"Exported {counts} memories to {args.output}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
