#!/usr/bin/env python3
"""How hooks and commands grow with the number of memories: 1,000 and 10,000 (100,000 with --huge).

    python3 bench/bench_scale.py [--sizes 1000,10000] [--huge] [--runs 7] [--slow-runs 3]

Each size gets a store of generated memories with realistic text: bodies of 50-400 words
(Zipf-like lengths) cut from real English technical prose, the docstrings of the Python
standard library on this machine, with a fixed seed; 2-4 tags of 200; about 3 links each.
Every figure is a whole process, end to end, median of RUNS (SLOW-RUNS for health and
reindex), beside `python -S -c pass` measured in the same run. Also: the size of the catalog,
index.json and graph.json against the markdown, and the first hook and the first command
after 1,000 memory files arrive by hand (a `git pull` of a teammate's work).
Results also go to bench/out/scale.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from pathlib import Path

from common import MEMORY, REPO, isolated_env, median_ms, precompile, report, timed

INVERSE = {"implements": "implemented-by", "part-of": "contains", "builds-on": "foundation-for",
           "relates-to": "relates-to"}
TYPES = ["decision", "learning", "artifact", "gotcha", "breadcrumb", "hub"]
TYPE_WEIGHTS = [20, 35, 10, 15, 15, 5]


def prose_words(limit_files: int = 400) -> list[str]:
    """Words of the standard library's docstrings, in reading order (real technical English)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    words: list[str] = []
    files = sorted(path for path in stdlib.glob("*.py"))[:limit_files]
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    words += re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]", doc)
    return words


class Corpus:
    """Deterministic memory files cut from `prose_words`."""

    def __init__(self, seed: int = 17) -> None:
        self.rng = random.Random(seed)
        self.words = prose_words()
        counts: dict[str, int] = {}
        for word in self.words:
            key = word.lower()
            counts[key] = counts.get(key, 0) + 1
        ranked = sorted(counts, key=lambda word: (-counts[word], word))
        self.tags = [word for word in ranked[150:] if len(word) > 3 and word.isalpha()][:200]
        self.serial = 0

    def passage(self, count: int) -> str:
        start = self.rng.randrange(0, len(self.words) - count)
        return " ".join(self.words[start:start + count])

    def body_length(self) -> int:
        # Zipf-like lengths: many short bodies, a long tail up to 400 words
        return min(400, 50 + int(self.rng.paretovariate(1.2) * 25) - 25)

    def write(self, directory: Path, count: int, *, link_pool: list[str] | None = None) -> list[str]:
        """Write `count` memory files into `directory`, each with ~3 links (to each other and to `link_pool`)."""
        rng = self.rng
        directory.mkdir(parents=True, exist_ok=True)
        metas = []
        for _ in range(count):
            self.serial += 1
            memory_type = rng.choices(TYPES, TYPE_WEIGHTS)[0]
            title = self.passage(rng.randint(3, 8)).capitalize()
            slug = re.sub(r"[^a-z0-9]+", "-", f"{memory_type} {title}".lower()).strip("-")[:90] + f"-{self.serial}"
            metas.append((slug, memory_type, title))
        slugs = [slug for slug, _, _ in metas]
        targets = slugs + (link_pool or [])
        links: dict[str, dict[str, str]] = {slug: {} for slug in slugs}
        for slug in slugs:
            for _ in range(3 if rng.random() < 0.5 else rng.randint(1, 5)):
                target = rng.choice(targets)
                if target != slug:
                    links[slug][target] = rng.choice(list(INVERSE))
        for slug, memory_type, title in metas:
            tags = sorted(set(rng.sample(self.tags, rng.randint(2, 4))))
            words = self.body_length()
            paragraphs = []
            while words > 0:
                size = min(words, rng.randint(30, 120))
                paragraphs.append(self.passage(size))
                words -= size
            stamp = f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T10:00:00Z"
            lines = ["---", f"type: {memory_type}", "tags:"] + [f"  - {tag}" for tag in tags]
            lines += [f'created: "{stamp}"', f'updated: "{stamp}"']
            if memory_type == "gotcha" and rng.random() < 0.3:
                lines += ["paths:", f"  - src/{rng.choice(self.tags)}/**"]
            if links[slug]:
                lines += ["links:"] + [f"  - {target}" for target in links[slug]]
                labelled = {target: label for target, label in links[slug].items() if label != "relates-to"}
                if labelled:
                    lines += ["link-labels:"] + [f"  {target}: {label}" for target, label in labelled.items()]
            lines += ["---", "", f"# {title}", "", "\n\n".join(paragraphs), ""]
            (directory / f"{slug}.md").write_text("\n".join(lines))
        return slugs


