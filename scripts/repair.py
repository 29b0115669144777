#!/usr/bin/env python3
"""Fix what `memory health` finds fixable without guessing: links, index, graph, tags, timestamps, caches."""

from __future__ import annotations

import _cli
from _lib.health import repair
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory repair --dry-run          # show the plan, change nothing
  memory repair
  memory repair --scope project --json

Fixes: links to missing memories (removed, or re-pointed when a memory lists the old slug
in `previous-slugs`), one-sided links (the other side is added with the inverse label), self
and repeated links, edges only graph.json knows (written into the files), tag case, missing
or unquoted timestamps, stale or orphaned embedding caches, and index.json / graph.json
drift. Never deletes a memory, never guesses. Copies of the files it rewrites are kept in
<scope>/.cache/repair-backup-* until it has finished. Run `memory health` for what is left.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("repair", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    _cli.add_scope(parser, "repair this scope only (default: every writable scope)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    report = repair.repair(workspace, args.scope, dry_run=args.dry_run)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(report.as_json())
        return 0
    print(render(report))
    return 0


def render(report: repair.RepairReport) -> str:
    """Planned or done actions per scope, then what is left for a person."""
    lines: list[str] = []
    if not report.scopes:
        return "No memory directories found; nothing to repair."
    for scope in report.scopes:
        head = f"{scope.scope.name} scope ({scope.scope.root})"
        if scope.skipped:
            lines.append(f"{head}: skipped: {scope.skipped}")
            continue
        if not scope.actions:
            lines.append(f"{head}: nothing to repair")
        else:
            verb = "would do" if report.dry_run else "done"
            lines.append(f"{head}: {len(scope.actions)} fix{'es' if len(scope.actions) != 1 else ''} {verb}")
            for action in scope.actions:
                where = action.slug or (action.path.name if action.path else "")
                lines.append(f"  {action.action:<20} {where}: {action.detail}")
        if scope.remaining:
            kinds: dict[str, int] = {}
            for problem in scope.remaining:
                kinds[problem.kind] = kinds.get(problem.kind, 0) + 1
            lines.append("  left for you (needs a decision): " + ", ".join(f"{kind} {count}"
                                                                           for kind, count in kinds.items()))
    if report.dry_run:
        lines.append("Dry run: no memory or cache file was changed. Run `memory repair` to apply.")
    if report.remaining:
        lines.append("Run `memory health` to see what is left and how to fix it.")
    return "\n".join(lines)


if __name__ == "__main__":
    _cli.run(main)
