"""Static embedding models in the model2vec format, loaded and run with the standard library.

A model is a directory of three files:
  config.json        `normalize` (unit-length output; false when absent), `max_length`
                     (tokens read per text; 512 when absent, null for no limit), and
                     descriptive keys (hidden_dim, tokenizer_name, ...)
  tokenizer.json     a Hugging Face tokenizer; hftokenizer says which ones are supported
  model.safetensors  tensor `embeddings`, one row per token id (F32, F16, BF16, F64 or I8);
                     after vocabulary quantisation also `mapping` (token id -> row) and
                     `weights` (a factor per token id)

A text's embedding is what model2vec's StaticModel.encode returns: the text is cut to
max_length x the median token length characters, tokenized without special tokens, cut to
max_length tokens, unknown-word tokens dropped; the rows of the rest (times their weights)
are averaged, and the mean is divided by its norm when `normalize` is set. A text with no
known token embeds as zeros.

Loading is cheap, for processes that embed one query: the safetensors header is parsed
and the tensor data memory-mapped, so a query reads only its tokens' rows; with an
`index_dir`, the tokenizer is compiled once into an index file there (hftokenizer), so
later loads do not parse tokenizer.json. Embedding many texts at once sums rows as
fixed-point lanes packed in one Python integer (one big-integer addition per token instead
of one float addition per dimension): ten times faster, with a relative error near 2**-42.

Models come from a local directory or from the Hugging Face hub: `ensure` finds a hub
model in the user's hub cache without touching the network, and otherwise downloads it
with `huggingface_hub` (imported only then).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
import sys
from array import array
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from . import hftokenizer  # imported where a model loads: after a write only the hub cache is looked at

from ..base import errors, stamps
from .providers import DEFAULT_EMBEDDED_MODEL as DEFAULT_MODEL
FILES = ("config.json", "tokenizer.json", "model.safetensors")
DEFAULT_MAX_LENGTH = 512          # model2vec's, when config.json names none
MAX_HEADER_BYTES = 100_000_000    # safetensors' own limit on the JSON header
# Embedding dtypes: struct format of one value and its size in bytes.
DTYPES = {"F32": ("f", 4), "F16": ("e", 2), "F64": ("d", 8), "BF16": ("H", 2), "I8": ("b", 1)}
INDEX_DTYPES = {"I64": ("q", 8), "I32": ("i", 4), "I16": ("h", 2), "I8": ("b", 1),
                "U64": ("Q", 8), "U32": ("I", 4), "U16": ("H", 2), "U8": ("B", 1)}
FIXED_POINT_MIN_TOKENS = 4096     # from a call reading this many tokens on, rows are summed as packed lanes
FIXED_POINT_CACHE_BYTES = 1 << 27  # packed rows kept (dim x 8 bytes each): half of a 63k x 512 vocabulary
_LANE_BIAS = 1 << 63    # lanes are 64 bits, signed values biased to unsigned when unpacking
_LANE_LIMIT = 1 << 62


def _broken(path: Path, problem: str) -> errors.InvalidInput:
    return errors.InvalidInput(
        f"{path} {problem}",
        "the model files are damaged or not a model2vec model: download the model again "
        "(delete its directory, then run `memory embed`), or set embedding.model to another model")


# -- safetensors --------------------------------------------------------------------------

class Tensor:
    """One tensor of a safetensors file: where its bytes start in the map, its dtype and shape."""

    __slots__ = ("dtype", "shape", "start", "size")

    def __init__(self, dtype: str, shape: list[int], start: int, size: int) -> None:
        self.dtype, self.shape, self.start, self.size = dtype, shape, start, size


def read_safetensors(path: Path) -> tuple[Any, dict[str, Tensor]]:
    """The memory map of a safetensors file and its tensors, with every offset checked."""
    try:
        with open(path, "rb") as handle:
            file_size = os.fstat(handle.fileno()).st_size
            head = handle.read(8)
            if len(head) < 8:
                raise _broken(path, "is too short to be a safetensors file")
            (header_size,) = struct.unpack("<Q", head)
            if header_size < 2 or header_size > min(MAX_HEADER_BYTES, file_size - 8):
                raise _broken(path, f"declares a {header_size}-byte header in a {file_size}-byte file")
            header_bytes = handle.read(header_size)
            buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise _broken(path, f"cannot be read ({exc.strerror or exc})") from None
    if hasattr(buffer, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        buffer.madvise(mmap.MADV_RANDOM)  # a query touches a few scattered rows: no read-ahead
    try:
        header = json.loads(header_bytes)
    except ValueError:
        raise _broken(path, "has a header that is not JSON") from None
    if not isinstance(header, dict):
        raise _broken(path, "has a header that is not a JSON object")
    data_start = 8 + header_size
    data_size = file_size - data_start
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise _broken(path, f"describes tensor {name!r} malformed")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not (isinstance(dtype, str) and isinstance(shape, list) and isinstance(offsets, list) and len(offsets) == 2
                and all(type(value) is int and value >= 0 for value in [*shape, *offsets])):
            raise _broken(path, f"describes tensor {name!r} malformed")
        begin, end = offsets
        if not begin <= end <= data_size:
            raise _broken(path, f"places tensor {name!r} at bytes {begin}-{end}, beyond its {data_size} bytes of data")
        width = (DTYPES.get(dtype) or INDEX_DTYPES.get(dtype) or (None, None))[1]
        if width is not None and end - begin != math.prod(shape) * width:
            raise _broken(path, f"gives tensor {name!r} of shape {shape} ({dtype}) {end - begin} bytes")
        tensors[name] = Tensor(dtype, shape, data_start + begin, end - begin)
    return buffer, tensors


# -- the model ----------------------------------------------------------------------------

class Model:
    """A loaded static model: `embed(texts)` gives one vector (a list of floats) per text."""

    def __init__(self, directory: Path, config: dict[str, Any], tokenizer: hftokenizer.Tokenizer,
                 buffer: Any, embeddings: Tensor, weights: Tensor | None, mapping: Tensor | None) -> None:
        self.directory = directory
        self.config = config
        self.tokenizer = tokenizer
        self.normalize = bool(config.get("normalize", False))
        self.max_length: int | None = config.get("max_length", DEFAULT_MAX_LENGTH)
        self.rows, self.dim = embeddings.shape
        self.dtype = embeddings.dtype
        self._buffer = buffer
        self._embeddings = embeddings
        code, self._width = DTYPES[embeddings.dtype]
        self._row_bytes = self.dim * self._width
        self._row = struct.Struct(f"<{self.dim}{code}")
        self._bf16 = struct.Struct(f"<{self.dim}f") if embeddings.dtype == "BF16" else None
        self._weights = weights
        self._mapping = mapping
        self._weight = struct.Struct("<" + DTYPES[weights.dtype][0]) if weights else None
        self._map = struct.Struct("<" + INDEX_DTYPES[mapping.dtype][0]) if mapping else None
        self._packed: dict[int, tuple[int, int]] = {}  # token id -> (packed lanes, bound on its lanes)
        self._base = 0.0                                # fixed-point constants, chosen on first use
        self._limit = self._unit = 0.0
        self._base_packed = self._bias = 0

    def close(self) -> None:
        """Unmap the model's files (the matrix, and the tokenizer index when one was used)."""
        from . import hftokenizer

        self._buffer.close()
        if isinstance(self.tokenizer.vocab, hftokenizer.VocabIndex):
            self.tokenizer.vocab.close()

    # -- tokens ---------------------------------------------------------------------------

    def token_ids(self, text: str) -> list[int]:
        """The ids whose rows make up the embedding of `text` (model2vec's tokenize)."""
        limit = self.max_length
        if limit is not None:
            text = text[:limit * self.tokenizer.median_token_length]
        ids = self.tokenizer.encode(text)
        if limit is not None:
            del ids[limit:]
        unknown = self.tokenizer.unk_id
        return [token for token in ids if token != unknown] if unknown is not None else ids

    def row(self, token: int) -> list[float] | tuple[float, ...]:
        """The vector of one token id: its row of the matrix (through `mapping`), times its weight."""
        index = token
        if self._mapping is not None and self._map is not None:
            index = self._map.unpack_from(self._buffer, self._mapping.start + token * self._map.size)[0]
            if not 0 <= index < self.rows:
                raise _broken(self.directory / "model.safetensors",
                              f"maps token {token} to row {index} of a {self.rows}-row matrix")
        values = self._row.unpack_from(self._buffer, self._embeddings.start + index * self._row_bytes)
        if self._bf16:  # bfloat16 is the top half of a float32
            values = self._bf16.unpack(struct.pack(f"<{self.dim}I", *[value << 16 for value in values]))
        if self._weights is not None and self._weight is not None:
            weight = self._weight.unpack_from(self._buffer, self._weights.start + token * self._weight.size)[0]
            return [value * weight for value in values]
        return values

    # -- embeddings -----------------------------------------------------------------------

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector of `dim` floats per text, as model2vec's StaticModel.encode computes it.

        For bulk speed, pass many texts per call: rows are packed once, on the first call that
        reads FIXED_POINT_MIN_TOKENS tokens, and summed as packed lanes from then on.
        """
        from collections import Counter  # already imported by re; counts in C

        token_lists = [self.token_ids(text) for text in texts]
        fixed = bool(self._packed) or sum(map(len, token_lists)) >= FIXED_POINT_MIN_TOKENS
        vectors = []
        for tokens in token_lists:
            counts = Counter(tokens)
            total = self._fixed_sum(counts) if fixed else None
            if total is None:
                total = self._float_sum(counts)
            vectors.append(self._finish(total, len(tokens)))
        return vectors

    def _finish(self, total: list[float], count: int) -> list[float]:
        if count == 0:
            return [0.0] * self.dim
        mean = [value / count for value in total]
        if not self.normalize:
            return mean
        norm = math.sqrt(math.fsum(value * value for value in mean)) + 1e-32
        return [value / norm for value in mean]

    def _float_sum(self, counts: dict[int, int]) -> list[float]:
        total = [0.0] * self.dim
        for token, count in counts.items():
            row = self.row(token)
            if count == 1:
                total = [a + b for a, b in zip(total, row)]
            else:
                total = [a + b * count for a, b in zip(total, row)]
        return total

    def _fixed_sum(self, counts: dict[int, int]) -> list[float] | None:
        """The sum of the rows, added as integer lanes packed in one Python integer; None when a
        lane could overflow (then the caller adds floats)."""
        if not self._base:
            self._choose_scale()
        total = 0
        bound = 0
        known = self._packed.get
        for token, count in counts.items():
            packed = known(token) or self._pack(token)
            if packed is None:
                return None
            if count == 1:
                total += packed[0]
                bound += packed[1]
            else:
                total += packed[0] * count
                bound += packed[1] * count
        if bound >= _LANE_LIMIT:
            return None
        lanes = array("Q")
        lanes.frombytes((total + self._bias).to_bytes(self.dim * 8, sys.byteorder))
        unit = self._unit
        return [(lane - _LANE_BIAS) * unit for lane in lanes]

    def _pack(self, token: int) -> tuple[int, int] | None:
        """A token's row as signed integer lanes (value / unit) packed into one integer, and a
        bound on its lanes; None when a value is beyond the range chosen from sampled rows.

        Adding `base` (1.5 x 2**K) to a value below 2**(K-2) in magnitude gives a double of
        exponent K whose 64 bits read as an integer are bits(base) + value / unit: so the
        bytes of an array of such doubles, read as one integer, minus the same integer for
        base, are the packed lanes, with no Python work per value but one addition.
        """
        row = self.row(token)
        top = max(max(row), -min(row))
        if not top < self._limit or math.isnan(sum(row)):
            return None
        base = self._base
        raw = int.from_bytes(array("d", [value + base for value in row]).tobytes(), sys.byteorder)
        if len(self._packed) * self.dim * 8 >= FIXED_POINT_CACHE_BYTES:
            self._packed.clear()
        entry = self._packed[token] = (raw - self._base_packed, int(top / self._unit) + 1)
        return entry

    def _choose_scale(self) -> None:
        """Pick K so values up to 256 times the median largest value of sampled rows fit below
        2**(K-2); a row beyond (an outlier) makes its texts be summed as floats. The resolution
        is 2**(K-52), ~2**-42 of that median; a text whose lanes could pass 2**62 (a million
        tokens of typical values) is summed as floats too."""
        ids = self.tokenizer.settings["max_id"] + 1
        tops = sorted(max(map(abs, self.row(token))) for token in range(0, ids, max(1, ids // 255)))
        typical = tops[len(tops) // 2]
        exponent = math.frexp(typical)[1] if typical > 0 and math.isfinite(typical) else 0
        power = exponent + 10
        self._base = 1.5 * math.ldexp(1.0, power)
        self._limit = math.ldexp(1.0, power - 2)
        self._unit = math.ldexp(1.0, power - 52)
        ones = int.from_bytes(array("Q", [1] * self.dim).tobytes(), sys.byteorder)
        self._base_packed = struct.unpack("=Q", struct.pack("=d", self._base))[0] * ones
        self._bias = _LANE_BIAS * ones


# -- loading ------------------------------------------------------------------------------

def load(directory: str | Path, *, index_dir: Path | None = None) -> Model:
    """The model in `directory`; InvalidInput with a hint when a file is missing, broken or unsupported.

    `index_dir`: where to keep the compiled tokenizer index (reused while tokenizer.json's
    size, mtime and inode stay the same); None parses tokenizer.json on every load.
    """
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise errors.InvalidInput(
            f"the embedding model directory {directory} does not exist",
            "set embedding.model to a directory holding config.json, tokenizer.json and model.safetensors, "
            "or to a hub model id such as " + DEFAULT_MODEL)
    missing = [name for name in FILES if not (directory / name).is_file()]
    if missing:
        raise errors.InvalidInput(
            f"the embedding model directory {directory} lacks {', '.join(missing)}",
            "a model2vec model needs config.json, tokenizer.json and model.safetensors: "
            "download it again or point embedding.model at a complete model directory")
    config = _read_config(directory / "config.json")
    tokenizer = _load_tokenizer(directory / "tokenizer.json", index_dir)
    weights_path = directory / "model.safetensors"
    buffer, tensors = read_safetensors(weights_path)
    try:
        embeddings, weights, mapping = _check_tensors(weights_path, tensors, tokenizer)
    except errors.Error:
        buffer.close()
        raise
    return Model(directory, config, tokenizer, buffer, embeddings, weights, mapping)


def _read_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise _broken(path, f"cannot be read as JSON ({exc})") from None
    if not isinstance(config, dict):
        raise _broken(path, "is not a JSON object")
    if not isinstance(config.get("normalize", False), bool):
        raise _broken(path, "has a `normalize` that is not true or false")
    limit = config.get("max_length", DEFAULT_MAX_LENGTH)
    if limit is not None and not (type(limit) is int and limit > 0):
        raise _broken(path, "has a `max_length` that is not a positive integer or null")
    return config


def _check_tensors(path: Path, tensors: dict[str, Tensor],
                   tokenizer: hftokenizer.Tokenizer) -> tuple[Tensor, Tensor | None, Tensor | None]:
    embeddings = tensors.get("embeddings")
    if embeddings is None:
        raise _broken(path, f"has no `embeddings` tensor (it has: {', '.join(sorted(tensors)) or 'none'})")
    if embeddings.dtype not in DTYPES:
        raise errors.InvalidInput(
            f"{path} stores its embeddings as {embeddings.dtype}, which this reader does not support",
            f"use a model stored as one of {', '.join(DTYPES)} (model2vec's quantize_to float32, float16 or int8)")
    if len(embeddings.shape) != 2 or 0 in embeddings.shape:
        raise _broken(path, f"has an `embeddings` tensor of shape {embeddings.shape}, not [tokens, dimensions]")
    ids = tokenizer.settings["max_id"] + 1
    mapping = tensors.get("mapping")
    if mapping is not None and (mapping.dtype not in INDEX_DTYPES or mapping.shape[:1] != mapping.shape
                                or mapping.shape[0] < ids):
        raise _broken(path, f"has a `mapping` tensor ({mapping.dtype} {mapping.shape}) that does not map "
                            f"the tokenizer's {ids} token ids to rows")
    if mapping is None and embeddings.shape[0] != tokenizer.size:
        raise _broken(path, f"has {embeddings.shape[0]} embedding rows for the {tokenizer.size} tokens "
                            "of tokenizer.json")
    if mapping is None and embeddings.shape[0] < ids:
        raise _broken(path, f"has {embeddings.shape[0]} embedding rows, fewer than the token ids of tokenizer.json")
    weights = tensors.get("weights")
    if weights is not None and (weights.dtype not in ("F32", "F16", "F64") or weights.shape[:1] != weights.shape
                                or weights.shape[0] < ids):
        raise _broken(path, f"has a `weights` tensor ({weights.dtype} {weights.shape}) that does not weigh "
                            f"the tokenizer's {ids} token ids")
    return embeddings, weights, mapping


def _load_tokenizer(path: Path, index_dir: Path | None) -> hftokenizer.Tokenizer:
    from . import hftokenizer

    try:
        real = os.path.realpath(path)
        stamp = [real, stamps.of(path.stat())]
    except OSError as exc:
        raise _broken(path, f"cannot be read ({exc.strerror or exc})") from None
    index_path = None
    if index_dir is not None:
        from zlib import crc32  # the index names its tokenizer.json in full: a clash only rebuilds

        index_path = Path(index_dir) / f"tokenizer-{crc32(real.encode()):08x}.index"
        tokenizer = _read_index(index_path, stamp)
        if tokenizer is not None:
            return tokenizer
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise _broken(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _broken(path, f"is not valid JSON ({exc})") from None
    settings, vocab = hftokenizer.settings_of(data)
    if index_path is not None:
        from ..base import fsutil

        try:
            fsutil.write_atomically(index_path, hftokenizer.compile_index(settings, vocab, stamp), durable=False)
        except OSError:
            pass  # a read-only cache: the next load parses tokenizer.json again
    return hftokenizer.Tokenizer(settings, vocab)


def _read_index(path: Path, stamp: list[Any]) -> hftokenizer.Tokenizer | None:
    from . import hftokenizer

    try:
        with open(path, "rb") as handle:
            buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # absent, unreadable, or empty (mmap refuses zero bytes)
        return None
    tokenizer = hftokenizer.read_index(buffer, stamp)
    if tokenizer is None:
        buffer.close()
    return tokenizer


# -- the hub ------------------------------------------------------------------------------

HUB_ID = "[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*"
DOWNLOAD_HINT = ("run `memory embed` once while online to download it, or set embedding.model "
                 "to a local model directory")


class DownloadFailed(errors.ProviderUnavailable):
    """A hub model is not in the cache and cannot be downloaded now.

    `kind`: offline (HF_HUB_OFFLINE is set), unreachable (no connection to the hub),
    not-found (no such model, revision or file), failed (anything else).
    """

    def __init__(self, kind: str, message: str, hint: str | None = DOWNLOAD_HINT) -> None:
        super().__init__(message, hint)
        self.kind = kind


def is_hub_id(name: str) -> bool:
    """Whether `name` is a hub model id (`org/name`) rather than a directory path."""
    import re

    return not name.startswith((".", "~", "/")) and re.fullmatch(HUB_ID, name) is not None


def hub_cache_dir() -> Path:
    """huggingface_hub's cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.path.expandvars(os.environ["HF_HUB_CACHE"])).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return Path(os.path.expandvars(home)).expanduser() / "hub"


