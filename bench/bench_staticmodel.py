#!/usr/bin/env python3
"""Cost of the embedded static model: import, model load, query embedding, bulk throughput.

    python3 bench/bench_staticmodel.py [--model DIR] [--runs 15] [--texts 10000]

Without --model, builds a synthetic model the size of minishlab/potion-retrieval-32M
(63,091 tokens x 512 dimensions, F32, a WordPiece vocabulary of pseudo-words and
continuation pieces). Every figure comes from whole processes started with `python -S`,
as the `memory` launcher starts them, and is a median over --runs processes, reported
beside `python -S -c pass` measured in the same run:

  import         `from _lib.vectors import staticmodel` in a process that has json, re and pathlib
                 (as every `memory` command has)
  load cold      load() parsing tokenizer.json (no compiled index yet)
  load warm      load() with the compiled tokenizer index in place
  query          embedding one query in a fresh process (first call, rows read from the map)
  throughput     one process embedding --texts texts of 50-400 words in calls of 32, as
                 `memory embed` would: reading them, then embedding (wall and CPU time: on a
                 shared machine the CPU time is the steadier figure)

Results also go to bench/out/staticmodel.json.
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
from array import array
from pathlib import Path

from common import REPO, median_ms, precompile, report, timed

sys.path.insert(0, str(REPO / "tests"))

from static_model_factory import tokenizer_json, write_safetensors  # noqa: E402

WORKER = r"""
import sys, time, json, re, pathlib  # what every `memory` command imports anyway
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from _lib.vectors import staticmodel
imported = time.perf_counter()
mode, model_dir, index_dir = sys.argv[2], sys.argv[3], sys.argv[4]
from pathlib import Path
model = staticmodel.load(model_dir, index_dir=Path(index_dir) if index_dir != "-" else None)
loaded = time.perf_counter()
result = {"import_ms": (imported - started) * 1000, "load_ms": (loaded - imported) * 1000}
if mode == "query":
    before = time.perf_counter()
    model.embed([sys.argv[5]])
    result["embed_ms"] = (time.perf_counter() - before) * 1000
elif mode == "bulk":
    before = time.perf_counter()
    with open(sys.argv[5], encoding="utf-8") as handle:
        texts = [json.loads(line) for line in handle]
    read, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 32):
        model.embed(texts[start:start + 32])
    done = time.perf_counter()
    result.update(read_s=read - before, embed_s=done - read, embed_cpu_s=time.process_time() - cpu,
                  texts=len(texts))
print(json.dumps(result))
"""

QUERIES = ["how do we refresh oauth tokens when the login session expires",
           "why is cache latency high after a deploy", "graph of memory links between decisions",
           "flaky test on ci when the lock is held", "database migration rollback plan"]


def build_model(directory: Path, tokens: int, dim: int, rng: random.Random) -> list[str]:
    """A WordPiece model of `tokens` tokens: specials, punctuation, continuation pieces, pseudo-words."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789")
    vocab += ["##" + a for a in letters + "0123456789"] + ["##" + a + b for a in letters for b in letters]
    seen = set(vocab)
    words = []
    while len(vocab) < tokens:
        word = "".join(rng.choice(letters) for _ in range(rng.randint(2, 11)))
        if word not in seen:
            seen.add(word)
            vocab.append(word)
            words.append(word)
    directory.mkdir(parents=True, exist_ok=True)
    values = array("f", map(float, array("b", rng.randbytes(tokens * dim))))  # -128..127, as rows of ~N(0, 70)
    write_safetensors(directory / "model.safetensors", {"embeddings": ("F32", [tokens, dim], values.tobytes())})
    (directory / "config.json").write_text(json.dumps({"model_type": "model2vec", "hidden_dim": dim,
                                                       "normalize": True, "embedding_dtype": "float32"}))
    (directory / "tokenizer.json").write_text(json.dumps(tokenizer_json(vocab)))
    return words


def model_words(directory: Path) -> list[str]:
    vocab = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    return [token for token in sorted(vocab, key=vocab.get) if token.isalpha() and len(token) > 2]


def write_texts(path: Path, words: list[str], count: int, rng: random.Random) -> None:
    """Memory-like texts: 50-400 words, Zipf-like over the model's words, 10% unknown words,
    sentence punctuation and capitals."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(count):
            out = []
            for position in range(rng.randint(50, 400)):
                if rng.random() < 0.1:
                    word = "".join(rng.choice(letters) for _ in range(rng.randint(4, 12)))
                else:
                    word = words[min(int(rng.paretovariate(0.9)) - 1, len(words) - 1)]
                out.append(word.capitalize() if position % 12 == 0 else word)
                if position % 12 == 11:
                    out[-1] += rng.choice([".", ",", ";", ":", "?"])
            handle.write(json.dumps(" ".join(out)) + "\n")


def worker(mode: str, model: Path, index: Path | None, *extra: str) -> tuple[dict, float]:
    command = [sys.executable, "-S", "-c", WORKER, str(REPO / "scripts"), mode, str(model), str(index or "-"), *extra]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout), elapsed


def medians(samples: list[tuple[dict, float]], keys: list[str]) -> dict[str, float]:
    out = {key: round(statistics.median(sample[key] for sample, _ in samples), 2) for key in keys}
    out["process_ms"] = median_ms([elapsed for _, elapsed in samples])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a model directory (default: a synthetic potion-sized model)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--bulk-runs", type=int, default=1)
    args = parser.parse_args()
    precompile()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory(prefix="memory-bench-static-") as tmp:
        root = Path(tmp)
        model = args.model
        if model is None:
            model = root / "model"
            build_model(model, 63_091, 512, rng)
        words = model_words(model)
        texts = root / "texts.jsonl"
        write_texts(texts, words, args.texts, rng)
        index = root / "index"
        bare = [timed([sys.executable, "-S", "-c", "pass"]) for _ in range(args.runs)]
        cold = [worker("load", model, None) for _ in range(args.runs)]
        worker("load", model, index)  # compiles the index
        warm = [worker("load", model, index) for _ in range(args.runs)]
        queries = [worker("query", model, index, QUERIES[run % len(QUERIES)]) for run in range(args.runs)]
        bulk = [worker("bulk", model, index, str(texts)) for _ in range(args.bulk_runs)]
        pass_ms = median_ms(bare)
        query = medians(queries, ["import_ms", "load_ms", "embed_ms"])
        throughput = medians(bulk, ["read_s", "embed_s", "embed_cpu_s"])
        data = {
            "model": str(args.model or "synthetic: 63,091 tokens x 512 dims, F32 (potion-retrieval-32M's shape)"),
            "runs": args.runs,
            "python -S -c pass (ms)": pass_ms,
            "import staticmodel after json, re, pathlib (ms, in process)": query["import_ms"],
            "load cold, parsing tokenizer.json (ms)": medians(cold, ["load_ms"])["load_ms"],
            "load warm, compiled index (ms)": medians(warm, ["load_ms"])["load_ms"],
            "query embedding, first in process (ms)": query["embed_ms"],
            "query process: import + load + embed, whole process (ms)": query["process_ms"],
            "query process / python -S -c pass": round(query["process_ms"] / pass_ms, 2),
            f"bulk: {args.texts} texts, read (s)": throughput["read_s"],
            f"bulk: {args.texts} texts, embed (s)": throughput["embed_s"],
            f"bulk: {args.texts} texts, embed CPU time (s)": throughput["embed_cpu_s"],
            "bulk: per text (ms)": round(throughput["embed_s"] * 1000 / args.texts, 3),
        }
        report("staticmodel", data)


if __name__ == "__main__":
    main()
