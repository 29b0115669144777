"""YAML frontmatter: split, parse, and rewrite fields without touching the others.

Rewriting is done per top-level key on the original text, so unknown fields,
comments and formatting survive byte for byte, and a file whose fields did not
change is written back identical. New values are emitted in the data model's
style: block lists, double-quoted timestamps.
"""

from __future__ import annotations

import json
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

from ..base import clock, errors, jsontext
from ..base.text import LazyPattern

DELETE = object()  # marker for replace_fields: remove the key

_KEY_LINE = LazyPattern(
    r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#\-"'?:,\[\]{}&*!|>%@`][^:#\r\n]*?)[ \t]*:(?:[ \t]|\r?$|$)""")
_WIKI_ONLY = LazyPattern(r"^\s*(\[\[[^\[\]\r\n]+\]\]\s*,?\s*)+$")
_WIKI_TARGET = LazyPattern(r"\[\[([^\[\]|#\r\n]+)(?:#[^\[\]|\r\n]*)?(?:\|[^\[\]\r\n]*)?\]\]")
_PLAIN_SAFE = LazyPattern(r"[A-Za-z_](?:[A-Za-z0-9_.\-/ ]*[A-Za-z0-9_.\-/])?")
# what a plain scalar may be when read without PyYAML: also `*` after the first character,
# as in the `paths:` globs people write by hand (`src/auth/**`)
_PLAIN_READ = LazyPattern(r"[A-Za-z_](?:[A-Za-z0-9_.\-/ *]*[A-Za-z0-9_.\-/*])?")
_YAML_WORDS = {"yes", "no", "true", "false", "on", "off", "null", "y", "n", "~"}
_NON_PRINTABLE = "[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\x85\u2028\u2029\ufeff]"
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": "\\0",
            "\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P"}
MAX_FRONTMATTER_NODES = 20_000
MAX_FRONTMATTER_DEPTH = 64  # far past any memory's fields, far short of Python's stack


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
    from ..base import deps

    return deps.load("yaml")


def parse(frontmatter: str) -> dict[str, Any]:
    """The frontmatter as a dict with timestamps as ISO strings. Raises InvalidInput when broken.

    A key written more than once (as git's union merge leaves a field two clones changed) has
    the values of every copy (`merge_repeated`), however the copies are written.
    """
    if not frontmatter.strip():
        return {}
    simple = parse_simple(frontmatter)
    if simple is not None:
        return simple
    return _parse_yaml(frontmatter)


