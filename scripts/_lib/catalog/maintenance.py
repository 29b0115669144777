"""Catalog queries for the maintenance verbs (rename, move, impact, stats): who declares a link
to a memory, and every declared link of a scope at once.

Each file is authoritative for the links it declares (`links`, `related:`, wiki links); these
queries read the `declared` table that mirrors those declarations.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

    from .catalog import Catalog

from ..model import graph

FILE_ORIGINS = (graph.ORIGIN_LINKS, graph.ORIGIN_REFS)  # declared by a memory file (not an imported graph.json)


def declarers(catalog: Catalog, slug: str) -> list[str]:
    """The memories whose files declare a link to `slug`, sorted."""
    return sorted({src for (src,) in catalog.conn.execute(
        "SELECT DISTINCT src FROM declared WHERE dst=? AND origin IN (?, ?)", (slug, *FILE_ORIGINS))} - {slug})


def declarers_of_any(catalog: Catalog, slugs: Iterable[str]) -> dict[str, set[str]]:
    """slug -> the memories declaring a link to it, for several slugs in one query."""
    wanted = list(dict.fromkeys(slugs))
    found: dict[str, set[str]] = {slug: set() for slug in wanted}
    for start in range(0, len(wanted), 500):  # SQLite limits the number of parameters
        chunk = wanted[start:start + 500]
        for src, dst in catalog.conn.execute(
                f"SELECT DISTINCT src, dst FROM declared WHERE dst IN ({', '.join('?' * len(chunk))}) "
                "AND origin IN (?, ?)", (*chunk, *FILE_ORIGINS)):
            if src != dst:
                found[dst].add(src)
    return found


def declared_pairs(catalog: Catalog) -> list[tuple[str, str]]:
    """Every (source, target) pair some file or graph.json of the scope declares, deduplicated."""
    return [(src, dst) for src, dst in catalog.conn.execute("SELECT DISTINCT src, dst FROM declared") if src != dst]


def renamed_from(catalog: Catalog, old: str) -> list[str]:
    """Memories whose `previous-slugs` name `old` (a memory renamed away from it)."""
    needle = '%"previous-slugs"%' + old.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    candidates = [slug for slug, extra in catalog.conn.execute(
        "SELECT slug, extra FROM docs WHERE extra LIKE ? ESCAPE '\\'", (needle,))]
    found = []
    for slug in candidates:
        entry = catalog.get(slug)
        previous = entry.extra.get("previous-slugs") if entry else None
        if isinstance(previous, list) and old in previous:
            found.append(slug)
    return found
