#!/usr/bin/env python3
"""Retrieval quality of keyword, semantic and hybrid search on the ADR set (hit@5, MRR@10).

    python3 bench/search_quality.py [--queries dev-queries.jsonl] [--workdir DIR] [--url URL]

Follows the protocol of /work/shared/eval/adr/README.md exactly, through the plugin's own
code: the 391 documents become memories of a project scope (title = title, body = body,
slug = id), `memory embed`'s backfill fetches their embeddings over HTTP from the real
all-MiniLM-L6-v2 server (bench/embedserver, started here unless --url is given), and each
query runs through store.search_memories (keyword) and semantic.search_memories (semantic,
hybrid). For each query the top 5 + len(exclude_ids) (10 + ... for MRR@10) are retrieved,
the excluded ids dropped, and the first 5 (10) kept. Reported for all queries, the
`informative` subset and each qtype; results also go to bench/out/search_quality.json.

Two ids are not valid slugs (an underscore, a trailing hyphen): they are stored under the
nearest valid slug and mapped back to their id before scoring. --workdir keeps the scope
(and its embedding cache) between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, report

EVAL = Path("/work/shared/eval/adr")
SERVER = REPO / "bench" / "embedserver" / "server.py"
SERVER_PYTHON = REPO / "bench" / ".venv-embed" / "bin" / "python"
MODEL = "all-minilm"
MODES = ("keyword", "semantic", "hybrid")


def slug_for(doc_id: str) -> str:
    """The memory slug standing for an ADR id (the id itself when it is a valid slug)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", doc_id.lower())).strip("-")


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([str(SERVER_PYTHON), str(SERVER), "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"the embedding server did not start: {SERVER}")
    return proc, url


def load_scope(workdir: Path, url: str) -> tuple[object, dict[str, str]]:
    """A Workspace whose project scope holds the ADRs as memories, embedded; and slug -> id."""
    from _lib import config, embed, store
    from _lib.scopes import Workspace

    home, project = workdir / "home", workdir / "project"
    home.mkdir(parents=True, exist_ok=True)
    if not (project / ".git").exists():
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    memory_dir = project / ".claude" / "memory"
    memory_dir.mkdir(parents=True, exist_ok=True)
    settings = {"embedding": {"provider": "ollama", "endpoint": url, "model": MODEL, "fallbackModels": [],
                              "timeoutSeconds": 30}}
    (memory_dir / config.CONFIG_NAME).write_text(json.dumps(settings))
    workspace = Workspace(project, environ)
    docs = [json.loads(line) for line in (EVAL / "docs.jsonl").read_text().splitlines() if line.strip()]
    ids = {slug_for(doc["id"]): doc["id"] for doc in docs}
    existing = {path.stem for path in memory_dir.glob("*.md")}
    started = time.perf_counter()
    quiet = Workspace(project, environ)
    quiet.config.values["embedding"]["provider"] = "disabled"  # write fast; embed in batches below
    for doc in docs:
        slug = slug_for(doc["id"])
        if slug not in existing:
            store.write(quiet, store.NewMemory(title=doc["title"], content=doc["body"], slug=slug,
                                               type="decision", tags=["adr"]), scope="project")
    written = time.perf_counter() - started
    started = time.perf_counter()
    _, results = embed.backfill(workspace, "project", batch=16)
    print(f"wrote {len(docs)} memories in {written:.1f} s; embedded {results[0].embedded} "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return workspace, ids


def ranked_ids(workspace: object, mode: str, query: str, limit: int, ids: dict[str, str]) -> list[str]:
    from _lib import semantic, store

    filters = store.Filters()
    if mode == "keyword":
        hits = store.search_memories(workspace, query, filters, limit=limit)
    else:
        outcome = semantic.search_memories(workspace, query, filters, limit=limit, mode=mode)
        assert outcome.mode == mode, f"{mode} search degraded: {outcome.problem and outcome.problem.message}"
        hits = outcome.hits
    return [ids.get(hit.entry.slug, hit.entry.slug) for hit in hits]


def evaluate(workspace: object, queries: list[dict], ids: dict[str, str]) -> dict:
    per_query: dict[str, list[tuple[dict, float, float]]] = {mode: [] for mode in MODES}
    for query in queries:
        excluded = set(query["exclude_ids"])
        relevant = set(query["relevant_ids"])
        for mode in MODES:
            found = ranked_ids(workspace, mode, query["query"], 10 + len(excluded), ids)
            kept = [doc for doc in found if doc not in excluded][:10]
            hit = 1.0 if relevant & set(kept[:5]) else 0.0
            reciprocal = next((1.0 / rank for rank, doc in enumerate(kept, 1) if doc in relevant), 0.0)
            per_query[mode].append((query, hit, reciprocal))
    groups = {"all": lambda q: True, "informative": lambda q: q["informative"]}
    for qtype in sorted({query["qtype"] for query in queries}):
        groups[qtype] = lambda q, qtype=qtype: q["qtype"] == qtype
    table: dict[str, dict] = {}
    for name, accept in groups.items():
        row: dict[str, object] = {}
        for mode in MODES:
            chosen = [(hit, rr) for query, hit, rr in per_query[mode] if accept(query)]
            row["n"] = len(chosen)
            row[mode] = {"hit@5": round(sum(hit for hit, _ in chosen) / len(chosen), 3),
                         "mrr@10": round(sum(rr for _, rr in chosen) / len(chosen), 3)}
        table[name] = row
    return table


def print_table(table: dict) -> None:
    print(f"{'queries':<16}{'n':>4}  " + "  ".join(f"{mode + ' hit@5':>15}{'MRR@10':>8}" for mode in MODES))
    for name, row in table.items():
        cells = "  ".join(f"{row[mode]['hit@5']:>15.3f}{row[mode]['mrr@10']:>8.3f}" for mode in MODES)
        print(f"{name:<16}{row['n']:>4}  {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default=str(EVAL / "dev-queries.jsonl"), help="a queries .jsonl file")
    parser.add_argument("--workdir", help="keep the scope here between runs (default: a temporary directory)")
    parser.add_argument("--url", help="use this running embedding server instead of starting one")
    args = parser.parse_args()
    queries = [json.loads(line) for line in Path(args.queries).read_text().splitlines() if line.strip()]
    server = None
    url = args.url
    if url is None:
        server, url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="memory-quality-") as tmp:
            workdir = Path(args.workdir) if args.workdir else Path(tmp)
            workspace, ids = load_scope(workdir, url)
            started = time.perf_counter()
            table = evaluate(workspace, queries, ids)
            print(f"{len(queries)} queries x {len(MODES)} modes in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    print_table(table)
    from _lib import embed, semantic

    report("search_quality", {"queries": args.queries, "model": "all-MiniLM-L6-v2 (all-minilm)",
                              "chunking": {"words": embed.CHUNK_WORDS, "overlap": embed.CHUNK_OVERLAP},
                              "fusion": f"convex: {semantic.KEYWORD_WEIGHT} x BM25/max + "
                                        f"{1 - semantic.KEYWORD_WEIGHT} x min-max cosine", "results": table})


if __name__ == "__main__":
    main()
