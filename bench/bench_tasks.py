#!/usr/bin/env python3
"""Latency of the task store commands as whole processes, with 1,000 tasks.

    python3 bench/bench_tasks.py [--tasks 1000] [--runs 21]

Builds 10 epics x 10 features x N/100 tasks (the files written directly, as a
finished plan would look), then reports the median end-to-end time of `task status`
(a leaf change rolled up through feature and epic, rewriting the index), `task ready`,
a few more commands and the TodoWrite capture hook, beside `python -S -c pass` (the floor) measured in the same run. Target:
<= 100 ms each. Results also go to bench/out/tasks.json.
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

from common import MEMORY, REPO, baseline, isolated_env, median_ms, precompile, report, timed

NOW = "2026-01-10T10:00:00Z"


def build_plan(tasks_dir: Path, leaves: int, rng: random.Random) -> list[str]:
    """10 epics x 10 features x leaves/100 tasks, all pending, some with dependencies; the leaf ids."""
    tasks_dir.mkdir(parents=True, exist_ok=True)
    per_feature = max(1, leaves // 100)
    leaf_ids: list[str] = []

    def write(entity: dict) -> None:
        base = {"title": f"Work item {entity['id']}", "status": "pending", "dependencies": [],
                "acceptanceCriteria": [], "deliverables": [], "tests": [], "agent": None, "startedAt": None,
                "completedAt": None, "createdAt": NOW, "updatedAt": NOW}
        (tasks_dir / f"{entity['id']}.json").write_text(json.dumps({**base, **entity}, indent=2) + "\n")

    for epic in range(1, 11):
        features = [f"{epic}.{feature}" for feature in range(1, 11)]
        write({"id": str(epic), "type": "epic", "parent": None, "children": features})
        for feature in features:
            children = [f"{feature}.{task}" for task in range(1, per_feature + 1)]
            write({"id": feature, "type": "feature", "parent": str(epic), "children": children})
            for position, task in enumerate(children):
                deps = [children[position - 1]] if position and rng.random() < 0.3 else []
                write({"id": task, "type": "task", "parent": feature, "children": [], "dependencies": deps})
                leaf_ids.append(task)
    return leaf_ids


def measure(leaves: int, runs: int) -> dict:
    rng = random.Random(leaves)
    with tempfile.TemporaryDirectory(prefix="memory-bench-tasks-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        leaf_ids = build_plan(project / ".claude" / "memory" / "tasks", leaves, rng)
        env = isolated_env(home)

        def memory(*args: str) -> float:
            return timed([str(MEMORY), *args], cwd=project, env=env)

        started = time.perf_counter()
        memory("task", "rebuild-index")
        rebuild = time.perf_counter() - started
        memory("task", "list", "--status", "done")  # warm the page cache like a working session would

        free = [task_id for task_id in leaf_ids if not json.loads(
            (project / ".claude" / "memory" / "tasks" / f"{task_id}.json").read_text())["dependencies"]]
        picked = rng.sample(free, runs)
        samples: dict[str, list[float]] = {name: [] for name in (
            "task status (roll-up)", "task ready", "task show", "task list --json", "task tree", "task add")}
        for run, task_id in enumerate(picked):
            samples["task status (roll-up)"].append(memory("task", "status", task_id, "in-progress"))
            samples["task status (roll-up)"].append(memory("task", "status", task_id, "done"))
            samples["task ready"].append(memory("task", "ready"))
            samples["task show"].append(memory("task", "show", rng.choice(leaf_ids)))
            samples["task list --json"].append(memory("task", "list", "--json"))
            samples["task tree"].append(memory("task", "tree"))
            parent = f"{run % 10 + 1}.1"
            samples["task add"].append(memory("task", "add", "--title", f"Bench {run}", "--parent", parent))
        hook = [sys.executable, "-S", str(REPO / "hooks" / "todowrite-capture.py")]
        hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
        samples["hook todowrite-capture (8 todos)"] = []
        for run in range(runs):
            todos = [{"content": f"Step {n}", "status": "completed" if n < run % 8 else "in_progress" if n == run % 8
                      else "pending", "activeForm": f"Doing step {n}"} for n in range(8)]
            payload = {"session_id": "bench-session-0001", "cwd": str(project), "hook_event_name": "PostToolUse",
                       "tool_name": "TodoWrite", "tool_input": {"todos": todos}, "tool_response": {}}
            samples["hook todowrite-capture (8 todos)"].append(
                timed(hook, cwd=project, env=hook_env, stdin=json.dumps(payload).encode()))
        check = subprocess.run([str(MEMORY), "task", "validate", "--json"], cwd=project, env=env,
                               capture_output=True, text=True)
        problems = json.loads(check.stdout)["problems"]
        results = {"tasks": len(leaf_ids), "entities": len(leaf_ids) + 110, "rebuild_index_s": round(rebuild, 3),
                   "runs": runs, **baseline(env, runs)}
        results["median_ms"] = {name: median_ms(values) for name, values in samples.items()}
        results["ratio_to_floor"] = {name: round(value / results["python -S -c pass"], 2)
                                            for name, value in results["median_ms"].items()}
        results["invariants_hold_after_run"] = not problems
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="leaf tasks (default 1000)")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    precompile()
    results = measure(args.tasks, args.runs)
    results["python"] = sys.version.split()[0]
    results["target_ms"] = 100
    results["within_target"] = {name: value <= 100 for name, value in results["median_ms"].items()}
    report("tasks", results)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "bench"))
    main()
