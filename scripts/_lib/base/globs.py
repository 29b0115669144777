"""Gitignore-like globs matched against project-relative paths (gotchas' `paths:`, anchors)."""

from __future__ import annotations

import re

_COMPILED: dict[str, re.Pattern[str] | None] = {}  # a hook tries the same few globs on several paths


def _normalised(pattern: str) -> str:
    """The glob as matched: no leading `./`, a bare name anywhere, a directory with all below it."""
    pattern = pattern.strip().lstrip("./") if not pattern.startswith("/") else pattern.strip()
    if not pattern:
        return ""
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    if pattern.endswith("/"):
        pattern += "**"
    return pattern


def _compiled(pattern: str) -> re.Pattern[str] | None:
    if pattern in _COMPILED:
        return _COMPILED[pattern]
    normalised = _normalised(pattern)
    regex = ""
    index = 0
    while index < len(normalised):
        if normalised.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
        elif normalised.startswith("**", index):
            regex += ".*"
            index += 2
        elif normalised[index] == "*":
            regex += "[^/]*"
            index += 1
        elif normalised[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(normalised[index])
            index += 1
    compiled = _COMPILED[pattern] = re.compile(regex) if normalised else None
    return compiled


def glob_match(pattern: str, path: str) -> bool:
    """Gitignore-like globs: `*` within a segment, `**` across segments, a bare name anywhere."""
    compiled = _compiled(pattern)
    return compiled is not None and (compiled.fullmatch(path.lstrip("/")) is not None
                                     or compiled.fullmatch(path) is not None)


def _wild(text: str) -> bool:
    return "*" in text or "?" in text


def glob_key(pattern: str) -> str | None:
    """A key that `path_keys` gives every path the glob matches, so that a lookup by key finds the
    few globs worth trying on a path; None when the glob has none (it must be tried on every path).

    The key is a literal segment (`seg:auth` for `src/auth/**`: every matching path has a segment
    `auth`) or else the file's extension (`ext:ts` for `**/*.ts`). A segment ending in `**` (as in
    `a**/b`) can swallow the slash after it, so such globs name no segment."""
    normalised = _normalised(pattern)
    segments = normalised.split("/")
    if not normalised or any(segment.endswith("**") and segment != "**" for segment in segments):
        return None
    literal = [segment for segment in segments if segment and not _wild(segment)]
    if literal:
        return "seg:" + max(literal, key=len)  # the longest is likely the rarest
    _, dot, extension = segments[-1].rpartition(".")
    if dot and extension and not _wild(extension) and not segments[-1].startswith("**"):
        return "ext:" + extension
    return None


def path_keys(path: str) -> set[str]:
    """Every key a glob matching `path` can have (see `glob_key`)."""
    segments = [segment for segment in path.split("/") if segment]
    keys = {"seg:" + segment for segment in segments}
    if segments and "." in segments[-1]:
        keys.add("ext:" + segments[-1].rpartition(".")[2])
    return keys
