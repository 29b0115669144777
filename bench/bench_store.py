#!/usr/bin/env python3
"""Latency of the store operations as whole processes, at 1,000 and 10,000 memories.

    python3 bench/bench_store.py [--sizes 1000,10000] [--runs 15]

Reports the median end-to-end time of write, read, update, delete, list and search
(and link, unlink, edges, graph with `--graph`), beside `python -S -c pass` (the floor) measured in
the same run, and the growth from the smallest to the largest size. Results also go
to bench/out/store.json.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from pathlib import Path

from common import MEMORY, baseline, build_corpus, isolated_env, median_ms, precompile, report, timed


def measure(size: int, runs: int, with_graph: bool) -> dict:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        memory_dir = project / ".claude" / "memory"
        slugs = build_corpus(memory_dir, size, edges=3 * size if with_graph else size // 2)
        env = isolated_env(home)

        def memory(*args: str) -> float:
            return timed([str(MEMORY), *args], cwd=project, env=env)

        started = time.perf_counter()
        memory("reindex")
        first_index = time.perf_counter() - started
        memory("list", "--limit", "1")  # warm the page cache like a working session would

        results = {"memories": size, "reindex_s": round(first_index, 2), **baseline(env, runs)}
        written: list[str] = []
        samples: dict[str, list[float]] = {name: [] for name in
                                           ("write", "read", "update", "delete", "list", "list --type", "search")}
        for run in range(runs):
            title = f"Bench write {run} about caching and retries"
            samples["write"].append(memory("write", title, "--tags", "bench", "--content", "x " * 200))
            written.append(f"learning-bench-write-{run}-about-caching-and-retries")
            samples["read"].append(memory("read", rng.choice(slugs)))
            samples["update"].append(memory("update", rng.choice(slugs), "--append", f"note {run}"))
            samples["list"].append(memory("list"))
            samples["list --type"].append(memory("list", "--type", "gotcha", "--limit", "20"))
            samples["search"].append(memory("search", " ".join(rng.sample(slugs, 1)[0].split("-")[1:4])))
        for slug in written:
            samples["delete"].append(memory("delete", slug))
        if with_graph:
            samples.update({"link": [], "unlink": [], "edges": [], "graph --depth 2": []})
            for run in range(runs):
                a, b = rng.sample(slugs, 2)
                samples["link"].append(memory("link", a, b, "--label", "builds-on"))
                samples["unlink"].append(memory("unlink", a, b, "--label", "builds-on"))
                samples["edges"].append(memory("edges", a))
                samples["graph --depth 2"].append(memory("graph", a, "--depth", "2"))
        results["median_ms"] = {name: median_ms(values) for name, values in samples.items()}
        results["ratio_to_floor"] = {name: round(value / results["python -S -c pass"], 2)
                                            for name, value in results["median_ms"].items()}
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--graph", action="store_true", help="also time link, unlink, edges, graph (30k edges at 10k)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    precompile()
    results = [measure(size, args.runs, args.graph) for size in sizes]
    growth = {name: round(results[-1]["median_ms"][name] / results[0]["median_ms"][name], 2)
              for name in results[0]["median_ms"]} if len(results) > 1 else {}
    report("store" + ("-graph" if args.graph else ""), {"runs": args.runs, "results": results,
                                                         f"growth_{sizes[0]}_to_{sizes[-1]}": growth})


if __name__ == "__main__":
    main()
