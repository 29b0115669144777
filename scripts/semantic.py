#!/usr/bin/env python3
"""Search memories by meaning (embeddings), falling back to keyword search."""

from __future__ import annotations

import sys

import _cli
from _lib.ops import semantic
from _lib.vectors import embedder as embed
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory semantic "authentication problems"
  memory semantic "why did we pick postgres" --type decision --limit 5
  memory semantic "flaky tests on CI" --mode semantic --json

Modes: hybrid (the default, config search.semanticMode) merges the keyword and the meaning
rankings; semantic ranks by cosine similarity alone. A long memory is matched by its best
passage. Embeddings come from embedding.provider: auto (the default: Ollama when it runs
with an embedding model, else the embedded model, downloaded on first use), embedded,
ollama, openai or disabled; they are cached in .embedding-cache/. The query is the only
text embedded (a few missing memories are embedded on the way; `memory embed` computes the
rest). When no provider is available the command prints how to set one up and shows
keyword results (exit 0); --json then reports mode "keyword-fallback" and a warning, and
otherwise the provider that ran and why ("provider", "providerReason").
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("semantic", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("query", nargs="+", help="what to look for, in your own words")
    _cli.add_filters(parser)
    parser.add_argument("--limit", type=int, default=10, metavar="N", help="show at most N results (default 10)")
    parser.add_argument("--mode", choices=semantic.MODES,
                        help="hybrid (keywords + meaning) or semantic (meaning only); default: search.semanticMode")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--limit must be at least 1")
    query = " ".join(args.query)
    workspace = Workspace()
    line = _cli.StatusLine()
    embedder = embed.Embedder(workspace, download=True, progress=line.show,
                              notify=lambda text: sys.stderr.write(text + "\n"))
    try:
        outcome = semantic.search_memories(workspace, query, _cli.filters_from(args), limit=args.limit,
                                           mode=args.mode, embedder=embedder)
    finally:
        line.end()
    if outcome.problem is not None:
        sys.stderr.write(outcome.problem.notice() + "\n")
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(outcome.as_json())
        return 0

    def measure(hit: semantic.Hit) -> str:
        if outcome.mode == "keyword-fallback":
            return f"score {hit.score:.2f}"
        if hit.similarity is None:
            return f"keyword match #{hit.keyword_rank}"
        return f"similarity {hit.similarity:.3f}"

    _cli.print_hits(outcome.hits, query, measure)
    return 0


if __name__ == "__main__":
    _cli.run(main)
