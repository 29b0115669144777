#!/usr/bin/env python3
"""Score a memory's quality (0-100) with a breakdown and suggestions to improve it."""

from __future__ import annotations

import _cli
from _lib.health import quality
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory quality decision-oauth2
  memory quality decision-oauth2 --json      # {"score": 72, "breakdown": {...}, "suggestions": [...]}
  memory quality --all                       # every memory, lowest score first
  memory quality --all --scope project --json

Score = title (15) + tags (10) + structure and length (25) + links and hub (20)
      + freshness (10) + completeness for the type (20): a decision states its rationale
      and trade-offs, a gotcha its trigger and fix, a learning the insight and an example.
Memories below quality.minQualityScore (default 50) are listed by `memory health`.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("quality", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to score")
    parser.add_argument("--all", action="store_true", help="score every memory, lowest first")
    _cli.add_scope(parser, "the scope to look in (default: the most specific holding the slug; --all: every one)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.all == (args.slug is not None):
        parser.error("give a SLUG or --all (not both)")
    workspace = Workspace()
    threshold = workspace.config.get("quality.minQualityScore", 50)
    if args.all:
        results = quality.assess_all(workspace, args.scope)
        _cli.print_warnings(workspace.warnings)
        if args.json:
            scores = [result.score for result in results]
            _cli.emit_json({"threshold": threshold, "count": len(results),
                            "average": round(sum(scores) / len(scores), 1) if scores else None,
                            "below": sum(score < threshold for score in scores),
                            "memories": [result.as_json() for result in results]})
        else:
            print(render_all(results, threshold))
        return 0
    result = quality.assess_slug(workspace, args.slug, args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({**result.as_json(), "threshold": threshold})
    else:
        print(render(result, threshold))
    return 0


def render(result: quality.Quality, threshold: int) -> str:
    verdict = "" if result.score >= threshold else f"  (below quality.minQualityScore {threshold})"
    lines = [f"{result.slug} ({result.scope} scope, {result.type}): {result.score}/100{verdict}", ""]
    rows = [[part.name, f"{part.score}/{part.max}", part.note] for part in result.parts]
    lines += ["  " + line for line in _cli.table(["PART", "SCORE", "NOTE"], rows).splitlines()]
    suggestions = result.suggestions
    lines.append("")
    if suggestions:
        lines.append("Suggestions:")
        lines += [f"  - {suggestion}" for suggestion in suggestions]
    else:
        lines.append("Nothing to suggest: full marks.")
    return "\n".join(lines)


def render_all(results: list[quality.Quality], threshold: int) -> str:
    if not results:
        return "No memories found."
    rows = [[str(result.score), result.scope, result.slug, result.suggestions[0] if result.suggestions else ""]
            for result in results]
    below = sum(result.score < threshold for result in results)
    average = sum(result.score for result in results) / len(results)
    return (_cli.table(["SCORE", "SCOPE", "SLUG", "FIRST SUGGESTION"], rows)
            + f"\n\n{len(results)} memories, average {average:.1f}; {below} below quality.minQualityScore "
              f"({threshold}). `memory quality SLUG` shows a breakdown.")


if __name__ == "__main__":
    _cli.run(main)
