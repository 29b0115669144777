#!/usr/bin/env python3
"""Check memories against the code they are about: fresh, changed since, or gone."""

from __future__ import annotations

import _cli
from _lib.ops import freshness
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory verify gotcha-token-refresh-races    # one memory, with commits since for changed files
  memory verify --all                         # every anchored memory of the project
  memory verify --all --json

A project or local memory is anchored, when written or updated, to the files it names (its
`paths:` globs, a file summary's `path`, paths in its text) and to the symbols it names in
backquotes (`verifyToken()`), with each file's git blob id and the commit at the time.
  fresh     every anchored file is as it was
  changed   a file's content differs: the memory is still shown, marked "(code changed since)"
  gone      a file was deleted or a symbol is no longer in its file: the memory is no longer
            shown as advice, only named once per session as "may be obsolete"
Review it, then `memory update SLUG --reanchor` (the code changed, the memory still holds),
`memory update SLUG --content ...` or `memory delete SLUG`.
"""

SYMBOLS = {"fresh": "ok", "changed": "CHANGED", "gone": "GONE", freshness.NOT_ANCHORED: "-"}


def main(argv: list[str]) -> int:
    parser = _cli.parser("verify", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to check")
    parser.add_argument("--all", action="store_true", help="every anchored memory (project and local scopes)")
    _cli.add_scope(parser, "only this scope")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.slug and args.all:
        parser.error("give a SLUG or --all, not both")
    if not args.slug and not args.all:
        parser.error("give a SLUG or --all (e.g. memory verify --all)")
    workspace = Workspace()
    results = freshness.verify(workspace, args.slug, args.scope)
    _cli.print_warnings(workspace.warnings)
    counts = {state: sum(result.state == state for result in results) for state in ("fresh", "changed", "gone")}
    if args.json:
        _cli.emit_json({"counts": counts, "memories": [result.as_json() for result in results]})
        return 0
    if not results:
        print("No anchored memories: none names a file of this project.")
        return 0
    for result in results:
        entry = result.entry
        print(f"{SYMBOLS[result.state]:7} {entry.slug} ({entry.scope})")
        if result.verdict is None:
            print("        not anchored: it names no file of this project (or is not a project or local memory)")
            continue
        for finding in result.verdict.findings:
            if finding.state != "fresh" or args.slug:
                since = result.commits.get(finding.anchor.path)
                note = f", {since} commit{'s' if since != 1 else ''} since" if since is not None else ""
                print(f"        {finding.state}: {finding.anchor.name()} (anchored at {finding.anchor.commit}{note})")
    print(f"{counts['fresh']} fresh, {counts['changed']} changed, {counts['gone']} gone."
          + (" Review, then `memory update SLUG --reanchor`." if counts["changed"] or counts["gone"] else ""))
    return 0


if __name__ == "__main__":
    _cli.run(main)
