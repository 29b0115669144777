"""The static embedding model: loading the model2vec format, tokenizing, embedding, the hub cache.

Models are built by tests/static_model_factory.py from vocabularies and vectors chosen
here, and loaded by the same code that loads a hub model. Where the real libraries are
installed (model2vec, tokenizers, huggingface_hub), the results are checked against them;
otherwise those tests skip.
"""

from __future__ import annotations

import http.server
import json
import math
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import SCRIPTS
from static_model_factory import (BERT_NORMALIZER, COMMIT, FakeHub, cosine, encode, fake_cache, mean,
                                  tokenizer_json, write_model, write_safetensors)

from _lib.base import errors
from _lib.vectors import hftokenizer, staticmodel

# Meaning by construction: the auth words point one way, the performance words another.
# Values are sums of powers of two, stored exactly as float32, so expectations are exact.
AUTH = {"oauth": [0.875, 0.125, 0.0, 0.125], "login": [1.0, 0.0, 0.125, 0.0], "token": [0.75, 0.25, 0.0, 0.0],
        "authentication": [0.875, 0.0, 0.25, 0.125]}
PERF = {"cache": [0.0, 0.125, 1.0, 0.0], "latency": [0.125, 0.0, 0.875, 0.25]}
PIECES = {"##s": [0.0, 0.0, 0.0, 1.0], "##ization": [0.25, 0.25, 0.25, 0.25], "cafe": [0.375, 0.375, 0.0, 0.0],
          ",": [0.0, 0.5, 0.0, 0.0], "东": [0.0, 0.0, 0.5, 0.5], "京": [0.5, 0.5, 0.0, 0.0],
          "οδοσ": [0.125, 0.25, 0.375, 0.5]}
VECTORS = {**AUTH, **PERF, **PIECES}


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return write_model(tmp_path / "model", VECTORS)


def load(directory: Path, **options: Any) -> staticmodel.Model:
    return staticmodel.load(directory, **options)


def close(a: list[float], b: list[float], tolerance: float = 1e-9) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b))


# -- embeddings ---------------------------------------------------------------------------

def test_embedding_is_the_unit_mean_of_the_token_rows(model_dir: Path) -> None:
    model = load(model_dir)
    [vector] = model.embed(["OAuth login token"])
    assert close(vector, mean([AUTH["oauth"], AUTH["login"], AUTH["token"]]))
    assert math.isclose(math.fsum(v * v for v in vector), 1.0)
    assert model.dim == 4 and model.normalize


def test_related_words_embed_near_each_other(model_dir: Path) -> None:
    model = load(model_dir)
    auth, login, perf = model.embed(["oauth token authentication", "login", "cache latency"])
    assert cosine(auth, login) > 0.9 > 0.3 > cosine(auth, perf)


def test_without_normalize_the_mean_is_returned_as_is(tmp_path: Path) -> None:
    model = load(write_model(tmp_path / "m", VECTORS, normalize=False))
    [vector] = model.embed(["cache latency"])
    assert close(vector, mean([PERF["cache"], PERF["latency"]], normalize=False))


def test_a_repeated_token_counts_each_time(model_dir: Path) -> None:
    [vector] = load(model_dir).embed(["cache cache latency"])
    assert close(vector, mean([PERF["cache"], PERF["cache"], PERF["latency"]]))


def test_unknown_words_are_left_out_and_a_text_of_none_known_is_zeros(model_dir: Path) -> None:
    model = load(model_dir)
    known, unknown, empty = model.embed(["cache zzyzx latency", "zzyzx qwfp", ""])
    assert close(known, mean([PERF["cache"], PERF["latency"]]))
    assert unknown == [0.0] * 4 and empty == [0.0] * 4


