"""`memory health`: every problem of a scope's memories, derived files and caches, with a fix hint.

Severities (README: Health, quality and repair):

- **error**: the memory files themselves are wrong, so a reader gets wrong or missing
  knowledge: unreadable files, frontmatter that breaks `schemas/frontmatter.schema.json` or
  the data model's rules, `links` to memories that do not exist or live in another scope.
  `memory health` exits 1 when there is one, so it can gate a CI job.
- **warning**: something the tools compensate for, or a curation matter: derived files out
  of step (index.json, graph.json, the catalog, embedding caches), one-sided links, orphans,
  duplicates, low quality, style (unquoted timestamps).

index.json and graph.json are read as found on disk *before* the catalog is opened: opening
it brings them in step with the files (every command does, this one too), so their drift is
reported once and is gone afterwards. Everything else is computed from the memory files and
the catalog; `memory repair` (repair.py) fixes what this module flags `fixable`.

Each family of checks is a module with its problem kinds (`KINDS`) and `check(facts)`;
the facts of a scope are loaded once (facts.ScopeFacts). A new family is one more entry
in FAMILIES.
"""

from __future__ import annotations

import contextlib
import gc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator

    from ..workspace.scopes import Workspace

from . import anchors, caches, digest, duplicates, exports, files, links, organisation, tasks
from .facts import Report, ScopeFacts, Snapshot, open_catalogs, other_scopes

FAMILIES = (files, links, organisation, exports, caches, duplicates)  # checked in this order

# every problem kind health reports -> its severity (the task store's are checked outside the scope lock)
KINDS: dict[str, str] = {kind: severity for family in (*FAMILIES, tasks, anchors)
                         for kind, severity in family.KINDS.items()}


def check(workspace: Workspace, scope: str | None = None) -> Report:
    """Check every readable scope (or one); see the module docstring for what is checked."""
    targets = [target for target in workspace.readable_scopes(scope) if target.exists()]
    snapshots = {target.name: Snapshot.take(target) for target in targets}  # before any catalog opens
    with collector_paused(), open_catalogs(workspace, targets) as catalogs:
        reports = []
        for target in targets:
            catalog = catalogs.get(target.name)
            if catalog is not None:
                elsewhere = other_scopes(catalogs, target.name)
                analysis = Analysis(catalog, snapshots[target.name], elsewhere, workspace.config).run()
                analysis.problems += tasks.task_problems(workspace, target)
                analysis.problems += anchors.problems(workspace, catalog)
                reports.append(analysis.report())
    return Report(reports)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while scopes are analysed.

    The analysis builds millions of objects that live until it ends and frees almost none, so each
    collection would walk them all again and find nothing: at 10,000 memories that was a third of
    the time. Afterwards what it made is frozen (left out of later collections: the report keeps
    most of it until the process ends) so the first collection does not walk it all once more;
    reference counting still frees all of it that is not a cycle.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.freeze()
            gc.enable()


class Analysis(ScopeFacts):
    """Everything health finds in one scope; `repair` plans its fixes from it."""

    severities = KINDS

    def read_memories(self) -> dict[str, digest.FileDigest]:
        return digest.read_scope(self.catalog, self.entries, adopted=self.adopted)

    def run(self) -> "Analysis":
        for family in FAMILIES:
            family.check(self)
        return self
