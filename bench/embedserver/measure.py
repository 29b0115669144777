"""Measure the embedding server: model load time, throughput, and a sanity check.

Run in the bench venv: ``bench/.venv-embed/bin/python bench/embedserver/measure.py``.
Prints one JSON object. Throughput uses 200-word texts in batches of 32, both
in-process and through HTTP ``POST /api/embed`` (one request per batch).
"""

from __future__ import annotations

import json
import math
import random
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import BATCH_SIZE, MiniLM, _Server  # noqa: E402

WORDS = (
    "memory search index token cache graph edge hub scope project global local enterprise "
    "decision learning gotcha artifact breadcrumb oauth login session user request server "
    "client database query migration schema table column error retry timeout network file "
    "directory write read delete update commit branch merge review test build deploy release "
    "config setting value default option model embedding vector similarity keyword fallback "
    "the a of to and in that is for it with as was on be by this are from at or an have"
).split()

PARAPHRASES = ("The login page rejects valid passwords after the OAuth token expires.",
               "Users can't sign in with correct credentials once their auth token has timed out.")
UNRELATED = ("The login page rejects valid passwords after the OAuth token expires.",
             "Our quarterly budget meeting moved to Thursday afternoon.")


def texts(n: int, words: int = 200, seed: int = 7) -> list[str]:
    """``n`` pseudo-random ``words``-word texts (deterministic)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(n)]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b))


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1)


def main() -> int:
    started = time.monotonic()
    model = MiniLM()
    load_s = time.monotonic() - started
    corpus = texts(256)
    model.embed(corpus[:BATCH_SIZE])  # warm-up
    t = time.monotonic()
    vectors, tokens = model.embed(corpus)
    in_process = time.monotonic() - t

    server = _Server(("127.0.0.1", 0), model, ["all-minilm"], verbose=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api/embed"
    t = time.monotonic()
    for start in range(0, len(corpus), BATCH_SIZE):
        body = json.dumps({"model": "all-minilm", "input": corpus[start : start + BATCH_SIZE]}).encode()
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=300) as resp:
            assert len(json.loads(resp.read())["embeddings"]) == BATCH_SIZE
    http_s = time.monotonic() - t
    server.shutdown()

    (p1, p2, u2), _ = model.embed([PARAPHRASES[0], PARAPHRASES[1], UNRELATED[1]])
    print(json.dumps({
        "model_load_seconds": round(load_s, 2),
        "dim": len(vectors[0]),
        "texts": len(corpus),
        "tokens_per_text": tokens // len(corpus),
        "in_process_embeddings_per_second": rate(len(corpus), in_process),
        "http_embeddings_per_second": rate(len(corpus), http_s),
        "cosine_paraphrases": round(cosine(p1, p2), 3),
        "cosine_unrelated": round(cosine(p1, u2), 3),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
