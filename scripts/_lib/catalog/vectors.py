"""What the vector code asks of a scope's catalog, as named queries."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import Catalog


def content_hashes(catalog: Catalog) -> dict[str, str]:
    """slug -> content hash of every memory of the scope."""
    return dict(catalog.conn.execute("SELECT slug, hash FROM docs"))


def updated_times(catalog: Catalog) -> dict[str, str]:
    """slug -> when each memory of the scope was last updated (ISO 8601)."""
    return dict(catalog.conn.execute("SELECT slug, updated FROM docs"))
