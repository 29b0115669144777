"""Hashes from CPython's built-in implementations.

hashlib loads OpenSSL, which costs milliseconds on every command and hook; the built-in modules
(`_sha256`, `_sha1`, `_blake2`; `_sha2` from 3.12) cost next to nothing. hashlib stays the fallback
for interpreters without them.
"""

from __future__ import annotations


def sha256_hex(data: bytes) -> str:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # CPython >= 3.12
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


def sha1_hex(data: bytes) -> str:
    try:
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    return sha1(data).hexdigest()


def digest64(data: bytes) -> int:
    """A signed 64-bit BLAKE2b digest (fits an SQLite integer)."""
    try:
        from _blake2 import blake2b  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import blake2b
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "big", signed=True)
