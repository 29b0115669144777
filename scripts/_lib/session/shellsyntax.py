"""Bash command lines split the way bash splits them: simple commands, their words, redirections.

Enough of bash's grammar for the protect hook to see what a command line would run: quoting
('...', "...", $'...', backslashes, line continuations), parameter expansions ($X, ${X},
${X:-default}), command substitutions ($(...), backticks, <(...)), arithmetic, the operators
(; & && || | |& newline and parentheses), redirections with their file descriptors (2>, &>, >&2),
here-documents, here-strings and comments. A word keeps its parts so that a caller can expand
the variables it knows and tell a quoted `*` from a live one. Nothing here raises on bad input:
an unclosed quote or parenthesis runs to the end of the line.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The parts of a word:
#   (TEXT, characters, quoted)
#   (VAR, name, quoted, default): name None for a parameter nobody can know ($1, $@, ${X#y});
#                                  default the text of ${X:-default} (or ${X-...}, ${X:=...}), else None
#   (SUB, commands): a command substitution, already parsed; commands None for $((arithmetic))
TEXT, VAR, SUB = "text", "var", "sub"

OPERATORS = ("&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">|", ">&", "<<", "<>", "<&",
             ";", "&", "|", ">", "<", "(", ")")
REDIRECTIONS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<>", "<&", ">", "<"})
PIPES = frozenset({"|", "|&"})
WORD_END = frozenset(" \t\n;&|<>()")
PLAIN_RUN = re.compile(r"[^\s'\"\\$`;&|<>()=]+=?")  # stops after `=`: `NAME=~/x` expands its tilde
# Compiled on first use (re caches them): most command lines need none of these.
DOUBLE_QUOTED_RUN = r'[^"\\$`]+'
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
BRACED_PARAMETER = r"(?s)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(.*)"
ASSIGNMENT_PREFIX = r"[A-Za-z_][A-Za-z0-9_]*\+?=$"
ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "e": "\x1b", "a": "\a"}
MAX_NESTING = 12  # $( $( ... ) ) deeper than this is read as an unknown value


class Command:
    """One simple command: its words, redirections, standard input text, the command piping into it."""

    __slots__ = ("words", "redirections", "stdin", "piped_from", "expansions")

    def __init__(self, piped_from: Command | None = None) -> None:
        self.words: list[list[tuple]] = []
        self.redirections: list[tuple[str, list[tuple]]] = []  # (operator, target word)
        self.stdin: str | None = None  # a here-document's or here-string's text
        self.piped_from = piped_from
        self.expansions: list[tuple] = []  # parts of an unquoted here-document ($(...) in it runs)


def parse(line: str) -> list[Command]:
    """The simple commands of a command line, in order (those of substitutions are inside their words)."""
    return _Parser(line).commands(0, 0)[0]


def parse_word(text: str) -> list[tuple]:
    """The parts of the first word of `text` (a default value of ${X:-...}, say)."""
    return _Parser(text).word(0, 0)[0]


def word_text(parts: list[tuple]) -> str:
    """The word with quotes removed, its expansions left as they were written (`$X`)."""
    return "".join(part[1] if part[0] == TEXT else "$" + (part[1] or "?") if part[0] == VAR else "$(...)"
                   for part in parts)


class _Parser:
    def __init__(self, line: str) -> None:
        self.line = line
        self.end = len(line)
        self.heredocs: list[tuple[Command, str, bool, bool]] = []  # waiting for the next newline

    def commands(self, start: int, nesting: int) -> tuple[list[Command], int]:
        """Commands from `start`; when nested, up to the `)` closing a $( (returns the index after it)."""
        line, end = self.line, self.end
        found = [Command()]
        redirection: str | None = None
        depth = 0  # open subshell parentheses at this level
        i = start
        while i < end:
            char = line[i]
            if char in " \t":
                i += 1
            elif char == "\\" and line.startswith("\n", i + 1):
                i += 2
            elif char == "#":
                newline = line.find("\n", i)
                i = end if newline < 0 else newline
            elif char == "\n":
                i = self._read_heredocs(i + 1)
                found.append(Command())
                redirection = None
            elif char in "<>" and line.startswith("(", i + 1):  # process substitution: a word
                i = self._word_into(found, redirection, i, nesting)
                redirection = None
            elif char in ";&|<>()":
                operator = next(op for op in OPERATORS if line.startswith(op, i))
                i += len(operator)
                if operator in REDIRECTIONS:
                    redirection = operator
                    continue
                redirection = None
                if operator == ")":
                    if depth == 0 and nesting:
                        return _non_empty(found), i
                    depth = max(0, depth - 1)
                elif operator == "(":
                    depth += 1
                piped = next((command for command in reversed(found[-2:]) if command.words), None) \
                    if operator in PIPES else None  # `(a) | b`: the command before the parenthesis
                found.append(Command(piped))
            else:
                i = self._word_into(found, redirection, i, nesting)
                redirection = None
        return _non_empty(found), i

    def _word_into(self, found: list[Command], redirection: str | None, i: int, nesting: int) -> int:
        parts, after = self.word(i, nesting)
        command = found[-1]
        if after < self.end and self.line[after] in "<>" and len(parts) == 1 and parts[0][0] == TEXT \
                and not parts[0][2] and parts[0][1].isdigit():
            return after  # the file descriptor of `2>`: part of the redirection
        if redirection in ("<<", "<<-"):
            delimiter = "".join(part[1] for part in parts if part[0] == TEXT)
            quoted = any(part[0] != TEXT or part[2] for part in parts)
            self.heredocs.append((command, delimiter, redirection == "<<-", not quoted))
        elif redirection == "<<<":
            command.stdin = word_text(parts)
            command.expansions.extend(parts)
        elif redirection:
            command.redirections.append((redirection, parts))
        else:
            command.words.append(parts)
        return after

    def _read_heredocs(self, i: int) -> int:
        """Take the bodies of the here-documents opened on the line that just ended; the index after them."""
        line, end = self.line, self.end
        for command, delimiter, strip_tabs, expands in self.heredocs:
            body: list[str] = []
            while i < end:
                newline = line.find("\n", i)
                newline = end if newline < 0 else newline
                text = line[i:newline]
                i = newline + 1
                if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                    break
                body.append(text)
            command.stdin = "\n".join(body)
            if expands:  # its $(...) and backticks run; the rest is data
                body_parser, j = self.__class__(command.stdin), 0
                while True:
                    j = min((at for at in (command.stdin.find("$(", j), command.stdin.find("`", j)) if at >= 0),
                            default=-1)
                    if j < 0:
                        break
                    j = (body_parser._dollar(j, command.expansions, True, 0) if command.stdin[j] == "$"
                         else body_parser._backticks(j, command.expansions, 0))
        self.heredocs = []
        return min(i, end)

    # -- words ---------------------------------------------------------------------------------

    def word(self, i: int, nesting: int) -> tuple[list[tuple], int]:
        """The parts of the word starting at `i` and the index after it."""
        line, end = self.line, self.end
        parts: list[tuple] = []
        start = i
        while i < end:
            char = line[i]
            if char in WORD_END:
                if char in "<>" and line.startswith("(", i + 1) and i == start:
                    commands, i = self._nested(i + 2, nesting)
                    parts.append((SUB, commands))
                    continue
                break
            if char == "'":
                close = line.find("'", i + 1)
                close = end if close < 0 else close
                parts.append((TEXT, line[i + 1:close], True))
                i = close + 1
            elif char == '"':
                i = self._double_quoted(i + 1, parts, nesting)
            elif char == "\\":
                if line.startswith("\n", i + 1):
                    i += 2
                    continue
                parts.append((TEXT, line[i + 1:i + 2], True))
                i += 2
            elif char == "$":
                i = self._dollar(i, parts, False, nesting)
            elif char == "`":
                i = self._backticks(i, parts, nesting)
            elif char == "~" and (i == start or len(parts) == 1 and parts[0][0] == TEXT and not parts[0][2]
                                  and re.match(ASSIGNMENT_PREFIX, parts[0][1])) \
                    and (i + 1 >= end or line[i + 1] == "/" or line[i + 1] in WORD_END):
                parts.append((VAR, "HOME", False, None))  # `~` and `NAME=~/...`
                i += 1
            else:
                match = PLAIN_RUN.match(line, i)
                run = match.group(0) if match else char
                parts.append((TEXT, run, False))
                i += len(run)
        return parts, i

    def _double_quoted(self, i: int, parts: list[tuple], nesting: int) -> int:
        line, end = self.line, self.end
        while i < end:
            char = line[i]
            if char == '"':
                return i + 1
            if char == "\\":
                following = line[i + 1:i + 2]
                if following in ('$', '`', '"', "\\"):
                    parts.append((TEXT, following, True))
                elif following != "\n":
                    parts.append((TEXT, "\\" + following, True))
                i += 2
            elif char == "$":
                i = self._dollar(i, parts, True, nesting)
            elif char == "`":
                i = self._backticks(i, parts, nesting)
            else:
                match = re.compile(DOUBLE_QUOTED_RUN).match(line, i)
                parts.append((TEXT, match.group(0), True))  # type: ignore[union-attr]
                i = match.end()  # type: ignore[union-attr]
        return end

    def _dollar(self, i: int, parts: list[tuple], quoted: bool, nesting: int) -> int:
        line, end = self.line, self.end
        following = line[i + 1:i + 2]
        if line.startswith("((", i + 1):
            close = line.find("))", i + 3)
            parts.append((SUB, None))
            return end if close < 0 else close + 2
        if following == "(":
            commands, after = self._nested(i + 2, nesting)
            parts.append((SUB, commands))
            return after
        if following == "{":
            close, depth, j = end, 0, i + 1
            while j < end:
                if line[j] == "{":
                    depth += 1
                elif line[j] == "}":
                    depth -= 1
                    if depth == 0:
                        close = j
                        break
                j += 1
            body = line[i + 2:close]
            match = re.match(BRACED_PARAMETER, body)
            if not match:
                parts.append((VAR, None, quoted, None))
            else:
                name, rest = match.groups()
                known = name if re.fullmatch(NAME, name) else None
                for operator in (":-", ":=", "-", "="):
                    if rest.startswith(operator):
                        parts.append((VAR, known, quoted, rest[len(operator):]))
                        break
                else:
                    parts.append((VAR, known if not rest else None, quoted, None))
            return close + 1
        if following == "'" and not quoted:
            j, text = i + 2, []
            while j < end and line[j] != "'":
                if line[j] == "\\" and j + 1 < end:
                    text.append(ANSI_ESCAPES.get(line[j + 1], "\\" + line[j + 1]))
                    j += 2
                else:
                    text.append(line[j])
                    j += 1
            parts.append((TEXT, "".join(text), True))
            return j + 1
        if following == '"' and not quoted:
            return self._double_quoted(i + 2, parts, nesting)
        match = re.compile(NAME).match(line, i + 1)
        if match:
            parts.append((VAR, match.group(0), quoted, None))
            return match.end()
        if following and following in "0123456789@*#?$!-":
            parts.append((VAR, None, quoted, None))
            return i + 2
        parts.append((TEXT, "$", quoted))
        return i + 1

    def _backticks(self, i: int, parts: list[tuple], nesting: int) -> int:
        line, end = self.line, self.end
        j, inner = i + 1, []
        while j < end and line[j] != "`":
            if line[j] == "\\" and j + 1 < end and line[j + 1] in "`\\$":
                inner.append(line[j + 1])
                j += 2
            else:
                inner.append(line[j])
                j += 1
        parts.append((SUB, self.__class__("".join(inner)).commands(0, 0)[0] if nesting < MAX_NESTING else None))
        return j + 1

    def _nested(self, i: int, nesting: int) -> tuple[Any, int]:
        """The commands of a `$(` or `<(` whose body starts at `i`, and the index after its `)`."""
        if nesting >= MAX_NESTING:
            depth, j = 1, i
            while j < self.end and depth:
                depth += {"(": 1, ")": -1}.get(self.line[j], 0)
                j += 1
            return None, j
        return self.commands(i, nesting + 1)


def _non_empty(commands: list[Command]) -> list[Command]:
    """Without the empty commands separators leave (`a;;`, `(x)`, a comment line)."""
    return [command for command in commands if command.words or command.redirections or command.stdin is not None]
