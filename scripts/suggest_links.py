#!/usr/bin/env python3
"""Propose links between related memories that are not linked yet, each with a reason."""

from __future__ import annotations

import _cli
from _lib.base import errors
from _lib.catalog.catalog import open_catalog
from _lib.ops import store, suggest
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory suggest-links                          # across the default scope, least linked memories first
  memory suggest-links decision-oauth2 --limit 5
  memory suggest-links --scope global --json

Scores combine shared tags and similar wording (and similar meaning when embeddings are
cached, see `memory embed`). Accept a proposal by running the `memory link` command shown.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("suggest-links", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="propose links for this memory only")
    parser.add_argument("--limit", type=int, default=10, metavar="N", help="at most N proposals (default 10)")
    _cli.add_scope(parser, "the scope to look in (default: the one holding SLUG, else the default scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--limit must be at least 1")
    workspace = Workspace()
    scope = store.locate(workspace, args.slug, args.scope)[0] if args.slug else workspace.scope(args.scope)
    with open_catalog(workspace, scope) as catalog:
        if catalog is None:
            raise errors.NotFound(f"the {scope.name} scope has no memories yet", "write some with `memory write`")
        proposals = suggest.suggest(catalog, args.slug, limit=args.limit, embeddings=True)
    mode = "embeddings" if any(proposal.cosine is not None for proposal in proposals) else "text"
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"scope": scope.name, "mode": mode, "count": len(proposals),
                        "suggestions": [proposal.as_json() for proposal in proposals]})
        return 0
    if not proposals:
        print("No link suggestions: related memories are already linked, or nothing looks related.")
        return 0
    for rank, proposal in enumerate(proposals, 1):
        print(f"{rank}. {proposal.source.slug} -[{proposal.label}]-> {proposal.target.slug}  "
              f"score {proposal.score:.2f}")
        print(f"   {proposal.reason}")
        print(f"   {proposal.command}")
    return 0


if __name__ == "__main__":
    _cli.run(main)
