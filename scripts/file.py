#!/usr/bin/env python3
"""Read, write or patch a file under the project's .claude/memory/ (checked paths, atomic writes)."""

from __future__ import annotations

import argparse
import sys

import _cli
from _lib.base import errors
from _lib.ops import memfiles
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory file read .claude/memory/tasks/1.2.json
  memory file read notes/plan.md --json                      # relative to .claude/memory/
  memory file write .claude/memory/notes/plan.md --content "# Plan"
  memory file write notes/decisions.yaml < decisions.yaml    # the content from stdin
  memory file update-json .claude/memory/state.json --patch '{"phase": 2, "draft": null}'
  memory file update-json state.json --jq '.runs += 1'       # needs the jq program

Paths: `.claude/memory/...` is relative to the project root, an absolute path must lie
inside it, anything else is relative to .claude/memory/. `..`, symlinks leading outside,
and extensions other than .json .md .txt .yaml .yml are refused; writes never follow a
symlink. Derived files (index.json, graph.json, task-index.json, .cache/) are not
writable here: use `memory reindex` or `memory task ...`.
Writes are verified first (JSON and YAML must parse, task files must match the task
schema), then replace the file atomically; line endings become LF. --patch is an
RFC 7386 JSON merge patch: objects merge, null removes a key.
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("file", __doc__.splitlines()[0], EXAMPLES)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_cli.ArgumentParser)
    read = _sub(commands, "read", "print a memory file")
    read.add_argument("path", help="the file, e.g. .claude/memory/tasks/1.json")
    write = _sub(commands, "write", "create or replace a memory file (content from --content or stdin)")
    write.add_argument("path", help="the file, e.g. .claude/memory/notes/plan.md")
    write.add_argument("--content", help="the new content (default: read stdin)")
    update = _sub(commands, "update-json", "change a JSON memory file with a merge patch or a jq expression")
    update.add_argument("path", help="a .json file, e.g. .claude/memory/state.json")
    how = update.add_mutually_exclusive_group(required=True)
    how.add_argument("--patch", metavar="JSON", help="an RFC 7386 JSON merge patch")
    how.add_argument("--jq", metavar="EXPR", help="a jq expression whose single result replaces the document")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("choose a command: read, write, update-json")
    workspace = Workspace(load_config=False)  # so a broken config.json can be repaired with `memory file write`
    code = {"read": run_read, "write": run_write, "update-json": run_update}[args.command](workspace, args)
    _cli.print_warnings(workspace.warnings)
    return code


def _sub(commands: argparse._SubParsersAction, name: str, summary: str) -> argparse.ArgumentParser:
    sub = commands.add_parser(name, help=summary, description=summary, formatter_class=_cli.HelpFormatter,
                              prog=f"memory file {name}", epilog=EXAMPLES)
    _cli.add_json(sub)
    return sub


def run_read(workspace: Workspace, args: argparse.Namespace) -> int:
    target, text = memfiles.read(workspace, args.path)
    if args.json:
        _cli.emit_json({"path": target.display, "absolutePath": str(target.path), "content": text})
    else:
        sys.stdout.write(text)
    return 0


def run_write(workspace: Workspace, args: argparse.Namespace) -> int:
    content = args.content
    if content is None:
        content = _stdin_text()
    target = memfiles.write(workspace, args.path, content)
    size = target.path.stat().st_size
    if args.json:
        _cli.emit_json({"path": target.display, "absolutePath": str(target.path), "bytes": size})
    else:
        print(f"Wrote {target.display} ({size} bytes)")
    return 0


def run_update(workspace: Workspace, args: argparse.Namespace) -> int:
    target, value = memfiles.update_json(workspace, args.path, patch=args.patch, jq=args.jq)
    if args.json:
        _cli.emit_json({"path": target.display, "absolutePath": str(target.path), "data": value})
    else:
        print(f"Updated {target.display}")
    return 0


STDIN_WAIT_SECONDS = 2.0  # an idle inherited pipe must not hang the command


def _stdin_text() -> str:
    """Everything piped (or redirected from a file) to stdin; refused when nothing is on its way."""
    import os
    import select
    import stat

    missing = errors.InvalidInput("no content: give --content TEXT or pipe the content to stdin",
                                  'e.g. memory file write notes.md --content "# Notes"')
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        raise missing from None
    if not stat.S_ISREG(mode):
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            raise missing  # a terminal or /dev/null
        ready, _, _ = select.select([sys.stdin], [], [], STDIN_WAIT_SECONDS)
        if not ready:
            raise missing
    return memfiles.decode(sys.stdin.buffer.read(memfiles.MAX_BYTES + 1), "stdin")


if __name__ == "__main__":
    _cli.run(main)