def test_the_fixed_point_sum_equals_the_float_sum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = load(write_model(tmp_path / "m", VECTORS, normalize=False))
    texts = ["oauth login " * 40 + "cache", "latency", "", "tokens authentication, cafe 东京", "zzz"]
    monkeypatch.setattr(staticmodel, "FIXED_POINT_MIN_TOKENS", 10**9)
    floats = model.embed(texts)
    monkeypatch.setattr(staticmodel, "FIXED_POINT_MIN_TOKENS", 0)
    fixed = model.embed(texts)
    assert model._packed, "the fixed-point path was not taken"
    assert all(close(a, b, 1e-12) for a, b in zip(floats, fixed))
    assert close(fixed[0], mean([AUTH["oauth"]] * 40 + [AUTH["login"]] * 40 + [PERF["cache"]], normalize=False),
                 1e-12)


def test_a_row_far_beyond_the_others_is_summed_as_floats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fixed-point range comes from typical rows; a text with an outlier row is summed as
    # floats, and the outlier costs the other texts no precision.
    vectors = {f"w{index}": [1.0 + index / 1024, -1.0] for index in range(600)}
    vectors["huge"] = [2.0 ** 100, 2.0]
    model = load(write_model(tmp_path / "m", vectors, normalize=False))
    monkeypatch.setattr(staticmodel, "FIXED_POINT_MIN_TOKENS", 0)
    outlier, normal = model.embed(["w1 huge", "w1 w2 w2"])
    assert outlier == [(1 + 1 / 1024 + 2.0 ** 100) / 2, 0.5]
    assert close(normal, [(1 + 1 / 1024 + 2 * (1 + 2 / 1024)) / 3, -1.0], 1e-12)
    assert 4 in model._packed and 602 not in model._packed  # w2 packed, huge not


def test_max_length_limits_the_tokens_read_counting_unknown_ones(tmp_path: Path) -> None:
    # Tokens [PAD] [UNK] a b: the median length is 3, so 2 tokens read at most 6 characters.
    model = load(write_model(tmp_path / "m", {"a": [1.0, 0.0], "b": [0.0, 1.0]}, config={"max_length": 2}))
    assert model.token_ids("a b a b") == [2, 3]
    [vector] = model.embed(["a b a b"])
    assert close(vector, mean([[1.0, 0.0], [0.0, 1.0]]))
    assert model.token_ids("x a b") == [2]  # [UNK] a | b: cut to two tokens, then [UNK] dropped


def test_text_is_cut_at_max_length_times_the_median_token_length(tmp_path: Path) -> None:
    # model2vec reads at most max_length x median token length characters of a text.
    model = load(write_model(tmp_path / "m", VECTORS, config={"max_length": 3}))
    median = model.tokenizer.median_token_length
    assert median == 5  # lengths of [PAD] [UNK] and the 13 tokens above, sorted: the middle one
    text = "cafe" + " " * (3 * median - 4) + "cache"
    assert model.token_ids(text) == model.token_ids("cafe")


def test_no_max_length_reads_everything(tmp_path: Path) -> None:
    model = load(write_model(tmp_path / "m", VECTORS, config={"max_length": None}))
    assert len(model.token_ids("cache " * 2000)) == 2000


# -- tokenization -------------------------------------------------------------------------

@pytest.mark.parametrize("text, tokens", [
    ("OAUTH Login", ["oauth", "login"]),                        # lowercased
    ("Café", ["cafe"]),                                         # accents stripped
    ("cafe\u0301", ["cafe"]),                                   # a combining accent dropped
    ("login,token", ["login", ",", "token"]),                   # punctuation isolated
    ("东京", ["东", "京"]),                                       # each CJK ideograph a word
    ("tokens", ["token", "##s"]),                               # continuation pieces
    ("tokenization", ["token", "##ization"]),
    ("tokenq", ["[UNK]"]),                                      # no full split: one unknown token
    ("log\u200bin", ["login"]),                                 # a zero-width space is dropped
    ("lo\x00g\ufffdin\x7f", ["login"]),                          # so are NUL, U+FFFD and controls
    ("cache\u00a0latency\tlogin\n", ["cache", "latency", "login"]),  # any whitespace splits
    ("ΟΔΟΣ", ["οδοσ"]),                                         # no final sigma: lowercased per character
    ("[PAD] x [UNK]", ["[PAD]", "[UNK]", "[UNK]"]),             # special tokens found in the raw text
    ("", []),
])
def test_tokenization(model_dir: Path, text: str, tokens: list[str]) -> None:
    tokenizer = load(model_dir).tokenizer
    vocab = json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]
    assert tokenizer.encode(text) == [vocab[token] for token in tokens]


