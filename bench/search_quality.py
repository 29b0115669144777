#!/usr/bin/env python3
"""Retrieval quality of keyword, semantic and hybrid search on the ADR set, 5-fold cross-validated.

    python3 bench/search_quality.py [--queries FILE] [--workdir DIR] [--models minilm,static]

Follows the protocol of /work/shared/eval/adr/README.md exactly, through the plugin's own
code: the 391 documents become memories of a project scope (title = title, body = body,
slug = id), `memory embed`'s backfill embeds them, and each query runs through the plugin's
keyword ranking (search.rank, as `memory search`), its vector ranking (Pack.best over the
cached vectors, as `memory semantic`) and its fusion (semantic.fuse). For each query the
top 5 + len(exclude_ids) (10 + ... for MRR@10) are retrieved, the excluded ids dropped, and
the first 5 (10) kept.

Two embedding models:
  minilm   all-MiniLM-L6-v2 behind the Ollama API (bench/embedserver/server.py), provider ollama
  static   a static model that model2vec distils from the same weights (bench/quality/distill.py),
           run by the embedded provider in this process

Both need the bench's venv (bash bench/quality/setup.sh: bench/.venv-quality); the
distilled model is made once into bench/.cache/minilm-static.

Cross-validation: the queries are split into 5 folds (a seeded shuffle). For each fold the
parameters with the best mean hit@5 + MRR@10 on the other four folds are chosen and scored
on the held-out fold; the table reports the mean over the held-out folds. Hybrid chooses its
fusion (method and parameters, FUSIONS) and, for the static model, the chunking
(STATIC_CHUNKINGS); semantic chooses the chunking; keyword search has no parameter here. The
same selection run on all dev queries gives the plugin's defaults (semantic.FUSION with a
server's model, semantic.FUSION_IN_PROCESS and embed.CHUNK_WORDS_IN_PROCESS with the
embedded one); the run checks `semantic.search_memories` end to end with those defaults
against the figures computed here. Results also go to bench/out/search_quality.json.

Two ids are not valid slugs (an underscore, a trailing hyphen): they are stored under the
nearest valid slug and mapped back to their id before scoring. --workdir keeps the scopes
(and their embedding caches) between runs.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from operator import itemgetter
from pathlib import Path

from common import REPO, report

EVAL = Path("/work/shared/eval/adr")
VENV_PYTHON = REPO / "bench" / ".venv-quality" / "bin" / "python"
SERVER = REPO / "bench" / "embedserver" / "server.py"
DISTILL = REPO / "bench" / "quality" / "distill.py"
STATIC_MODEL = REPO / "bench" / ".cache" / "minilm-static"
MODES = ("keyword", "semantic", "hybrid")
FOLDS = 5
SEED = 0
DEPTH = 10  # MRR@10
# The embedded provider's chunkings cross-validation chooses from (words, overlap); the server
# model keeps embed.CHUNK_WORDS / CHUNK_OVERLAP (re-embedding over HTTP takes minutes).
STATIC_CHUNKINGS = ((180, 60), (60, 20))
# The fusions cross-validation chooses from: (method, keyword weight, rrf k).
FUSIONS = ([("convex", weight / 10, 0.0) for weight in range(1, 10)]
           + [("rrf", weight / 10, k) for weight in (5, 6, 7, 8) for k in (1, 3, 10, 30, 60, 100)])


def slug_for(doc_id: str) -> str:
    """The memory slug standing for an ADR id (the id itself when it is a valid slug)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", doc_id.lower())).strip("-")


# -- the scopes ---------------------------------------------------------------------------

