#!/usr/bin/env python3
"""Latency of `memory semantic` over 10,000 memories with a warm embedding cache.

    python3 bench/bench_semantic.py [--size 10000] [--runs 15] [--dim 768]

Builds the synthetic corpus of bench/common.py in a project scope, serves embeddings from
the test stub (tests/servers/embedding_stub.py, a real HTTP server on 127.0.0.1, as a
separate process), embeds everything with `memory embed`, then times whole processes, end
to end: `memory semantic` in hybrid (the default) and semantic mode, and `memory search`
for comparison, beside `python3 -c pass`. The query embedding call (one POST /api/embed on
a new connection, as a command makes it) and the cost of importing `requests` are timed on
their own. Results also go to bench/out/semantic.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import (MEMORY, REPO, baseline, build_corpus, isolated_env, median_ms, precompile, report,
                    search_queries, time_searches, timed)

sys.path.insert(0, str(REPO / "tests" / "servers"))

from embedding_stub import EmbeddingStubProcess  # noqa: E402


def query_embedding_ms(url: str, queries: list[str], runs: int) -> dict[str, float]:
    """The query embedding as one `memory semantic` makes it: one POST /api/embed on a new
    connection with `requests`; and what importing `requests` adds to a process."""
    import requests

    requests.post(f"{url}/api/embed", json={"model": "embeddinggemma", "input": [queries[0]]}, timeout=10)
    calls = []
    for run in range(runs):
        body = {"model": "embeddinggemma", "input": [queries[run % len(queries)]]}
        started = time.perf_counter()
        requests.post(f"{url}/api/embed", json=body, timeout=10).raise_for_status()
        calls.append(time.perf_counter() - started)
    with_requests = [timed([sys.executable, "-c", "import requests"]) for _ in range(runs)]
    bare = [timed([sys.executable, "-c", "pass"]) for _ in range(runs)]
    return {"POST /api/embed (new connection)": median_ms(calls),
            "import requests (process with it minus without)": round(median_ms(with_requests) - median_ms(bare), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--dim", type=int, default=768)
    args = parser.parse_args()
    precompile()
    rng = random.Random(3)
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp, \
            EmbeddingStubProcess("--dim", str(args.dim)) as stub:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        memory_dir = project / ".claude" / "memory"
        slugs = build_corpus(memory_dir, args.size)
        (memory_dir / "config.json").write_text(json.dumps({"embedding": {"endpoint": stub.url}}))
        env = isolated_env(home)

        def memory(*command: str) -> float:
            return timed([str(MEMORY), *command], cwd=project, env=env)

        started = time.perf_counter()
        memory("reindex")
        reindex_s = time.perf_counter() - started
        started = time.perf_counter()
        memory("embed", "--batch", "64")
        embed_s = time.perf_counter() - started
        cache = memory_dir / ".embedding-cache"
        chunked = sum(1 for path in cache.glob("*.json") if '"chunks"' in path.read_text())
        pack = memory_dir / ".cache" / "embeddings.pack"
        queries = search_queries(rng, slugs, args.runs)
        samples = time_searches(memory, queries)
        results = {"memories": args.size, "dimensions": args.dim, "chunked memories": chunked,
                   "pack MB": round(pack.stat().st_size / 1e6, 1), "reindex_s": round(reindex_s, 1),
                   "embed_s": round(embed_s, 1), **baseline(env, args.runs)}
        results["median_ms"] = {name: median_ms(values) for name, values in samples.items()}
        results["p90_ms"] = {name: round(statistics.quantiles(values, n=10)[-1] * 1000, 1)
                             for name, values in samples.items()}
        results["query embedding ms"] = query_embedding_ms(stub.url, queries, args.runs)
        counts = stub.control.counts()
        results["stub requests"] = counts
    report("semantic", {"runs": args.runs, "results": results})


if __name__ == "__main__":
    main()
