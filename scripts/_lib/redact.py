"""Secrets never reach a memory file: redact them (or refuse the write) on every write path.

Detected: private key blocks, cloud and VCS tokens (AWS, GitHub, GitLab, Slack, Google,
Stripe, OpenAI, Anthropic, npm), JWTs, passwords in URLs, `password=...`-style
assignments, and long high-entropy strings. Each is replaced by a visible placeholder
such as `[REDACTED:github-token]`; `<private>...</private>` spans are dropped whole.
`redaction.mode: refuse` turns any finding into an error instead.
"""

from __future__ import annotations

import functools
import math
import re

from . import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

PRIVATE_SPAN = re.compile(r"<private>.*?</private>", re.S | re.I)
UNCLOSED_PRIVATE = re.compile(r"<private>.*\Z", re.S | re.I)

# (kind, pattern, group holding the secret: 0 for the whole match), compiled on first use
_PATTERNS: list[tuple[str, str, int, int]] = [
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S, 0),
    ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b", 0, 0),
    ("aws-secret-key", r"(?i)aws.{0,20}?(?:secret|private).{0,20}?[\"'=:\s]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
     0, 1),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", 0, 0),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}\b", 0, 0),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0, 0),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}", 0, 0),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0, 0),
    ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b", 0, 0),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", 0, 0),
    ("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}", 0, 0),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, 0),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0, 0),
    ("url-password", r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:([^\s@/]{3,})@", 0, 1),
    ("password", r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|"
                 r"client[_-]?secret)\b[\"']?\s*[:=]\s*[\"']?([^\s\"'`,;]{8,})", 0, 1),
]
HIGH_ENTROPY = r"(?<![A-Za-z0-9/+_=-])[A-Za-z0-9/+_=-]{32,}(?![A-Za-z0-9/+_=-])"
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z-]+\]")


@functools.lru_cache(maxsize=1)
def patterns() -> list[tuple[str, re.Pattern[str], int]]:
    """The detectors, compiled once per process (compiling them costs milliseconds)."""
    return [(kind, re.compile(pattern, flags), group) for kind, pattern, flags, group in _PATTERNS]


class Finding:
    __slots__ = ("kind", "start", "end")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind, self.start, self.end = kind, start, end


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())


def _credential_like(value: str) -> bool:
    """A value after `password=` that looks set rather than described: mixed kinds of characters."""
    classes = sum(bool(re.search(pattern, value)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return classes >= 2 or len(value) >= 16


def _looks_random(token: str) -> bool:
    """A long token with the character mix and entropy of a generated secret.

    Hex strings (commit hashes, checksums), UUIDs and plain words or paths are left alone.
    """
    if token.islower() or token.isupper() or token.isalpha():
        return False  # no mix of lower case, upper case and digits
    if re.fullmatch(r"[0-9a-fA-F-]+", token) or "/" in token.strip("/") and token.count("/") > 2:
        return False
    classes = sum(bool(re.search(pattern, token)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes == 3 and _entropy(token) >= 4.2


def findings(text: str) -> Iterator[Finding]:
    """Every secret in `text` (overlaps resolved: the first, longest match wins)."""
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= left or start >= right for left, right in taken)

    for kind, pattern, group in patterns():
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if kind == "password" and not _credential_like(text[start:end]):
                continue  # "password: required" is prose, not a password
            if start < end and free(start, end) and not PLACEHOLDER.fullmatch(text[start:end]):
                taken.append((start, end))
                yield Finding(kind, start, end)
    for match in _high_entropy().finditer(text):
        start, end = match.span()
        if free(start, end) and _looks_random(match.group(0)):
            taken.append((start, end))
            yield Finding("high-entropy-string", start, end)


def clean(workspace: Any, value: str, what: str = "content") -> str:
    """`scrub` with the workspace's `redaction.mode`, reporting what was redacted as a warning."""
    cleaned, kinds = scrub(value, workspace.config.get("redaction.mode", "redact"), what)
    if kinds:
        workspace.warn(f"redacted from the {what}: {', '.join(kinds)} (a [REDACTED:...] marker is kept)")
    return cleaned


def clean_values(workspace: Any, value: Any, what: str = "frontmatter") -> Any:
    """`clean` applied to every string inside a frontmatter value (lists and mappings included)."""
    if isinstance(value, str):
        return clean(workspace, value, what)
    if isinstance(value, list):
        return [clean_values(workspace, item, what) for item in value]
    if isinstance(value, dict):
        return {key: clean_values(workspace, item, what) for key, item in value.items()}
    return value


# Text holding none of these (the second set in lower case) cannot match a detector of _PATTERNS.
_MARKERS = ("-----BEGIN", "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
            "github_pat_", "glpat-", "xox", "hooks.slack.com", "AIza", "_live_", "_test_", "sk-", "npm_", "eyJ", "://")
_LOWER_MARKERS = ("aws", "passw", "pwd", "secret", "api_key", "api-key", "apikey", "token")


def kinds_in(text: str) -> list[str]:
    """The kinds of secret in `text`. Health scans every memory, so clean text must be cheap:
    plain substring checks first, the detectors only where one of their markers occurs."""
    lower = text.lower()
    if not (any(marker in text for marker in _MARKERS) or any(marker in lower for marker in _LOWER_MARKERS)) \
            and not any(_looks_random(match.group(0)) for match in _high_entropy().finditer(text)):
        return []
    return list(dict.fromkeys(finding.kind for finding in findings(text)))


@functools.lru_cache(maxsize=1)
def _high_entropy() -> re.Pattern[str]:
    return re.compile(HIGH_ENTROPY)


def scrub(text: str, mode: str = "redact", what: str = "content") -> tuple[str, list[str]]:
    """`text` with private spans dropped and secrets replaced; also the kinds found.

    With mode "refuse", a secret raises InvalidInput instead (private spans are still dropped).
    """
    text = PRIVATE_SPAN.sub("[REDACTED:private]", text)
    text = UNCLOSED_PRIVATE.sub("[REDACTED:private]", text)
    found = sorted(findings(text), key=lambda finding: finding.start)
    if not found:
        return text, []
    kinds = list(dict.fromkeys(finding.kind for finding in found))
    if mode == "refuse":
        raise errors.InvalidInput(f"the {what} contains what looks like a secret ({', '.join(kinds)})",
                                  "remove it, wrap it in <private>...</private>, or set redaction.mode to redact")
    pieces, cursor = [], 0
    for finding in found:
        pieces += [text[cursor:finding.start], f"[REDACTED:{finding.kind}]"]
        cursor = finding.end
    pieces.append(text[cursor:])
    return "".join(pieces), kinds
