"""The size limit of everything a hook prints.

Claude Code shows the model a hook's output above 10,000 characters only as a short preview, so
no hook prints more than HARD_LIMIT characters in one field, whatever the config's budgets say.
What does not fit is named with the command that shows it (`+3 more: memory query --recent 8`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

HARD_LIMIT = 9000
DEFAULT_MORE = "memory query --recent 8"
CAPPED_FIELDS = ("additionalContext", "systemMessage", "reason", "stopReason")


def shell_quote(word: str) -> str:
    """`word` as one shell word (shlex.quote, without importing shlex on every tool call)."""
    if word and all(char.isalnum() or char in "@%+=:,./-_" for char in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def more_line(left_out: list[tuple[int, str]]) -> str:
    """`+3 more: memory list --type decision; +6 more: memory query --recent 8`."""
    return "; ".join(f"+{count} more: {command}" for count, command in left_out if count > 0)


def fit(lines: list[str], left_out: list[tuple[int, str]], fits: Callable[[str], bool]) -> str:
    """`lines` joined, then the line naming what was left out, as much as `fits`: lines are dropped
    from the end (counted with the last thing left out) until the whole fits."""
    lines, left_out = list(lines), list(left_out)
    while True:
        tail = more_line(left_out)
        text = "\n".join(lines + ([tail] if tail else []))
        if fits(text) or not lines:
            return text if fits(text) else ""
        lines.pop()
        count, command = left_out.pop() if left_out else (0, DEFAULT_MORE)
        left_out.append((count + 1, command))


def cap(text: str, limit: int = HARD_LIMIT, more: str = DEFAULT_MORE) -> str:
    """`text` within `limit` characters: whole lines kept from the start, then `+N more lines: <more>`
    (a single line too long is cut)."""
    if len(text) <= limit:
        return text
    kept: list[str] = []
    lines = text.split("\n")
    used = cut = 0
    reserve = len(f"+{len(lines)} more lines: {more}") + 1
    for line in lines:
        if used + len(line) + 1 > limit - reserve:
            if not kept:  # one huge first line: its start, and it counts as left out
                kept.append(line[: max(limit - reserve - 4, 0)] + " ...")
                cut = 1
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept + [f"+{len(lines) - len(kept) + cut} more lines: {more}"])


def capped(answer: dict[str, Any]) -> dict[str, Any]:
    """A hook's JSON answer with every text field Claude Code shows within HARD_LIMIT."""
    for holder in (answer, answer.get("hookSpecificOutput")):
        if isinstance(holder, dict):
            for key in CAPPED_FIELDS:
                if isinstance(holder.get(key), str) and len(holder[key]) > HARD_LIMIT:
                    holder[key] = cap(holder[key])
    return answer
