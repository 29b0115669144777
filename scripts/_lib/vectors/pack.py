"""The packed cache of one scope: every usable vector quantised, for fast search.

The per-memory JSON files of `.embedding-cache/` are the cache of record (cache.py). For
speed each scope also keeps a derived pack, `.cache/embeddings.pack`: every usable vector
(a memory's own and its chunks') quantised to 7 bits, stored column by column. A search
multiplies the query into all rows at once with Python's big integers (each column becomes
one integer whose 3- or 4-byte lanes are the rows; no numpy): 17,000 rows of 768
dimensions take about 45 ms. When the cache directory changed, the pack is brought up to
date by re-reading only the cache files whose stamps changed.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from array import array
from collections import namedtuple
from itertools import accumulate, repeat
from operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable

    from ..catalog.catalog import Catalog

from ..base import fsutil
from ..base.stamps import file_stamp, racy
from . import cache
from .providers import same_model

PACK_NAME = "embeddings.pack"
PACK_MAGIC = b"MEMPACK1"
PACK_VERSION = 2
RACY_NS = 2_000_000_000  # a directory changed this recently may change again within its mtime tick
LEVELS = 63              # quantised components are ZERO + (-63..63)
ZERO = 64
U32 = "I" if array("I").itemsize == 4 else "L"


def quantise(vector: list[float]) -> tuple[bytes, float, int]:
    """(bytes 1..127 = ZERO + round(63 * x / max|x|), scale back to unit length, byte sum).

    Seven bits keep sum(u * w) over 1,040 dimensions below 2**24, so the lanes of the
    big-integer product (see scores) need only three bytes for most models.
    """
    norm = math.sqrt(math.fsum(x * x for x in vector))
    peak = max(max(vector), -min(vector)) if vector else 0.0
    if not norm or not peak:
        return bytes([ZERO]) * len(vector), 0.0, ZERO * len(vector)
    scale = LEVELS / peak
    values = bytes([int(x * scale + ZERO + 0.5) for x in vector])
    return values, peak / (LEVELS * norm), sum(values)


def lane_bytes(dim: int) -> int:
    """Bytes per lane: the largest dot product of quantised vectors must fit."""
    return 3 if dim * (2 * LEVELS + 1) ** 2 < 1 << 24 else 4


class PackHeader(namedtuple("PackHeader", "model dim rows dir_stamp")):
    """What a pack file holds, without its vectors."""

    __slots__ = ()


class Pack:
    """The usable vectors of one scope for one model, quantised and stored by column.

    Memory m has `counts[m]` rows from `starts[m]` (its vector, then its chunks); a
    memory whose cache file is unusable (other model or size, broken) keeps its stamp
    with no rows, so it is not read again until its file changes.
    """

    __slots__ = ("model", "dim", "slugs", "hashes", "stamps", "counts", "starts", "scales", "sums", "columns",
                 "dir_stamp", "_usable")

    def __init__(self, model: str, dim: int, slugs: list[str], hashes: list[str], stamps: list[str],
                 counts: list[int], scales: array, sums: array, columns: bytes | memoryview,
                 dir_stamp: str | None) -> None:
        self.model, self.dim, self.slugs, self.hashes, self.stamps = model, dim, slugs, hashes, stamps
        self.counts, self.scales, self.sums, self.columns, self.dir_stamp = counts, scales, sums, columns, dir_stamp
        self.starts = list(accumulate(counts, initial=0))[:-1]
        self._usable: dict[str, str] | None = None

    @property
    def rows(self) -> int:
        return len(self.scales)

    @classmethod
    def empty(cls, model: str) -> "Pack":
        return cls(model, 0, [], [], [], [], array("d"), array(U32), b"", None)

    def usable_hashes(self) -> dict[str, str]:
        """slug -> content hash of every memory the pack holds vectors for."""
        if self._usable is None:
            self._usable = {slug: content_hash
                            for slug, content_hash, count in zip(self.slugs, self.hashes, self.counts) if count}
        return self._usable

    def usable(self, slug: str, content_hash: str) -> bool:
        """Whether the pack holds vectors of `slug` for this exact content."""
        return self.usable_hashes().get(slug) == content_hash

    # -- files

    @classmethod
    def fresh(cls, catalog: Catalog, model: str) -> "Pack":
        """The scope's pack for `model`, brought up to date with the cache files (and saved)."""
        path = catalog.scope.cache_dir / PACK_NAME
        directory = catalog.embedding_dir
        dir_stamp = file_stamp(directory)
        pack = read(path)
        if pack is not None and not same_model(pack.model, model):
            pack = None
        if pack is not None and dir_stamp is not None and pack.dir_stamp == dir_stamp:
            return pack
        if dir_stamp is None:
            return cls.empty(model)
        saved_stamp = pack.dir_stamp if pack is not None else None
        updated = (pack or cls.empty(model))._rebuilt(directory, cache.scan(catalog))
        updated.dir_stamp = None if racy(dir_stamp, RACY_NS) else dir_stamp  # racy: check the files again next time
        if pack is None or updated is not pack or updated.dir_stamp != saved_stamp:
            with contextlib.suppress(OSError):
                write(updated, path)
        return updated

    def _rebuilt(self, directory: Path, files: dict[str, str]) -> "Pack":
        """This pack with the cache files whose stamps changed re-read (self when none did)."""
        kept = [m for m, slug in enumerate(self.slugs) if files.get(slug) == self.stamps[m]]
        known = {self.slugs[m] for m in kept}
        fresh: list[tuple[str, str, cache.Cached | None]] = []
        for slug in sorted(files):
            if slug not in known:
                entry = cache.read_cached(directory / f"{slug}.json")
                usable = entry is not None and entry.slug == slug and same_model(entry.model, self.model)
                fresh.append((slug, files[slug], entry if usable else None))
        if not fresh and len(kept) == len(self.slugs):
            return self
        votes: dict[int, int] = {}
        if any(self.counts[m] for m in kept):
            votes[self.dim] = sum(1 for m in kept if self.counts[m])
        for _, _, entry in fresh:
            if entry is not None:
                votes[len(entry.vectors[0])] = votes.get(len(entry.vectors[0]), 0) + 1
        dim = max(votes, key=lambda size: (votes[size], size == self.dim)) if votes else 0
        same = dim == self.dim
        slugs, hashes, stamps, counts = [], [], [], []
        scales, sums = array("d"), array(U32)
        runs: list[list[int]] = []  # row ranges of this pack that are kept
        for m in kept:
            slugs.append(self.slugs[m])
            stamps.append(self.stamps[m])
            count = self.counts[m] if same else 0
            hashes.append(self.hashes[m] if count else "")
            counts.append(count)
            if count:
                start = self.starts[m]
                if runs and runs[-1][1] == start:
                    runs[-1][1] = start + count
                else:
                    runs.append([start, start + count])
        for start, end in runs:
            scales.extend(self.scales[start:end])
            sums.extend(self.sums[start:end])
        new_rows = []
        for slug, stamp, entry in fresh:
            slugs.append(slug)
            stamps.append(stamp)
            vectors = entry.vectors if entry is not None and len(entry.vectors[0]) == dim else []
            hashes.append(entry.content_hash if vectors and entry is not None else "")
            counts.append(len(vectors))
            for vector in vectors:
                values, scale, total = quantise(vector)
                new_rows.append(values)
                scales.append(scale)
                sums.append(total)
        rows_before = self.rows
        old = memoryview(self.columns)
        added = b"".join(new_rows)
        parts: list[bytes | memoryview] = []
        for column in range(dim):
            base = column * rows_before
            parts.extend(old[base + start:base + end] for start, end in runs)
            parts.append(added[column::dim])
        return Pack(self.model, dim, slugs, hashes, stamps, counts, scales, sums, b"".join(parts), None)

    # -- scoring

    def row_scores(self, vector: list[float]) -> list[float]:
        """Approximate cosine similarity (within about 0.005) of `vector` with every row."""
        rows, dim = self.rows, self.dim
        if not rows or len(vector) != dim:
            return [0.0] * rows
        weights, query_scale, query_sum = quantise(vector)
        return scores(weights, query_scale, query_sum, self.columns, rows, self.scales, self.sums)

    def best(self, vector: list[float], current: dict[str, str]) -> dict[str, tuple[float, int]]:
        """slug -> (best approximate cosine over its rows, which row) of every memory whose
        vectors match its current content hash."""
        scores = self.row_scores(vector)
        if self.usable_hashes() == current:  # the usual case: every memory is up to date
            singles, single_rows, groups = self._layout()
            found = dict(zip(singles, zip(itemgetter(*single_rows)(scores), repeat(0)))) if len(singles) > 1 else \
                {slug: (scores[row], 0) for slug, row in zip(singles, single_rows)}
        else:
            groups = [(slug, start, count) for slug, content_hash, count, start
                      in zip(self.slugs, self.hashes, self.counts, self.starts)
                      if count and current.get(slug) == content_hash]
            found = {}
        for slug, start, count in groups:
            segment = scores[start:start + count]
            top = max(segment)
            found[slug] = (top, segment.index(top))
        return found

    def _layout(self) -> tuple[list[str], list[int], list[tuple[str, int, int]]]:
        """Memories with one row (slugs, rows) and with several (slug, first row, rows)."""
        singles, single_rows, groups = [], [], []
        for slug, count, start in zip(self.slugs, self.counts, self.starts):
            if count == 1:
                singles.append(slug)
                single_rows.append(start)
            elif count:
                groups.append((slug, start, count))
        return singles, single_rows, groups


