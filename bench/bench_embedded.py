#!/usr/bin/env python3
"""The embedded provider at 10,000 memories: `memory embed`, `memory semantic`, `memory write`.

    python3 bench/bench_embedded.py [--size 10000] [--runs 15] [--model DIR]

Builds the synthetic corpus of bench/common.py in a project scope and, without --model, a
synthetic static model of potion-retrieval-32M's shape (bench_staticmodel.build_model:
63,091 tokens x 512 dimensions, F32), configures embedding.provider embedded, and times
whole processes, end to end, beside `python -S -c pass` measured in the same run:

  embed            one `memory embed` of every memory (wall time, seconds)
  semantic         `memory semantic` warm (hybrid, the default; and --mode semantic), median
  split            the parts of one search, in a fresh process each run (median ms): imports
                   (the semantic-search modules and the model loader, after what every
                   command imports), model load (finding the model and its identity, the
                   mapped matrix, the compiled tokenizer index), query embedding, and the scan
                   (the packed vectors read and scored, the keyword ranking, the fusion)
  write            `memory write` of a new memory with its embedding computed (median), and
                   the same with embedding.provider disabled
  prompt hook      the UserPromptSubmit hook, as hooks.json runs it (keyword relevance), and
                   what meaning would add to it: the split's imports, model load, query
                   embedding and scan

The machine's load average is reported with the figures. Results also go to
bench/out/embedded.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from common import (MEMORY, REPO, build_corpus, isolated_env, median_ms, precompile, report, search_queries,
                    time_searches, timed)

sys.path.insert(0, str(REPO / "bench"))

from bench_staticmodel import build_model  # noqa: E402

SPLIT = r"""
import json, re, sys, time, pathlib, os
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from _lib.workspace.scopes import Workspace
from _lib.ops import store                      # what every command imports
base = time.perf_counter()
from _lib.catalog.catalog import open_catalog
from _lib.catalog.queries import content_hashes
from _lib.ops import semantic
from _lib.vectors import embedder as embed, embedded, staticmodel
from _lib.vectors.pack import Pack
from _lib.ops import search
imported = time.perf_counter()
workspace = Workspace()
embedder = embed.Embedder(workspace)
embedder.ready()
embedder.provider.embed(embedder.status, [])  # maps the matrix
loaded = time.perf_counter()
vector = embedder.embed([sys.argv[2]])[0]
embedded_at = time.perf_counter()
scope = workspace.readable_scopes("project")[0]
with open_catalog(workspace, scope) as catalog:
    current = content_hashes(catalog)
    pack = Pack.fresh(catalog, embedder.model)
    found = pack.best(vector, current)
    keyword = dict(search.rank(catalog, sys.argv[2], limit=semantic.KEYWORD_DEPTH))
    fused = semantic.fuse([found], [keyword], semantic.FUSION_IN_PROCESS)
done = time.perf_counter()
print(json.dumps({"imports": (imported - base) * 1000, "model load": (loaded - imported) * 1000,
                  "query embedding": (embedded_at - loaded) * 1000, "scan": (done - embedded_at) * 1000,
                  "rows": pack.rows}))
"""


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def floor_ms(runs: int) -> float:
    return median_ms([timed([sys.executable, "-S", "-c", "pass"]) for _ in range(runs)])


def prompt_payload(project: Path, prompt: str) -> bytes:
    return json.dumps({"session_id": str(uuid.uuid4()), "transcript_path": str(project / "t.jsonl"),
                       "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                       "prompt_id": str(uuid.uuid4()), "permission_mode": "default"}).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--model", type=Path, help="a model2vec model directory (default: synthetic, potion-sized)")
    args = parser.parse_args()
    precompile()
    rng = random.Random(5)
    results: dict = {"memories": args.size, "runs": args.runs, "load average before": load()}
    with tempfile.TemporaryDirectory(prefix="memory-bench-embedded-") as tmp:
        root = Path(tmp)
        model = args.model
        if model is None:
            model = root / "model"
            build_model(model, 63_091, 512, rng)
        results["model"] = str(args.model or "synthetic 63,091 x 512 F32 (potion-retrieval-32M's shape)")
        home, project = root / "home", root / "project"
        (home / ".claude" / "memory").mkdir(parents=True)  # the global scope: the tokenizer index goes there
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        memory_dir = project / ".claude" / "memory"
        slugs = build_corpus(memory_dir, args.size)
        config = {"embedding": {"provider": "embedded", "embeddedModel": str(model)}}
        (memory_dir / "config.json").write_text(json.dumps(config))
        env = isolated_env(home)

        def memory(*command: str, environment: dict | None = None) -> float:
            return timed([str(MEMORY), *command], cwd=project, env=environment or env)

        memory("reindex")
        started, cpu = time.perf_counter(), os.times()
        memory("embed")
        after = os.times()
        results["embed s"] = round(time.perf_counter() - started, 1)
        results["embed CPU s (children)"] = round(after.children_user - cpu.children_user
                                                   + after.children_system - cpu.children_system, 1)
        pack = memory_dir / ".cache" / "embeddings.pack"
        results["pack MB"] = round(pack.stat().st_size / 1e6, 1)
        queries = search_queries(rng, slugs, args.runs)
        samples = time_searches(memory, queries)
        results["median ms"] = {name: median_ms(values) for name, values in samples.items()}
        split = []
        for query in queries:
            proc = subprocess.run([sys.executable, "-S", "-c", SPLIT, str(REPO / "scripts"), query], cwd=project,
                                  env=env, capture_output=True, text=True, check=True)
            split.append(json.loads(proc.stdout))
        results["rows"] = split[0]["rows"]
        results["split median ms"] = {key: round(statistics.median(item[key] for item in split), 1)
                                      for key in ("imports", "model load", "query embedding", "scan")}
        writes: dict[str, list[float]] = {"write, embedded provider": [], "write, provider disabled": []}
        disabled = memory_dir / "config.json"
        for run in range(args.runs):
            memory("write", f"Bench note {run} about {queries[run % len(queries)]}", "--content",
                   "A short memory written during the benchmark. " * 4)
            writes["write, embedded provider"].append(memory(
                "write", f"Timed note {run} {queries[run % len(queries)]}", "--content",
                "Another short memory written during the benchmark. " * 4))
        disabled.write_text(json.dumps({"embedding": {"provider": "disabled"}}))
        for run in range(args.runs):
            writes["write, provider disabled"].append(memory(
                "write", f"Plain note {run} {queries[run % len(queries)]}", "--content",
                "A memory written with embeddings off. " * 4))
        results["write median ms"] = {name: median_ms(values) for name, values in writes.items()}
        disabled.write_text(json.dumps(config))
        hook = ["sh", str(REPO / "hooks" / "run"), "memory-prompt-context"]
        data = root / "plugin-data"
        data.mkdir()
        (data / "python").symlink_to(sys.executable)  # what the bootstrap hook records
        hook_env = dict(env, CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(project))
        prompts = [prompt_payload(project, f"How does {query} work with the token refresh?") for query in queries]
        hook_ms = median_ms([timed(hook, cwd=project, env=hook_env, stdin=payload) for payload in prompts])
        meaning = sum(results["split median ms"][key] for key in ("imports", "model load", "query embedding", "scan"))
        results["prompt hook median ms"] = {"keywords (as shipped)": hook_ms,
                                            "with meaning (+ imports, load, query, scan above)":
                                                round(hook_ms + meaning, 1)}
        results["python -S -c pass ms"] = floor_ms(args.runs)
        results["load average after"] = load()
    report("embedded", results)


if __name__ == "__main__":
    main()
