#!/usr/bin/env python3
"""Delete a memory with its index entry, graph edges (both directions) and cached embedding."""

from __future__ import annotations

import _cli
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory delete decision-api-uses-oauth2
  memory delete decision-api-uses-oauth2 --scope global
  memory delete --type breadcrumb --since 2026-01-01 --dry-run      # what would go
  memory delete --tag scratch --yes                                 # every memory tagged scratch

Memories that linked to it have the slug removed from their `links`. A deleted memory goes to
the trash: `memory restore SLUG` brings it back.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("delete", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", nargs="?", help="the memory to delete (or use filters)")
    _cli.add_bulk(parser, "delete")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    if args.slug is None:
        return _delete_many(parser, args, workspace)
    _cli.refuse_filters_with_slug(parser, args)
    deleted = store.delete(workspace, args.slug, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"slug": deleted.slug, "scope": deleted.scope, "path": str(deleted.path),
                        "unlinked": deleted.unlinked})
    else:
        print(f"Deleted {deleted.slug} ({deleted.scope} scope): {deleted.path}")
        if deleted.unlinked:
            print("Removed its links from: " + ", ".join(deleted.unlinked))
    return 0


def _delete_many(parser, args, workspace: Workspace) -> int:  # type: ignore[no-untyped-def]
    """`memory delete --tag X`: every selected memory, after the count is confirmed."""
    from _lib.ops import bulk

    entries = bulk.select(workspace, _cli.bulk_filters(parser, args))
    preview = bulk.delete_many(workspace, entries, dry_run=True)
    if args.dry_run or _cli.confirm(args, len(preview.changed), "be deleted"):
        result = preview if args.dry_run else bulk.delete_many(workspace, entries)
        _cli.print_outcome(args, workspace, result, "deleted (memory restore SLUG brings one back)")
        return 0
    _cli.print_outcome(args, workspace, preview, "deleted")
    raise _cli.unconfirmed(len(preview.changed), "be deleted")


if __name__ == "__main__":
    _cli.run(main)
