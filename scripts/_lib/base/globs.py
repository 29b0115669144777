"""Gitignore-like globs matched against project-relative paths (gotchas' `paths:`, anchors)."""

from __future__ import annotations

import re


def glob_match(pattern: str, path: str) -> bool:
    """Gitignore-like globs: `*` within a segment, `**` across segments, a bare name anywhere."""
    pattern = pattern.strip().lstrip("./") if not pattern.startswith("/") else pattern.strip()
    if not pattern:
        return False
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    if pattern.endswith("/"):
        pattern += "**"
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            regex += ".*"
            index += 2
        elif pattern[index] == "*":
            regex += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(pattern[index])
            index += 1
    return re.fullmatch(regex, path.lstrip("/")) is not None or re.fullmatch(regex, path) is not None
