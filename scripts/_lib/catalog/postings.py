"""The keyword postings: for each word, which memories hold it and how often, packed in blocks.

A row per (word, block of 256 consecutive doc ids) holds two bytes per memory of the block that
has the word: the doc id's low byte and the term frequency, by doc id. A row per (word, doc) took
five times the space. A frequency of 255 or more is written 255 and kept exactly in `heavy`.
Postings are read in doc id order, as the rows were before. The length of each memory (in terms)
is kept beside them, a row of 256 integers per block (`lengths`: a width byte, 2 or 4, then
little-endian integers of that width), so a word's postings come with the lengths BM25 needs in
one read. Each postings row also keeps the highest frequency and the shortest length among its
docs: together they bound what the word adds to the score of any memory of the block, so that
BM25 can pass over blocks without decoding them.
"""

from __future__ import annotations

import itertools
import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Iterable

    Row = tuple[int, bytes, int, int]

SCHEMA = """
CREATE TABLE IF NOT EXISTS postings(word INTEGER NOT NULL, block INTEGER NOT NULL, docs BLOB NOT NULL,
  top INTEGER NOT NULL, shortest INTEGER NOT NULL, PRIMARY KEY(word, block)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS heavy(word INTEGER NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL,
  PRIMARY KEY(word, doc)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lengths(block INTEGER PRIMARY KEY, data BLOB NOT NULL);
"""
TABLES = ("postings", "heavy", "lengths")  # what a rebuild empties
SHIFT = 8  # a block holds the doc ids sharing all but their low byte
HEAVY = 255  # a frequency this high or higher is looked up in `heavy`
_BATCH = 500  # parameters per `IN (...)` lookup
_LITTLE = sys.byteorder == "little"
_NO_LENGTHS = bytes((2,)) + bytes(2 << SHIFT)


def frequency(conn: sqlite3.Connection, word: int) -> int:
    """In how many memories the word occurs."""
    return conn.execute("SELECT COALESCE(SUM(length(docs)), 0) / 2 FROM postings WHERE word=?", (word,)).fetchone()[0]


def read(conn: sqlite3.Connection, word: int, blocks: Iterable[int] | None = None) -> list[tuple[int, int, int]]:
    """(doc, tf, the doc's length) of the word's postings, by doc id (only within `blocks` when given)."""
    sql = "SELECT p.block, p.docs, l.data FROM postings p LEFT JOIN lengths l ON l.block = p.block WHERE p.word=?"
    if blocks is None:
        rows = conn.execute(sql, (word,)).fetchall()
    else:
        wanted = sorted(set(blocks))
        rows = []
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start:start + _BATCH]
            rows += conn.execute(f"{sql} AND p.block IN ({', '.join('?' * len(chunk))})", (word, *chunk)).fetchall()
    found = []
    heavy = False
    for block, data, sizes in rows:
        base, length = block << SHIFT, _integers(sizes or _NO_LENGTHS)
        found += [(base + low, tf, length[low]) for low, tf in zip(data[0::2], data[1::2])]
        heavy = heavy or HEAVY in data[1::2]
    if heavy:
        exact = dict(conn.execute("SELECT doc, tf FROM heavy WHERE word=?", (word,)))
        found = [(doc, exact.get(doc, tf) if tf == HEAVY else tf, length) for doc, tf, length in found]
    return found


def blocks_of(conn: sqlite3.Connection, word: int) -> list[Row]:
    """(block, packed low bytes and frequencies, highest frequency, shortest length) of the word's
    postings, by block, not decoded."""
    return conn.execute("SELECT block, docs, top, shortest FROM postings WHERE word=?", (word,)).fetchall()


def heavy_of(conn: sqlite3.Connection, word: int) -> dict[int, int]:
    """doc -> exact frequency, of the word's postings written HEAVY."""
    return dict(conn.execute("SELECT doc, tf FROM heavy WHERE word=?", (word,)))


def lengths_of(conn: sqlite3.Connection, block: int) -> array[int]:
    """The lengths of the docs of a block, by low byte."""
    row = conn.execute("SELECT data FROM lengths WHERE block=?", (block,)).fetchone()
    return _integers(row[0] if row else _NO_LENGTHS)


