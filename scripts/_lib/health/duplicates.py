"""Duplicates: the same title and content, or nearly the same words."""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import operator
import zlib
from collections import Counter, defaultdict

from ..base import errors, fsutil, stamps, text
from ..catalog import queries
from .facts import WARNING, ScopeFacts

NEAR_SIMILARITY = 0.8  # Jaccard similarity of two memories' distinct words (title, tags, body)
NEAR_MIN_TERMS = 8     # shorter memories are left to the exact-duplicate check
LSH_BANDS, LSH_ROWS = 10, 4  # MinHash LSH for near duplicates (see near_duplicates)
_BORROWED = 1 << 33  # added per step to a borrowed hash, so it never equals a bin's own
MEMO_NAME = "health-duplicates.json"  # the near duplicates found, and a digest of what they were found in
MEMO_VERSION = 2

EXACT_DUPLICATE = "exact-duplicate"
NEAR_DUPLICATE = "near-duplicate"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    EXACT_DUPLICATE: WARNING,  # same title and content as another memory
    NEAR_DUPLICATE: WARNING,  # nearly the same words as another memory
}


def check(facts: ScopeFacts) -> None:
    """Add the problems of this family to `facts`."""
    _duplicates(facts)


def _duplicates(facts: ScopeFacts) -> None:
    groups: dict[str, list[str]] = defaultdict(list)
    for slug in sorted(facts.memories):
        groups[facts.hashes[slug]].append(slug)
    for slugs in groups.values():
        for slug in slugs[1:]:
            facts.add(EXACT_DUPLICATE, slug, f"same title and content as {slugs[0]}",
                      f"merge them by hand (keep one, add its tags and links), then memory delete {slug}",
                      target=slugs[0])
    for a, b, similarity in _near_pairs(facts):
        facts.add(NEAR_DUPLICATE, a, f"{round(similarity * 100)}% of its words are shared with {b}",
                  f"merge them by hand if they say the same thing, or link them: memory link {a} {b} "
                  "--label similar-to", target=b)


def _near_pairs(facts: ScopeFacts) -> list[tuple[str, str, float]]:
    """near_duplicates of the scope's memories, kept in the scope's cache directory (derived and
    disposable) with a digest of everything they are computed from: the content hash of every
    memory's file, and what its catalogued words are made of (the title, the content by its
    hash, the tags, the code that splits them into words), and this code. Any change computes
    them again; a memo that cannot be read is ignored and rewritten."""
    slugs = sorted(facts.memories)
    key = hashlib.blake2b(f"{MEMO_VERSION}:{stamps.file_stamp(__file__)}:{stamps.file_stamp(text.__file__)}".encode(),
                          digest_size=20)
    for slug in slugs:
        entry = facts.entries[slug]
        key.update(f"{slug}\0{facts.hashes[slug]}\0{entry.title}\0{entry.content_hash}\0{' '.join(entry.tags)}\n"
                   .encode("utf-8", "surrogatepass"))
    path = facts.scope.cache_dir / MEMO_NAME
    try:
        memo = json.loads(path.read_bytes())
        if memo["key"] == key.hexdigest():
            return [(a, b, similarity) for a, b, similarity in memo["pairs"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass  # missing, unreadable or of another shape: computed again below
    terms = {slug: frozenset(words.split()) for slug, words in queries.terms(facts.catalog) if slug in facts.memories}
    pairs = near_duplicates(terms, {slug: facts.hashes[slug] for slug in terms})
    with contextlib.suppress(OSError, errors.Error):  # a memo that cannot be written (read-only, full): none
        fsutil.write_atomically(path, json.dumps({"key": key.hexdigest(), "pairs": pairs}), durable=False)
    return pairs


def near_duplicates(terms: dict[str, frozenset[str]], hashes: dict[str, str], *,
                    threshold: float = NEAR_SIMILARITY) -> list[tuple[str, str, float]]:
    """Pairs whose word sets have a Jaccard similarity >= `threshold` (exact duplicates excluded).

    MinHash LSH finds candidates, then each candidate's similarity is computed exactly, so
    nothing below the threshold is ever reported. A signature is LSH_BANDS x LSH_ROWS minimum
    hashes made in one pass (one-permutation hashing: a word's hash picks a bin and competes
    there; an empty bin borrows from the next filled one); memories agreeing on every row of
    some band are candidates. A pair at similarity s becomes one with probability
    1 - (1 - s^4)^10: 99.5% at 0.8, 99.99% at 0.85. Words found in more than
    max(5% of the memories, 50) are left out of the signatures: they say nothing about
    duplication and would put most memories in the same buckets. Hashes are CRC-32 of
    the words, so every run gives the same answer.
    """
    bins = LSH_BANDS * LSH_ROWS
    sets = {slug: words for slug, words in terms.items() if len(words) >= NEAR_MIN_TERMS}
    frequency = Counter(word for words in sets.values() for word in words)
    common = max(50, len(sets) // 20)
    hashed = {word: (value % bins, value)  # (bin, hash): within a bin, hash order is the permutation's
              for word, value in ((word, zlib.crc32(word.encode("utf-8", "surrogatepass")))
                                  for word, count in frequency.items() if count <= common)}
    by_hash = operator.itemgetter(1)
    buckets: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for slug, words in sets.items():
        # the smallest hash per bin: dict() keeps the last pair of each bin, so feed the largest first
        smallest = dict(sorted(filter(None, map(hashed.get, words)), key=by_hash, reverse=True))
        if not smallest:
            continue
        signature = [smallest.get(position, -1) for position in range(bins)]
        if len(smallest) < bins:
            filled = sorted(smallest)
            for position in range(bins):
                if signature[position] < 0:
                    donor = filled[bisect.bisect_left(filled, position) % len(filled)]
                    signature[position] = smallest[donor] + ((donor - position) % bins) * _BORROWED
        for band in range(LSH_BANDS):
            key = (band, *signature[band * LSH_ROWS:(band + 1) * LSH_ROWS])  # named: mypy takes a starred tuple in brackets for 3.11 syntax
            buckets[key].append(slug)
    pairs = {(a, b) if a < b else (b, a) for members in buckets.values() if len(members) > 1
             for i, a in enumerate(members) for b in members[i + 1:]}
    found = []
    for a, b in pairs:
        if hashes.get(a) == hashes.get(b):
            continue
        shared = len(terms[a] & terms[b])
        similarity = shared / (len(terms[a]) + len(terms[b]) - shared)
        if similarity >= threshold:
            found.append((a, b, similarity))
    return sorted(found)
