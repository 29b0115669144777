#!/usr/bin/env python3
"""Draw a memory and its linked neighbours (or a whole scope) as Mermaid, DOT or JSON."""

from __future__ import annotations

import sys

import _cli
from _lib.catalog.catalog import open_catalog
from _lib.ops import diagram, links
from _lib.base import errors
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory graph hub-authentication              # the hub and every memory linked to it (Mermaid)
  memory graph decision-oauth2 --depth 2       # neighbours of neighbours too
  memory graph --all --scope project           # every linked memory of a scope
  memory graph decision-oauth2 --format dot | dot -Tsvg > graph.svg
  memory graph decision-oauth2 --format json

Node shapes and colours follow the memory type; the starting memory is drawn bold.
Paste Mermaid output into any Markdown viewer that renders ```mermaid blocks.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("graph", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to start from")
    parser.add_argument("--all", action="store_true", help="every linked memory of the scope instead of one")
    parser.add_argument("--depth", type=int, default=1, help="how many links away to go (default 1)")
    parser.add_argument("--format", choices=diagram.FORMATS, default="mermaid", help="output format")
    _cli.add_scope(parser, "the scope to draw (default: the one holding SLUG; with --all: the default scope)")
    parser.add_argument("--json", action="store_true", help="same as --format json")
    args = parser.parse_args(argv)
    if bool(args.slug) == bool(args.all):
        parser.error("give a SLUG or --all (not both)")
    if args.json:
        args.format = "json"
    workspace = Workspace()
    if args.slug:
        scope, args.slug = links.resolve(workspace, args.slug, args.scope)
    else:
        scope = workspace.scope(args.scope)
    with open_catalog(workspace, scope) as catalog:
        if catalog is None:
            raise errors.NotFound(f"the {scope.name} scope has no memories yet", "write one with `memory write`")
        subgraph = diagram.neighbourhood(catalog, args.slug, args.depth)
        text = diagram.render(subgraph, catalog.labels, args.format)
    _cli.print_warnings(workspace.warnings)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    _cli.run(main)
