"""YAML frontmatter: split, parse, and rewrite fields without touching the others.

Rewriting is done per top-level key on the original text, so unknown fields,
comments and formatting survive byte for byte, and a file whose fields did not
change is written back identical. New values are emitted in the data model's
style: block lists, double-quoted timestamps.
"""

from __future__ import annotations

import datetime as _dt
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

from . import clock, deps, errors

DELETE = object()  # marker for replace_fields: remove the key

_KEY_LINE = re.compile(
    r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#\-"'?:,\[\]{}&*!|>%@`][^:#\r\n]*?)[ \t]*:(?:[ \t]|\r?$|$)""")
_WIKI_ONLY = re.compile(r"^\s*(\[\[[^\[\]\r\n]+\]\]\s*,?\s*)+$")
_WIKI_TARGET = re.compile(r"\[\[([^\[\]|#\r\n]+)(?:#[^\[\]|\r\n]*)?(?:\|[^\[\]\r\n]*)?\]\]")
_PLAIN_SAFE = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_.\-/ ]*[A-Za-z0-9_.\-/])?")
_YAML_WORDS = {"yes", "no", "true", "false", "on", "off", "null", "y", "n", "~"}
_NON_PRINTABLE = "[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\x85\u2028\u2029\ufeff]"
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": "\\0",
            "\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P"}
MAX_FRONTMATTER_NODES = 20_000


class Document:
    """A markdown file cut into its frontmatter text and body, as found on disk."""

    __slots__ = ("prefix", "frontmatter", "body", "newline")

    def __init__(self, prefix: str, frontmatter: str | None, body: str, newline: str) -> None:
        self.prefix = prefix            # a byte-order mark, if the file had one
        self.frontmatter = frontmatter  # text between the `---` lines (with line endings); None if absent
        self.body = body
        self.newline = newline          # line ending of the opening delimiter

    def text(self) -> str:
        """The file text again; identical to the input of `split` when nothing changed."""
        if self.frontmatter is None:
            return self.prefix + self.body
        return f"{self.prefix}---{self.newline}{self.frontmatter}---{self.newline}{self.body}"


def split(text: str) -> Document:
    """Cut a file into frontmatter and body. A file without `---` first has no frontmatter."""
    prefix = ""
    if text.startswith("\ufeff"):
        prefix, text = "\ufeff", text[1:]
    match = re.match(r"---[ \t]*(\r?\n)", text)
    if not match:
        return Document(prefix, None, text, "\n")
    newline = match.group(1)
    position = match.end()
    lines_start = position
    while position <= len(text):
        end = text.find("\n", position)
        line = text[position:] if end == -1 else text[position:end]
        if line.rstrip("\r \t") in ("---", "..."):
            body_start = len(text) if end == -1 else end + 1
            return Document(prefix, text[lines_start:position], text[body_start:], newline)
        if end == -1:
            break
        position = end + 1
    raise errors.InvalidInput("the frontmatter has no closing `---` line",
                              "end the YAML block with a line holding only ---")


def yaml_module() -> Any:
    """PyYAML (imported on first use: it costs ~10 ms)."""
    return deps.load("yaml")