class Store:
    def __init__(self, root: Path, size: int, corpus: Corpus) -> None:
        self.home, self.project, self.data = root / "home", root / "project", root / "plugin-data"
        self.home.mkdir()
        self.data.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.data / "interpreter").write_text(sys.executable + "\n")
        self.memory_dir = self.project / ".claude" / "memory"
        self.corpus = corpus
        self.slugs = corpus.write(self.memory_dir, size)
        self.env = isolated_env(self.home)
        self.hook_env = dict(self.env, CLAUDE_PLUGIN_DATA=str(self.data), CLAUDE_PROJECT_DIR=str(self.project))
        source = self.project / "src" / "auth" / "login.ts"
        source.parent.mkdir(parents=True)
        source.write_text("export async function login() {}\n")
        self.source = source

    def memory(self, *args: str) -> float:
        return timed([str(MEMORY), *args], cwd=self.project, env=self.env)

    def hook(self, name: str, payload: dict) -> float:
        return timed(["sh", str(REPO / "hooks" / "run"), name], cwd=self.project, env=self.hook_env,
                     stdin=json.dumps(payload).encode())

    def prompt_payload(self, rng: random.Random) -> dict:
        words = self.corpus.passage(rng.randint(6, 14))
        return {"session_id": str(uuid.uuid4()), "cwd": str(self.project), "hook_event_name": "UserPromptSubmit",
                "transcript_path": f"{self.home}/t.jsonl", "prompt_id": str(uuid.uuid4()),
                "permission_mode": "default", "prompt": f"How does {words} work here?"}

    def read_payload(self) -> dict:
        path = str(self.source)
        return {"session_id": str(uuid.uuid4()), "cwd": str(self.project), "hook_event_name": "PostToolUse",
                "transcript_path": f"{self.home}/t.jsonl", "tool_name": "Read", "tool_input": {"file_path": path},
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:12]}",
                "tool_response": {"type": "text", "file": {"filePath": path, "content": "x", "numLines": 1,
                                                           "startLine": 1, "totalLines": 1}}}

    def sizes(self) -> dict[str, float]:
        markdown = sum(path.stat().st_size for path in self.memory_dir.rglob("*.md"))
        cache = self.memory_dir / ".cache"
        catalog = sum(path.stat().st_size for path in cache.glob("catalog.sqlite3*")) if cache.is_dir() else 0
        mb = 1024 * 1024
        return {"markdown MB": round(markdown / mb, 2), "catalog MB": round(catalog / mb, 2),
                "index.json MB": round((self.memory_dir / "index.json").stat().st_size / mb, 2),
                "graph.json MB": round((self.memory_dir / "graph.json").stat().st_size / mb, 2),
                "catalog / markdown": round(catalog / max(markdown, 1), 2)}


def floor(env: dict[str, str]) -> float:
    return timed([sys.executable, "-S", "-c", "pass"], env=env)