def lengths_in(conn: sqlite3.Connection, blocks: list[int]) -> dict[int, array[int]]:
    """block -> the lengths of its docs, by low byte, for each of `blocks`."""
    found = dict.fromkeys(blocks, _NO_LENGTHS)
    for start in range(0, len(blocks), _BATCH):
        chunk = blocks[start:start + _BATCH]
        found.update(conn.execute(f"SELECT block, data FROM lengths WHERE block IN ({', '.join('?' * len(chunk))})",
                                  chunk))
    return {block: _integers(data) for block, data in found.items()}


def set_lengths(conn: sqlite3.Connection, block: int, lengths: dict[int, int]) -> array[int]:
    """Record the lengths of docs of one block (low byte -> length); the block's lengths after."""
    sizes = lengths_of(conn, block)
    if sizes.typecode == "H" and max(lengths.values(), default=0) > 0xFFFF:
        sizes = array("I", sizes)
    for low, length in lengths.items():
        sizes[low] = length
    stored = sizes
    if not _LITTLE:
        stored = array(sizes.typecode, sizes)
        stored.byteswap()
    conn.execute("INSERT OR REPLACE INTO lengths VALUES (?, ?)", (block, bytes((sizes.itemsize,)) + stored.tobytes()))
    return sizes


def _row(word: int, block: int, data: bytes, sizes: array[int]) -> tuple[int, int, bytes, int, int]:
    """A postings row: with the highest frequency and the shortest length of its docs."""
    return word, block, data, max(data[1::2]), min(map(sizes.__getitem__, data[0::2]))


def _integers(data: bytes) -> array[int]:
    sizes = array("H" if data[0] == 2 else "I")
    sizes.frombytes(data[1:])
    if not _LITTLE:
        sizes.byteswap()
    return sizes


def _position(offsets: bytes | bytearray, low: int) -> int:
    """Where `low` is or belongs among the sorted low bytes of a block."""
    if not offsets or offsets[-1] < low:
        return len(offsets)  # the usual case: a new doc id is the highest
    found = offsets.find(bytes((low,)))
    return found if found >= 0 else next(at for at, other in enumerate(offsets) if other > low)


def holding(conn: sqlite3.Connection, word: int, among: set[int]) -> list[int]:
    """Those of the docs `among` that hold the word, by doc id (a set operation per block)."""
    lows: dict[int, set[int]] = {}
    for doc in among:
        lows.setdefault(doc >> SHIFT, set()).add(doc & 0xFF)
    found = []
    for block, data in conn.execute("SELECT block, docs FROM postings WHERE word=?", (word,)):
        wanted = lows.get(block)
        if wanted:
            found += [(block << SHIFT) + low for low in sorted(wanted.intersection(data[0::2]))]
    return found


def add(conn: sqlite3.Connection, doc: int, length: int, counts: Iterable[tuple[int, int]]) -> None:
    """Record that memory `doc` (of `length` terms) holds each (word, tf) of `counts` (inside the
    caller's transaction)."""
    block, low = doc >> SHIFT, doc & 0xFF
    sizes = set_lengths(conn, block, {low: length})
    frequencies = dict(counts)
    current = _blocks(conn, block, list(frequencies))
    rows = []
    for word, tf in frequencies.items():
        data = current.get(word, b"")
        at = _position(data[0::2], low)
        keep = 1 if at * 2 < len(data) and data[at * 2] == low else 0
        rows.append(_row(word, block, data[:at * 2] + bytes((low, min(tf, HEAVY))) + data[(at + keep) * 2:], sizes))
    conn.executemany("INSERT OR REPLACE INTO postings VALUES (?, ?, ?, ?, ?)", rows)
    heavy = [(word, doc, tf) for word, tf in frequencies.items() if tf >= HEAVY]
    if heavy:
        conn.executemany("INSERT OR REPLACE INTO heavy VALUES (?, ?, ?)", heavy)


def remove(conn: sqlite3.Connection, doc: int, words: list[int]) -> None:
    """Forget that memory `doc` holds `words`."""
    remove_many(conn, [(doc, words)])


def remove_many(conn: sqlite3.Connection, removals: Iterable[tuple[int, list[int]]]) -> None:
    """Forget the words of many memories, `removals` being (doc, its words) in doc id order: the
    rows of a block are read and written once for all its memories that go (one by one, a row of
    a common word was rewritten for each of thousands of memories)."""
    for block, group in itertools.groupby(removals, key=lambda removal: removal[0] >> SHIFT):
        leaving: dict[int, set[int]] = {}  # word -> the low bytes of its docs that go
        for doc, words in group:
            for word in words:
                leaving.setdefault(word, set()).add(doc & 0xFF)
        _remove_from_block(conn, block, leaving)