def test_a_word_longer_than_the_limit_is_one_unknown_token(tmp_path: Path) -> None:
    model = load(write_model(tmp_path / "m", {"a": [1.0], "##a": [1.0]}, max_word_chars=100))
    assert model.tokenizer.encode("a" * 100) == [2] + [3] * 99
    assert model.tokenizer.encode("a" * 101) == [1]
    assert model.embed(["a" * 101]) == [[0.0]]


def test_multiword_tokens_added_by_model2vec_are_matched_after_normalization(tmp_path: Path) -> None:
    vectors = {"new": [1.0, 0.0], "york": [0.0, 1.0], "new york": [0.6, 0.8]}
    added = [{"id": 0, "content": "[PAD]", "normalized": False, "special": True},
             {"id": 1, "content": "[UNK]", "normalized": False, "special": True},
             {"id": 4, "content": "new york", "normalized": True, "special": False, "lstrip": True, "rstrip": True}]
    model = load(write_model(tmp_path / "m", vectors, added_tokens=added))
    assert model.token_ids("I love NEW YORK!") == [4]  # "i", "love" and "!" are unknown
    assert model.token_ids("new  york") == [2, 3]       # two spaces: not the added token


def test_single_word_added_tokens_need_word_boundaries(tmp_path: Path) -> None:
    added = [{"id": 2, "content": "ab", "normalized": False, "special": False, "single_word": True}]
    model = load(write_model(tmp_path / "m", {"ab": [1.0], "xab": [0.5]}, added_tokens=added))
    assert model.tokenizer.encode("ab xab") == [2, 3]


def test_word_level_models_map_whole_words(tmp_path: Path) -> None:
    model = load(write_model(tmp_path / "m", {"cache": [1.0, 0.0], "latency": [0.0, 1.0]}, model_type="WordLevel"))
    assert model.token_ids("Cache caches latency") == [2, 3]


def test_without_a_normalizer_text_is_taken_as_written(tmp_path: Path) -> None:
    model = load(write_model(tmp_path / "m", {"cache": [1.0, 0.0], "Café": [0.0, 1.0]}, normalizer=None))
    assert model.token_ids("Cache cache Café cafe") == [2, 3]


@pytest.mark.parametrize("options", [
    {"model_type": "WordLevel"},
    {"normalizer": None},
    {"normalizer": {**BERT_NORMALIZER, "strip_accents": False}},
    {"normalizer": {**BERT_NORMALIZER, "lowercase": False, "handle_chinese_chars": False, "clean_text": False}},
], ids=["word-level", "no-normalizer", "keep-accents", "cased"])
def test_other_tokenizer_settings_equal_the_tokenizers_library(tmp_path: Path, options: dict[str, Any]) -> None:
    directory = write_model(tmp_path / "m", {**VECTORS, "Café": [1.0] * 4, "café": [1.0] * 4, "Cache": [1.0] * 4},
                            **options)
    tokenizer, model = real_tokenizer(directory), load(directory)
    for text in SAMPLE_TEXTS + ["Café café CAFÉ cache Cache 东京\x00x\u200b"]:
        assert model.tokenizer.encode(text) == tokenizer.encode(text, add_special_tokens=False).ids, text


# -- dtypes and vocabulary quantisation ---------------------------------------------------

