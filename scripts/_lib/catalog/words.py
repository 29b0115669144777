"""The catalog's vocabulary: each indexed word stored once (table `words`), referred to by id.

Postings refer to words by id (catalog/postings.py), and each memory keeps the ids of its words, in the
order they first occur, packed as 2- or 4-byte integers: a fraction of the space of repeating the text.
"""

from __future__ import annotations

import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

_BATCH = 500  # words per `IN (...)` lookup
_LITTLE = sys.byteorder == "little"


def pack(ids: list[int]) -> bytes:
    """Word ids as the docs row stores them: a width byte (2 or 4), then little-endian integers."""
    code = "H" if not ids or max(ids) < 65536 else "I"
    packed = array(code, ids)
    if not _LITTLE:
        packed.byteswap()
    return bytes((packed.itemsize,)) + packed.tobytes()


def unpack(data: bytes) -> list[int]:
    packed = array("H" if data[0] == 2 else "I")
    packed.frombytes(data[1:])
    if not _LITTLE:
        packed.byteswap()
    return packed.tolist()


def lookup(conn: sqlite3.Connection, words: list[str]) -> dict[str, int]:
    """word -> id of those of `words` the vocabulary holds."""
    found: dict[str, int] = {}
    for start in range(0, len(words), _BATCH):
        batch = words[start:start + _BATCH]
        found.update(conn.execute(f"SELECT word, id FROM words WHERE word IN ({', '.join('?' * len(batch))})",
                                  batch))
    return found


def add(conn: sqlite3.Connection, words: list[str]) -> dict[str, int]:
    """Give new words the next ids (inside the caller's transaction); word -> id."""
    first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM words").fetchone()[0]
    assigned = {word: first + number for number, word in enumerate(words)}
    conn.executemany("INSERT INTO words(id, word) VALUES (?, ?)", ((ident, word) for word, ident in assigned.items()))
    return assigned


def id_of(conn: sqlite3.Connection, word: str) -> int | None:
    row = conn.execute("SELECT id FROM words WHERE word=?", (word,)).fetchone()
    return row[0] if row else None


def spelled(conn: sqlite3.Connection, ids: list[int]) -> list[str]:
    """The words of `ids`, in that order."""
    names: dict[int, str] = {}
    for start in range(0, len(ids), _BATCH):
        batch = ids[start:start + _BATCH]
        names.update(conn.execute(f"SELECT id, word FROM words WHERE id IN ({', '.join('?' * len(batch))})", batch))
    return [names[ident] for ident in ids]


def vocabulary(conn: sqlite3.Connection) -> dict[int, str]:
    """id -> word of the whole vocabulary (for a pass over every memory's words)."""
    return dict(conn.execute("SELECT id, word FROM words"))