def cached_dimension(catalog: Catalog, model: str) -> int | None:
    """The size of the scope's cached vectors for `model` (None when it has none)."""
    header = read(catalog.scope.cache_dir / PACK_NAME, header_only=True)
    if header is not None and same_model(header.model, model) and header.rows:
        return header.dim
    entry = cache.first_cached(catalog, model)
    return len(entry.vectors[0]) if entry is not None else None


def gather(data: bytes | memoryview, indexes: Any) -> bytes:
    """The bytes of `data` at `indexes`, gathered at C speed."""
    indexes = list(indexes)
    if len(indexes) == 1:
        return bytes([data[indexes[0]]])
    return bytes(itemgetter(*indexes)(data))


def read(path: Path, *, header_only: bool = False) -> Any:
    """The pack saved at `path` (its PackHeader only, with `header_only`); None when missing,
    damaged or from another version."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(4096) if header_only else handle.read()
    except OSError:
        return None
    try:
        if raw[:8] != PACK_MAGIC:
            return None
        size = int.from_bytes(raw[8:12], "little")
        header = json.loads(raw[12:12 + size])
        if (header.get("version") != PACK_VERSION or header.get("byteorder") != sys.byteorder
                or not isinstance(header.get("model"), str)):
            return None
        dim, rows, memories = int(header["dim"]), int(header["rows"]), int(header["memories"])
        if header_only:
            return PackHeader(header["model"], dim, rows, header.get("dirStamp"))
        view = memoryview(raw)
        position = 12 + size
        texts = []
        for length in header["texts"]:
            texts.append(bytes(view[position:position + length]).decode("utf-8"))
            position += length
        slugs, hashes, stamps = [text.split("\n") if memories else [] for text in texts]
        counts = array(U32)
        counts.frombytes(view[position:position + 4 * memories])
        position += 4 * memories
        scales = array("d")
        scales.frombytes(view[position:position + 8 * rows])
        position += 8 * rows
        sums = array(U32)
        sums.frombytes(view[position:position + 4 * rows])
        position += 4 * rows
        columns = view[position:position + rows * dim]
        if (len(columns) != rows * dim or not len(slugs) == len(hashes) == len(stamps) == memories
                or sum(counts) != rows):
            return None
        return Pack(header["model"], dim, slugs, hashes, stamps, list(counts), scales, sums, columns,
                   header.get("dirStamp"))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OverflowError):
        return None


def write(pack: Pack, path: Path) -> None:
    """Save `pack` (atomically; derived data, so without fsync)."""
    texts = ["\n".join(items).encode("utf-8") for items in (pack.slugs, pack.hashes, pack.stamps)]
    header = json.dumps({"version": PACK_VERSION, "byteorder": sys.byteorder, "model": pack.model,
                         "dim": pack.dim, "rows": pack.rows, "memories": len(pack.slugs),
                         "dirStamp": pack.dir_stamp, "texts": [len(text) for text in texts]}).encode()
    fsutil.write_atomically(path, b"".join([PACK_MAGIC, len(header).to_bytes(4, "little"), header, *texts,
                                            array(U32, pack.counts).tobytes(), pack.scales.tobytes(),
                                            pack.sums.tobytes(), bytes(pack.columns)]), durable=False)


def scores(weights: bytes, query_scale: float, query_sum: int, columns: bytes | memoryview | list[int],
           rows: int, scales: Any, sums: Any) -> list[float]:
    """Approximate cosines of a quantised query (`weights`, its scale and byte sum) with every row."""
    # Each column becomes one integer whose lanes (3 or 4 bytes) hold the rows' bytes;
    # adding weight * column over all columns leaves sum(w_i * u_ri) in lane r (it fits
    # the lane: no carries), i.e. every row's dot product in len(weights) steps. Columns
    # of equal weight are added first and multiplied once. `columns` may also be those
    # integers already made (see similar_pairs).
    width = lane_bytes(len(weights))
    integer: Callable[[int], int]
    if isinstance(columns, list):
        integer = columns.__getitem__
    else:
        view = memoryview(columns)
        lanes_buffer = bytearray(width * rows)
        from_bytes = int.from_bytes

        def integer(column: int) -> int:
            lanes_buffer[0::width] = view[column * rows:(column + 1) * rows]
            return from_bytes(lanes_buffer, "little")
    total = same = 0
    current = 0
    for column in sorted(range(len(weights)), key=weights.__getitem__):
        if weights[column] != current:
            total += current * same
            current, same = weights[column], 0
        same += integer(column)
    total += current * same
    packed = total.to_bytes(width * rows, "little")
    if width == 3:
        wide = bytearray(4 * rows)
        for byte in range(3):
            wide[byte::4] = packed[byte::3]
        packed = bytes(wide)
    lanes = array(U32)
    lanes.frombytes(packed)
    if sys.byteorder != "little":
        lanes.byteswap()
    # sum((u - Z) * (w - Z)) = sum(u * w) - Z * (sum(u) + sum(w)) + Z * Z * dim, Z = ZERO
    offset = ZERO * ZERO * len(weights) - ZERO * query_sum
    return [(lane - ZERO * row_sum + offset) * scale * query_scale
            for lane, row_sum, scale in zip(lanes, sums, scales)]
