#!/usr/bin/env python3
"""Link two memories with a labelled edge in both directions (graph.json and both frontmatters)."""

from __future__ import annotations

import _cli
from _lib.model import graph
from _lib.ops import links
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory link decision-oauth2 learning-token-refresh --label implements
  memory link decision-oauth2 hub-authentication --label part-of
  memory link gotcha-x decision-y --label blocks --inverse blocked-by

Labels and their inverses: """ + ", ".join(f"{label}/{inverse}" for label, inverse in graph.INVERSE_LABELS.items()
                                           if label <= inverse or label == inverse) + """.
A custom label's inverse comes from --inverse, else config graph.inverseLabels, else the
label itself. Both memories must be in the same scope. Linking twice changes nothing.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("link", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("source", help="slug of the memory the edge starts from")
    parser.add_argument("target", help="slug of the memory it points to")
    parser.add_argument("--label", default=links.DEFAULT_LABEL, help="relationship (default relates-to)")
    parser.add_argument("--inverse", help="label of the reverse edge (default: the label's known inverse)")
    _cli.add_scope(parser, "the scope holding both memories (default: the one holding SOURCE)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    result = links.link(workspace, args.source, args.target, label=args.label, inverse=args.inverse,
                        scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(result.as_json())
    elif result.created:
        print(f"Linked {result.source} -[{result.label}]-> {result.target} "
              f"and {result.target} -[{result.inverse}]-> {result.source} ({result.scope} scope)")
    else:
        print(f"Already linked: {result.source} -[{result.label}]-> {result.target}; nothing changed")
    return 0


if __name__ == "__main__":
    _cli.run(main)
