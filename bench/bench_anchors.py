#!/usr/bin/env python3
"""What code anchors cost: the Read hook with and without anchors, and `memory verify --all`, at 10,000 memories.

    python3 bench/bench_anchors.py [--size 10000] [--runs 21] [--files 2000]

Two git projects with the same SIZE generated memories and FILES source files: in one no
memory carries anchors; in the other every memory is anchored to two source files (one in
ten anchored to a file changed since, one in fifty to a file deleted since), and the three
auth gotchas the Read hook finds for src/auth/login.ts are anchored to it, one changed since.
The Read hook (`sh hooks/run memory-context` with a PostToolUse Read payload, a new session
each run so the gotchas are shown every time) is timed end to end, median of RUNS, beside
`python -S -c pass`; `memory verify --all` is timed (median of 3) in the anchored project.
Results also go to bench/out/anchors.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from common import (
    MEMORY,
    REPO,
    build_corpus,
    isolated_env,
    median_ms,
    precompile,
    report,
    timed,
)

from _lib.model import anchors  # noqa: E402  (common puts scripts/ on sys.path)

GOTCHAS = [("Token refresh must be serialised per user", "src/auth/**"), ("Auth cookies need SameSite=Lax", ""),
           ("Login form double submit", "")]


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args], cwd=project, check=True,
                   capture_output=True)


def make_project(root: Path, size: int, files: int, anchored: bool) -> Path:
    project = root / ("anchored" if anchored else "plain")
    git_init = subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert git_init.returncode == 0
    rng = random.Random(3)
    sources = [f"src/pkg{index % 40}/module_{index}.py" for index in range(files)] + ["src/auth/login.ts"]
    for relpath in sources:
        path = project / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def function_{rng.randint(0, 10**6)}():\n    return {rng.random()}\n" * rng.randint(5, 80))
    git(project, "add", "-A")
    git(project, "commit", "-qm", "sources")
    memory_dir = project / ".claude" / "memory"
    slugs = build_corpus(memory_dir, size, edges=size // 2)
    commit = anchors.head_commit(project)[:12]  # type: ignore[index]
    blobs = {relpath: anchors.file_blob(project / relpath)[:12] for relpath in sources}  # type: ignore[index]
    for index, title_paths in enumerate(GOTCHAS):
        title, paths = title_paths
        lines = ["---", "type: gotcha", "tags:", "  - auth", 'created: "2026-01-10T10:00:00Z"',
                 'updated: "2026-01-10T10:00:00Z"']
        if paths:
            lines += ["paths:", f'  - "{paths}"']
        if anchored:
            blob = "0" * 12 if index == 0 else blobs["src/auth/login.ts"]
            lines += ["anchors:", f"  - src/auth/login.ts {blob} {commit}"]
        lines += ["---", "", f"# {title}", "", f"{title}: symptom, cause and fix, in a few sentences.", ""]
        (memory_dir / f"gotcha-bench-{index}.md").write_text("\n".join(lines))
    if anchored:
        for index, slug in enumerate(slugs):
            path = memory_dir / f"{slug}.md"
            text = path.read_text()
            picks = rng.sample(sources[:-1], 2)
            ids = [("0" * 12 if index % 10 == 0 and n == 0 else blobs[relpath]) for n, relpath in enumerate(picks)]
            if index % 50 == 1:
                picks[0] = picks[0].replace("module_", "deleted_")
            block = "anchors:\n" + "".join(f"  - {relpath} {blob} {commit}\n" for relpath, blob in zip(picks, ids))
            head, _, rest = text[4:].partition("\n---\n")
            path.write_text(f"---\n{head}\n{block}---\n{rest}")
    return project


IN_PROCESS = """
import sys, time
sys.path.insert(0, sys.argv[1])
from _lib.session import gotchas
from _lib.workspace.scopes import Workspace
workspace = Workspace(sys.argv[2])
matches = gotchas.for_path(workspace, sys.argv[2] + "/src/auth/login.ts")
started = time.perf_counter()
from _lib.session import codestate
found = codestate.states(workspace, [match.entry for match in matches])
print((time.perf_counter() - started) * 1000, len(found))
"""


def in_process_cost(project: Path, env: dict[str, str], runs: int) -> float:
    """What the anchor check adds to the Read hook, timed inside fresh `python -S` processes (its lazy
    imports included), so the machine's load on process start-up does not blur it."""
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-S", "-c", IN_PROCESS, str(REPO / "scripts"), str(project)], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        assert int(out[1]) == 3, out  # the three gotchas were checked
        samples.append(float(out[0]) / 1000)
    return median_ms(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    precompile()
    with tempfile.TemporaryDirectory(prefix="bench-anchors-") as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        data = root / "plugin-data"
        data.mkdir()
        (data / "interpreter").write_text(sys.executable + "\n")
        env = isolated_env(home)
        results: dict[str, object] = {"size": args.size, "files": args.files, "runs": args.runs}
        projects = {name: make_project(root, args.size, args.files, name == "with anchors")
                    for name in ("without anchors", "with anchors")}
        for project in projects.values():
            timed([str(MEMORY), "reindex"], cwd=project, env=env)
        hook_envs = {name: dict(env, CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(project))
                     for name, project in projects.items()}

        def read_payload(project: Path) -> bytes:  # a new session each time: the gotchas are shown every run
            return json.dumps({"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": "PostToolUse",
                               "tool_name": "Read", "tool_input": {"file_path": str(project / "src/auth/login.ts")},
                               "tool_response": {"type": "text"}}).encode()

        samples: dict[str, list[float]] = {name: [] for name in projects}
        for _ in range(args.runs + 2):  # interleaved, so a change in the machine's load hits both alike
            for name, project in projects.items():
                samples[name].append(timed(["sh", str(REPO / "hooks" / "run"), "memory-context"], cwd=project,
                                           env=hook_envs[name], stdin=read_payload(project)))
        hook_ms = {name: median_ms(values[2:]) for name, values in samples.items()}
        for name, project in projects.items():
            out = subprocess.run(["sh", str(REPO / "hooks" / "run"), "memory-context"], cwd=project,
                                 env=hook_envs[name], input=read_payload(project), capture_output=True, check=True).stdout
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
            results[f"read hook, {name} (ms)"] = hook_ms[name]
            results[f"read hook, {name}: changed marker shown"] = "(code changed since)" in context
        results["anchor check inside the read hook, in process (ms, median)"] = in_process_cost(
            projects["with anchors"], hook_envs["with anchors"], args.runs)
        floor = median_ms([timed([sys.executable, "-S", "-c", "pass"], env=env) for _ in range(args.runs)])
        results["python -S -c pass (ms)"] = floor
        for name in projects:
            results[f"read hook, {name} / python -S -c pass"] = round(hook_ms[name] / floor, 2)
        results["anchors' cost in the read hook (ms)"] = round(hook_ms["with anchors"] - hook_ms["without anchors"], 1)
        anchored = projects["with anchors"]
        verify = [timed([str(MEMORY), "verify", "--all", "--json"], cwd=anchored, env=env) for _ in range(3)]
        results["memory verify --all, first run with an empty stat cache (ms)"] = round(verify[0] * 1000, 1)
        results["memory verify --all (ms, median of 3)"] = median_ms(verify)
        counts = json.loads(subprocess.run([str(MEMORY), "verify", "--all", "--json"], cwd=anchored, env=env,
                                           capture_output=True, check=True).stdout)["counts"]
        results["verify counts"] = counts
        report("anchors", results)


if __name__ == "__main__":
    main()