@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16", "F64", "I8"])
def test_every_embedding_dtype_reads_back_the_stored_values(tmp_path: Path, dtype: str) -> None:
    vectors = {"cache": [1.25, -3.0, 0.1], "latency": [-2.5, 7.0, 0.3]}
    model = load(write_model(tmp_path / "m", vectors, dtype=dtype, normalize=False))
    stored = {token: decode(dtype, encode(dtype, values)) for token, values in vectors.items()}
    if dtype != "F64":
        assert stored["cache"][2] != 0.1  # rounded by the dtype: the test compares stored values
    [vector] = model.embed(["cache latency"])
    assert close(vector, mean([stored["cache"], stored["latency"]], normalize=False))
    assert model.dtype == dtype


def decode(dtype: str, data: bytes) -> list[float]:
    if dtype == "BF16":
        halves = struct.unpack(f"<{len(data) // 2}H", data)
        return list(struct.unpack(f"<{len(halves)}f", struct.pack(f"<{len(halves)}I", *[h << 16 for h in halves])))
    code, width = {"F32": ("f", 4), "F16": ("e", 2), "F64": ("d", 8), "I8": ("b", 1)}[dtype]
    return [float(value) for value in struct.unpack(f"<{len(data) // width}{code}", data)]


def test_vocabulary_quantised_models_map_tokens_to_shared_rows_times_weights(tmp_path: Path) -> None:
    # Token ids: [PAD] 0, [UNK] 1, cache 2, latency 3, oauth 4; three rows shared through `mapping`.
    rows = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    model = load(write_model(tmp_path / "m", {"cache": [0.0, 0.0], "latency": [0.0, 0.0], "oauth": [0.0, 0.0]},
                             rows=rows, mapping=[0, 0, 1, 1, 2], weights=[1.0, 1.0, 2.0, 0.5, 3.0],
                             normalize=False))
    [vector] = model.embed(["cache latency oauth"])
    assert close(vector, mean([[2.0, 0.0], [0.5, 0.0], [0.0, 3.0]], normalize=False))


# -- broken and unsupported models --------------------------------------------------------

def refused(directory: Path, *fragments: str, **options: Any) -> str:
    with pytest.raises(errors.InvalidInput) as caught:
        load(directory, **options)
    message = caught.value.message
    assert all(fragment in message for fragment in fragments), message
    assert caught.value.hint
    return message


def test_a_missing_directory_or_file_is_named(model_dir: Path, tmp_path: Path) -> None:
    refused(tmp_path / "nowhere", "does not exist")
    (model_dir / "tokenizer.json").unlink()
    refused(model_dir, "lacks tokenizer.json")


def test_a_truncated_weights_file_is_refused(model_dir: Path) -> None:
    path = model_dir / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-10])
    refused(model_dir, "model.safetensors", "beyond its")


def test_a_header_longer_than_the_file_is_refused(model_dir: Path) -> None:
    path = model_dir / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(struct.pack("<Q", len(data)) + data[8:])
    refused(model_dir, "header")
    path.write_bytes(b"\x01\x02")
    refused(model_dir, "too short")


def test_a_header_that_lies_about_a_tensor_size_is_refused(tmp_path: Path) -> None:
    directory = write_model(tmp_path / "m", VECTORS)
    rows = len(VECTORS) + 2
    write_safetensors(directory / "model.safetensors", {"embeddings": ("F32", [rows, 4], encode("F32", [0.0] * rows * 3))})
    refused(directory, "gives tensor 'embeddings'")


def test_a_matrix_that_does_not_fit_the_vocabulary_is_refused(tmp_path: Path) -> None:
    directory = write_model(tmp_path / "m", VECTORS)
    write_safetensors(directory / "model.safetensors", {"embeddings": ("F32", [3, 4], encode("F32", [0.0] * 12))})
    refused(directory, "3 embedding rows", "tokens of tokenizer.json")
    write_safetensors(directory / "model.safetensors", {"vectors": ("F32", [3, 4], encode("F32", [0.0] * 12))})
    refused(directory, "no `embeddings` tensor", "vectors")


