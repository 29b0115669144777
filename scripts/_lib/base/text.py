"""Tokenising text for keyword search, relevance matching and token budgets; regular expressions
compiled on first use."""

from __future__ import annotations

import re
from collections import Counter

from . import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't
she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's
whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves will
also see use used using
""".split())


class LazyPattern:
    """A regular expression compiled when first used. Modules on the hooks' path declare their
    patterns at import; compiling them there would cost every tool call, used or not."""

    declared: list[LazyPattern] = []

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        LazyPattern.declared.append(self)

    @classmethod
    def compile_declared(cls) -> None:
        """Compile every pattern declared so far into `re`'s cache (the hook server does, once
        for all the hooks it forks)."""
        for pattern in cls.declared:
            re.compile(*pattern._source)

    def __getattr__(self, name: str) -> Any:
        value = getattr(re.compile(*self._source), name)
        setattr(self, name, value)  # later calls go straight to the compiled pattern's method
        return value


TITLE_WEIGHT = 3  # a word in the title counts like three in the body
TAG_WEIGHT = 2
_TOKEN = LazyPattern(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """Lowercase word tokens without stop words or one-letter words, in order."""
    return [token for token in _TOKEN.findall(text.lower()) if len(token) > 1 and token not in STOP_WORDS]


def query_terms(text: str) -> list[str]:
    """Distinct search terms of a query, in order."""
    return list(dict.fromkeys(tokens(text)))


def document_terms(title: str, tags: list[str], body: str) -> Counter[str]:
    """Weighted term frequencies of one memory, as BM25 indexes them."""
    counts: Counter[str] = Counter(tokens(body))
    for token in tokens(title):
        counts[token] += TITLE_WEIGHT
    for tag in tags:
        for token in tokens(tag.replace("-", " ")) + ([tag] if "-" in tag else []):
            counts[token] += TAG_WEIGHT
    return counts


def estimate_tokens(text: str) -> int:
    """A conservative token count for budgets: one token per 3.5 characters, rounded up.

    English prose averages ~4 characters per token with Claude's tokenizer; code and
    non-Latin text run denser, so 3.5 keeps injected context under its budget.
    """
    return -(-len(text) * 2 // 7)


def decode(raw: bytes, what: str, *, hint: str | None = None) -> str:
    """`raw` as text; InvalidInput naming `what` when it holds NUL bytes (binary data) or is not UTF-8."""
    if b"\x00" in raw:
        raise errors.InvalidInput(f"{what} holds binary data (NUL bytes)", hint)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.InvalidInput(f"{what} is not UTF-8 text (byte {exc.start})", hint) from None