def parse(frontmatter: str) -> dict[str, Any]:
    """The frontmatter as a dict with timestamps as ISO strings. Raises InvalidInput when broken."""
    if not frontmatter.strip():
        return {}
    simple = parse_simple(frontmatter)
    if simple is not None:
        return simple
    yaml = yaml_module()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(_with_wiki_lists(frontmatter), Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +2: 0-based, after `---`
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise errors.InvalidInput(f"invalid YAML frontmatter{where}: {problem}",
                                  "fix the YAML between the --- lines") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise errors.InvalidInput("the frontmatter is not a mapping of fields",
                                  "write fields as `key: value` lines")
    budget = [MAX_FRONTMATTER_NODES]
    return {str(key): _plain(value, budget) for key, value in data.items()}


_SIMPLE_KEY = re.compile(r"(?:([A-Za-z_][A-Za-z0-9_-]*)|\"([A-Za-z0-9_ -]*)\"):(?: (.*))?")
_SIMPLE_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_QUOTED_ESCAPES = {"\\": "\\", '"': '"', "t": "\t", "n": "\n", "r": "\r", "0": "\x00", "N": "\x85",
                   "L": "\u2028", "P": "\u2029", "/": "/"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def parse_simple(frontmatter: str) -> dict[str, Any] | None:
    """Parse the YAML subset our own writer emits, without PyYAML (whose import costs ~10 ms).

    Handles `key: scalar`, block lists (`- item`, indented or not), `[]`, `{}`, and one
    level of nested mapping (`link-labels`). Scalars are double-quoted strings, plain
    strings that YAML would also read as strings, integers, true, false and null. Returns
    None for anything else (comments, flow collections, unquoted dates, ...): PyYAML then
    decides, so the result is always what YAML means.
    """
    result: dict[str, Any] = {}
    lines = frontmatter.split("\n")
    position, count = 0, len(lines)
    while position < count:
        line = lines[position].rstrip("\r")
        position += 1
        if not line.strip():
            continue
        match = _SIMPLE_KEY.fullmatch(line)
        if match is None:
            return None
        key, raw = match.group(1) or match.group(2), match.group(3)
        if raw is not None and raw.strip():
            value = _simple_scalar(raw.strip())
            if value is _NOT_SIMPLE:
                return None
        else:
            value, position = _simple_block(lines, position, 0)
            if value is _NOT_SIMPLE:
                return None
        result[key] = merge_repeated(result[key], value) if key in result else value
    return result


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def merge_repeated(first: Any, second: Any) -> Any:
    """One value for a key written twice, as git's union merge leaves a memory two clones changed
    (`links:` from each side): lists are joined without repeats, mappings merged, the later of
    two timestamps kept; otherwise the second wins, as in YAML loaders."""
    if isinstance(first, list) and isinstance(second, list):
        return first + [item for item in second if item not in first]
    if isinstance(first, dict) and isinstance(second, dict):
        return {**first, **second}
    if isinstance(first, str) and isinstance(second, str) and _TIMESTAMP.fullmatch(first) \
            and _TIMESTAMP.fullmatch(second):
        return max(first, second)
    return second


_NOT_SIMPLE = object()


def _simple_block(lines: list[str], position: int, indent: int) -> tuple[Any, int]:
    """The list or mapping nested under a `key:` line (or None when nothing follows)."""
    items: list[Any] = []
    mapping: dict[str, Any] = {}
    child_indent = None
    while position < len(lines):
        line = lines[position].rstrip("\r")
        if not line.strip():
            position += 1
            continue
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        if depth < indent or (depth == indent and not stripped.startswith("- ")):
            break  # back at the parent's level: the block ended
        if child_indent is None:
            child_indent = depth
        if depth != child_indent:
            if depth < child_indent:
                break
            return _NOT_SIMPLE, position
        if stripped.startswith("- ") and not mapping:
            value = _simple_scalar(stripped[2:].strip())
            if value is _NOT_SIMPLE:
                return _NOT_SIMPLE, position
            items.append(value)
            position += 1
            continue
        match = _SIMPLE_KEY.fullmatch(stripped)
        if match is None or items or indent > 0:
            return _NOT_SIMPLE, position
        position += 1
        if match.group(3) is not None and match.group(3).strip():
            value = _simple_scalar(match.group(3).strip())
            if value is _NOT_SIMPLE:
                return _NOT_SIMPLE, position
        else:
            value, position = _simple_block(lines, position, child_indent + 1)
            if value is _NOT_SIMPLE or isinstance(value, dict):
                return _NOT_SIMPLE, position
        mapping[match.group(1) or match.group(2)] = value
    if mapping:
        return mapping, position
    return (items if items else None), position


def _simple_scalar(text: str) -> Any:
    if text.startswith('"'):
        return _simple_quoted(text)
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if _SIMPLE_INT.fullmatch(text):
        return int(text)
    if _PLAIN_SAFE.fullmatch(text) and text.lower() not in _YAML_WORDS and " #" not in text:
        return text
    return _NOT_SIMPLE


def _simple_quoted(text: str) -> Any:
    if len(text) < 2 or not text.endswith('"'):
        return _NOT_SIMPLE
    inner = text[1:-1]
    if not (inner.isascii() and inner.isprintable()) and re.search(_NON_PRINTABLE, inner):
        return _NOT_SIMPLE  # raw control or line-break characters: YAML's rules apply
    if "\\" not in inner:
        return inner if '"' not in inner else _NOT_SIMPLE
    out: list[str] = []
    index = 0
    while index < len(inner):
        char = inner[index]
        if char == '"':
            return _NOT_SIMPLE
        if char != "\\":
            out.append(char)
            index += 1
            continue
        code = inner[index + 1: index + 2]
        if code in _QUOTED_ESCAPES:
            out.append(_QUOTED_ESCAPES[code])
            index += 2
        elif code in _HEX_ESCAPES:
            digits = inner[index + 2: index + 2 + _HEX_ESCAPES[code]]
            if len(digits) != _HEX_ESCAPES[code] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                return _NOT_SIMPLE
            value = int(digits, 16)
            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                return _NOT_SIMPLE
            out.append(chr(value))
            index += 2 + len(digits)
        else:
            return _NOT_SIMPLE
    return "".join(out)


def _with_wiki_lists(frontmatter: str) -> str:
    """Turn memory-graph style `related: [[a]], [[b]]` lines into YAML lists before parsing."""
    if "[[" not in frontmatter:
        return frontmatter
    out = []
    for line in frontmatter.splitlines(keepends=True):
        match = _KEY_LINE.match(line)
        if match:
            value = line[match.end():]
            if _WIKI_ONLY.match(value.rstrip("\r\n")):
                targets = [target.strip() for target in _WIKI_TARGET.findall(value)]
                ending = line[len(line.rstrip("\r\n")):]
                line = line[: match.end()].rstrip(" \t") + " " + emit_flow_list(targets) + ending
        out.append(line)
    return "".join(out)


def _plain(value: Any, budget: list[int]) -> Any:
    """Convert YAML values to JSON-friendly ones; refuse alias bombs."""
    budget[0] -= 1
    if budget[0] < 0:
        raise errors.InvalidInput("the frontmatter is too large or too deeply aliased",
                                  "simplify the YAML between the --- lines")
    if isinstance(value, (_dt.datetime, _dt.date)):
        return clock.to_iso(value)
    if isinstance(value, dict):
        return {str(key): _plain(item, budget) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(item, budget) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def wiki_targets(text: str) -> list[str]:
    """Targets of `[[slug]]`, `[[slug|text]]` and `[[slug#section]]` links, in order, deduplicated."""
    seen: dict[str, None] = {}
    for target in _WIKI_TARGET.findall(text):
        seen.setdefault(target.strip(), None)
    return list(seen)


# -- emitting -----------------------------------------------------------------------------

def scalar(value: Any, *, quote: bool = False) -> str:
    """One YAML scalar: plain when that reads back as the same string, else double-quoted."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if not quote and _PLAIN_SAFE.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    if not (escaped.isascii() and escaped.isprintable()):  # the regex costs ms to compile: only when needed
        escaped = re.sub(_NON_PRINTABLE, _escape_char, escaped)
    return '"' + escaped + '"'


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def emit_flow_list(items: Iterable[Any]) -> str:
    """A one-line YAML list with every item double-quoted (safe for any text)."""
    return "[" + ", ".join(scalar(item, quote=True) for item in items) + "]"


def emit_field(key: str, value: Any, *, quote: bool = False, indent: int = 0) -> str:
    """A `key: value` block in block style (lists as `- item` lines), ending with a newline."""
    return "".join(_block(scalar(key), value, indent, quote))


def _inline(value: Any, quote: bool) -> str:
    if isinstance(value, (list, tuple)):
        return "[]"
    if isinstance(value, dict):
        return "{}"
    return scalar(value, quote=quote)


def _block(key_text: str, value: Any, indent: int, quote: bool) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key_text}:\n"]
        for sub_key, sub_value in value.items():
            lines += _block(scalar(str(sub_key)), sub_value, indent + 2, quote)
        return lines
    if isinstance(value, (list, tuple)) and value:
        lines = [f"{pad}{key_text}:\n"]
        for item in value:
            lines += _item(item, indent + 2, quote)
        return lines
    return [f"{pad}{key_text}: {_inline(value, quote)}\n"]


def _item(item: Any, indent: int, quote: bool) -> list[str]:
    pad = " " * indent
    if isinstance(item, dict) and item:
        lines = [line for sub_key, sub_value in item.items()
                 for line in _block(scalar(str(sub_key)), sub_value, indent + 2, quote)]
    elif isinstance(item, (list, tuple)) and item:
        lines = [line for sub_item in item for line in _item(sub_item, indent + 2, quote)]
    else:
        return [f"{pad}- {_inline(item, quote)}\n"]
    lines[0] = pad + "- " + lines[0][indent + 2:]
    return lines


# -- rewriting ----------------------------------------------------------------------------

def _blocks(frontmatter: str) -> list[tuple[str | None, list[str]]]:
    """Top-level blocks: (key, lines). Leading comments or blank lines have key None."""
    blocks: list[tuple[str | None, list[str]]] = []
    for line in frontmatter.splitlines(keepends=True):
        match = _KEY_LINE.match(line)
        if match:
            key = match.group("key")
            if key[:1] in "\"'":
                key = key[1:-1]
            blocks.append((key.strip(), [line]))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append((None, [line]))
    return blocks


def repeated_keys(frontmatter: str) -> list[str]:
    """Top-level keys written more than once (what git's union merge leaves when two clones
    changed the same field): the parser here merges them, other YAML readers keep the last."""
    seen: dict[str, int] = {}
    for key, _ in _blocks(frontmatter):
        if key is not None:
            seen[key] = seen.get(key, 0) + 1
    return [key for key, count in seen.items() if count > 1]


def replace_fields(frontmatter: str, changes: dict[str, Any], *, newline: str = "\n",
                   quoted: Iterable[str] = ()) -> str:
    """Rewrite only the given top-level keys (value DELETE removes one); new keys go at the end."""
    if not changes:
        return frontmatter
    quoted = set(quoted)
    pending = dict(changes)
    out: list[str] = []
    for key, lines in _blocks(frontmatter):
        if key is not None and key in changes and key not in pending:
            continue  # a second copy of a rewritten key (e.g. after a union merge): keep one
        if key is None or key not in pending:
            out.extend(lines)
            continue
        value = pending.pop(key)
        trailing = _trailing_trivia(lines)
        if value is not DELETE:
            out.append(_with_newline(emit_field(key, value, quote=key in quoted), newline))
        out.extend(trailing)
    if out and not out[-1].endswith("\n"):
        out[-1] += newline
    for key, value in pending.items():
        if value is not DELETE:
            out.append(_with_newline(emit_field(key, value, quote=key in quoted), newline))
    return "".join(out)


def render(fields: dict[str, Any], *, quoted: Iterable[str] = ()) -> str:
    """Fresh frontmatter text for `fields`, in the given order."""
    quoted = set(quoted)
    return "".join(emit_field(key, value, quote=key in quoted) for key, value in fields.items())


def _trailing_trivia(lines: list[str]) -> list[str]:
    """Blank and column-0 comment lines at the end of a block (kept when the block is replaced)."""
    keep: list[str] = []
    for line in reversed(lines[1:]):
        if line.strip() == "" or line.startswith("#"):
            keep.append(line)
        else:
            break
    return list(reversed(keep))


def _with_newline(text: str, newline: str) -> str:
    return text if newline == "\n" else text.replace("\n", newline)
