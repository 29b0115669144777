"""Static models in the model2vec on-disk format, built from a vocabulary and vectors a test chooses.

`write_model(directory, {"oauth": [...], "login": [...], "##s": [...]})` writes config.json,
tokenizer.json (a BERT-style WordPiece tokenizer: lowercase, accents stripped, split on
whitespace and punctuation) and model.safetensors, as model2vec's save_pretrained lays them
out, so the tests load them through the same code that loads a model from the hub.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import os
import struct
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

SPECIAL_TOKENS = ("[PAD]", "[UNK]")
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")  # a model2vec model directory
# dtype -> (struct format, bytes per value)
FORMATS = {"F32": ("f", 4), "F16": ("e", 2), "F64": ("d", 8), "I8": ("b", 1), "BF16": ("H", 2),
           "I64": ("q", 8), "I32": ("i", 4)}

BERT_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True}


def encode(dtype: str, values: Iterable[float]) -> bytes:
    """Little-endian bytes of `values` as `dtype` (BF16: the top half of each float32)."""
    values = list(values)
    code, _ = FORMATS[dtype]
    if dtype == "BF16":
        words = struct.unpack(f"<{len(values)}I", struct.pack(f"<{len(values)}f", *values))
        return struct.pack(f"<{len(values)}H", *[word >> 16 for word in words])
    if dtype in ("I8", "I64", "I32"):
        values = [int(value) for value in values]
    return struct.pack(f"<{len(values)}{code}", *values)


def write_safetensors(path: Path, tensors: Mapping[str, tuple[str, Sequence[int], bytes]],
                      metadata: dict[str, str] | None = None) -> None:
    """A safetensors file: 8-byte header length, JSON header, then each tensor's bytes in order."""
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header to 8 bytes
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(data for _, _, data in tensors.values()))


def tokenizer_json(tokens: Sequence[str], *, model_type: str = "WordPiece", normalizer: Any = BERT_NORMALIZER,
                   pre_tokenizer: Any = None, added_tokens: Sequence[dict[str, Any]] | None = None,
                   unk_token: str | None = "[UNK]", max_word_chars: int = 100) -> dict[str, Any]:
    """A tokenizer.json as `tokenizers` writes it, with the ids of `tokens` their positions."""
    vocab = {token: index for index, token in enumerate(tokens)}
    model: dict[str, Any] = {"type": model_type, "unk_token": unk_token, "vocab": vocab}
    if model_type == "WordPiece":
        model.update(continuing_subword_prefix="##", max_input_chars_per_word=max_word_chars)
    if added_tokens is None:
        added_tokens = [{"id": vocab[token], "content": token, "single_word": False, "lstrip": False,
                         "rstrip": False, "normalized": False, "special": True}
                        for token in SPECIAL_TOKENS if token in vocab]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added_tokens),
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer or {"type": "BertPreTokenizer"},
            "post_processor": None, "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": model}


def write_model(directory: Path, vectors: Mapping[str, Sequence[float]], *, dtype: str = "F32",
                normalize: bool = True, config: dict[str, Any] | None = None,
                weights: Sequence[float] | None = None, mapping: Sequence[int] | None = None,
                rows: Sequence[Sequence[float]] | None = None, **tokenizer: Any) -> Path:
    """A model directory whose tokens are [PAD], [UNK], then the keys of `vectors`, in order.

    [PAD] and [UNK] get zero rows unless `vectors` names them. With `mapping` (token id ->
    row) the matrix is `rows` instead, as after model2vec's vocabulary quantisation.
    """
    directory.mkdir(parents=True, exist_ok=True)
    tokens = [token for token in SPECIAL_TOKENS if token not in vectors] + list(vectors)
    dim = len(next(iter(vectors.values())))
    table = {token: list(vectors.get(token, [0.0] * dim)) for token in tokens}
    matrix = [list(row) for row in rows] if rows is not None else [table[token] for token in tokens]
    tensors = {"embeddings": (dtype, [len(matrix), dim], encode(dtype, [v for row in matrix for v in row]))}
    if weights is not None:
        tensors["weights"] = ("F64", [len(weights)], encode("F64", weights))
    if mapping is not None:
        tensors["mapping"] = ("I64", [len(mapping)], encode("I64", mapping))
    write_safetensors(directory / "model.safetensors", tensors)
    settings = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": dim,
                "normalize": normalize, "embedding_dtype": dtype.lower()}
    settings.update(config or {})
    (directory / "config.json").write_text(json.dumps(settings, indent=4))
    (directory / "tokenizer.json").write_text(json.dumps(tokenizer_json(tokens, **tokenizer), ensure_ascii=False))
    return directory


def mean(rows: Sequence[Sequence[float]], *, normalize: bool = True) -> list[float]:
    """The embedding of a text whose tokens have `rows`, computed the plain way, for expectations."""
    total = [sum(column) / len(rows) for column in zip(*rows)]
    if not normalize:
        return total
    norm = math.sqrt(sum(value * value for value in total))
    return [value / norm for value in total]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)) or 1.0)


# -- a hub: its cache layout and its file endpoint ------------------------------------------------

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def fake_cache(cache: Path, model_dir: Path, model_id: str = "org/tiny") -> Path:
    """A hub cache as huggingface_hub lays it out: refs/main, snapshots/<commit> linking blobs."""
    folder = cache / ("models--" + model_id.replace("/", "--"))
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(COMMIT)
    snapshot = folder / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (folder / "blobs").mkdir()
    for name in MODEL_FILES:
        blob = folder / "blobs" / hashlib.sha256((model_dir / name).read_bytes()).hexdigest()
        blob.write_bytes((model_dir / name).read_bytes())
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


class FakeHub(http.server.BaseHTTPRequestHandler):
    """The hub's file endpoint: HEAD and GET /<org>/<name>/resolve/<revision>/<file>."""

    files: dict[str, bytes] = {}
    requests: list[str] = []

    def answer(self, body: bool) -> None:
        self.requests.append(f"{self.command} {self.path}")
        parts = self.path.split("/")
        if len(parts) == 6 and parts[1:4] == ["org", "tiny", "resolve"] and parts[5] in self.files:
            data = self.files[parts[5]]
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)
            return
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:  # noqa: N802
        self.answer(False)

    def do_GET(self) -> None:  # noqa: N802
        self.answer(True)

    def log_message(self, *args: Any) -> None:
        pass
