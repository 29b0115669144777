"""The tokenizer a Hugging Face `tokenizer.json` describes, in pure Python, for static embedding models.

A static model averages the vectors of the tokens its tokenizer produces, so the text
must be split exactly as Hugging Face `tokenizers` splits it. This module implements the
configurations static models use, and refuses the rest:

  normalizer     BertNormalizer (drop control characters, space out CJK ideographs, strip
                 accents, lowercase), or none
  pre_tokenizer  BertPreTokenizer (split on whitespace, isolate punctuation)
  model          WordPiece (greedy longest match, continuation pieces prefixed `##`; a word
                 with no full match is one unknown token), or WordLevel (whole words)
  added tokens   matched in the raw text (`normalized: false`) or in the normalized text,
                 leftmost-longest, before pre-tokenization

The post-processor ([CLS] ... [SEP]), padding and truncation of the file are not used:
static models embed the tokens of the text alone.

Unicode: character classes come from Python's `unicodedata`, except for the characters
whose class changed since the Unicode 8.0 tables `tokenizers` classifies with.

The vocabulary can be compiled into an index file (`compile_index`, `read_index`): the
settings plus an open-addressing hash table that is memory-mapped and probed per word,
so a process that embeds one query never parses the whole tokenizer.json.
"""

from __future__ import annotations

import json
import re
import struct
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

from ..base import errors

