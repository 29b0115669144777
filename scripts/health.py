#!/usr/bin/env python3
"""Check the memory store: orphans, broken links, frontmatter, index/graph drift, caches, duplicates."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator

import _cli
from _lib.health import checks as health, facts
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory health
  memory health --scope project                 # e.g. as a CI step: exit 1 on errors
  memory health --json | jq '.problems[] | select(.severity == "error")'

Errors (exit 1): unreadable files, frontmatter breaking the schema, `links` to missing
memories or to another scope. Warnings (exit 0): derived files out of step, one-sided
links, orphans, empty hubs, duplicates, low quality, stale embedding caches.
`memory repair --dry-run` shows what `memory repair` would fix; `memory quality SLUG`
explains a score.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("health", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser, "check this scope only (default: every readable scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    report = health.check(workspace, args.scope)
    _cli.print_warnings(workspace.warnings)
    for chunk in (report.json_chunks() if args.json else render_chunks(report)):
        sys.stdout.write(chunk)
    sys.stdout.write("\n")
    if not report.ok:
        sys.stderr.write(f"error: memory health found {report.errors} error{'s' if report.errors != 1 else ''}\n"
                         "hint: fix them by hand as each hint says (`memory repair` fixes those marked fixable)\n")
        return 1
    return 0


def render_chunks(report: facts.Report) -> Iterator[str]:
    """The human-readable report in pieces: a summary, then each scope's totals and problems."""
    problems = report.problems
    fixable = sum(problem.fixable for problem in problems)
    summary = report.summary()
    lines = [f"Memory health: {_count(summary['memories'], 'memory', 'memories')} in "
             f"{_count(len(report.scopes), 'scope')}; {_count(report.errors, 'error')}, "
             f"{_count(report.warnings, 'warning')}"]
    lines.append(f"Orphans: {summary['orphans']}; broken links: {summary['brokenLinks']}; "
                 f"frontmatter issues: {summary['frontmatterIssues']}")
    if not report.scopes:
        lines.append("No memory directories found; nothing to check.")
    for scope in report.scopes:
        lines.append("")
        lines.append(f"{scope.scope.name} scope ({scope.scope.root}): {_count(scope.memories, 'memory', 'memories')}")
        if scope.types:
            lines.append("  " + ", ".join(f"{kind} {count}" for kind, count in sorted(scope.types.items())))
        kinds: dict[str, int] = {}
        for problem in scope.problems:
            kinds[problem.kind] = kinds.get(problem.kind, 0) + 1
        if kinds:
            lines.append("  problems: " + ", ".join(f"{kind} {count}" for kind, count in kinds.items()))
        else:
            lines.append("  no problems")
        yield "\n".join(lines)
        lines = []
        prefix = f"{scope.scope.root}/"
        chunk = facts.PROBLEMS_PER_CHUNK  # 300,000 problems make 100 MB of text: written a chunk at a time
        for start in range(0, len(scope.problems), chunk):
            yield "".join(f"\n  {problem.severity:<7}  {problem.kind}  {_relative(problem, prefix)}"
                          f"\n           {problem.message}\n           fix: {problem.hint}"
                          for problem in scope.problems[start:start + chunk])
    if fixable:
        lines.append("")
        lines.append(f"`memory repair` can fix {fixable} of these without guessing "
                     "(`memory repair --dry-run` shows how).")
    if lines:
        yield "\n" + "\n".join(lines)


def _relative(problem: facts.Problem, prefix: str) -> str:
    if problem.path is None:
        return problem.slug or ""
    text = str(problem.path)
    return text[len(prefix):] if text.startswith(prefix) else text


def _count(number: int, singular: str, plural: str | None = None) -> str:
    return f"{number:,} {singular if number == 1 else plural or singular + 's'}"


if __name__ == "__main__":
    _cli.run(main)
