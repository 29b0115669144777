"""Finding memories across scopes: which scope holds a slug, and what to say when none does.

Shared by the operations that take a slug (store, links, query, quality).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from ..workspace.scopes import Scope, Workspace

from ..base import errors
from ..model import memory
from ..catalog.catalog import NOT_MEMORIES, open_catalog


def check_slug_argument(slug: str) -> str:
    return memory.check_lookup_slug(slug.strip() if isinstance(slug, str) else slug)


def find(workspace: Workspace, slug: str, scope: str | None = None) -> tuple[Scope, Path] | None:
    """Which scope holds `slug` (enterprise -> local -> project -> global) and its file, or None."""
    check_slug_argument(slug)
    scopes = workspace.readable_scopes(scope)
    flat = f"{slug}.md"
    for candidate in scopes:  # fast path: the flat file named after the slug (index.md is no memory)
        path = candidate.root / flat
        if flat.lower() not in NOT_MEMORIES and path.is_file():
            return candidate, path
    for candidate in scopes:  # memory-graph layouts (nodes/<kind>/...) and ids that differ from file names
        with open_catalog(workspace, candidate) as catalog:
            entry = catalog.get(slug) if catalog else None
            if entry:
                return candidate, entry.path
    return None


def locate(workspace: Workspace, slug: str, scope: str | None = None) -> tuple[Scope, Path]:
    """`find`, for a slug that must exist: not finding it is an error that suggests close slugs."""
    found = find(workspace, slug, scope)
    if found is None:
        raise not_found(workspace, slug, workspace.readable_scopes(scope))
    return found


def not_found(workspace: Workspace, slug: str, scopes: list[Scope]) -> errors.NotFound:
    for candidate in scopes:
        problem = broken(candidate, slug)
        if problem is not None:
            return problem
    known: set[str] = set()
    for candidate in scopes:
        with open_catalog(workspace, candidate, refresh=False) as catalog:
            if catalog:
                known |= catalog.slugs()
    import difflib  # only on the error path

    close = difflib.get_close_matches(slug, sorted(known), n=3, cutoff=0.5)
    if not close:
        close = [known_slug for known_slug in sorted(known) if slug in known_slug][:3]
    where = scopes[0].name + " scope" if len(scopes) == 1 else "any scope"
    hint = ("did you mean: " + ", ".join(close)) if close else "run `memory list` to see what exists"
    return errors.NotFound(f"no memory {slug!r} in {where}", hint)


def absent(scope: Scope, slug: str) -> errors.NotFound:
    """The error for `slug` that `scope`'s catalog does not hold: what is wrong with its file when
    the file is there (`broken`), else that there is no such memory."""
    return broken(scope, slug) or errors.NotFound(f"no memory {slug!r} in {scope.name} scope",
                                                  "run `memory list` to see what exists")


def broken(scope: Scope, slug: str) -> errors.NotFound | None:
    """The error for `slug` when its file is there but holds no memory that can be read (the
    catalog then has none): what is wrong with the file, not "no memory"."""
    path = scope.root / f"{slug}.md"
    if path.name.lower() in NOT_MEMORIES or not path.is_file():  # (index.md is no memory, broken or not)
        return None
    try:
        memory.read_file(path, scope.name, root=scope.root)
    except errors.InvalidInput as exc:
        return errors.NotFound(f"memory file {path} is broken: {exc.message}",
                               exc.hint or "fix the file, then run `memory health`")
    except errors.Error:
        pass
    return None