def _remove_from_block(conn: sqlite3.Connection, block: int, leaving: dict[int, set[int]]) -> None:
    changed, emptied, heavy = [], [], []
    sizes = None
    for word, data in _blocks(conn, block, list(leaving)).items():
        gone = leaving[word]
        kept = bytearray()
        for at in range(0, len(data), 2):
            if data[at] not in gone:
                kept += data[at:at + 2]
            elif data[at + 1] == HEAVY:
                heavy.append((word, (block << SHIFT) + data[at]))
        if len(kept) == len(data):
            continue
        if kept:
            if sizes is None:
                sizes = lengths_of(conn, block)
            changed.append(_row(word, block, bytes(kept), sizes))
        else:
            emptied.append((word, block))
    conn.executemany("INSERT OR REPLACE INTO postings VALUES (?, ?, ?, ?, ?)", changed)
    if emptied:
        conn.executemany("DELETE FROM postings WHERE word=? AND block=?", emptied)
    if heavy:
        conn.executemany("DELETE FROM heavy WHERE word=? AND doc=?", heavy)


class Staged:
    """Postings of many memories recorded in a row: a new doc id is one above the highest in use, so
    a block is complete once the ids move past it and is written then, once, its words in key order.
    The first block can also hold older memories (their ids are lower than every new one), and
    one written already is met again when the highest memories were forgotten meanwhile: those
    are merged with what the table holds."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.block: int | None = None
        self.highest: int | None = None  # of the blocks written
        self.words: dict[int, bytearray] = {}
        self.lengths: dict[int, int] = {}

    def add(self, doc: int, length: int, counts: Iterable[tuple[int, int]]) -> None:
        block, low = doc >> SHIFT, doc & 0xFF
        if block != self.block:
            self.flush()
            self.block = block
        self.lengths[low] = length
        heavy = []
        words = self.words
        for word, tf in counts:
            part = words.get(word)
            if part is None:
                words[word] = part = bytearray()
            if tf < HEAVY:
                part += bytes((low, tf))
            else:
                part += bytes((low, HEAVY))
                heavy.append((word, doc, tf))
        if heavy:
            self.conn.executemany("INSERT OR REPLACE INTO heavy VALUES (?, ?, ?)", heavy)

    def remove(self, doc: int, words: list[int]) -> None:
        if doc >> SHIFT == self.block:
            low = doc & 0xFF
            heavy = []
            for word in words:
                part = self.words.get(word)
                at = _position(part[0::2], low) if part else 0
                if part and at * 2 < len(part) and part[at * 2] == low:
                    if part[at * 2 + 1] == HEAVY:
                        heavy.append((word, doc))  # (recorded in `heavy` when it was staged)
                    del part[at * 2:at * 2 + 2]
            self.conn.executemany("DELETE FROM heavy WHERE word=? AND doc=?", heavy)
        remove(self.conn, doc, words)  # written already, or an older memory

    def flush(self) -> None:
        parts = {word: bytes(part) for word, part in sorted(self.words.items()) if part}
        # (a block's lengths are set with its postings)
        sizes = set_lengths(self.conn, self.block, self.lengths) if self.lengths else None  # type: ignore[arg-type]
        self.words, self.lengths = {}, {}
        if not parts:
            return
        assert self.block is not None and sizes is not None
        fresh = self.highest is not None and self.block > self.highest
        older = {} if fresh else _blocks(self.conn, self.block, list(parts))
        self.highest = max(self.block, self.highest if self.highest is not None else self.block)
        self.conn.executemany("INSERT OR REPLACE INTO postings VALUES (?, ?, ?, ?, ?)", [
            _row(word, self.block, _merged(older[word], data) if word in older else data, sizes)
            for word, data in parts.items()])


def _merged(older: bytes, newer: bytes) -> bytes:
    entries = dict(zip(older[0::2], older[1::2]))
    entries.update(zip(newer[0::2], newer[1::2]))
    return bytes(byte for low in sorted(entries) for byte in (low, entries[low]))


def _blocks(conn: sqlite3.Connection, block: int, words: list[int]) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    for start in range(0, len(words), _BATCH):
        chunk = words[start:start + _BATCH]
        found.update(conn.execute(f"SELECT word, docs FROM postings WHERE block=? AND word IN "
                                  f"({', '.join('?' * len(chunk))})", (block, *chunk)))
    return found