def test_unsupported_dtypes_and_tokenizers_are_refused_by_name(tmp_path: Path) -> None:
    directory = write_model(tmp_path / "m", VECTORS)
    rows = len(VECTORS) + 2
    write_safetensors(directory / "model.safetensors",
                      {"embeddings": ("F8_E4M3", [rows, 4], b"\0" * rows * 4)})
    refused(directory, "F8_E4M3")
    refused(write_model(tmp_path / "bpe", VECTORS, model_type="BPE"), "model 'BPE'")
    refused(write_model(tmp_path / "spm", VECTORS, normalizer={"type": "Precompiled", "precompiled_charsmap": ""}),
            "normalizer 'Precompiled'")
    refused(write_model(tmp_path / "meta", VECTORS, pre_tokenizer={"type": "Metaspace"}), "pre_tokenizer 'Metaspace'")


def test_broken_json_files_are_refused(model_dir: Path) -> None:
    (model_dir / "tokenizer.json").write_text("{not json")
    refused(model_dir, "tokenizer.json", "not valid JSON")
    (model_dir / "tokenizer.json").write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}))
    refused(model_dir, "no usable vocabulary")
    (model_dir / "config.json").write_text("[]")
    refused(model_dir, "config.json", "not a JSON object")
    (model_dir / "config.json").write_text(json.dumps({"max_length": 0}))
    refused(model_dir, "max_length")


# -- the compiled tokenizer index ---------------------------------------------------------

