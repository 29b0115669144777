#!/usr/bin/env python3
"""Write a new memory into a scope (markdown with YAML frontmatter)."""

from __future__ import annotations

import _cli
from _lib.model import memory
from _lib.ops import store
from _lib.workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXAMPLES = """\
examples:
  memory write "API uses OAuth2" --type decision --tags auth,api --content "We chose OAuth2 with PKCE."
  memory write "Flaky CI on macOS" --type gotcha --tags ci,macos < notes.md
  memory write --file decision.md --scope project          # title and fields from the file's frontmatter
  memory write "Note"                                     # type learning, tags from the title, default scope

The slug is <type>-<title words> (decision-api-uses-oauth2), with -1, -2 ... if taken.
The default scope is project inside a git repository, else global (config: scopes.default).
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("write", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("title", nargs="?", help="short title (1-200 characters)")
    parser.add_argument("--type", help=f"memory type (default {memory.DEFAULT_TYPE}): " + ", ".join(memory.TYPES))
    parser.add_argument("--tags", help="comma-separated lowercase tags, e.g. auth,api (default: from the title)")
    body = parser.add_mutually_exclusive_group()
    body.add_argument("--content", help="the body text (markdown)")
    body.add_argument("--file", help="read the body from a file (- for stdin); frontmatter in it is kept")
    _cli.add_scope(parser, "where to store it (default: project in a git repo, else global)")
    parser.add_argument("--links", help="comma-separated slugs to link to (relates-to, both directions)")
    parser.add_argument("--slug", help="use this slug instead of deriving one from the title")
    parser.add_argument("--status", choices=memory.STATUSES, help="lifecycle status (default active)")
    parser.add_argument("--supersedes", metavar="SLUG",
                        help="this memory replaces SLUG: it is marked superseded and the two are linked")
    parser.add_argument("--paths", action="append", metavar="GLOB",
                        help="for gotchas: file globs the warning applies to, e.g. 'src/auth/**' (repeatable)")
    parser.add_argument("--created", help="creation time for imported knowledge (ISO 8601, not in the future)")
    parser.add_argument("--updated", help="last update time (ISO 8601, not before --created)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)

    text = _cli.body_from(args)
    fields: dict[str, Any] = {}
    content, document_title = text or "", None
    if args.file is not None and text is not None:
        fields, content, document_title = store.from_document(text)
    title = args.title if args.title is not None else document_title
    if title is None:
        parser.error("a title is required (or a --file whose frontmatter or first heading gives one)")
    tags = args.tags if args.tags is not None else fields.pop("tags", None)
    if isinstance(tags, list):
        tags = [str(tag) for tag in tags]
    new = store.NewMemory(
        title=title,
        type=args.type or _string(fields.pop("type", None)),
        tags=tags,
        content=content,
        slug=args.slug,
        links=[item.strip() for item in args.links.split(",")] if args.links else
        [str(item) for item in fields.pop("links", []) or [] if isinstance(item, str)],
        created=args.created or _string(fields.pop("created", None)),
        updated=args.updated or _string(fields.pop("updated", None)),
        fields=fields,
    )
    if args.status:
        new.fields["status"] = args.status
    if args.paths:
        new.fields["paths"] = args.paths
    if args.supersedes:
        new.fields["supersedes"] = args.supersedes
    workspace = Workspace()
    created = store.write(workspace, new, scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(created.as_json(with_content=False))
    else:
        print(f"Created {created.slug} ({created.scope} scope): {created.path}")
    return 0


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


if __name__ == "__main__":
    _cli.run(main)
