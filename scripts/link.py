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
  memory link --tag auth hub-authentication --label part-of --yes    # every memory tagged auth
  memory link --type gotcha --since 7d hub-review --dry-run

Labels and their inverses: """ + ", ".join(f"{label}/{inverse}" for label, inverse in graph.INVERSE_LABELS.items()
                                           if label <= inverse or label == inverse) + """.
A custom label's inverse comes from --inverse, else config graph.inverseLabels, else the
label itself. Both memories must be in the same scope. Linking twice changes nothing.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("link", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("source", help="slug of the memory the edge starts from (with filters: the TARGET)")
    parser.add_argument("target", nargs="?", help="slug of the memory it points to")
    parser.add_argument("--label", default=links.DEFAULT_LABEL, help="relationship (default relates-to)")
    parser.add_argument("--inverse", help="label of the reverse edge (default: the label's known inverse)")
    _cli.add_bulk(parser, "link")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    if args.target is None:
        return _link_many(parser, args, workspace)
    _cli.refuse_filters_with_slug(parser, args)
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


def _link_many(parser, args, workspace: Workspace) -> int:  # type: ignore[no-untyped-def]
    """`memory link --tag X TARGET`: every selected memory links to TARGET."""
    from _lib.ops import bulk

    entries = [entry for entry in bulk.select(workspace, _cli.bulk_filters(parser, args)) if entry.slug != args.source]
    preview = bulk.link_many(workspace, entries, args.source, label=args.label, inverse=args.inverse, dry_run=True)
    what = f"be linked to {args.source}"
    if args.dry_run or _cli.confirm(args, len(preview.changed), what):
        result = preview if args.dry_run else bulk.link_many(workspace, entries, args.source, label=args.label,
                                                             inverse=args.inverse)
        _cli.print_outcome(args, workspace, result, f"linked to {args.source} ({args.label})")
        return 0
    _cli.print_outcome(args, workspace, preview, f"linked to {args.source} ({args.label})")
    raise _cli.unconfirmed(len(preview.changed), what)


if __name__ == "__main__":
    _cli.run(main)