def cached(model_id: str, cache_dir: Path, revision: str = "main") -> Path | None:
    """The snapshot directory of `model_id` in a hub cache when it holds the model's files."""
    folder = Path(cache_dir) / ("models--" + model_id.replace("/", "--"))
    commit = revision
    if not (len(revision) == 40 and all(char in "0123456789abcdef" for char in revision)):
        try:
            commit = (folder / "refs" / revision).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
    snapshot = folder / "snapshots" / commit
    if commit and os.sep not in commit and all((snapshot / name).is_file() for name in FILES):
        return snapshot
    return None


def ensure(model: str, *, cache_dir: Path | None = None, revision: str = "main",
           progress: Callable[[str, int, int | None], None] | None = None, timeout: float = 5.0) -> Path:
    """The local directory of `model`: a directory path as given, a hub id from the cache, or downloaded.

    A hub model found in the cache costs no network and no import. Otherwise it is downloaded
    with `huggingface_hub` into the cache (`cache_dir`, else huggingface_hub's own), which
    honours HF_ENDPOINT and a token; `progress(file, bytes_done, bytes_total)` is called as
    bytes arrive. HF_HUB_OFFLINE forbids the download; an unreachable hub fails within
    `timeout` seconds (huggingface_hub alone retries for ~25 s). Raises DownloadFailed.
    """
    if not is_hub_id(model):
        if model.startswith((".", "~", "/")):
            return Path(model).expanduser()
        raise errors.InvalidInput(
            f"embedding model {model!r} is neither a hub model id (org/name) nor a directory path",
            "set embedding.model to a hub id such as " + DEFAULT_MODEL + " or to an absolute directory path")
    cache = Path(cache_dir) if cache_dir is not None else hub_cache_dir()
    found = cached(model, cache, revision)
    if found is not None:
        return found
    if offline():
        raise DownloadFailed("offline", f"the embedding model {model} is not downloaded and HF_HUB_OFFLINE is set",
                             "run `memory embed` once with network access (HF_HUB_OFFLINE unset), "
                             "or set embedding.model to a local model directory")
    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    _probe(f"{endpoint}/{model}/resolve/{revision}/{FILES[0]}", model, timeout)
    from ..base import deps

    hub = deps.load("huggingface_hub")
    snapshot = revision
    path = ""
    for name in FILES:
        arguments = {"repo_id": model, "filename": name, "revision": snapshot, "cache_dir": str(cache),
                     "etag_timeout": timeout}
        try:
            try:
                path = hub.hf_hub_download(**arguments, tqdm_class=_progress_bar(progress, name))
            except TypeError as exc:  # huggingface_hub before tqdm_class: its own bars, on a terminal
                if "tqdm_class" not in str(exc):
                    raise
                path = hub.hf_hub_download(**arguments)
        except Exception as exc:  # noqa: BLE001 - huggingface_hub's errors differ between versions
            raise _download_error(exc, model, name) from None
        snapshot = Path(path).parent.name  # the commit: every file from the same one
    return Path(path).parent


