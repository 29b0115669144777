#!/usr/bin/env python3
"""Whole-process latency of the maintenance verbs on large stores.

    python3 bench/bench_maintenance.py [--size 10000] [--fan-in 1000] [--runs 5]

- rename of a memory linked from FAN_IN others (each file declares the link and a wiki link;
  all of them are rewritten), alternating OLD -> NEW -> OLD;
- move of one memory between the project and global scopes of a SIZE-memory store;
- bulk tag (then untag) of every memory of a SIZE-memory store (`--scope project --yes`).

Medians beside `python3 -c pass` measured in the same run; results also go to
bench/out/maintenance.json.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from common import MEMORY, baseline, build_corpus, isolated_env, median_ms, precompile, report, timed

STAMP = '"2026-01-01T00:00:00Z"'


def fan_in_store(directory: Path, fan_in: int) -> None:
    """hub-target linked from `fan_in` memories (both directions declared), plus a wiki link each."""
    directory.mkdir(parents=True, exist_ok=True)
    holders = [f"learning-holder-{index}" for index in range(fan_in)]
    head = f"---\ntype: hub\ntags:\n  - bench\ncreated: {STAMP}\nupdated: {STAMP}\nlinks:\n"
    (directory / "hub-target.md").write_text(head + "".join(f"  - {slug}\n" for slug in holders)
                                             + "---\n\n# Target\n\nThe hub.\n")
    for slug in holders:
        (directory / f"{slug}.md").write_text(
            f"---\ntype: learning\ntags:\n  - bench\ncreated: {STAMP}\nupdated: {STAMP}\nlinks:\n  - hub-target\n"
            f"---\n\n# Holder {slug}\n\nSee [[hub-target]] for the whole picture.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--fan-in", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    precompile()
    results: dict = {"size": args.size, "fanIn": args.fan_in, "runs": args.runs}
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env = isolated_env(home)
        results["baseline"] = baseline(env, args.runs)

        def memory(*argv: str) -> float:
            return timed([str(MEMORY), *argv], cwd=project, env=env)

        fan_in_store(project / ".claude" / "memory", args.fan_in)
        memory("reindex")
        names = ["hub-target", "hub-target-renamed"]
        samples = [memory("rename", names[run % 2], names[(run + 1) % 2]) for run in range(args.runs)]
        results[f"rename (linked from {args.fan_in})"] = median_ms(samples)

    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env = isolated_env(home)
        slugs = build_corpus(project / ".claude" / "memory", args.size, edges=args.size // 2)

        def memory(*argv: str) -> float:  # noqa: F811 - the second store
            return timed([str(MEMORY), *argv], cwd=project, env=env)

        memory("reindex")
        memory("list", "--limit", "1")
        memory("write", "Global", "--scope", "global", "--tags", "g")
        mover = slugs[1]
        samples = []
        for run in range(args.runs):
            there = ("global", "project") if run % 2 == 0 else ("project", "global")
            samples.append(memory("move", mover, "--to", there[0], "--scope", there[1]))
        results[f"move (store of {args.size})"] = median_ms(samples)
        tag_runs = max(1, args.runs // 2)
        tagged = [memory("tag", "--scope", "project", "bulk-bench", "--yes") if run % 2 == 0 else
                  memory("untag", "--scope", "project", "bulk-bench", "--yes") for run in range(tag_runs * 2)]
        results[f"bulk tag+untag of all {args.size}"] = median_ms(tagged)
    report("maintenance", results)


if __name__ == "__main__":
    main()