def test_the_index_is_built_once_and_then_used_instead_of_tokenizer_json(model_dir: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    texts = ["OAuth tokens, cafe 东京 [PAD]", "cache latency zzz"]
    expected = load(model_dir).embed(texts)
    assert load(model_dir, index_dir=index_dir).embed(texts) == expected
    [index] = index_dir.iterdir()
    # Same size, inode and mtime, other content: only a load that trusts the index still works.
    path = model_dir / "tokenizer.json"
    stat = path.stat()
    with open(path, "r+b") as handle:
        handle.write(b"#" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load(model_dir, index_dir=index_dir).embed(texts) == expected
    refused(model_dir, "not valid JSON")
    # A new mtime makes the index stale: tokenizer.json is read again.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    refused(model_dir, "not valid JSON", index_dir=index_dir)
    assert list(index_dir.iterdir()) == [index]


def test_a_damaged_index_is_rebuilt(model_dir: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    expected = load(model_dir, index_dir=index_dir).embed(["oauth tokens"])
    [index] = index_dir.iterdir()
    for damage in (b"", index.read_bytes()[:40], b"garbage" * 10):
        index.write_bytes(damage)
        assert load(model_dir, index_dir=index_dir).embed(["oauth tokens"]) == expected
        assert index.read_bytes().startswith(hftokenizer.MAGIC)


def test_an_index_that_cannot_be_written_is_done_without(model_dir: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    assert load(model_dir, index_dir=blocked).embed(["cache"]) == load(model_dir).embed(["cache"])
    assert blocked.read_text() == "not a directory"


def test_index_lookups_find_every_token_and_nothing_else(model_dir: Path, tmp_path: Path) -> None:
    load(model_dir, index_dir=tmp_path / "index")
    tokenizer = load(model_dir, index_dir=tmp_path / "index").tokenizer
    assert isinstance(tokenizer.vocab, hftokenizer.VocabIndex)
    vocab = json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]
    assert all(tokenizer.vocab.get(token) == index for token, index in vocab.items())
    assert tokenizer.vocab.get("cach") is None and tokenizer.vocab.get("") is None


# -- the hub ------------------------------------------------------------------------------

def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_cached_hub_model_needs_no_network_and_no_hub_library(model_dir: Path, tmp_path: Path) -> None:
    snapshot = fake_cache(tmp_path / "hub", model_dir)
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from _lib.vectors import staticmodel; "
              "path = staticmodel.ensure('org/tiny'); print(path); "
              "print(staticmodel.load(path).embed(['cache'])[0][2]); print('huggingface_hub' in sys.modules)")
    environment = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"),
                   "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    result = subprocess.run([sys.executable, "-S", "-c", script, str(SCRIPTS)], capture_output=True, text=True,
                            env=environment, timeout=60)
    assert result.returncode == 0, result.stderr
    path, value, imported = result.stdout.split()
    assert (path, imported) == (str(snapshot), "False")
    assert math.isclose(float(value), mean([PERF["cache"]])[2])


def test_the_cache_must_hold_all_three_files(model_dir: Path, tmp_path: Path) -> None:
    snapshot = fake_cache(tmp_path / "hub", model_dir)
    assert staticmodel.cached("org/tiny", tmp_path / "hub") == snapshot
    assert staticmodel.cached("org/tiny", tmp_path / "hub", COMMIT) == snapshot
    assert staticmodel.cached("org/other", tmp_path / "hub") is None
    (snapshot / "model.safetensors").unlink()
    assert staticmodel.cached("org/tiny", tmp_path / "hub") is None


def test_offline_without_the_model_fails_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(staticmodel.DownloadFailed) as caught:
        staticmodel.ensure("org/tiny", cache_dir=tmp_path)
    assert caught.value.kind == "offline" and "HF_HUB_OFFLINE" in caught.value.message
    assert "memory embed" in caught.value.hint and "local model directory" in caught.value.hint


def test_an_unreachable_hub_fails_fast_with_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(staticmodel.DownloadFailed) as caught:
        staticmodel.ensure("minishlab/potion-retrieval-32M", cache_dir=tmp_path)
    assert caught.value.kind == "unreachable" and "cannot reach http://127.0.0.1:" in caught.value.message
    assert "memory embed" in caught.value.hint
    assert not list(tmp_path.iterdir())


def test_progress_is_reported_in_megabytes() -> None:
    assert staticmodel.progress_line("org/tiny", "model.safetensors", 45_200_000, 129_210_456) == \
        "downloading org/tiny: model.safetensors 45/129 MB"
    assert staticmodel.progress_line("org/tiny", "config.json", 0, None) == "downloading org/tiny: config.json 0 MB"


def test_directory_paths_are_returned_and_other_names_refused(model_dir: Path) -> None:
    assert staticmodel.ensure(str(model_dir)) == model_dir
    assert staticmodel.ensure("~/models/potion") == Path.home() / "models" / "potion"
    assert staticmodel.is_hub_id("minishlab/potion-retrieval-32M")
    assert not staticmodel.is_hub_id("./org/name") and not staticmodel.is_hub_id("potion")
    with pytest.raises(errors.InvalidInput, match="neither a hub model id"):
        staticmodel.ensure("potion retrieval")


def test_the_hub_cache_follows_huggingface_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert staticmodel.hub_cache_dir() == Path.home() / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert staticmodel.hub_cache_dir() == tmp_path / "xdg" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert staticmodel.hub_cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    assert staticmodel.hub_cache_dir() == tmp_path / "cache"


def test_a_hub_model_is_downloaded_once_with_progress(model_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("huggingface_hub")
    FakeHub.files = {name: (model_dir / name).read_bytes() for name in staticmodel.FILES}
    FakeHub.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    reports: list[tuple[str, int, int | None]] = []
    try:
        path = staticmodel.ensure("org/tiny", cache_dir=tmp_path / "hub",
                                  progress=lambda *report: reports.append(report))
        with pytest.raises(staticmodel.DownloadFailed) as caught:
            staticmodel.ensure("org/missing", cache_dir=tmp_path / "hub")
    finally:
        server.shutdown()
        server.server_close()
    assert caught.value.kind == "not-found"
    assert path == tmp_path / "hub" / "models--org--tiny" / "snapshots" / COMMIT
    assert load(path).embed(["oauth"]) == load(model_dir).embed(["oauth"])
    size = len(FakeHub.files["model.safetensors"])
    assert ("model.safetensors", size, size) in reports
    assert {name for name, _, _ in reports} == set(staticmodel.FILES)
    assert [request for request in FakeHub.requests if request.startswith("GET /org/tiny")] == [
        f"GET /org/tiny/resolve/{revision}/{name}"
        for revision, name in zip(["main", COMMIT, COMMIT], staticmodel.FILES)]
    # The server is gone: the cache serves the model.
    assert staticmodel.ensure("org/tiny", cache_dir=tmp_path / "hub") == path


# -- against the real libraries -----------------------------------------------------------

SAMPLE_TEXTS = [
    "How do we refresh OAuth tokens when the login session expires?",
    "Cache latency spikes after deploys; warm the cache before switching traffic.",
    "naïve café Zürich ΟΔΟΣ İstanbul 东京 tokenization, tokens; [PAD] [UNK] [CLS]",
    "", "zzyzx", "e-mail: user@example.com — 3.14 (approx) $100 #tag", "\x00\u200b\u00ad\ufffd\t\n",
    "a" * 120 + " cache " * 600,
]


def real_tokenizer(model_dir: Path) -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One model, ours and the tokenizers library's, for the property test (run many times)."""
    added = tokenizer_json(["[PAD]", "[UNK]"])["added_tokens"] + [
        {"id": 17, "content": "new york", "single_word": False, "lstrip": True, "rstrip": True,
         "normalized": True, "special": False}]
    directory = write_model(tmp_path_factory.mktemp("shared") / "model", {**VECTORS, "new york": [1.0] * 4},
                            added_tokens=added, normalizer=BERT_NORMALIZER)
    model = staticmodel.load(directory)
    yield model, real_tokenizer(directory)
    model.close()


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
       | st.lists(st.sampled_from(["oauth", "Login", "tokens", "CAFÉ", ",", " ", "东", "\u0301", "[PAD]", "ization",
                                   "\u00a0", "ΟΔΟΣ", "##s", "x", ".", "\u2e4f", "\u1734", "\U0002b820", "New",
                                   "York", "\u200b", "\t", "[UNK]", "\ufffd", "\x85"]))
       .map("".join))
def test_token_ids_equal_the_tokenizers_library(shared: Any, text: str) -> None:
    model, tokenizer = shared
    assert model.tokenizer.encode(text) == tokenizer.encode(text, add_special_tokens=False).ids


def test_embeddings_equal_model2vec(tmp_path: Path) -> None:
    model2vec = pytest.importorskip("model2vec")
    import random

    rng = random.Random(7)
    words = ["oauth", "login", "token", "cache", "latency", "memory", "graph", "index", "search", "café"]
    vocabulary = {word: [rng.gauss(0, 3) for _ in range(16)] for word in words}
    vocabulary.update({"##" + word[:3]: [rng.gauss(0, 3) for _ in range(16)] for word in words})
    texts = SAMPLE_TEXTS + [" ".join(rng.choice(words + ["qq", "Login,", "cachelat"]) for _ in range(rng.randint(1, 80)))
                            for _ in range(60)]
    ids = len(vocabulary) + 2
    variants = {"F32": {}, "F16": {"dtype": "F16"},
                "quantised": {"rows": [[rng.gauss(0, 3) for _ in range(16)] for _ in range(5)],
                              "mapping": [rng.randrange(5) for _ in range(ids)],
                              "weights": [rng.uniform(0.1, 2) for _ in range(ids)]}}
    for name, options in variants.items():
        directory = write_model(tmp_path / name, vocabulary, config={"max_length": 64}, **options)
        expected = model2vec.StaticModel.from_pretrained(str(directory), force_download=False).encode(texts)
        ours = staticmodel.load(directory).embed(texts)
        difference = max(abs(float(a) - b) for row_a, row_b in zip(expected, ours) for a, b in zip(row_a, row_b))
        assert difference < (2e-3 if name == "F16" else 1e-6), (name, difference)


def test_the_factory_writes_what_the_tokenizers_library_reads(model_dir: Path) -> None:
    tokenizer = real_tokenizer(model_dir)
    assert tokenizer.get_vocab() == json.loads((model_dir / "tokenizer.json").read_text())["model"]["vocab"]
