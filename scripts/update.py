#!/usr/bin/env python3
"""Change a memory's title, content, tags or type (bumps `updated`, keeps `created`)."""

from __future__ import annotations

import _cli
from _lib.base import errors
from _lib.model import memory
from _lib.ops import store
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory update decision-api-uses-oauth2 --append "Refresh tokens expire after 7 days."
  memory update decision-api-uses-oauth2 --title "API uses OAuth2 with PKCE" --add-tags security
  memory update gotcha-flaky-ci --file notes.md          # replace the content (- reads stdin)
  memory update learning-x --type decision --remove-tags draft
  memory update gotcha-token-refresh --reanchor          # the code it is about changed: still right

The slug never changes. Updating drops the memory's cached embedding (it is recomputed).
A project or local memory is anchored to the files (and symbols) it names; an update adds
anchors for files newly named but keeps the recorded state of the others, so `memory verify`
still shows code that changed since. --reanchor accepts the code as it is now.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("update", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("slug", help="the memory to change")
    parser.add_argument("--title", help="new title")
    body = parser.add_mutually_exclusive_group()
    body.add_argument("--content", help="replace the content")
    body.add_argument("--append", help="add text at the end of the content")
    body.add_argument("--file", help="replace the content with a file's text (- for stdin)")
    parser.add_argument("--tags", help="replace all tags (comma-separated)")
    parser.add_argument("--add-tags", help="add these tags (comma-separated)")
    parser.add_argument("--remove-tags", help="remove these tags (comma-separated)")
    parser.add_argument("--type", help="new type: " + ", ".join(memory.TYPES))
    parser.add_argument("--status", choices=memory.STATUSES, help="set the lifecycle status")
    parser.add_argument("--paths", action="append", metavar="GLOB", help="for gotchas: replace the file globs")
    parser.add_argument("--reanchor", action="store_true",
                        help="accept the current code: record the anchors afresh (see `memory verify`)")
    _cli.add_scope(parser, "the scope holding the memory (default: the most specific one)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)

    content = args.content
    if args.file is not None:
        content = _cli.read_text_file(args.file)
    elif content is None and args.append is None:
        content = _cli.piped_stdin() if _nothing_else(args) else None
    fields: dict[str, object] = {}
    if args.status:
        fields["status"] = args.status
    if args.paths:
        fields["paths"] = args.paths
    changes = store.Changes(title=args.title, content=content, append=args.append, tags=args.tags,
                            add_tags=args.add_tags, remove_tags=args.remove_tags, type=args.type, fields=fields, reanchor=args.reanchor)
    if changes.empty():
        raise errors.InvalidInput("nothing to update", "give --title, --content, --append, --file, --tags, "
                                                       "--add-tags, --remove-tags, --type or --reanchor")
    workspace = Workspace()
    item = store.update(workspace, args.slug, changes, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(item.as_json(with_content=False))
    else:
        print(f"Updated {item.slug} ({item.scope} scope): {item.path}")
    return 0


def _nothing_else(args: object) -> bool:
    """Piped stdin is the new content only when no other change was asked for."""
    return all(getattr(args, name) is None for name in ("title", "tags", "add_tags", "remove_tags", "type",
                                                        "status", "paths")) and not args.reanchor


if __name__ == "__main__":
    _cli.run(main)