def measure(size: int, runs: int, slow_runs: int, corpus: Corpus) -> dict:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="memory-bench-scale-") as tmp:
        started = time.perf_counter()
        store = Store(Path(tmp), size, corpus)
        generated = round(time.perf_counter() - started, 1)
        samples: dict[str, list[float]] = {"floor": []}

        def sample(name: str, seconds: float) -> None:
            samples.setdefault(name, []).append(seconds)

        sample("reindex from scratch", store.memory("reindex"))
        store.memory("list", "--limit", "1")
        for name, payload in (("memory-prompt-context", store.prompt_payload(rng)),
                              ("memory-context", store.read_payload())):
            store.hook(name, payload)  # untimed first runs: runtime.json, session state directory
        for run in range(runs):
            sample("floor", floor(store.env))
            sample("per-prompt hook", store.hook("memory-prompt-context", store.prompt_payload(rng)))
            sample("Read hook", store.hook("memory-context", store.read_payload()))
            sample("list", store.memory("list"))
            sample("list --type gotcha --limit 20", store.memory("list", "--type", "gotcha", "--limit", "20"))
            sample("search", store.memory("search", corpus.passage(rng.randint(2, 4))))
            slug = rng.choice(store.slugs)
            sample("edges", store.memory("edges", slug))
            sample("graph --depth 2", store.memory("graph", slug, "--depth", "2"))
            title = f"Bench write {run} {corpus.passage(4)}"
            sample("write", store.memory("write", title, "--tags", "bench", "--content", corpus.passage(120)))
            sample("update", store.memory("update", rng.choice(store.slugs), "--append", corpus.passage(20)))
            a, b = rng.sample(store.slugs, 2)
            sample("link", store.memory("link", a, b, "--label", "builds-on"))
            written = json.loads(subprocess.run([str(MEMORY), "list", "--tag", "bench", "--json", "--limit", "1"],
                                                cwd=store.project, env=store.env, capture_output=True,
                                                check=True).stdout)
            listed = written if isinstance(written, list) else written.get("memories", written.get("results", []))
            sample("delete", store.memory("delete", listed[0]["slug"]))
        sample("health, first run (cold)", timed([str(MEMORY), "health"], cwd=store.project, env=store.env,
                                                 check=False))
        for _ in range(slow_runs):
            sample("floor", floor(store.env))
            sample("health (warm)", timed([str(MEMORY), "health"], cwd=store.project, env=store.env, check=False))
        sizes = store.sizes()
        for _ in range(slow_runs - 1):
            for path in (store.memory_dir / ".cache").glob("catalog.sqlite3*"):
                path.unlink()
            sample("reindex from scratch", store.memory("reindex"))
        # A teammate's 1,000 memories arrive by hand: the first hook, then (another batch) the first command
        corpus.write(store.memory_dir, 1000, link_pool=store.slugs)
        sample("first per-prompt hook after 1,000 new files", store.hook("memory-prompt-context",
                                                                          store.prompt_payload(rng)))
        sample("per-prompt hook after that", store.hook("memory-prompt-context", store.prompt_payload(rng)))
        store.memory("list", "--limit", "1")
        corpus.write(store.memory_dir, 1000, link_pool=store.slugs)
        sample("first command after 1,000 new files", store.memory("list", "--limit", "1"))
        floor_ms = median_ms(samples.pop("floor"))
        medians = {name: median_ms(values) for name, values in samples.items()}
        return {"memories": size, "generated_s": generated, "floor python -S -c pass ms": floor_ms,
                "median_ms": medians, "ratio_to_floor": {name: round(value / floor_ms, 1)
                                                         for name, value in medians.items()}, "sizes": sizes}


def table(results: list[dict]) -> str:
    sizes = [result["memories"] for result in results]
    lines = ["| op | " + " | ".join(f"{size:,} ms (x floor)" for size in sizes) + " |",
             "|---|" + "---:|" * len(sizes),
             "| floor `python -S -c pass` | " + " | ".join(f"{r['floor python -S -c pass ms']}" for r in results) + " |"]
    for name in results[0]["median_ms"]:
        lines.append(f"| {name} | " + " | ".join(f"{r['median_ms'][name]:,} ({r['ratio_to_floor'][name]}x)"
                                                 for r in results) + " |")
    for name in results[0]["sizes"]:
        lines.append(f"| {name} | " + " | ".join(str(r["sizes"][name]) for r in results) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--huge", action="store_true", help="also 100,000 (slow: tens of minutes)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--slow-runs", type=int, default=3, help="runs of health and reindex")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")] + ([100000] if args.huge else [])
    precompile()
    corpus = Corpus()
    results = [measure(size, args.runs, args.slow_runs, corpus) for size in sizes]
    report("scale", {"runs": args.runs, "slow_runs": args.slow_runs, "results": results})
    print()
    print(table(results))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
