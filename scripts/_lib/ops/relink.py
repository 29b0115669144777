"""Rewriting the links a memory file declares: renaming a target, or turning a link into text.

A memory declares a link in its `links` list (with `link-labels`), its `related:` list, and
with `[[slug]]`, `[[slug|text]]` or `[[slug#section]]` anywhere in its body. The graph reads
wiki links everywhere in the body, code spans included, so these rewrites touch them there
too: a `[[old]]` left in a code span would still be an edge to a memory that no longer exists.
These are pure functions on values and text; callers read and write the files.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

# the target, an optional #section and an optional |text, as the graph reads them
_WIKI = re.compile(r"\[\[([^\[\]|#\r\n]+)(#[^\[\]|\r\n]*)?(\|[^\[\]\r\n]*)?\]\]")
SLUG_FIELDS = ("supersedes", "superseded-by")  # single-slug fields that name another memory
MENTION = "mentions"  # how a body's wiki link is described when it cannot follow a moved memory


def _sub_wiki(text: str, slug: str, replace: Callable[[str, str, str], str]) -> str:
    if "[[" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        if match.group(1).strip() != slug:
            return match.group(0)
        return replace(match.group(1), match.group(2) or "", match.group(3) or "")

    return _WIKI.sub(one, text)


def rename_in_text(text: str, old: str, new: str) -> str:
    """`[[old]]`, `[[old|text]]`, `[[old#section]]` become the same links to `new`."""
    return _sub_wiki(text, old, lambda target, section, alias: "[[" + target.replace(old, new) + section + alias + "]]")


def unwiki_in_text(text: str, slug: str) -> str:
    """Wiki links to `slug` become plain text that still names it: `[[slug]]` -> `slug`,
    `[[slug#s]]` -> `slug#s`, `[[slug|text]]` -> `text (slug)`."""
    def plain(target: str, section: str, alias: str) -> str:
        named = target.strip() + section
        return f"{alias[1:]} ({named})" if alias[1:].strip() else named

    return _sub_wiki(text, slug, plain)


def _related_item(item: Any, old: str, new: str | None) -> Any:
    """One `related:` entry with `old` renamed to `new` (None: the entry goes)."""
    if isinstance(item, list):  # `related: [[x]]` read as plain YAML is a nested list
        inner = item[0] if len(item) == 1 else None
        if isinstance(inner, str) and inner.strip() == old:
            return None if new is None else [new]
        return item
    if isinstance(item, str):
        if item.strip() == old:
            return new
        if "[[" in item:
            if new is None:
                return None if any(m.group(1).strip() == old for m in _WIKI.finditer(item)) else item
            return rename_in_text(item, old, new)
    return item


def field_changes(fields: dict[str, Any], old: str, new: str | None) -> dict[str, Any]:
    """The frontmatter changes that rename the link target `old` to `new` (None: drop the
    link), for `links`, `link-labels`, `related` and the supersede fields. Only changed keys."""
    from ..model import frontmatter, memory

    changes: dict[str, Any] = {}
    links = fields.get("links")
    if isinstance(links, list) and old in links:
        kept = list(dict.fromkeys(new if link == old else link for link in links if link != old or new is not None))
        changes["links"] = kept or frontmatter.DELETE
    labels = fields.get(memory.LABELS_FIELD)
    if isinstance(labels, dict) and old in labels:
        mapping = {}
        for key, value in labels.items():
            if key != old:
                mapping[key] = value
            elif new is not None:
                mapping[new] = _merge_labels(labels.get(new), value) if new in labels else value
        changes[memory.LABELS_FIELD] = mapping if mapping else frontmatter.DELETE
    related = fields.get("related")
    if related is not None:
        items = related if isinstance(related, list) else [related]
        rewritten = [_related_item(item, old, new) for item in items]
        rewritten = [item for item in rewritten if item is not None]
        if rewritten != items:
            changes["related"] = rewritten if isinstance(related, list) else (
                rewritten[0] if rewritten else frontmatter.DELETE)
    if new is not None:
        for key in SLUG_FIELDS:
            if fields.get(key) == old:
                changes[key] = new
    return changes


def _merge_labels(first: Any, second: Any) -> Any:
    merged = list(dict.fromkeys([*(first if isinstance(first, list) else [first]),
                                 *(second if isinstance(second, list) else [second])]))
    return merged[0] if len(merged) == 1 else merged


def left_behind_note(pairs: list[tuple[str, str]], scope: str, target_scope: str) -> str:
    """The paragraph a moved memory keeps for the links that could not cross scopes."""
    listed = "; ".join(f"{label} {slug}" for slug, label in pairs)
    return f"Links left in the {scope} scope when this memory moved to {target_scope}: {listed}."


def drop_links(fields: dict[str, Any], body: str, slugs: Iterable[str]) -> tuple[dict[str, Any], str]:
    """(frontmatter changes, body) that remove every link to `slugs`: declarations go, wiki
    links become plain text naming the memory."""
    from ..model import frontmatter

    current = dict(fields)
    changes: dict[str, Any] = {}
    for slug in slugs:
        for key, value in field_changes(current, slug, None).items():
            changes[key] = value
            if value is frontmatter.DELETE:
                current.pop(key, None)
            else:
                current[key] = value
        body = unwiki_in_text(body, slug)
    return changes, body
