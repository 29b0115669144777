"""Links between memories: targets that exist in the same scope, inverse links, labels that agree."""

from __future__ import annotations

from collections import Counter

from ..base import errors
from ..model import graph
from .facts import ERROR, WARNING, ScopeFacts, explicit_labels, links_editable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .digest import FileDigest

BROKEN_LINK = "broken-link"
CROSS_SCOPE_LINK = "cross-scope-link"
BROKEN_REFERENCE = "broken-reference"
MISSING_INVERSE_LINK = "missing-inverse-link"
ASYMMETRIC_LABELS = "asymmetric-labels"
SELF_LINK = "self-link"
DUPLICATE_LINK = "duplicate-link"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    BROKEN_LINK: ERROR,  # `links` names a memory that does not exist
    CROSS_SCOPE_LINK: ERROR,  # `links` names a memory of another scope (links join one scope only)
    BROKEN_REFERENCE: WARNING,  # a [[wiki link]] or `related:` entry names a missing memory
    MISSING_INVERSE_LINK: WARNING,  # A's `links` names B, B's file does not mention A
    ASYMMETRIC_LABELS: WARNING,  # A and B label their links with labels that are not inverses
    SELF_LINK: WARNING,  # `links` names the memory itself
    DUPLICATE_LINK: WARNING,  # `links` names the same memory twice
}


def check(facts: ScopeFacts) -> None:
    """Add the problems of this family to `facts`."""
    _links(facts)


def _links(facts: ScopeFacts) -> None:
    memories, references, entries = facts.memories, facts.references, facts.entries
    for slug, item in memories.items():
        editable = links_editable(item)
        links = item.links
        # (each target once, in the order first named: a Counter only when one is named twice)
        named = Counter(links).items() if len(set(links)) < len(links) else ((target, 1) for target in links)
        for target, count in named:
            if count > 1:
                facts.add(DUPLICATE_LINK, slug, f"`links` names {target} {count} times",
                          "memory repair keeps one", fixable=editable, target=target)
            if target == slug:
                facts.add(SELF_LINK, slug, "`links` names the memory itself",
                          "memory repair removes it", fixable=editable, target=target)
            elif target not in entries:
                if not _written_meanwhile(facts, target):
                    _missing_link(facts, item, target, editable)
            else:
                other = memories.get(target)
                if other is not None and (slug not in other.links and slug not in references[target]
                                          or slug < target and slug in other.links):
                    _inverse(facts, item, target, other)
        unlinked = references[slug].difference(links)
        for target in sorted(unlinked) if unlinked else ():
            if target not in entries:
                _missing_reference(facts, item, target)


def _written_meanwhile(facts: ScopeFacts, slug: str) -> bool:
    """Whether a memory this check did not see exists now: another process wrote it while the
    files were being read (its link is then not broken; the next check sees it whole)."""
    if facts.scope.root_writable and not facts.catalog._lock_depth:
        try:
            facts.catalog.refresh()
        except errors.Error:
            return False
    return facts.catalog.has_slug(slug)


def _missing_link(facts: ScopeFacts, item: FileDigest, target: str, editable: bool) -> None:
    if target in facts.elsewhere:
        facts.add(CROSS_SCOPE_LINK, item.slug, f"`links` names {target}, but {facts.where(target)}",
                  "links join memories of one scope: move one of them, or remove the link by hand",
                  target=target)
        return
    renamed = facts.aliases.get(target, [])
    if len(renamed) == 1:
        message = f"`links` names {target}, which was renamed to {renamed[0]}"
        hint = f"memory repair re-points it to {renamed[0]} (its `previous-slugs` lists {target})"
    elif renamed:
        message = f"`links` names {target}, listed in `previous-slugs` of {', '.join(renamed)}"
        hint = "pick the right one by hand: more than one memory claims the old slug"
        editable = False
    else:
        message = f"`links` names {target}, but {facts.where(target)}"
        hint = f"memory repair removes the link; or write the memory {target} again"
    facts.add(BROKEN_LINK, item.slug, message, hint, fixable=editable, target=target)


def _missing_reference(facts: ScopeFacts, item: FileDigest, target: str) -> None:
    renamed = facts.aliases.get(target, [])
    if len(renamed) == 1:
        facts.add(BROKEN_REFERENCE, item.slug, f"[[{target}]] names a memory renamed to {renamed[0]}",
                  f"memory repair re-points it to [[{renamed[0]}]]", fixable=True, target=target)
        return
    facts.add(BROKEN_REFERENCE, item.slug, f"[[{target}]] (a wiki link or `related:` entry) names a "
              f"missing memory: {facts.where(target)}",
              f"write the memory {target}, or edit the text that mentions it", target=target)


def _inverse(facts: ScopeFacts, item: FileDigest, target: str, other: FileDigest) -> None:
    """`item` links to `other` (memory `target`): a link not returned, or returned with labels that disagree."""
    if item.slug not in other.links and item.slug not in facts.references[target]:
        if facts.adopted:
            return  # the earlier plugin records a link once, in the source's `links` and its graph.json
        labels = explicit_labels(item, target) if item.link_labels else ()
        inverse = ", ".join(facts.labels.inverse(label) for label in labels) or graph.DEFAULT_LABEL
        facts.add(MISSING_INVERSE_LINK, target, f"{item.slug} links here, but `links` does not name it",
                  f"memory repair adds {item.slug} to `links` ({inverse})", path=other.path,
                  fixable=links_editable(other), target=item.slug)
    elif item.slug < target and item.slug in other.links:
        mine, theirs = explicit_labels(item, target), explicit_labels(other, item.slug)
        if mine and theirs and {facts.labels.inverse(label) for label in mine} != set(theirs):
            facts.add(ASYMMETRIC_LABELS, item.slug,
                      f"labels its link to {target} {', '.join(mine)}, but {target} labels the link back "
                      f"{', '.join(theirs)} (the inverse of {mine[0]} is {facts.labels.inverse(mine[0])})",
                      "memory repair gives each side the inverse of every label the other declares (a link "
                      "half-written by a killed command is completed); or correct `link-labels` by hand",
                      fixable=links_editable(item) and links_editable(other), target=target)
