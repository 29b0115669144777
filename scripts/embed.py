#!/usr/bin/env python3
"""Compute missing and stale embeddings for semantic search (backfill)."""

from __future__ import annotations

import sys

import _cli
from _lib import embed
from _lib.scopes import Workspace

EXAMPLES = """\
examples:
  memory embed                        # memories without an up-to-date embedding, every scope
  memory embed --scope project --batch 32
  memory embed --all                  # recompute every embedding (e.g. the model behind a name changed)

An embedding is recomputed when the memory's content changed (content hash) or the model
did. Cache files of deleted memories are removed. Unlike other commands, this one always
asks the provider again, even if it was found unavailable a moment ago, so it is also the
way to check a provider you just started. Progress goes to stderr when it is a terminal.
"""


class Progress:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    WIDTH = 30

    def __init__(self) -> None:
        self.active = sys.stderr.isatty()
        self.shown = False

    def __call__(self, scope: str, done: int, total: int) -> None:
        if not self.active or not total:
            return
        filled = self.WIDTH * done // total
        sys.stderr.write(f"\rembedding {scope}: [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total}")
        sys.stderr.flush()
        self.shown = True
        if done >= total:
            self.end()

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            self.shown = False


def main(argv: list[str]) -> int:
    parser = _cli.parser("embed", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser, "only this scope (default: every readable scope)")
    parser.add_argument("--all", action="store_true", help="recompute every embedding, not only missing or stale ones")
    parser.add_argument("--batch", type=int, default=16, metavar="N",
                        help="memories embedded per round (default 16)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    workspace = Workspace()
    progress = Progress()
    try:
        embedder, results = embed.backfill(workspace, args.scope, everything=args.all, batch=args.batch,
                                           progress=progress)
    finally:
        progress.end()
    status = embedder.ready()
    if status.note:
        workspace.warn(status.note)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"provider": embedder.settings.provider, "model": status.model, "dimension": status.dim,
                        "scopes": [result.as_json() for result in results]})
        return 0
    shown = [result for result in results if result.memories or result.removed]
    if not shown:
        print("No memories found; nothing to embed.")
    for result in shown:
        line = (f"{result.scope} scope: embedded {result.embedded} of {result.memories} "
                f"memor{'y' if result.memories == 1 else 'ies'}, {result.up_to_date} already up to date")
        if result.skipped:
            line += f", {result.skipped} skipped (unreadable or changed meanwhile)"
        if result.removed:
            line += f"; removed {result.removed} cache file{'s' if result.removed != 1 else ''} of deleted memories"
        print(line)
    dimension = f", {status.dim} dimensions" if status.dim else ""
    print(f"Model: {status.model} ({embedder.settings.provider}{dimension})")
    return 0


if __name__ == "__main__":
    _cli.run(main)
