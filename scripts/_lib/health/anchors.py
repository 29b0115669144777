"""`memory health` on code anchors: memories whose code changed since (drifted) or is gone (obsolete).

Both are warnings, never fixed by `memory repair`: whether a memory still holds once its code
moved on is for a person (or Claude) to judge, then `memory update SLUG --reanchor`.
"""

from __future__ import annotations

from ..catalog import anchors as anchor_catalog
from ..model import anchors
from .facts import WARNING, Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

DRIFTED = "drifted-memory"
OBSOLETE = "obsolete-memory"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    DRIFTED: WARNING,  # the anchored code changed since the memory was written
    OBSOLETE: WARNING,  # an anchored file was deleted, or a symbol it names is gone
}
KIND_OF_STATE = {anchors.CHANGED: DRIFTED, anchors.GONE: OBSOLETE}


def problems(workspace: Workspace, catalog: Catalog) -> list[Problem]:
    """The drifted and obsolete memories of a project or local scope. Not a family of `check(facts)`:
    it looks at the code the memories name, through the workspace's stat cache, not at the facts."""
    if catalog.scope.name not in ("project", "local") or workspace.project_is_global:
        return []
    cache = anchor_catalog.stat_cache(workspace)
    found = []
    try:
        checker = cache.checker()
        for entry in anchor_catalog.anchored(catalog):
            verdict = checker.of_fields(entry.extra)
            if verdict is None or verdict.state == anchors.FRESH:
                continue
            moved = [finding for finding in verdict.findings if finding.state != anchors.FRESH]
            what = ", ".join(f"{finding.anchor.name()} {finding.state}" for finding in moved[:4])
            if verdict.state == anchors.GONE:
                message = f"{entry.slug} may be obsolete: the code it is about is gone ({what})"
            else:
                message = f"{entry.slug} is about code that changed since it was written ({what})"
            hint = (f"review it (`memory verify {entry.slug}`), then `memory update {entry.slug} --reanchor` "
                    f"if it still holds, or change or delete it")
            kind = KIND_OF_STATE[verdict.state]
            found.append(Problem(kind, KINDS[kind], catalog.scope.name, entry.slug, entry.path, message, hint,
                                 target=moved[0].anchor.name()))
    finally:
        cache.close()
    return found