_LINE_KEY = LazyPattern(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$")


def parse_lenient(frontmatter: str) -> dict[str, Any] | None:
    """Frontmatter that YAML refuses, read the way its writer meant it: one `key: value` per line,
    the value being the rest of the line (`title: Fix: quote the colon`), a JSON or YAML list
    (also over several lines), or an indented block. The bash-era memory.sh wrote such files.
    None when even that does not make sense (the file is then unreadable), or when what it holds
    passes the limits `parse` keeps."""
    try:
        return _plain(_lenient_fields(frontmatter), [MAX_FRONTMATTER_NODES])
    except errors.InvalidInput:
        return None


def _lenient_fields(frontmatter: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    lines = frontmatter.splitlines()
    position = 0
    while position < len(lines):
        line = lines[position].rstrip()
        position += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE_KEY.match(line)
        if match is None:
            raise _not_lenient()
        key, raw = match.group(1), (match.group(2) or "").strip()
        if raw.startswith("[") and raw.count("[") > raw.count("]"):  # a flow list over several lines
            while position < len(lines) and raw.count("[") > raw.count("]"):
                raw += " " + lines[position].strip()
                position += 1
        if not raw:  # an indented block: YAML may read that much
            block = []
            while position < len(lines) and (lines[position].startswith((" ", "\t", "-")) or not lines[position].strip()):
                block.append(lines[position])
                position += 1
            value = _parse_yaml(f"{key}:\n" + "\n".join(block)).get(key)
        elif raw[0] in "[{" and raw.count(raw[0]) != raw.count("]}"["[{".index(raw[0])]):
            raise _not_lenient()  # an unclosed list or mapping is a mistake, not a way of writing
        else:
            value = _lenient_value(raw)
        result[key] = merge_repeated(result[key], value) if key in result else value
    return result


def _not_lenient() -> errors.InvalidInput:
    return errors.InvalidInput("the frontmatter is not `key: value` lines either")


def _lenient_value(raw: str) -> Any:
    try:
        return json.loads(raw)  # "quoted", [JSON, lists], numbers, true/false/null
    except ValueError:
        pass
    except RecursionError:  # nested past Python's stack, far past any memory's fields
        raise _not_lenient() from None
    if raw.startswith("[") and raw.endswith("]"):
        return [item.strip().strip("'\"") for item in raw[1:-1].split(",") if item.strip()]
    if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _loader_class(yaml: Any) -> Any:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_yaml(frontmatter: str) -> dict[str, Any]:
    """`parse` by PyYAML, for frontmatter outside the subset `parse_simple` reads."""
    yaml = yaml_module()
    loader = _loader_class(yaml)(_with_wiki_lists(frontmatter))
    try:
        node = loader.get_single_node()
        copies: dict[str, list[Any]] = {}
        if isinstance(node, yaml.MappingNode):  # before construction, which folds `<<` merges into the list
            for key_node, value_node in node.value:
                if key_node.tag != _MERGE_TAG:
                    copies.setdefault(str(loader.construct_object(key_node)), []).append(value_node)
        data = loader.construct_document(node) if node is not None else None
        repeated = {key: [loader.construct_object(value, deep=True) for value in values]
                    for key, values in copies.items() if len(values) > 1}
        if len(_REPEATED) > 50_000:
            _REPEATED.clear()
        _REPEATED[frontmatter] = list(repeated)
    except yaml.YAMLError as exc:
        raise _invalid_yaml(exc) from None
    finally:
        loader.dispose()
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise errors.InvalidInput("the frontmatter is not a mapping of fields",
                                  "write fields as `key: value` lines")
    budget = [MAX_FRONTMATTER_NODES]
    fields = {_key(key): _plain(value, budget) for key, value in data.items()}
    for key, values in repeated.items():
        merged = _plain(values[0], budget)
        for value in values[1:]:
            merged = merge_repeated(merged, _plain(value, budget))
        fields[key] = merged
    return fields


_MERGE_TAG = "tag:yaml.org,2002:merge"
_REPEATED: dict[str, list[str]] = {}  # frontmatter -> its repeated keys, as `_parse_yaml` last found them


def _invalid_yaml(exc: Any) -> errors.InvalidInput:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 2}" if mark is not None else ""  # +2: 0-based, after `---`
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return errors.InvalidInput(f"invalid YAML frontmatter{where}: {problem}", "fix the YAML between the --- lines")


_SIMPLE_KEY = LazyPattern(r"(?:([A-Za-z_][A-Za-z0-9_-]*)|\"([A-Za-z0-9_ -]*)\"):(?: (.*))?")
_SIMPLE_INT = LazyPattern(r"-?(?:0|[1-9][0-9]{0,17})")
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


_TIMESTAMP = LazyPattern(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def merge_repeated(first: Any, second: Any) -> Any:
    """One value for a key written twice, as git's union merge leaves a memory two clones changed
    (`links:` from each side): lists are joined without repeats, mappings merged key by key, the
    later of two timestamps kept; otherwise the second wins, as in YAML loaders."""
    if isinstance(first, list) and isinstance(second, list):
        return first + [item for item in second if item not in first]
    if isinstance(first, dict) and isinstance(second, dict):
        return {**first, **{key: merge_repeated(first[key], value) if key in first else value
                            for key, value in second.items()}}
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
    if _PLAIN_READ.fullmatch(text) and text.lower() not in _YAML_WORDS and " #" not in text:
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


def _plain(value: Any, budget: list[int], depth: int = 0) -> Any:
    """Convert YAML values to JSON-friendly ones; refuse alias bombs, and values nested deeper than
    any memory needs (an alias inside its own anchor nests without end)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_FRONTMATTER_DEPTH:
        raise errors.InvalidInput("the frontmatter is too large, too deeply nested or aliased",
                                  "simplify the YAML between the --- lines")
    dates = sys.modules.get("datetime")  # (no date exists before its module is loaded: PyYAML loads it)
    if dates is not None and isinstance(value, (dates.datetime, dates.date)):
        return clock.to_iso(value)
    if isinstance(value, dict):
        return {_key(key): _plain(item, budget, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(item, budget, depth + 1) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str) and not value.isascii():
        return jsontext.utf8_text(value)  # YAML's "\uD800" escape writes a lone surrogate
    return value


def _key(key: Any) -> str:
    return jsontext.utf8_text(str(key))


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
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return _float(value)
    text = str(value)
    if not quote and _PLAIN_SAFE.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    if not (escaped.isascii() and escaped.isprintable()):  # the regex costs ms to compile: only when needed
        escaped = re.sub(_NON_PRINTABLE, _escape_char, escaped)
    return '"' + escaped + '"'


def _float(value: float) -> str:
    """A float as YAML 1.1 reads it back (PyYAML wants a dot in the mantissa and a signed exponent)."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


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
#
# A rewrite is lossless or it is not done. Each top-level entry's lines are found from the YAML
# itself (the parser's marks), never by guessing from how a line looks: a line `updated: x`
# inside a multi-line string is text, not a key. An entry is replaced in place only when its
# lines hold it alone and nothing elsewhere refers to it (an anchor another entry aliases); the
# comments inside a replaced entry are kept, as comment lines after the new value. Otherwise the
# whole frontmatter is emitted afresh from its parsed fields, which keeps every value but not
# comments: with comments, the rewrite is refused instead. Whatever was built is parsed back
# and compared field by field with what was intended before the caller may write it.

class _Entry:
    """One top-level `key: value` entry and the line where it starts."""

    __slots__ = ("key", "first", "separable")

    def __init__(self, key: str | None, first: int, separable: bool) -> None:
        self.key = key              # as `parse` names it (None: a key no field can name)
        self.first = first          # index of its first line
        self.separable = separable  # its key opens that line: the lines up to the next entry hold it alone


class _Layout:
    """The lines of a frontmatter, its top-level entries and its comments."""

    def __init__(self, lines: list[str], entries: list[_Entry], comments: dict[int, tuple[int, str]],
                 users: dict[int, set[int]], block: bool) -> None:
        self.lines = lines        # split at "\n" only, each with its line ending
        self.entries = entries
        self.comments = comments  # line index -> (column, text of the comment from its `#`)
        self.users = users        # entry -> the other entries aliasing an anchor it defines
        self.block = block        # the top level is a block mapping (or empty): entries can be edited
        if entries and not entries[0].separable:
            entries[0].first = 0  # e.g. `?` alone on the line before its key

    def end(self, position: int) -> int:
        """Index of the line after entry `position`'s last line."""
        following = position + 1
        return self.entries[following].first if following < len(self.entries) else len(self.lines)

    def plan(self, keys: Iterable[str]) -> set[int] | str:
        """The entries to rewrite so that `keys` change and nothing else does: theirs, those
        aliasing an anchor defined in them, and neighbours whose lines they share (a `? key`
        entry). A string says why there is no such set."""
        if not self.block:
            return "its top level is not a block of `key: value` lines"
        entries = self.entries
        chosen: set[int] = set()
        wanted = set(keys)
        while True:
            chosen |= {position for position, entry in enumerate(entries) if entry.key in wanted}
            more: set[int] = set()
            for position in chosen:
                more |= self.users.get(position, set())
                if not entries[position].separable and position > 0:
                    more.add(position - 1)
                if position + 1 < len(entries) and not entries[position + 1].separable:
                    more.add(position + 1)
            more -= chosen
            if not more:
                return chosen
            if any(entries[position].key is None for position in more):
                return "a field it shares lines or anchors with has a key that is not a plain string"
            wanted |= {key for key in (entries[position].key for position in more) if key is not None}

    def trailing(self, first: int, end: int) -> int:
        """Where the blank and comment-only lines closing lines[first:end] begin."""
        while end > first + 1:
            line = self.lines[end - 1]
            comment = self.comments.get(end - 1)
            if line.strip() and not (comment is not None and not line[:comment[0]].strip()):
                break
            end -= 1
        return end


def _split_lines(text: str) -> list[str]:
    """Lines at "\n" only (str.splitlines also cuts at characters YAML keeps inside scalars)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _layout(frontmatter: str) -> _Layout:
    lines = _split_lines(frontmatter)
    if parse_simple(frontmatter) is not None:
        return _Layout(lines, _simple_entries(lines), {}, {}, True)
    return _yaml_layout(frontmatter, lines)


def _simple_entries(lines: list[str]) -> list[_Entry]:
    """The entries of frontmatter in the subset we write: every column-0 `key:` line is a key."""
    entries = []
    for index, line in enumerate(lines):
        match = _SIMPLE_KEY.fullmatch(line.rstrip("\r\n"))
        if match is not None:
            entries.append(_Entry(match.group(1) or match.group(2), index, True))
    return entries


_COMMENT = LazyPattern("(?:^|(?<=[ \t\r\n\x85\u2028\u2029]))#[^\r\n\x85\u2028\u2029]*")


def _yaml_layout(frontmatter: str, lines: list[str]) -> _Layout:
    """The layout from PyYAML's events. `_with_wiki_lists` changes only whole lines, so the
    line numbers found in its output are those of the original text."""
    import bisect

    yaml = yaml_module()
    loader_class = _loader_class(yaml)
    text = _with_wiki_lists(frontmatter)
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
    entries: list[_Entry] = []
    spans: list[tuple[int, int]] = []  # scalars: no `#` inside one starts a comment
    owner: dict[str, int] = {}         # anchor -> entry that defines it (the latest definition)
    users: dict[int, set[int]] = {}
    anchored_keys: dict[str, str | None] = {}
    constructor = loader_class("")
    block, depth, expecting_key = True, 0, True
    node_events = (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)
    try:
        for event in yaml.parse(text, Loader=loader_class):
            if isinstance(event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentStartEvent,
                                  yaml.DocumentEndEvent)):
                continue
            start = event.start_mark.index
            if depth == 0 and isinstance(event, node_events):  # the document's root
                block = isinstance(event, yaml.MappingStartEvent) and not event.flow_style
            elif depth == 1 and expecting_key and isinstance(event, node_events):
                if isinstance(event, yaml.ScalarEvent):
                    key = _key_text(yaml, constructor, event)
                else:
                    key = anchored_keys.get(event.anchor) if isinstance(event, yaml.AliasEvent) else None
                separable = isinstance(event, yaml.ScalarEvent) and (start == 0 or text[start - 1] == "\n")
                entries.append(_Entry(key, bisect.bisect_right(line_starts, start) - 1, separable))
            current = len(entries) - 1
            if isinstance(event, yaml.ScalarEvent):
                begin = start
                if event.style in ("|", ">"):  # a comment may follow the header: the text starts a line later
                    newline = text.find("\n", start, event.end_mark.index)
                    begin = event.end_mark.index if newline == -1 else newline
                spans.append((begin, event.end_mark.index))
                if event.anchor:
                    owner[event.anchor] = current
                    anchored_keys[event.anchor] = _key_text(yaml, constructor, event)
            elif isinstance(event, yaml.AliasEvent):
                defined_in = owner.get(event.anchor)
                if defined_in is not None and defined_in != current and defined_in >= 0:
                    users.setdefault(defined_in, set()).add(current)
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if event.anchor:
                    owner[event.anchor] = current
                depth += 1
            else:  # the end of a sequence or mapping
                depth -= 1
            if depth == 1 and isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceEndEvent,
                                                 yaml.MappingEndEvent)):
                expecting_key = not expecting_key  # a key or a value just ended
    except yaml.YAMLError as exc:
        raise _invalid_yaml(exc) from None
    finally:
        constructor.dispose()
    span_starts = [begin for begin, _ in spans]
    comments: dict[int, tuple[int, str]] = {}
    for match in _COMMENT.finditer(text):
        position = match.start()
        inside = bisect.bisect_right(span_starts, position) - 1
        if inside >= 0 and position < spans[inside][1]:
            continue
        line = bisect.bisect_right(line_starts, position) - 1
        comments[line] = (position - line_starts[line], match.group())
    return _Layout(lines, entries, comments, users, block)


def _key_text(yaml: Any, constructor: Any, event: Any) -> str | None:
    """A scalar key as `parse` names it (`str` of what YAML makes of it)."""
    tag = event.tag if event.tag not in (None, "!") else constructor.resolve(yaml.ScalarNode, event.value,
                                                                             event.implicit)
    if tag == _MERGE_TAG:
        return "<<"
    try:
        return str(constructor.construct_object(yaml.ScalarNode(tag, event.value, style=event.style)))
    except (yaml.YAMLError, ValueError, TypeError):
        return None


def repeated_keys(frontmatter: str) -> list[str]:
    """Top-level keys written more than once (what git's union merge leaves when two clones
    changed the same field): `parse` merges them, other YAML readers keep the last. Costs nothing
    more for frontmatter `parse` has just read."""
    if parse_simple(frontmatter) is None:
        if frontmatter not in _REPEATED:
            try:
                _parse_yaml(frontmatter)
            except errors.InvalidInput:
                return []
        return list(_REPEATED.get(frontmatter, ()))
    seen: dict[str, int] = {}
    for entry in _simple_entries(_split_lines(frontmatter)):
        seen[entry.key] = seen.get(entry.key, 0) + 1  # type: ignore[index,arg-type]  # simple entries have keys
    return [key for key, count in seen.items() if count > 1]


def replace_fields(frontmatter: str, changes: dict[str, Any], *, newline: str = "\n",
                   quoted: Iterable[str] = ()) -> str:
    """Set the given top-level keys (value DELETE removes one; new keys go at the end), keeping
    every other field, and every comment, as it is. A key written more than once is written once.

    The result is checked: it parses to the old fields with exactly these changes. Raises
    InvalidInput when no lossless rewrite exists (see the comment above) or the check fails."""
    if not changes:
        return frontmatter
    quoted = set(quoted)
    try:
        before = parse(frontmatter)
    except errors.InvalidInput:
        lenient = parse_lenient(frontmatter)  # as the bash-era tool wrote it: re-emitted as valid YAML
        if lenient is None or any(line.lstrip().startswith("#") for line in frontmatter.splitlines()):
            raise
        return _re_emitted(lenient, changes, newline, quoted)
    layout = _layout(frontmatter)
    plan = layout.plan(changes)
    problem = ""
    if not isinstance(plan, str):
        along = {layout.entries[position].key for position in plan} - set(changes)  # rewritten as they are
        if along - set(before):
            plan = "a field it shares lines or anchors with is a `<<` merge"
    if not isinstance(plan, str):
        values = {**{key: before[key] for key in along if key is not None}, **changes}
        text = _in_place(layout, plan, values, newline, quoted)
        problem = _mismatch(before, text, changes)
        if not problem:
            return text
    if layout.comments:
        why = plan if isinstance(plan, str) else f"the rewrite in place failed its check: {problem}"
        raise errors.InvalidInput(f"cannot change {_names(changes)} without losing the comments of the frontmatter "
                                  f"({why})", "edit the file by hand, or remove the # comments from its "
                                  "frontmatter and run the command again")
    return _re_emitted(before, changes, newline, quoted)


def _re_emitted(before: dict[str, Any], changes: dict[str, Any], newline: str, quoted: set[str]) -> str:
    """The whole frontmatter written afresh: every field of `before` in its order, with `changes`;
    checked to read back as exactly that."""
    fields = dict(before)
    for key, value in changes.items():
        if value is DELETE:
            fields.pop(key, None)
        else:
            fields[key] = value
    text = _with_newline(render(fields, quoted=quoted), newline)
    problem = _mismatch(before, text, changes)
    if problem:
        raise errors.InvalidInput(f"cannot change {_names(changes)}: the rewritten frontmatter would not read back "
                                  f"as intended ({problem})", "edit the file by hand; nothing was changed")
    return text


def _names(changes: dict[str, Any]) -> str:
    return ", ".join(f"`{key}`" for key in changes)


def _in_place(layout: _Layout, plan: set[int], values: dict[str, Any], newline: str, quoted: set[str]) -> str:
    """The entries in `plan` replaced by their values (a key written more than once is written
    at its first place), their comments kept as lines after them; every other line as it was."""
    entries, lines = layout.entries, layout.lines
    out = lines[: entries[0].first] if entries else list(lines)
    written: set[str] = set()
    for position, entry in enumerate(entries):
        end = layout.end(position)
        if position not in plan:
            out += lines[entry.first:end]
            continue
        key = entry.key
        assert key is not None
        if key not in written:
            written.add(key)
            if values[key] is not DELETE:
                out.append(_with_newline(emit_field(key, values[key], quote=key in quoted), newline))
        closing = layout.trailing(entry.first, end)
        out += [layout.comments[index][1] + newline for index in range(entry.first, closing)
                if index in layout.comments]
        out += lines[closing:end]
    if out and not out[-1].endswith("\n"):
        out[-1] += newline
    for key, value in values.items():
        if key not in written and value is not DELETE:
            out.append(_with_newline(emit_field(key, value, quote=key in quoted), newline))
    return "".join(out)


def _mismatch(before: dict[str, Any], text: str, changes: dict[str, Any]) -> str:
    """What differs between the fields `text` holds and `before` with `changes` (empty: nothing)."""
    try:
        after = parse(text)
    except errors.InvalidInput as exc:
        return exc.message
    expected = dict(before)
    budget = [MAX_FRONTMATTER_NODES]
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = _plain(value, budget)
    for key in dict.fromkeys([*expected, *after]):
        if key not in after:
            return f"`{key}` would be lost"
        if key not in expected:
            return f"`{key}` would appear"
        if not same_value(after[key], expected[key]):
            return f"`{key}` would read {after[key]!r}, not {expected[key]!r}"
    return ""


def same_value(first: Any, second: Any) -> bool:
    """Equal, and of the same types all the way down (True is not 1, 1 is not 1.0; NaN equals NaN)."""
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(same_value(first[key], second[key]) for key in first)
    if isinstance(first, list):
        return len(first) == len(second) and all(map(same_value, first, second))
    if isinstance(first, float) and first != first:
        return second != second
    return bool(first == second)


def rewrite(document: Document, changes: dict[str, Any], *, body: str | None = None,
            quoted: Iterable[str] = (), name: str = "") -> str:
    """The text of a memory file with `changes` made to its frontmatter and, given `body`, a new
    body; checked to read back as exactly that. Raises InvalidInput (prefixed with `name`) when
    it cannot be done without loss, so a caller writes nothing."""
    if document.frontmatter is None:
        raise errors.InvalidInput(f"{name + ': ' if name else ''}the file has no frontmatter to change",
                                  "add a frontmatter block (--- lines) first")
    body = document.body if body is None else body
    try:
        head = replace_fields(document.frontmatter, changes, newline=document.newline, quoted=quoted)
        text = Document(document.prefix, head, body, document.newline).text()
        again = split(text)
        if again.frontmatter != head or again.body != body or again.prefix != document.prefix:
            raise errors.InvalidInput("the rewritten file would not split into the same frontmatter and body",
                                      "edit the file by hand; nothing was changed")
    except errors.InvalidInput as exc:
        if name:
            exc.message = f"{name}: {exc.message}"
        raise
    return text


def render(fields: dict[str, Any], *, quoted: Iterable[str] = ()) -> str:
    """Fresh frontmatter text for `fields`, in the given order."""
    quoted = set(quoted)
    return "".join(emit_field(key, value, quote=key in quoted) for key, value in fields.items())


def _with_newline(text: str, newline: str) -> str:
    return text if newline == "\n" else text.replace("\n", newline)
