"""What injected memories say about the code as it is now: their anchors' state, for the hooks.

A memory whose anchored code is gone is not given to Claude as advice: it is named once per
session as possibly obsolete, with the command to review it. A memory whose code changed since
is given with a short marker. Memories without anchors are shown as they always were, at no cost:
nothing is looked at unless an entry carries anchors.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..catalog.catalog import Entry
    from ..workspace.scopes import Workspace

CHANGED_MARK = " (code changed since)"
CHANGED, GONE = "changed", "gone"  # model.anchors' states; it is imported only when a memory has anchors
ANCHORS_FIELD = "anchors"
STATE_KEY = "obsolete"  # session state: memories already named as possibly obsolete


def key(entry: Entry) -> str:
    return f"{entry.scope}:{entry.slug}"


def states(workspace: Workspace, entries: Iterable[Entry]) -> dict[str, str]:
    """`scope:slug` -> fresh, changed or gone, for the anchored project and local memories among `entries`."""
    anchored = [entry for entry in entries if entry.scope in ("project", "local") and entry.extra.get(ANCHORS_FIELD)]
    if not anchored:
        return {}
    from ..catalog.anchors import (
        stat_cache,  # for speed: the model's regexes only when needed
    )

    cache = stat_cache(workspace)
    try:
        checker = cache.checker()
        found = {}
        for entry in anchored:
            verdict = checker.of_fields(entry.extra)
            if verdict is not None:
                found[key(entry)] = verdict.state
        return found
    finally:
        cache.close()


def mark(entry: Entry, found: dict[str, str]) -> str:
    """The marker after an injected memory's title: the code it is about changed since."""
    return CHANGED_MARK if found.get(key(entry)) == CHANGED else ""


def is_gone(entry: Entry, found: dict[str, str]) -> bool:
    return found.get(key(entry)) == GONE


def obsolete_notice(entries: list[Entry], session_state: dict | None = None) -> list[str]:
    """Lines naming memories whose code is gone, each once per session (recorded in `session_state`)."""
    named = session_state.setdefault(STATE_KEY, []) if session_state is not None else []
    fresh = [entry for entry in entries if key(entry) not in named]
    if not fresh:
        return []
    named.extend(key(entry) for entry in fresh)
    lines = ["May be obsolete (the code these memories describe is gone; not advice, review them):"]
    lines += [f"- {entry.title} [{entry.slug}, {entry.scope}]: `memory verify {entry.slug}`" for entry in fresh]
    return lines
