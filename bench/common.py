"""Shared pieces of the benchmarks: a synthetic corpus, process timing, reporting.

Timings are whole processes, end to end, as a user or a hook would run them, and are
reported as medians over repeated runs beside `python -S -c pass` (the floor) measured in the
same run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
MEMORY = REPO / "bin" / "memory"
sys.path.insert(0, str(REPO / "scripts"))

TYPES = ["decision", "learning", "artifact", "gotcha", "breadcrumb", "hub"]
TYPE_WEIGHTS = [20, 35, 10, 15, 15, 5]


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def sentence(rng: random.Random, words: list[str], count: int) -> str:
    # Zipf-like: low indexes are common words, as in real text.
    picked = [words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)] if rng.random() < 0.7
              else rng.choice(words) for _ in range(count)]
    return " ".join(picked)


def build_corpus(directory: Path, count: int, *, edges: int = 0, seed: int = 7) -> list[str]:
    """Write `count` memory files into `directory`, with about `edges` links (each in both files)."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    directory.mkdir(parents=True, exist_ok=True)
    metas = []
    for index in range(count):
        memory_type = rng.choices(TYPES, TYPE_WEIGHTS)[0]
        title = sentence(rng, words, rng.randint(3, 7))
        metas.append((f"{memory_type}-{title.replace(' ', '-')}-{index}"[:110], memory_type, title))
    links: dict[str, dict[str, str]] = {slug: {} for slug, _, _ in metas}
    inverse = {"implements": "implemented-by", "part-of": "contains", "builds-on": "foundation-for",
               "relates-to": "relates-to"}
    slugs = [slug for slug, _, _ in metas]
    made = 0
    while made < edges // 2:
        a, b = rng.sample(slugs, 2)
        if b in links[a]:
            continue
        label = rng.choice(list(inverse))
        links[a][b] = label
        links[b][a] = inverse[label]
        made += 1
    for slug, memory_type, title in metas:
        tags = sorted({words[rng.randint(0, 300)] for _ in range(rng.randint(1, 4))})
        body = "\n\n".join(sentence(rng, words, rng.randint(30, 120)) for _ in range(rng.randint(1, 4)))
        stamp = f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00Z"
        lines = ["---", f"type: {memory_type}", "tags:"] + [f"  - {tag}" for tag in tags]
        lines += [f'created: "{stamp}"', f'updated: "{stamp}"']
        if links[slug]:
            lines += ["links:"] + [f"  - {target}" for target in links[slug]]
            labelled = {target: label for target, label in links[slug].items() if label != "relates-to"}
            if labelled:
                lines += ["link-labels:"] + [f"  {target}: {label}" for target, label in labelled.items()]
        lines += ["---", "", f"# {title.capitalize()}", "", body, ""]
        (directory / f"{slug}.md").write_text("\n".join(lines))
    return slugs


def timed(command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
          stdin: bytes | None = None, check: bool = True) -> float:
    """Seconds one process takes, end to end."""
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True,
                          stdin=None if stdin is not None else subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def baseline(env: dict[str, str], runs: int) -> dict[str, float]:
    """The floors every figure is read against, same conditions: `python -S -c pass` (the real
    interpreter without site, as the launcher and hooks start it: the floor ratios are taken to),
    `python3 -c pass` as PATH resolves it (a pyenv shim adds its own start-up) and the interpreter
    with site."""
    shim = shutil.which("python3", path=env.get("PATH")) or "python3"
    return {"python -S -c pass": median_ms([timed([sys.executable, "-S", "-c", "pass"], env=env) for _ in range(runs)]),
            "python3 -c pass": median_ms([timed([shim, "-c", "pass"], env=env) for _ in range(runs)]),
            "interpreter -c pass": median_ms([timed([sys.executable, "-c", "pass"], env=env) for _ in range(runs)])}


def search_queries(rng: random.Random, slugs: list[str], count: int) -> list[str]:
    """`count` queries of up to three words taken from the titles (slugs) of random memories."""
    return [" ".join(rng.sample(slug.split("-")[1:-1], min(3, len(slug.split("-")) - 2)) or ["note"])
            for slug in rng.sample(slugs, count)]


def time_searches(memory: Callable[..., float], queries: list[str]) -> dict[str, list[float]]:
    """Seconds taken by semantic (hybrid and meaning only) and keyword search, per query, after a
    first search warms the page cache as a working session has it."""
    memory("semantic", queries[0])
    samples: dict[str, list[float]] = {"semantic (hybrid, default)": [], "semantic --mode semantic": [],
                                       "search (keyword)": []}
    for query in queries:
        samples["semantic (hybrid, default)"].append(memory("semantic", query))
        samples["semantic --mode semantic"].append(memory("semantic", query, "--mode", "semantic"))
        samples["search (keyword)"].append(memory("search", query))
    return samples


def precompile() -> None:
    """Byte-compile the plugin once, as the SessionStart hook does on a user's machine."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "scripts"), str(REPO / "hooks")],
                   check=True, capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CLAUDE")}
    env.update(HOME=str(home), CLAUDE_MEMORY_PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1",
               HF_HUB_OFFLINE="1", **extra)  # the embedded model comes from a directory or not at all
    return env


def report(name: str, data: dict) -> None:
    out = REPO / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=2))
    print(json.dumps(data, indent=2))