def offline() -> bool:
    """Whether the environment forbids downloads (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE)."""
    return any((os.environ.get(name) or "").upper() in ("1", "ON", "YES", "TRUE")
               for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def progress_line(model: str, name: str, done: int, total: int | None) -> str:
    """A one-line progress report for a terminal: `downloading org/model: model.safetensors 45/129 MB`."""
    megabytes = f"{done / 1e6:.0f}/{total / 1e6:.0f} MB" if total else f"{done / 1e6:.0f} MB"
    return f"downloading {model}: {name} {megabytes}"


def _probe(url: str, model: str, timeout: float) -> None:
    """Fail fast when the hub cannot be reached; any HTTP answer (even an error) passes."""
    import socket
    import ssl
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "memory-plugin"})
    try:
        urllib.request.urlopen(request, timeout=timeout).close()
    except urllib.error.HTTPError:
        return  # the hub answered; huggingface_hub tells what the answer means (and sends a token)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ssl.SSLError):
            return  # certificates: huggingface_hub's HTTP client may be configured for them
        what = "timed out" if isinstance(reason, (socket.timeout, TimeoutError)) else str(reason)
        raise DownloadFailed("unreachable", f"cannot reach {url.split('/' + model)[0]} to download "
                                            f"the embedding model {model} ({what})") from None