def venv_python() -> Path:
    if not VENV_PYTHON.exists():
        raise SystemExit(f"no bench venv at {VENV_PYTHON}: run `bash bench/quality/setup.sh` first")
    return VENV_PYTHON


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([str(venv_python()), str(SERVER), "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"the embedding server did not start: {SERVER}")
    return proc, url


def static_model() -> Path:
    """The distilled static model, made once (about a minute on two cores)."""
    if not (STATIC_MODEL / "model.safetensors").exists():
        started = time.perf_counter()
        subprocess.run([str(venv_python()), str(DISTILL), str(STATIC_MODEL)], check=True,
                       stderr=subprocess.DEVNULL)
        print(f"distilled {STATIC_MODEL} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return STATIC_MODEL


def load_scope(workdir: Path, settings: dict) -> tuple[object, dict[str, str]]:
    """A Workspace whose project scope holds the ADRs as memories, embedded; and slug -> id."""
    from _lib.workspace import config
    from _lib.vectors import backfill
    from _lib.ops import store
    from _lib.workspace.scopes import Workspace

    home, project = workdir / "home", workdir / "project"
    home.mkdir(parents=True, exist_ok=True)
    if not (project / ".git").exists():
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    memory_dir = project / ".claude" / "memory"
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / config.CONFIG_NAME).write_text(json.dumps({"embedding": settings}))
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
    _, results = backfill.backfill(workspace, "project")
    print(f"wrote {len(docs)} memories in {written:.1f} s; embedded {results[0].embedded} "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return workspace, ids


# -- rankings -----------------------------------------------------------------------------

class Query:
    """One query's judgments and the plugin's rankings for it."""

    def __init__(self, data: dict) -> None:
        self.data = data
        self.excluded = set(data["exclude_ids"])
        self.relevant = set(data["relevant_ids"])
        self.keyword: list[str] = []                            # ids, best first
        self.semantic: list[str] = []
        self.bm25: dict[str, float] = {}                        # slug -> score
        self.cosine: dict[str, tuple[float, int]] = {}          # slug -> (approximate cosine, row)

    def scores(self, ranked: list[str]) -> tuple[float, float]:
        """(hit@5, reciprocal rank within 10) of a ranking, excluded ids dropped first."""
        kept = [doc for doc in ranked if doc not in self.excluded][:DEPTH]
        hit = 1.0 if self.relevant & set(kept[:5]) else 0.0
        reciprocal = next((1.0 / rank for rank, doc in enumerate(kept, 1) if doc in self.relevant), 0.0)
        return hit, reciprocal


def collect(workspace: object, queries: list[dict], ids: dict[str, str]) -> list[Query]:
    """Each query's keyword and semantic rankings, BM25 scores and cosines, from the plugin's code."""
    from _lib.catalog.catalog import open_catalog
    from _lib.catalog.vectors import content_hashes
    from _lib.ops import semantic
    from _lib.vectors import embedder as embed
    from _lib.vectors.pack import Pack
    from _lib.ops import search, store

    embedder = embed.Embedder(workspace)
    scope = workspace.readable_scopes("project")[0]
    collected = []
    with open_catalog(workspace, scope) as catalog:
        current = content_hashes(catalog)
        pack = Pack.fresh(catalog, embedder.model)
        for data in queries:
            query = Query(data)
            depth = DEPTH + len(query.excluded)
            query.keyword = [ids.get(slug, slug) for slug, _ in search.rank(catalog, data["query"], limit=depth)]
            query.bm25 = dict(search.rank(catalog, data["query"], limit=semantic.KEYWORD_DEPTH))
            query.cosine = pack.best(embedder.embed([data["query"]])[0], current)
            outcome = semantic.search_memories(workspace, data["query"], store.Filters(), limit=depth,
                                               mode="semantic", embedder=embedder)
            assert outcome.mode == "semantic", outcome.problem and outcome.problem.message
            query.semantic = [ids.get(hit.entry.slug, hit.entry.slug) for hit in outcome.hits]
            collected.append(query)
    return collected


def hybrid(query: Query, fusion: tuple[str, float, float], ids: dict[str, str]) -> list[str]:
    """The hybrid ranking of a query with a fusion, as semantic._search orders it."""
    from _lib.ops import semantic

    fused = semantic.fuse([query.cosine], [query.bm25], fusion)
    best = heapq.nlargest(DEPTH + len(query.excluded), fused.items(), key=itemgetter(1))
    return [ids.get(slug, slug) for (_, slug), _ in best]


def mean_scores(queries: list[Query], ranking) -> tuple[float, float]:
    pairs = [query.scores(ranking(query)) for query in queries]
    return sum(hit for hit, _ in pairs) / len(pairs), sum(rr for _, rr in pairs) / len(pairs)


def select(variants: dict[str, list[Query]], indexes: list[int], ids: dict[str, str],
           fusions: list = FUSIONS) -> tuple[str, tuple[str, float, float] | None]:
    """The chunking (a key of `variants`) and fusion with the best mean hit@5 + MRR@10 on the
    queries at `indexes` (the first listed wins a tie); fusions=[None] ranks by meaning alone."""
    def objective(choice: tuple[str, tuple | None]) -> float:
        label, fusion = choice
        queries = [variants[label][index] for index in indexes]
        return sum(mean_scores(queries, (lambda q: q.semantic) if fusion is None else
                               (lambda q: hybrid(q, fusion, ids))))

    return max(((label, fusion) for label in variants for fusion in fusions), key=objective)


def folds_of(count: int) -> list[list[int]]:
    """Query positions of each fold: a seeded shuffle dealt round."""
    order = list(range(count))
    random.Random(SEED).shuffle(order)
    return [order[fold::FOLDS] for fold in range(FOLDS)]


def cross_validate(variants: dict[str, list[Query]], ids: dict[str, str]) -> dict:
    """The mean over held-out folds of each mode, with the parameters (chunking; fusion for
    hybrid) chosen on the other four folds; and what each fold chose."""
    count = len(next(iter(variants.values())))
    folds = folds_of(count)
    per_fold = []
    for number, held_out in enumerate(folds):
        training = [index for fold in folds if fold is not held_out for index in fold]
        meaning, _ = select(variants, training, ids, [None])
        label, fusion = select(variants, training, ids)
        any_variant = next(iter(variants.values()))
        per_fold.append({"fold": number, "n": len(held_out), "semantic chunking": meaning,
                         "hybrid": (label, fusion),
                         "scores": {"keyword": mean_scores([any_variant[i] for i in held_out], lambda q: q.keyword),
                                    "semantic": mean_scores([variants[meaning][i] for i in held_out],
                                                            lambda q: q.semantic),
                                    "hybrid": mean_scores([variants[label][i] for i in held_out],
                                                          lambda q, fusion=fusion: hybrid(q, fusion, ids))}})
    table = {mode: {"hit@5": round(sum(f["scores"][mode][0] for f in per_fold) / FOLDS, 3),
                    "mrr@10": round(sum(f["scores"][mode][1] for f in per_fold) / FOLDS, 3)} for mode in MODES}
    return {"held-out mean": table, "chosen per fold": [fold["hybrid"] for fold in per_fold], "folds": per_fold}


def breakdown(queries: list[Query], fusion: tuple[str, float, float], ids: dict[str, str]) -> dict:
    """All dev queries with the chosen fusion: all, informative, each qtype."""
    groups = {"all": lambda q: True, "informative": lambda q: q.data["informative"]}
    for qtype in sorted({query.data["qtype"] for query in queries}):
        groups[qtype] = lambda q, qtype=qtype: q.data["qtype"] == qtype
    rankings = {"keyword": lambda q: q.keyword, "semantic": lambda q: q.semantic,
                "hybrid": lambda q: hybrid(q, fusion, ids)}
    table = {}
    for name, accept in groups.items():
        chosen = [query for query in queries if accept(query)]
        table[name] = {"n": len(chosen), **{mode: dict(zip(("hit@5", "mrr@10"),
                                                           map(lambda x: round(x, 3), mean_scores(chosen, rank))))
                                            for mode, rank in rankings.items()}}
    return table


def end_to_end(workspace: object, queries: list[Query], ids: dict[str, str]) -> tuple[float, float]:
    """hit@5 and MRR@10 of `memory semantic`'s default hybrid search, through search_memories."""
    from _lib.ops import semantic
    from _lib.ops import store

    def ranking(query: Query) -> list[str]:
        outcome = semantic.search_memories(workspace, query.data["query"], store.Filters(),
                                           limit=DEPTH + len(query.excluded), mode="hybrid")
        return [ids.get(hit.entry.slug, hit.entry.slug) for hit in outcome.hits]

    return mean_scores(queries, ranking)


def print_table(name: str, table: dict) -> None:
    print(f"{name:<40}" + "".join(f"{mode + ' hit@5':>16}{'MRR@10':>8}" for mode in MODES))
    if "keyword" in table:
        table = {"all": table}
    for label, row in table.items():
        print(f"  {label:<38}" + "".join(f"{row[mode]['hit@5']:>16.3f}{row[mode]['mrr@10']:>8.3f}" for mode in MODES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default=str(EVAL / "dev-queries.jsonl"), help="a queries .jsonl file")
    parser.add_argument("--workdir", help="keep the scopes here between runs (default: a temporary directory)")
    parser.add_argument("--models", default="minilm,static", help="minilm, static or both (default)")
    args = parser.parse_args()
    from _lib.ops import semantic
    from _lib.vectors import embedder as embed

    raw = [json.loads(line) for line in Path(args.queries).read_text().splitlines() if line.strip()]
    results: dict = {"queries": args.queries, "n": len(raw), "folds": FOLDS, "seed": SEED, "fusions": FUSIONS,
                     "models": {}}
    with tempfile.TemporaryDirectory(prefix="memory-quality-") as tmp:
        root = Path(args.workdir) if args.workdir else Path(tmp)
        for name in args.models.split(","):
            server = None
            plugin_chunking = (embed.CHUNK_WORDS_IN_PROCESS, embed.CHUNK_OVERLAP_IN_PROCESS)
            try:
                if name == "minilm":
                    server, url = start_server()
                    settings = {"provider": "ollama", "endpoint": url, "model": "all-minilm", "fallbackModels": [],
                                "timeoutSeconds": 30}
                    chunkings = {f"{embed.CHUNK_WORDS}/{embed.CHUNK_OVERLAP}": None}
                    default = semantic.FUSION
                else:
                    settings = {"provider": "embedded", "embeddedModel": str(static_model())}
                    chunkings = {f"{words}/{overlap}": (words, overlap) for words, overlap in STATIC_CHUNKINGS}
                    default = semantic.FUSION_IN_PROCESS
                variants: dict[str, list[Query]] = {}
                started = time.perf_counter()
                for label, chunking in chunkings.items():
                    if chunking is not None:
                        embed.CHUNK_WORDS_IN_PROCESS, embed.CHUNK_OVERLAP_IN_PROCESS = chunking
                    workspace, ids = load_scope(root / f"{name}-{label.replace('/', '-')}", settings)
                    variants[label] = collect(workspace, raw, ids)
                    if chunking is None or chunking == plugin_chunking:
                        default_label = label
                        checked = end_to_end(workspace, variants[label], ids)
                    embed.CHUNK_WORDS_IN_PROCESS, embed.CHUNK_OVERLAP_IN_PROCESS = plugin_chunking
                print(f"{name}: {len(raw)} queries x {len(chunkings)} chunkings in "
                      f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
            finally:
                if server is not None:
                    server.terminate()
                    server.wait(timeout=10)
            cv = cross_validate(variants, ids)
            label, fusion = select(variants, list(range(len(raw))), ids)
            results["models"][name] = {
                "cross-validated": cv, "chosen on all dev": [label, fusion],
                "all dev, chosen": breakdown(variants[label], fusion, ids),
                "plugin default": [default_label, default],
                "all dev, plugin default": breakdown(variants[default_label], default, ids)["all"],
                "end to end, plugin default": dict(zip(("hit@5", "mrr@10"), (round(x, 3) for x in checked)))}
            print_table(f"{name}: 5-fold CV, held-out mean", cv["held-out mean"])
            print(f"  chosen per fold (chunking, fusion): {cv['chosen per fold']}")
            print(f"  chosen on all dev: {label}, {fusion}; plugin default: {default_label}, {default}; "
                  f"end to end: {results['models'][name]['end to end, plugin default']}")
            print_table(f"{name}: all dev, chosen", results["models"][name]["all dev, chosen"])
    report("search_quality", results)


if __name__ == "__main__":
    main()
