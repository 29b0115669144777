#!/usr/bin/env python3
"""Compute missing and stale embeddings for semantic search (backfill)."""

from __future__ import annotations

import sys

import _cli
from _lib.vectors import backfill, embedder as embed
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory embed                        # memories without an up-to-date embedding, every scope
  memory embed --scope project --batch 32
  memory embed --all                  # recompute every embedding (e.g. the model behind a name changed)

An embedding is recomputed when the memory's content changed (content hash) or the model
did. Cache files of deleted memories are removed. Unlike other commands, this one always
asks the provider again, even if it was found unavailable a moment ago, so it is also the
way to check a provider you just started; with the embedded provider (embedding.provider
auto or embedded) it downloads the model on first use. Progress and the time left go to
stderr when it is a terminal. Each batch is saved as it is done: after an interruption,
run it again to continue where it stopped.
"""


class Progress(_cli.StatusLine):
    """`embedding project: [#####.....] 1200/10000, 0:42 left` on a terminal."""

    WIDTH = 30

    def __init__(self) -> None:
        super().__init__()
        self._started: tuple[str, int, float] | None = None  # scope, done, time of the first report

    def __call__(self, scope: str, done: int, total: int) -> None:
        import time

        if not total:
            return
        now = time.monotonic()
        if self._started is None or self._started[0] != scope:
            self._started = (scope, done, now)
        first_scope, first_done, began = self._started
        left = ""
        if done > first_done and done < total:
            seconds = (now - began) / (done - first_done) * (total - done)
            left = f", {int(seconds // 60)}:{int(seconds % 60):02d} left"
        filled = self.WIDTH * done // total
        self.show(f"embedding {scope}: [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total}{left}",
                  force=done in (0, total))
        if done >= total:
            self.end()


def main(argv: list[str]) -> int:
    parser = _cli.parser("embed", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_scope(parser, "only this scope (default: every readable scope)")
    parser.add_argument("--all", action="store_true", help="recompute every embedding, not only missing or stale ones")
    parser.add_argument("--batch", type=int, metavar="N",
                        help="memories embedded and saved per round (default 16 with a server, "
                             "256 with the embedded model)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    if args.batch is not None and args.batch < 1:
        parser.error("--batch must be at least 1")
    workspace = Workspace()
    progress = Progress()
    embedder = embed.Embedder(workspace, download=True, progress=progress.show,
                              notify=lambda line: sys.stderr.write(line + "\n"))
    try:
        embedder, results = backfill.backfill(workspace, args.scope, everything=args.all, batch=args.batch,
                                           progress=progress, embedder=embedder)
    finally:
        progress.end()
    status = embedder.ready()
    if status.note:
        workspace.warn(status.note)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json({"provider": status.provider, "providerReason": status.reason, "model": status.model,
                        "dimension": status.dim, "scopes": [result.as_json() for result in results]})
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
    print(f"Model: {status.model} ({status.provider}{dimension})")
    return 0


if __name__ == "__main__":
    _cli.run(main)
