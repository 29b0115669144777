"""The catalogs of every readable scope, one after the other: what a command reading "all my memories" walks."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Iterator

    from ..workspace.scopes import Scope, Workspace
    from .catalog import Catalog, Problem

from .catalog import open_catalog


def catalogs(workspace: Workspace, scope: str | None = None, *, refresh: bool = True,
             report: bool = False) -> Iterator[tuple[Scope, Catalog]]:
    """(scope, its open catalog) for each readable scope (or the one named), most specific first;
    scopes without a directory are skipped. With `report`, the files of a scope that are not
    readable memories are reported as warnings. Each catalog is closed when the walk moves on
    (or stops)."""
    for target in workspace.readable_scopes(scope):
        with open_catalog(workspace, target, refresh=refresh) as catalog:
            if catalog is None:
                continue
            if report:
                report_problems(workspace, catalog.problems())
            yield target, catalog


def report_problems(workspace: Workspace, problems: Iterable[Problem]) -> None:
    """A warning for each file that is not a readable memory."""
    for problem in problems:
        workspace.warn(f"skipping broken memory file {problem.path}: {problem.message}")
