"""Which gotchas matter for a file being read or a command being run.

A gotcha is relevant to a file when its `paths:` globs match the file, or its tags name
a directory on the file's path, the file itself, or its language; to a command when its
tags name the programs or files the command uses, or its text matches error lines in
the command's output. Matches are ranked by a relevance score; `memory gotchas` and the
hooks share this module.
"""

from __future__ import annotations

import os
import re

from ..base import text
from ..base.text import LazyPattern
from ..base.globs import glob_match, path_keys
from ..model import memory
from ..catalog.catalog import Catalog, Entry, open_catalog
from ..catalog.gotcharules import gotcha_rules, gotcha_terms
from ..workspace.scopes import Workspace
from . import codestate, output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

GENERIC_SEGMENTS = frozenset("src lib libs app apps source sources code pkg packages internal cmd main "
                             "index mod init __init__".split())  # path words too common to mean anything
LANGUAGES = {
    "py": ("python",), "pyi": ("python",), "ts": ("typescript",), "tsx": ("typescript", "react"),
    "js": ("javascript",), "jsx": ("javascript", "react"), "mjs": ("javascript",), "cjs": ("javascript",),
    "go": ("go", "golang"), "rs": ("rust",), "rb": ("ruby",), "java": ("java",), "kt": ("kotlin",),
    "swift": ("swift",), "c": ("c",), "h": ("c", "cpp"), "cc": ("cpp",), "cpp": ("cpp",), "hpp": ("cpp",),
    "cs": ("csharp", "dotnet"), "php": ("php",), "sh": ("shell", "bash"), "bash": ("shell", "bash"),
    "zsh": ("shell",), "sql": ("sql",), "tf": ("terraform",), "yml": ("yaml",), "yaml": ("yaml",),
    "json": ("json",), "md": ("markdown",), "vue": ("vue",), "svelte": ("svelte",), "scala": ("scala",),
    "ex": ("elixir",), "exs": ("elixir",), "dart": ("dart",), "lua": ("lua",), "r": ("r",),
}
SPECIAL_FILES = {"dockerfile": ("docker",), "makefile": ("make",), "package.json": ("npm", "node"),
                 "pyproject.toml": ("python",), "cargo.toml": ("rust", "cargo"), "go.mod": ("go",)}
ERROR_LINE = LazyPattern(r"(error|exception|traceback|failed|fatal|panic|denied|refused|not found|cannot|"
                        r"undefined|segmentation)", re.IGNORECASE)
_WORDS = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
SCORE_GLOB, SCORE_DIRECTORY, SCORE_FILE, SCORE_WORD, SCORE_LANGUAGE, SCORE_TOOL = 5.0, 3.0, 3.0, 1.5, 1.0, 3.0
ERROR_TEXT_WEIGHT = 2.0  # score of an error-output match, per MIN_ERROR_OVERLAP shared words


class Match:
    """A gotcha and why it applies."""

    __slots__ = ("entry", "score", "reasons")

    def __init__(self, entry: Entry, score: float, reasons: list[str]) -> None:
        self.entry, self.score, self.reasons = entry, score, reasons

    def as_json(self) -> dict[str, object]:
        data = self.entry.as_json()
        data.update(score=round(self.score, 2), reasons=self.reasons)
        return data


def _words(token: str) -> list[str]:
    """`UserRepository.test-utils` -> user, repository, test, utils."""
    return [word.lower() for word in _WORDS.findall(token)]


def relative_path(path: str, project_dir: str) -> str:
    absolute = os.path.abspath(path)
    root = os.path.abspath(project_dir)
    if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, root).replace(os.sep, "/")
    return absolute.replace(os.sep, "/")