# Rust's char::is_whitespace (the Unicode White_Space property), which `tokenizers` splits on.
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
             "\u2028\u2029\u202f\u205f\u3000"
ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_WORDS = re.compile(f"[^{re.escape(WHITESPACE)}]+")
_ASCII_PIECES = re.compile(f"[^{re.escape(ASCII_PUNCTUATION)}]+|[{re.escape(ASCII_PUNCTUATION)}]")
_ASCII_BERT = re.compile(f"[^\t\n\x0b\x0c\r {re.escape(ASCII_PUNCTUATION)}]+|[{re.escape(ASCII_PUNCTUATION)}]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# The CJK ideograph blocks BertNormalizer puts spaces around (tokenizers' is_chinese_char);
# compiled on first use (3 ms), as most text is ASCII.
CJK_CLASS = "[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f" \
            "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f]"
_cjk: re.Pattern[str] | None = None
# Control characters BertNormalizer drops (category C* but tab, newline, carriage return);
# tab, newline and carriage return become spaces.
_ASCII_CLEAN: dict[int, str | None] = {code: None for code in [*range(0, 9), 11, 12, *range(14, 32), 127]}
_ASCII_CLEAN.update({9: " ", 10: " ", 13: " "})


def _char_set(ranges: str) -> frozenset[str]:
    """The characters of `ranges`, written like a regex class body: `a-cx` is a, b, c and x."""
    chars: set[str] = set()
    index = 0
    while index < len(ranges):
        if index + 2 < len(ranges) and ranges[index + 1] == "-":
            chars.update(map(chr, range(ord(ranges[index]), ord(ranges[index + 2]) + 1)))
            index += 3
        else:
            chars.add(ranges[index])
            index += 1
    return frozenset(chars)


# `tokenizers` classifies characters with Unicode 8.0 tables. Python's are newer; these are
# the characters whose class changed since, as Python 3.11's tables and tokenizers 0.22
# disagree on them (found by comparing every code point).
_LEGACY_NOT_CONTROL = _char_set("\u0890-\u0891\u08e2\U000110cd\U00013430-\U00013438")
_LEGACY_NOT_PUNCTUATION = _char_set(
    "\u061d\u09fd\u0a76\u0c77\u0c84\u1b7d-\u1b7e\u2e43-\u2e4f\u2e52-\u2e5d\U00010ead\U00010f55-\U00010f59"
    "\U00010f86-\U00010f89\U0001144b-\U0001144f\U0001145a-\U0001145b\U0001145d\U00011660-\U0001166c\U000116b9"
    "\U0001183b\U00011944-\U00011946\U000119e2\U00011a3f-\U00011a46\U00011a9a-\U00011a9c\U00011a9e-\U00011aa2"
    "\U00011c41-\U00011c45\U00011c70-\U00011c71\U00011ef7-\U00011ef8\U00011fff\U00012ff1-\U00012ff2"
    "\U00016e97-\U00016e9a\U00016fe2\U0001e95e-\U0001e95f")
_LEGACY_PUNCTUATION = _char_set("\u166d\U000111c9")
_LEGACY_NOT_NONSPACING = _char_set(
    "\u07fd\u0898-\u089f\u08ca-\u08e1\u09fe\u0afa-\u0aff\u0b55\u0c04\u0c3c\u0d00\u0d3b-\u0d3c\u0d81\u0eba\u180f"
    "\u1885-\u1886\u1abf-\u1ace\u1df6-\u1dfb\ua82c\ua8c5\ua8ff\ua9bd\U00010d24-\U00010d27\U00010eab-\U00010eac"
    "\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011070\U00011073-\U00011074\U000110c2\U000111c9\U000111cf"
    "\U0001123e\U0001133b\U00011438-\U0001143f\U00011442-\U00011444\U00011446\U0001145e\U0001182f-\U00011837"
    "\U00011839-\U0001183a\U0001193b-\U0001193c\U0001193e\U00011943\U000119d4-\U000119d7\U000119da-\U000119db"
    "\U000119e0\U00011a01-\U00011a0a\U00011a33-\U00011a38\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a56"
    "\U00011a59-\U00011a5b\U00011a8a-\U00011a96\U00011a98-\U00011a99\U00011c30-\U00011c36\U00011c38-\U00011c3d"
    "\U00011c3f\U00011c92-\U00011ca7\U00011caa-\U00011cb0\U00011cb2-\U00011cb3\U00011cb5-\U00011cb6"
    "\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d\U00011d3f-\U00011d45\U00011d47\U00011d90-\U00011d91"
    "\U00011d95\U00011d97\U00011ef3-\U00011ef4\U00016f4f\U00016fe4\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46"
    "\U0001e000-\U0001e006\U0001e008-\U0001e018\U0001e01b-\U0001e021\U0001e023-\U0001e024\U0001e026-\U0001e02a"
    "\U0001e130-\U0001e136\U0001e2ae\U0001e2ec-\U0001e2ef\U0001e944-\U0001e94a")
_LEGACY_NONSPACING = _char_set("\u1734")


def is_control(char: str) -> bool:
    """Whether BertNormalizer drops `char` as a control character (Cc, Cf, Co; not tab, newline, CR)."""
    return unicodedata.category(char) in ("Cc", "Cf", "Co") and char not in _LEGACY_NOT_CONTROL \
        and char not in "\t\n\r"


def is_punctuation(char: str) -> bool:
    """Whether BertPreTokenizer isolates `char`: ASCII punctuation and Unicode P*."""
    if char < "\x80":
        return char in ASCII_PUNCTUATION
    if unicodedata.category(char)[0] == "P":
        return char not in _LEGACY_NOT_PUNCTUATION
    return char in _LEGACY_PUNCTUATION


def is_nonspacing_mark(char: str) -> bool:
    """Whether StripAccents drops `char` (category Mn)."""
    if unicodedata.category(char) == "Mn":
        return char not in _LEGACY_NOT_NONSPACING
    return char in _LEGACY_NONSPACING


MODEL_TYPES = ("WordPiece", "WordLevel")
NORMALIZER_TYPES = ("BertNormalizer", "none")
PRE_TOKENIZER_TYPES = ("BertPreTokenizer",)
WORD_MEMO_LIMIT = 1 << 17  # words whose pieces are remembered; the memo restarts beyond this


def _unsupported(what: str, value: Any, supported: Iterable[str]) -> errors.InvalidInput:
    return errors.InvalidInput(
        f"tokenizer.json uses {what} {value!r}, which this reader does not support",
        f"use a model whose tokenizer is one of: {', '.join(supported)} (the English potion models are)")


# -- normalizers --------------------------------------------------------------------------

def clean_text(text: str) -> str:
    """Drop NUL, U+FFFD and control characters; turn whitespace into plain spaces."""
    text = text.translate(_ASCII_CLEAN)
    if text.isascii():
        return text
    return _NON_ASCII.sub(_clean_char, text)


def _clean_char(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\ufffd" or is_control(char):  # U+0085, whitespace and a control character, goes too
        return ""
    return " " if char in WHITESPACE else char


def pad_cjk(text: str) -> str:
    """Put spaces around CJK ideographs, so each becomes a word of its own."""
    global _cjk
    if text.isascii():
        return text
    if _cjk is None:
        _cjk = re.compile(f"({CJK_CLASS})")
    return _cjk.sub(r" \1 ", text)


def strip_accents(text: str) -> str:
    """Decompose (NFD) and drop the combining marks (category Mn): `café` becomes `cafe`."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(lambda match: "" if is_nonspacing_mark(match.group()) else match.group(),
                          unicodedata.normalize("NFD", text))


def lowercase(text: str) -> str:
    """Lowercase character by character, as Rust does: no final-sigma rule (`Σ` is always `σ`)."""
    if text.isascii():
        return text.lower()
    return text.replace("\u03a3", "\u03c3").lower()


def _normalizer_steps(spec: dict[str, Any] | None) -> list[Callable[[str], str]]:
    if spec is None:
        return []
    kind = spec.get("type") if isinstance(spec, dict) else spec
    if kind != "BertNormalizer":
        raise _unsupported("the normalizer", kind, NORMALIZER_TYPES)
    steps: list[Callable[[str], str]] = []
    if spec.get("clean_text", True):
        steps.append(clean_text)
    if spec.get("handle_chinese_chars", True):
        steps.append(pad_cjk)
    lower = bool(spec.get("lowercase", True))
    accents = spec.get("strip_accents")
    if lower if accents is None else accents:  # unset: strip accents when lowercasing
        steps.append(strip_accents)
    if lower:
        steps.append(lowercase)
    return steps


# -- pre-tokenizers -----------------------------------------------------------------------

def split_bert(text: str) -> list[str]:
    """Words split on whitespace, with every punctuation character a word of its own."""
    if text.isascii():
        return _ASCII_BERT.findall(text)
    pieces: list[str] = []
    for word in _WORDS.findall(text):
        if word.isascii():
            if word.isalnum():
                pieces.append(word)
            else:
                pieces += _ASCII_PIECES.findall(word)
            continue
        start = 0
        for index, char in enumerate(word):
            if is_punctuation(char):
                if index > start:
                    pieces.append(word[start:index])
                pieces.append(char)
                start = index + 1
        if start < len(word):
            pieces.append(word[start:])
    return pieces


def _check_pre_tokenizer(spec: dict[str, Any] | None) -> None:
    kind = spec.get("type") if isinstance(spec, dict) else spec
    if kind != "BertPreTokenizer":
        raise _unsupported("the pre_tokenizer", kind, PRE_TOKENIZER_TYPES)


# -- the tokenizer ------------------------------------------------------------------------

class Tokenizer:
    """Text to token ids, as `tokenizers` encodes it without special tokens.

    `vocab` maps a token to its id (a dict, or a VocabIndex over a compiled index file).
    `settings` is what `settings_of` extracts from tokenizer.json.
    """

    def __init__(self, settings: dict[str, Any], vocab: Any) -> None:
        self.settings = settings
        self.vocab = vocab
        model = settings["model"]
        self.kind = model["type"]
        self.prefix = str(model.get("continuing_subword_prefix") or "")
        self.max_word_chars = int(model.get("max_input_chars_per_word") or 100)
        self.unk_id: int | None = settings["unk_id"]
        self.normalizers = _normalizer_steps(settings["normalizer"])
        raw = [token for token in settings["added_tokens"] if not token["normalized"]]
        normalized = [token for token in settings["added_tokens"] if token["normalized"]]
        self.raw_added = _AddedTokens(raw, lambda content: content)
        self.normalized_added = _AddedTokens(normalized, self.normalize)
        self._words: dict[str, tuple[int, ...]] = {}

    @property
    def size(self) -> int:
        """The number of distinct tokens (vocabulary and added tokens), as `get_vocab()` counts them."""
        return int(self.settings["size"])

    @property
    def median_token_length(self) -> int:
        """model2vec's median token length in characters, which bounds how much text it reads."""
        return int(self.settings["median_length"])

    def normalize(self, text: str) -> str:
        for step in self.normalizers:
            text = step(text)
        return text


    def encode(self, text: str) -> list[int]:
        """The ids of `text`: added tokens, then normalization, pre-tokenization, the model."""
        ids: list[int] = []
        for piece, added_id in self.raw_added.split(text):
            if added_id is not None:
                ids.append(added_id)
                continue
            for part, part_id in self.normalized_added.split(self.normalize(piece)):
                if part_id is not None:
                    ids.append(part_id)
                    continue
                known = self._words.get
                for word in split_bert(part):
                    ids += known(word) or self.word_ids(word)
        return ids

    def word_ids(self, word: str) -> tuple[int, ...]:
        known = self._words.get(word)
        if known is None:
            known = self._model(word)
            if len(self._words) >= WORD_MEMO_LIMIT:
                self._words.clear()
            self._words[word] = known
        return known

    def _model(self, word: str) -> tuple[int, ...]:
        vocab = self.vocab
        whole = vocab.get(word)
        unk = () if self.unk_id is None else (self.unk_id,)
        if self.kind == "WordLevel":
            return unk if whole is None else (whole,)
        if len(word) > self.max_word_chars:
            return unk
        if whole is not None:
            return (whole,)
        pieces: list[int] = []
        start, length = 0, len(word)
        while start < length:
            end = length
            while end > start:
                candidate = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = vocab.get(candidate)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return unk
            start = end
        return tuple(pieces)


class _AddedTokens:
    """Added tokens of one kind (raw or normalized), found leftmost-longest in a text."""

    def __init__(self, tokens: list[dict[str, Any]], form: Callable[[str], str]) -> None:
        self.ids: dict[str, int] = {}
        self.single_word: set[str] = set()
        for token in tokens:
            content = form(token["content"])
            if content and content not in self.ids:
                self.ids[content] = token["id"]
                if token["single_word"]:
                    self.single_word.add(content)
        ordered = sorted(self.ids, key=len, reverse=True)  # at one position, the longest wins
        self.pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """`text` cut into (piece, None) and (token, id) parts."""
        if self.pattern is None or not text:
            return [(text, None)]
        parts: list[tuple[str, int | None]] = []
        start = 0
        for match in self.pattern.finditer(text):
            content = match.group()
            if content in self.single_word and (
                    (match.start() > 0 and _is_word_char(text[match.start() - 1]))
                    or (match.end() < len(text) and _is_word_char(text[match.end()]))):
                continue
            if match.start() > start:
                parts.append((text[start:match.start()], None))
            parts.append((content, self.ids[content]))
            start = match.end()
        if start < len(text):
            parts.append((text[start:], None))
        return parts


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# -- reading tokenizer.json ---------------------------------------------------------------

def settings_of(data: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """The settings and the vocabulary of a parsed tokenizer.json; InvalidInput when unsupported."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise errors.InvalidInput("tokenizer.json has no \"model\" object",
                                  "the file is not a Hugging Face tokenizer; download the model again")
    model = data["model"]
    kind = model.get("type")
    if kind not in MODEL_TYPES:
        raise _unsupported("the model", kind, MODEL_TYPES)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab or not all(
            isinstance(token, str) and type(index) is int and index >= 0 for token, index in vocab.items()):
        raise errors.InvalidInput("tokenizer.json has no usable vocabulary (token -> id)",
                                  "the file is damaged; download the model again")
    added = []
    for token in data.get("added_tokens") or []:
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) or type(token.get("id")) is not int:
            raise errors.InvalidInput("tokenizer.json has a malformed added token",
                                      "the file is damaged; download the model again")
        # tokenizers re-derives the id: the vocabulary's when the token is in it
        added.append({"id": vocab.get(token["content"], token["id"]), "content": token["content"],
                      "normalized": bool(token.get("normalized", not token.get("special", False))),
                      "single_word": bool(token.get("single_word", False))})
    _normalizer_steps(data.get("normalizer"))  # checked now, so a bad file fails at load
    _check_pre_tokenizer(data.get("pre_tokenizer"))
    everything = dict(vocab)
    for token in added:
        everything[token["content"]] = token["id"]
    lengths = sorted(len(token) for token in everything)
    middle = len(lengths) // 2
    median = lengths[middle] if len(lengths) % 2 else (lengths[middle - 1] + lengths[middle]) / 2
    unk_token = model.get("unk_token")
    settings = {
        "model": {key: model.get(key) for key in ("type", "continuing_subword_prefix", "max_input_chars_per_word")},
        "normalizer": data.get("normalizer"),
        "pre_tokenizer": data.get("pre_tokenizer"),
        "added_tokens": added,
        "unk_id": everything.get(unk_token) if isinstance(unk_token, str) else None,
        "size": len(everything),
        "max_id": max(everything.values()),
        "median_length": int(median),
    }
    return settings, vocab


# -- the compiled index -------------------------------------------------------------------
#
# Layout (little-endian): MAGIC, u32 length of a JSON header, the header
# ({"stamp": ..., "settings": ..., "slots": n}), padding to 4 bytes, n slots of three
# u32 (offset of the token in the strings area, its length in bytes, its id; an empty
# slot has offset 0xFFFFFFFF), then the strings area (UTF-8). A token's first slot is
# crc32(token) mod n, probed linearly; n is a power of two at least twice the tokens.

MAGIC = b"hftokidx1\n"
_EMPTY = 0xFFFFFFFF
_SLOT = struct.Struct("<3I")


def compile_index(settings: dict[str, Any], vocab: dict[str, int], stamp: Any) -> bytes:
    from zlib import crc32

    encoded = [(token.encode("utf-8"), index) for token, index in vocab.items()]
    slots = 1
    while slots < 2 * len(encoded):
        slots *= 2
    table = [(_EMPTY, 0, 0)] * slots
    strings = bytearray()
    for raw, index in encoded:
        position = crc32(raw) & (slots - 1)
        while table[position][0] != _EMPTY:
            position = (position + 1) & (slots - 1)
        table[position] = (len(strings), len(raw), index)
        strings += raw
    header = json.dumps({"stamp": stamp, "settings": settings, "slots": slots}, separators=(",", ":")).encode()
    head = MAGIC + struct.pack("<I", len(header)) + header
    head += b"\0" * (-len(head) % 4)
    return head + b"".join(_SLOT.pack(*slot) for slot in table) + bytes(strings)


class VocabIndex:
    """Token -> id lookups in a compiled index, reading only the slots and strings probed."""

    def __init__(self, buffer: Any, slots: int, table_at: int) -> None:
        from zlib import crc32

        self._crc32 = crc32
        self._buffer = buffer
        self._mask = slots - 1
        self._table_at = table_at
        self._strings_at = table_at + slots * _SLOT.size

    def close(self) -> None:
        self._buffer.close()

    def get(self, token: str, default: int | None = None) -> int | None:
        raw = token.encode("utf-8")
        position = self._crc32(raw) & self._mask
        buffer, unpack = self._buffer, _SLOT.unpack_from
        while True:
            offset, length, index = unpack(buffer, self._table_at + position * 12)
            if offset == _EMPTY:
                return default
            if length == len(raw):
                start = self._strings_at + offset
                if buffer[start:start + length] == raw:
                    return index
            position = (position + 1) & self._mask


def read_index(buffer: Any, stamp: Any) -> Tokenizer | None:
    """The tokenizer in a compiled index whose stamp is `stamp`; None when stale or damaged."""
    try:
        if buffer[:len(MAGIC)] != MAGIC:
            return None
        (length,) = struct.unpack_from("<I", buffer, len(MAGIC))
        start = len(MAGIC) + 4
        header = json.loads(bytes(buffer[start:start + length]))
        if header.get("stamp") != stamp:
            return None
        slots = int(header["slots"])
        table_at = start + length + (-(start + length) % 4)
        if slots <= 0 or slots & (slots - 1) or table_at + slots * _SLOT.size > len(buffer):
            return None
        return Tokenizer(header["settings"], VocabIndex(buffer, slots, table_at))
    except (ValueError, KeyError, TypeError, struct.error):
        return None
