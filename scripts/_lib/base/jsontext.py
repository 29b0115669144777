"""JSON text for the hooks: `loads` and `dumps` on CPython's C scanner and encoder (`_json`).

The `json` package imports `re` for the whitespace it skips, and `re` imports `enum`: some
8 ms of a hook that runs on every prompt or edit, for what the C functions do alone. The
results are those of `json.loads(text)` and `json.dumps(value, ensure_ascii=False)`; an
interpreter without `_json` gets the `json` package itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - every CPython has it
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoding:
    """What the C scanner reads from its context: json.JSONDecoder's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def loads(text: str | bytes) -> Any:
    """The value of a JSON document, as json.loads gives it; ValueError when it is not JSON, or is
    nested past Python's stack (where json.loads raises RecursionError)."""
    try:
        return _loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested deeper than Python's stack") from None


def _loads(text: str | bytes) -> Any:
    if isinstance(text, (bytes, bytearray)):
        head = text[:4]
        if b"\x00" in head or head.startswith((b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe")):
            import json  # a BOM, or UTF-16 or UTF-32: json.loads finds which

            return json.loads(text)
        text = text.decode("utf-8", "surrogatepass")  # as json.loads decodes (a UnicodeDecodeError is a ValueError)
    if _json is not None:
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _json.make_scanner(_Decoding)(text, start)  # type: ignore[arg-type]  # (reads its attributes)
        except (StopIteration, SystemError):
            pass  # (the C scanner describes an error through json.decoder, which may not be loaded: json will)
        else:
            if not text[end:].strip(_WHITESPACE):
                return value
    import json  # not JSON: json.loads raises the error it gives

    return json.loads(text)


def utf8_values(value: Any) -> Any:
    """`value` (parsed JSON) with each string as UTF-8 can hold it (`utf8_text`): a lone surrogate,
    which a JSON escape can write, becomes U+FFFD, as Node (which runs Claude Code's tools)
    encodes it. A hook then judges the path or command the tool will use, and a task file or
    an import cut between the halves of an emoji can still be written back."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, list):
        return [utf8_values(item) for item in value]
    if isinstance(value, dict):
        return {utf8_values(key): utf8_values(item) for key, item in value.items()}
    return value


def utf8_text(text: str) -> str:
    """`text` with each lone surrogate (which an escape in JSON or YAML can write and UTF-8 cannot
    hold) as U+FFFD; the two halves of a pair, escaped one by one, become the character they make."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def dumps(value: Any) -> str:
    """`value` as json.dumps(value, ensure_ascii=False) writes it."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False)
    encode = _json.make_encoder({}, _unserialisable, _json.encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def encoded(value: Any) -> bytes:
    """dumps(value) in UTF-8, a lone surrogate (JSON carries one, UTF-8 cannot) as its JSON escape: read
    back, the text is the same."""
    return dumps(value).encode("utf-8", "backslashreplace")


def _unserialisable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
