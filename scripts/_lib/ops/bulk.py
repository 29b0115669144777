"""Selecting many memories by filter for the bulk forms of the maintenance verbs."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..catalog.catalog import Entry
    from ..workspace.scopes import Workspace
    from .store import Filters


def select(workspace: Workspace, filters: Filters) -> list[Entry]:
    """The memories matching `filters` in every readable scope (or one), each once per scope."""
    from .store import check_filters, visible_entries

    return visible_entries(workspace, check_filters(filters, workspace))
