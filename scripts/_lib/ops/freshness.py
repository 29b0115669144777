"""`memory verify`: each anchored memory checked against the code it is about (see model/anchors.py)."""

from __future__ import annotations

import subprocess

from ..catalog import anchors as anchor_catalog
from ..catalog.catalog import Entry, open_catalog
from ..model import anchors
from .lookup import locate, not_found

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..workspace.scopes import Workspace

NOT_ANCHORED = "not-anchored"


class Result:
    """One memory's state and its anchors' (`commits`: how many commits touched each changed file since)."""

    __slots__ = ("commits", "entry", "verdict")

    def __init__(self, entry: Entry, verdict: anchors.Verdict | None) -> None:
        self.entry, self.verdict = entry, verdict
        self.commits: dict[str, int] = {}

    @property
    def state(self) -> str:
        return self.verdict.state if self.verdict is not None else NOT_ANCHORED

    def as_json(self) -> dict[str, Any]:
        findings = self.verdict.findings if self.verdict is not None else []
        return {"slug": self.entry.slug, "scope": self.entry.scope, "title": self.entry.title,
                "type": self.entry.type, "state": self.state,
                "anchors": [dict(finding.as_json(), commitsSince=self.commits.get(finding.anchor.path))
                            for finding in findings]}


def verify(workspace: Workspace, slug: str | None = None, scope: str | None = None) -> list[Result]:
    """The state of `slug`, or of every anchored active memory (project and local scopes) when None.
    For one memory, how many commits touched each changed file since it was anchored (git asked)."""
    cache = anchor_catalog.stat_cache(workspace)
    checker = cache.checker()
    results: list[Result] = []
    try:
        if slug is not None:
            found_scope, _ = locate(workspace, slug, scope)
            with open_catalog(workspace, found_scope) as catalog:
                entry = catalog.get(slug) if catalog else None
            if entry is None:
                raise not_found(workspace, slug, [found_scope])
            result = Result(entry, checker.of_fields(entry.extra) if entry.scope in ("project", "local") else None)
            result.commits = commits_since(workspace, result)
            return [result]
        for target in workspace.readable_scopes(scope):
            if target.name not in ("project", "local"):
                continue
            with open_catalog(workspace, target) as catalog:
                for entry in anchor_catalog.anchored(catalog) if catalog else []:
                    results.append(Result(entry, checker.of_fields(entry.extra)))
    finally:
        cache.close()
    return results


def commits_since(workspace: Workspace, result: Result) -> dict[str, int]:
    """Commits that touched each changed anchored file since its anchor's commit (`git rev-list`);
    nothing for a file git cannot count."""
    counts: dict[str, int] = {}
    for finding in result.verdict.changed() if result.verdict is not None else []:
        anchor = finding.anchor
        if anchor.commit == anchors.UNKNOWN or anchor.path in counts:
            continue
        try:
            proc = subprocess.run(["git", "rev-list", "--count", f"{anchor.commit}..HEAD", "--", anchor.path],
                                  cwd=str(workspace.project_dir), capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            break  # no git: counts are a nicety
        if proc.returncode == 0 and proc.stdout.strip().isdigit():
            counts[anchor.path] = int(proc.stdout.strip())
    return counts