def _progress_bar(progress: Callable[[str, int, int | None], None] | None, name: str) -> Any:
    """A class huggingface_hub can use as its tqdm: it reports bytes to `progress`."""
    if progress is None:
        return _SilentBar
    report = progress

    class Bar(_SilentBar):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            report(name, self.n, self.total)

        def update(self, n: float | None = 1) -> None:
            self.n += int(n or 0)
            report(name, self.n, self.total)

    return Bar


class _SilentBar:
    """The parts of tqdm huggingface_hub calls; anything else it asks for does nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.total = kwargs.get("total")
        self.n = int(kwargs.get("initial") or 0)

    def update(self, n: float | None = 1) -> None:
        self.n += int(n or 0)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _download_error(exc: Exception, model: str, name: str) -> DownloadFailed:
    kinds = {cls.__name__ for cls in type(exc).__mro__}
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    if kinds & {"LocalEntryNotFoundError", "OfflineModeIsEnabled"}:
        return DownloadFailed("unreachable", f"cannot download the embedding model {model}: {detail}")
    if kinds & {"RepositoryNotFoundError", "GatedRepoError", "RevisionNotFoundError"}:
        return DownloadFailed("not-found", f"the hub has no embedding model {model} (or it is private): {detail}",
                              "check embedding.model (a hub id such as " + DEFAULT_MODEL + ")")
    if kinds & {"EntryNotFoundError", "RemoteEntryNotFoundError"}:
        return DownloadFailed("not-found", f"{model} on the hub has no {name}: it is not a model2vec model",
                              "set embedding.model to a model2vec model such as " + DEFAULT_MODEL)
    return DownloadFailed("failed", f"downloading the embedding model {model} failed: {detail}")
