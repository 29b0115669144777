#!/usr/bin/env python3
"""Latency on a store the earlier plugin wrote (permanent/, temporary/, archive/, its graph.json and
index.json), adopted in place, at 10,000 memories.

    python3 bench/bench_adoption.py [--size 10000] [--edges 30000] [--runs 15]

Reports the first command on the untouched store (cold: no catalog yet), then the medians of
write, read, list, search, link and the Read hook, and the time to export the store and to
import the export into an empty scope; beside `python -S -c pass` (the floor) measured in the same run.
Results also go to bench/out/adoption.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from common import MEMORY, REPO, baseline, isolated_env, median_ms, precompile, report, timed

sys.path.insert(0, str(REPO / "tests"))
import predecessor_store  # noqa: E402  (the generator the adoption tests use)


def measure(size: int, edges: int, runs: int) -> dict:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="memory-adopt-") as tmp:
        home, project, data = Path(tmp) / "home", Path(tmp) / "project", Path(tmp) / "data"
        home.mkdir()
        data.mkdir()
        (data / "python").symlink_to(sys.executable)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        store = predecessor_store.build(project / ".claude" / "memory", memories=size, edges=edges)
        slugs = sorted(store.memories)
        env = isolated_env(home)

        def memory(*args: str) -> float:
            return timed([str(MEMORY), *args], cwd=project, env=env)

        results: dict = {"memories": size, "edges": len(store.edges), **baseline(env, runs)}
        results["first_command_cold_s"] = round(memory("list", "--limit", "1"), 2)
        source = project / "src" / "hook" / "session.ts"
        source.parent.mkdir(parents=True)
        source.write_text("export const session = 1;\n")
        hook_env = {**env, "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PROJECT_DIR": str(project)}
        samples: dict[str, list[float]] = {name: [] for name in ("write", "read", "list", "list --limit 20",
                                                                 "search", "link", "Read hook")}
        for run in range(runs):
            samples["write"].append(memory("write", f"Adopted bench note {run}", "--tags", "bench",
                                           "--content", "caching and retries " * 20))
            samples["read"].append(memory("read", rng.choice(slugs)))
            samples["list"].append(memory("list"))
            samples["list --limit 20"].append(memory("list", "--type", "gotcha", "--limit", "20"))
            samples["search"].append(memory("search", "session hook timeout"))
            a, b = rng.sample(slugs, 2)
            samples["link"].append(memory("link", a, b, "--label", "extends"))
            payload = {"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": "PostToolUse",
                       "tool_name": "Read", "tool_input": {"file_path": str(source)}, "tool_response": {}}
            samples["Read hook"].append(timed(["sh", str(REPO / "hooks" / "run"), "memory-context"], cwd=project,
                                              env=hook_env, stdin=json.dumps(payload).encode()))
        results["median_ms"] = {name: median_ms(values) for name, values in samples.items()}
        results["ratio_to_floor"] = {name: round(value / results["python -S -c pass"], 2)
                                            for name, value in results["median_ms"].items()}
        exported = Path(tmp) / "export.json"
        started = time.perf_counter()
        memory("export", "--scope", "project", "--output", str(exported))
        results["export_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        memory("import", str(exported), "--scope", "global")
        results["import_into_empty_scope_s"] = round(time.perf_counter() - started, 2)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    precompile()
    report("adoption", {"runs": args.runs, "results": measure(args.size, args.edges, args.runs)})


if __name__ == "__main__":
    main()