def path_signals(relpath: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """(directory names, file names, words, languages) that a tag may match."""
    parts = [part for part in relpath.split("/") if part and part not in (".", "..")]
    directories = {part.lower() for part in parts[:-1]} - GENERIC_SEGMENTS
    name = parts[-1].lower() if parts else ""
    stem, _, extension = name.rpartition(".") if "." in name else (name, "", "")
    files = {name, stem} - {""}
    words = {word for part in parts for word in _words(part)} - GENERIC_SEGMENTS
    languages = set(LANGUAGES.get(extension, ())) | set(SPECIAL_FILES.get(name, ())) | ({extension} - {""})
    return directories, files, words, languages


# How much a gotcha's severity (the earlier plugin's `severity` field) weighs on its relevance.
SEVERITY_WEIGHT = {"critical": 1.5, "high": 1.25, "medium": 1.0, "low": 0.8}


class Candidate:
    """A gotcha's tags and globs as the catalog holds them; its Entry is built only when it scores."""

    __slots__ = ("doc", "tags", "patterns", "weight")

    def __init__(self, doc: int, severity: str | None) -> None:
        self.doc = doc
        self.tags: list[str] = []
        self.patterns: list[str] = []
        self.weight = SEVERITY_WEIGHT.get(severity or "", 1.0)


def _candidates(workspace: Workspace, words: set[str],
                relpaths: list[str]) -> Iterator[tuple[Catalog, list[Candidate]]]:
    """(catalog, the active gotchas that could score) for each readable scope (most specific first),
    each with those of its globs that could match `relpaths` and of its tags that could match `words`
    (see catalog.gotcharules): a hook on every tool call must not decode 10,000 index entries, nor
    try 1,000 globs."""
    keys = set().union(*map(path_keys, relpaths))
    for scope in workspace.readable_scopes():
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is None:
                continue
            catalog.refresh_if_moved()
            found: dict[int, Candidate] = {}
            for doc, kind, value, severity in gotcha_rules(catalog, words, keys):
                candidate = found.get(doc)
                if candidate is None:
                    candidate = found[doc] = Candidate(doc, severity)
                (candidate.tags if kind == "tag" else candidate.patterns).append(value)
            yield catalog, [found[doc] for doc in sorted(found)]


def _path_score(tags: Iterable[str], patterns: Iterable[str], relpath: str,
                signals: tuple[set[str], set[str], set[str], set[str]]) -> tuple[float, list[str]]:
    directories, files, words, languages = signals
    score, reasons = 0.0, []
    for pattern in patterns:
        if glob_match(pattern, relpath):
            score += SCORE_GLOB
            reasons.append(f"path matches {pattern}")
            break
    for tag in tags:
        if tag in directories:
            score += SCORE_DIRECTORY
            reasons.append(f"tag {tag} names directory {tag}/")
        elif tag in files:
            score += SCORE_FILE
            reasons.append(f"tag {tag} names the file")
        elif tag in languages:
            score += SCORE_LANGUAGE
            reasons.append(f"tag {tag} is the file's language")
        elif tag in words or any(part in words for part in tag.split("-") if len(part) > 3):
            score += SCORE_WORD
            reasons.append(f"tag {tag} appears in the path")
    return score, reasons


def _rank(workspace: Workspace, words: set[str], relpaths: list[str], score: Callable[[Candidate], tuple[float, list[str]]],
          limit: int, exclude: Iterable[str],
          extra: Callable[[Catalog, dict[int, list[Any]]], None] | None = None) -> list[Match]:
    """Score every candidate (its tags among `words`, its globs for `relpaths`), build entries for
    the best ones, most specific scope winning a slug."""
    skip = set(exclude)
    seen: set[str] = set()
    matches: list[Match] = []
    for catalog, candidates in _candidates(workspace, words, relpaths):
        scored: dict[int, list[Any]] = {}
        for candidate in candidates:
            value, reasons = score(candidate)
            if value > 0:
                scored[candidate.doc] = [value * candidate.weight, reasons]
        if extra is not None:
            extra(catalog, scored)
        for doc, (value, reasons) in sorted(scored.items(), key=lambda item: -item[1][0])[: limit + len(skip)]:
            entry = catalog.get_by_id(doc)
            if entry is not None and entry.slug not in skip and entry.slug not in seen:
                seen.add(entry.slug)
                matches.append(Match(entry, value, reasons))
    return _best(matches, limit)


def for_path(workspace: Workspace, path: str, *, limit: int = 3, exclude: Iterable[str] = ()) -> list[Match]:
    """The gotchas most relevant to a file, best first."""
    relpath = relative_path(path, str(workspace.project_dir))
    signals = path_signals(relpath)
    return _rank(workspace, set().union(*signals), [relpath],
                 lambda candidate: _path_score(candidate.tags, candidate.patterns, relpath, signals), limit, exclude)


COMMAND_WORDS = frozenset("sudo env time nohup xargs exec then do else fi done if for while in".split())


def command_signals(command: str) -> tuple[set[str], list[str]]:
    """(program and subcommand names, path-like arguments) of a shell command."""
    import shlex

    try:
        tokens = shlex.split(command, posix=True)
    except ValueError:
        tokens = command.split()
    programs, paths = set(), []
    expect_program = True
    for token in tokens:
        if token in ("|", "||", "&&", ";", "&") or token.endswith(";"):
            expect_program = True
            continue
        if expect_program and "=" in token and not token.startswith("-"):
            continue  # FOO=bar prefix
        if expect_program:
            if token in COMMAND_WORDS:
                continue
            programs.add(os.path.basename(token).lower())
            expect_program = False
            continue
        if token.startswith("-"):
            continue
        if "/" in token or re.search(r"\.[A-Za-z0-9]{1,6}$", token):
            paths.append(token)
        elif re.fullmatch(r"[a-z][a-z0-9-]{1,30}", token) and len(programs) < 12:
            programs.add(token)  # subcommands: `docker compose`, `npm install`
    return programs, paths


ERROR_FILLER = frozenset("error errors err failed failure fail fails exception traceback line file files module "
                         "not found cannot could undefined fatal warning warn exit code status at in of the to "
                         "most recent call last".split())
MIN_ERROR_OVERLAP = 3  # distinct informative words an error shares with a gotcha's text


def for_command(workspace: Workspace, command: str, output: str = "", *, limit: int = 3,
                exclude: Iterable[str] = ()) -> list[Match]:
    """The gotchas most relevant to a shell command and the errors in its output."""
    from .protected import protected_scope

    programs, paths = command_signals(command)
    paths = [path for path in paths if protected_scope(workspace, path, str(workspace.cwd)) is None]  # memory files
    relpaths = [relative_path(os.path.join(str(workspace.cwd), path), str(workspace.project_dir)) for path in paths[:10]]
    signals = [(relpath, path_signals(relpath)) for relpath in relpaths]
    error_lines = [line for line in output.splitlines()[-200:] if ERROR_LINE.search(line)]
    error_words = {word for word in text.tokens(" ".join(error_lines)[:4000])} - ERROR_FILLER

    def score(candidate: Candidate) -> tuple[float, list[str]]:
        value, reasons = 0.0, []
        tools = sorted(set(candidate.tags) & programs)
        if tools:
            value += SCORE_TOOL * len(tools)
            reasons.append("command uses " + ", ".join(tools))
        for relpath, path_signal in signals:
            path_value, path_reasons = _path_score(candidate.tags, candidate.patterns, relpath, path_signal)
            if path_value:
                value += path_value
                reasons += [f"{reason} ({relpath})" for reason in path_reasons]
                break
        return value, reasons

    def error_matches(catalog: Catalog, scored: dict[int, list[Any]]) -> None:
        """Gotchas whose text shares several informative words with the error lines."""
        if len(error_words) < 2:
            return
        words = sorted(error_words)[:200]
        shared_by_doc: dict[int, set[str]] = {}
        for doc, term in gotcha_terms(catalog, words):
            shared_by_doc.setdefault(doc, set()).add(term)
        for doc, shared in shared_by_doc.items():
            if len(shared) >= min(MIN_ERROR_OVERLAP, len(error_words)):
                entry = scored.setdefault(doc, [0.0, []])
                entry[0] += ERROR_TEXT_WEIGHT * min(len(shared) / MIN_ERROR_OVERLAP, 3.0)
                entry[1].append("its text matches the error output (" + ", ".join(sorted(shared)[:4]) + ")")

    words = programs.union(*(set().union(*path_signal) for _, path_signal in signals))
    return _rank(workspace, words, relpaths, score, limit, exclude, error_matches if error_lines else None)


def _best(matches: list[Match], limit: int) -> list[Match]:
    matches.sort(key=lambda match: (-match.score, match.entry.slug))
    return matches[:limit]


def format_warnings(matches: list[Match], subject: str, states: dict[str, str] | None = None,
                    more: str | None = None) -> str:
    """The text injected into Claude's context (and printed by `memory gotchas`): with `more`, the
    command that shows them all, within the hooks' character limit (what does not fit is named)."""
    return _warnings(matches, subject, states, more)[0]


def _warnings(matches: list[Match], subject: str, states: dict[str, str] | None,
              more: str | None) -> tuple[str, int]:
    """(format_warnings' text, how many of `matches` it shows)."""
    lines = [f"Known gotchas for {subject} (from memory; `memory read <slug>` for details):"]
    left_out: list[tuple[int, str]] = []
    used = len(lines[0])
    for index, match in enumerate(matches):
        entry = match.entry
        block = [f"- {entry.title} [{entry.slug}, {entry.scope}]{codestate.mark(entry, states or {})}"]
        detail = memory.summary_of_file(entry.path)
        if detail:
            block.append(f"  {detail}")
        size = sum(len(line) + 1 for line in block)
        if more is not None and used + size > output.HARD_LIMIT - len(more) - 20:
            left_out.append((len(matches) - index, more))
            break
        lines += block
        used += size
    shown = len(matches) - sum(count for count, _ in left_out)
    if more is None:
        return "\n".join(lines), shown
    return output.fit(lines, left_out, lambda text: len(text) <= output.HARD_LIMIT), shown


def warnings_once(workspace: Workspace, session_state: dict[str, Any],
                  find: Callable[[list[str]], list[Match]], subject: str, more: str) -> str:
    """What a hook injects for the gotchas `find(already shown)` returns, each once per session:
    advice for those whose code is there (marked when it changed since), a notice for those whose
    code is gone. `more` is the command that lists them all."""
    shown = session_state.setdefault("gotchas", [])
    matches = find(shown)
    found = codestate.states(workspace, [match.entry for match in matches])
    advice = [match for match in matches if not codestate.is_gone(match.entry, found)]
    gone = [match.entry for match in matches if codestate.is_gone(match.entry, found)]
    text, count = _warnings(advice, subject, found, more) if advice else ("", 0)
    shown.extend(match.entry.slug for match in advice[:count])  # those left out may come next time
    shown.extend(entry.slug for entry in gone)
    notice = codestate.obsolete_notice(gone, session_state)
    return "\n\n".join(part for part in (text, "\n".join(notice)) if part)
