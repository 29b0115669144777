#!/usr/bin/env python3
"""Latency of `memory health` and `memory repair` as whole processes at 10,000 memories (target <= 5 s).

    python3 bench/bench_health.py [--size 10000] [--runs 5] [--no-embeddings]

The corpus is common.build_corpus (random labelled links, declared in both files), indexed
once; unless --no-embeddings, every memory also has a 768-number embedding cache file, as
after `memory embed`. Timed, end to end:

  health            `memory health --json` (the embedding caches already checked once)
  health, first     the first run after the caches were written: every cache file is parsed
  repair --dry-run  the analysis and the plan
  repair, nothing   `memory repair` when there is nothing to fix
  repair, fixing    `memory repair` after planting, before each run: 10 memories deleted by hand
                    (broken links in their neighbours), 10 one-sided links, 10 stale caches,
                    5 entries cut from index.json

Medians, beside `python3 -c pass` measured in the same run; results go to bench/out/health.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import MEMORY, baseline, build_corpus, isolated_env, median_ms, precompile, report, timed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from _lib.base import clock
from _lib.model import memory  # noqa: E402


def write_caches(directory: Path, rng: random.Random, dimension: int = 768) -> int:
    """An embedding cache file per memory, with the right content hash and model."""
    cache = directory / ".embedding-cache"
    cache.mkdir(exist_ok=True)
    count = 0
    for path in directory.glob("*.md"):
        item = memory.read_file(path, "project")
        data = {"slug": item.slug, "model": "embeddinggemma", "vector": [round(rng.uniform(-1, 1), 6)
                                                                         for _ in range(dimension)],
                "contentHash": item.content_hash(), "timestamp": clock.now_iso()}
        (cache / f"{item.slug}.json").write_text(json.dumps(data))
        count += 1
    return count


def plant(directory: Path, rng: random.Random) -> None:
    """Problems for one repair run (see the module docstring)."""
    files = sorted(directory.glob("*.md"))
    for path in rng.sample(files, 10):
        path.unlink()
    files = sorted(directory.glob("*.md"))
    for path in rng.sample(files, 10):  # drop a `links` entry: the other file still links back
        lines = path.read_text().split("\n")
        if "links:" not in lines or not lines[lines.index("links:") + 1].startswith("  - "):
            continue
        start = lines.index("links:")
        target = lines.pop(start + 1)[4:]
        lines = [line for line in lines if not line.startswith(f"  {target}:")]  # its link-labels entry
        if not lines[start + 1].startswith("  - "):
            lines[start] = "links: []"
        path.write_text("\n".join(lines))
    caches = sorted((directory / ".embedding-cache").glob("*.json"))
    for path in rng.sample(caches, min(10, len(caches))):
        data = json.loads(path.read_text())
        data["contentHash"] = "0" * 64
        path.write_text(json.dumps(data))
    index_path = directory / "index.json"
    index = json.loads(index_path.read_text())
    for slug in rng.sample(sorted(index["memories"]), 5):
        del index["memories"][slug]
    index_path.write_text(json.dumps(index))


def measure(size: int, runs: int, embeddings: bool) -> dict:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="memory-bench-health-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        directory = project / ".claude" / "memory"
        build_corpus(directory, size, edges=size)
        caches = write_caches(directory, rng) if embeddings else 0
        env = isolated_env(home)

        def memory_cmd(*args: str) -> float:
            return timed([str(MEMORY), *args], cwd=project, env=env, check=False)

        started = time.perf_counter()
        subprocess.run([str(MEMORY), "reindex"], cwd=project, env=env, capture_output=True, check=True)
        results: dict = {"memories": size, "embedding_caches": caches,
                         "reindex_s": round(time.perf_counter() - started, 2), **baseline(env, runs)}
        samples: dict[str, list[float]] = {"health, first": [memory_cmd("health", "--json")]}
        samples["health"] = [memory_cmd("health", "--json") for _ in range(runs)]
        samples["repair --dry-run"] = [memory_cmd("repair", "--dry-run") for _ in range(runs)]
        memory_cmd("repair")  # fix what the corpus had (its hubs and random links)
        samples["repair, nothing"] = [memory_cmd("repair") for _ in range(runs)]
        samples["repair, fixing"] = []
        for _ in range(runs):
            plant(directory, rng)
            samples["repair, fixing"].append(memory_cmd("repair"))
        check = subprocess.run([str(MEMORY), "repair", "--json"], cwd=project, env=env, capture_output=True,
                               text=True, check=True)
        results["second_repair_fixes"] = json.loads(check.stdout)["fixed"]
        results["median_ms"] = {name: median_ms(values) for name, values in samples.items()}
        results["ratio_to_python3_pass"] = {name: round(value / results["python3 -c pass"], 1)
                                            for name, value in results["median_ms"].items()}
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-embeddings", action="store_true", help="no embedding cache files")
    args = parser.parse_args()
    precompile()
    result = measure(args.size, args.runs, not args.no_embeddings)
    report("health", {"runs": args.runs, "target_ms": 5000, "result": result})


if __name__ == "__main__":
    main()
