"""Quality score of a memory: 0-100, a breakdown and concrete suggestions.

The rubric (README: Health, quality and repair) has six parts:

| part         | max | full marks when |
|--------------|-----|-----------------|
| title        | 15  | a specific title of 3-12 words and 12-80 characters |
| tags         | 10  | 2-6 valid tags |
| structure    | 25  | 50-1500 words (15) with `##` sections (5) and lists, code or paragraphs (5) |
| links        | 20  | 2+ links (10) and a hub among them (10); a hub: 3+ members |
| freshness    | 10  | updated within 90 days (archived and superseded memories always score 10) |
| completeness | 20  | what the type needs: a decision's rationale and trade-offs, a gotcha's trigger and fix |

Everything is computed from the file and the graph; nothing is stored.
"""

from __future__ import annotations

import contextlib
import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt
    from pathlib import Path
    from typing import Any

    from ..catalog.catalog import Catalog
    from ..model.memory import Memory
    from .digest import FileDigest as Scored
    from ..workspace.scopes import Workspace

from ..base import clock, errors, fsutil, stamps
from ..model import memory
from ..catalog.catalog import open_catalog
from ..catalog import queries

PARTS = (("title", 15), ("tags", 10), ("structure", 25), ("links", 20), ("freshness", 10), ("completeness", 20))
GENERIC_TITLES = frozenset("untitled note notes misc miscellaneous todo tmp temp test wip fixme stuff things "
                           "info general draft new memory".split())
PART_OF = "part-of"

_WORD = re.compile(r"\w+")
_SECTION = re.compile(r"^#{2,6}[ \t]+\S", re.M)
_BLOCK = re.compile(r"^[ \t]*(?:[-*+][ \t]+\S|\d+[.)][ \t]+\S|```|~~~|\|.*\|)", re.M)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


class Text:
    """A memory's text prepared once for the keyword checks: lower-cased, and its set of words."""

    __slots__ = ("lower", "words")

    def __init__(self, text: str) -> None:
        self.lower = text.lower()
        self.words = frozenset(self.lower.translate(_SPACES).split())

    def has(self, words: frozenset[str], phrases: tuple[str, ...] = ()) -> bool:
        return not words.isdisjoint(self.words) or any(phrase in self.lower for phrase in phrases)

    def has_code(self) -> bool:
        return "`" in self.lower

    def has_place(self) -> bool:
        return "://" in self.lower or "[[" in self.lower or _PATH.search(self.lower) is not None


_SPACES = {ord(char): " " for char in "!\"#$%&'()*+,./:;<=>?@[\\]^`{|}~\u2019\u201c\u201d"}  # not - or _


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PATH = re.compile(r"\b[\w.-]+/[\w./-]+")
_RATIONALE = (_words("rationale reason reasons why because motivation benefit benefits"), ("so that", "in order to"))
_TRADE_OFFS = (_words("tradeoff tradeoffs downside downsides drawback drawbacks cons cost costs alternative "
                      "alternatives consequence consequences risk risks rejected"), ("trade-off", "instead of"))
_TRIGGER = (_words("trigger triggers triggered symptom symptoms when whenever if happens occurs cause causes "
                   "break breaks fail fails"), ())
_FIX = (_words("fix fixes fixed solution workaround instead avoid resolve resolved prevent remedy use"), ())
_INSIGHT = (_words("because why lesson lessons learned learnt insight means"), ("so that", "turns out", "the reason"))
_EXAMPLE = (_words("example examples"), ("e.g.", "for instance", "such as"))
_USAGE = (_words("usage use run call invoke import apply example examples"), ("how to",))


GRAPH_MEMO_VERSION = 3


def text_digest(data: bytes) -> str:
    """BLAKE2b-160 of `data`, in hex."""
    import hashlib

    return hashlib.blake2b(data, digest_size=20).hexdigest()


def entries_digest(data: bytes) -> str:
    """The digest health compares graph.json by (the file as found against the memo's): of its
    entry lines, each without the padding and separator an in-place patch leaves, in sorted order.
    A file patched entry by entry since it was last written whole (lines overwritten and padded,
    blanked, added before the closing brace) has the digest of the file written afresh; any other
    difference, or another layout, gives another digest, and the edges are compared one by one."""
    lines = data.split(b"\n")
    entries = sorted(filter(None, (line.rstrip(b" ").rstrip(b",").rstrip(b" ") for line in lines[1:-2])))
    return text_digest(b"\n".join([*lines[:1], *entries, *lines[-2:]]))


def _code_stamp() -> str:
    """The stamps of the code that computes the edges and their facts: a memo made by other code is not used."""
    from ..catalog import edges
    from ..model import graph

    sources = [str(module.__file__) for module in (edges, graph, queries)] + [__file__]
    return "|".join(stamps.file_stamp(source) or "" for source in sources)


def _read_memo(path: Path, key: str) -> tuple[dict[str, list[Any]], str] | None:
    try:
        memo = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # missing or unreadable: computed again
    if not isinstance(memo, dict) or memo.get("key") != key or not isinstance(memo.get("graph"), str) or \
            not isinstance(memo.get("facts"), dict):
        return None  # of another shape or made from other declarations or hubs
    return memo["facts"], memo["graph"]


class GraphFacts:
    """What the graph says about one memory: its edges, the hubs it is linked to, a hub's members."""

    __slots__ = ("edges", "hubs", "members")

    def __init__(self, edges: int = 0, hubs: list[str] | None = None, members: int = 0) -> None:
        self.edges, self.hubs, self.members = edges, hubs or [], members


class GraphView:
    """What the graph says about every memory of one scope, read once from the catalog (no file parsing).

    With `memo` (a file in the scope's cache directory: derived and disposable) each memory's
    GraphFacts and a digest of the graph.json text its edges make are kept there under a digest of
    the catalog's declarations and of which memories are hubs: computing them reads and orders
    every edge of the scope, which costs several times what checking the digest does. Any change
    to a link, a memory's existence, a hub or the inverse labels computes them again; a memo that
    cannot be read is ignored and rewritten."""

    def __init__(self, catalog: Catalog, memo: Path | None = None) -> None:
        self.types: dict[str, str] = queries.types(catalog)
        self.hubs = frozenset(slug for slug, kind in self.types.items() if kind == "hub")
        self._catalog = catalog
        self._text_digest: str | None = None
        self._neighbours: dict[str, list[tuple[str, str]]] | None = None
        key = ""
        if memo:
            hubs = text_digest("\n".join(sorted(self.hubs)).encode("utf-8", "surrogatepass"))
            key = f"{GRAPH_MEMO_VERSION}:{_code_stamp()}:{queries.graph_fingerprint(catalog)}:{hubs}"
        kept = _read_memo(memo, key) if memo else None
        if kept is not None:
            self._facts, self._text_digest = kept
            return
        nodes = list(queries.graph_edges(catalog))
        self._neighbours = {slug: [(edge.target, edge.label) for edge in edges] for slug, edges in nodes}
        self._facts = {slug: self._node(slug, edges) for slug, edges in self._neighbours.items()}
        if memo:
            self._text_digest = entries_digest(queries.graph_text_of(nodes).encode("utf-8"))
            with contextlib.suppress(OSError, errors.Error):  # a memo that cannot be written (read-only, full): none
                fsutil.write_atomically(memo, json.dumps({"key": key, "graph": self._text_digest,
                                                          "facts": self._facts}), durable=False)

    @property
    def neighbours(self) -> dict[str, list[tuple[str, str]]]:
        """slug -> (target, label) of each of its edges, as graph.json holds them (read when first asked)."""
        if self._neighbours is None:
            self._neighbours = {slug: [(edge.target, edge.label) for edge in edges]
                                for slug, edges in queries.graph_edges(self._catalog)}
        return self._neighbours

    def graph_text_digest(self) -> str:
        """`entries_digest` of graph.json as the catalog would write it from these edges."""
        if self._text_digest is None:
            self._text_digest = entries_digest(queries.graph_text_of(queries.graph_edges(self._catalog)).encode("utf-8"))
        return self._text_digest

    def _node(self, slug: str, edges: list[tuple[str, str]]) -> list[Any]:
        """[edges, hubs, members] of GraphFacts, as the memo keeps them."""
        others = {target for target, _ in edges}
        members = len(others - {target for target, label in edges if label == PART_OF}) if slug in self.hubs else 0
        return [len(others), sorted(others & self.hubs), members]

    def facts(self, slug: str) -> GraphFacts:
        known = self._facts.get(slug)
        return GraphFacts(*known) if known else GraphFacts()


class Part:
    """One part of the score."""

    __slots__ = ("name", "score", "max", "note", "suggestions")

    def __init__(self, name: str, maximum: int) -> None:
        self.name, self.max, self.score, self.note = name, maximum, 0, ""
        self.suggestions: list[str] = []

    def as_json(self) -> dict[str, Any]:
        return {"score": self.score, "max": self.max, "note": self.note}


class Quality:
    """A memory's score, its breakdown and what would raise it."""

    def __init__(self, item: Memory | Scored, parts: list[Part]) -> None:
        self.slug, self.scope, self.title, self.type = item.slug, item.scope, item.title, item.type
        self.path = item.path
        self.parts = parts
        self.score = sum(part.score for part in parts)

    @property
    def suggestions(self) -> list[str]:
        """Suggestions, those worth the most points first."""
        ranked = sorted(self.parts, key=lambda part: part.score - part.max)
        return [text for part in ranked for text in part.suggestions]

    def as_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "scope": self.scope, "title": self.title, "type": self.type,
                "path": str(self.path), "score": self.score,
                "breakdown": {part.name: part.as_json() for part in self.parts},
                "suggestions": self.suggestions}


# -- scoring ------------------------------------------------------------------------------

def assess(item: Memory | Scored, facts: GraphFacts, *, now: _dt.datetime | None = None,
           hub_hint: str | None = None, known: dict[str, Any] | None = None) -> Quality:
    """Score one memory. `hub_hint` names a hub worth suggesting when it belongs to none. `known`:
    what `intrinsic` found in its file (health keeps it per file); without it, `item` is a Memory
    and it is computed here."""
    if known is None:
        known = intrinsic(item)  # type: ignore[arg-type]  # a Memory: only health passes anything else
    parts = {name: Part(name, maximum) for name, maximum in PARTS}
    for name, (score, note, suggestions) in known["parts"].items():
        parts[name].score, parts[name].note, parts[name].suggestions = score, note, list(suggestions)
    _links(parts["links"], item, facts, hub_hint)
    _freshness(parts["freshness"], item, now or clock.now())
    _completeness(parts["completeness"], item, facts, known["words"], known["tests"])
    return Quality(item, list(parts.values()))


def intrinsic(item: Memory) -> dict[str, Any]:
    """What the score takes from the file alone, as JSON: the title, tags and structure parts, the
    word count and the outcome of the completeness tests that read the text (not the graph)."""
    words = len(item.content.split())
    parts = {name: Part(name, maximum) for name, maximum in PARTS if name in ("title", "tags", "structure")}
    _title(parts["title"], item)
    _tags(parts["tags"], item)
    _structure(parts["structure"], item, words)
    text = Text(f"{item.title}\n{item.content}")
    tests = {name: bool(test(text, None, words)) for name, test, _ in _CHECKS.get(item.type, _GENERIC_CHECKS)
             if name not in _GRAPH_TESTS}
    return {"parts": {name: [part.score, part.note, part.suggestions] for name, part in parts.items()},
            "words": words, "tests": tests}


def has_title(item: Memory) -> bool:
    """Whether the title is the memory's own (a `title:` field or a `# ` heading), not the slug standing in."""
    return item.title_in_field or memory._HEADING.search(item.body) is not None


def _title(part: Part, item: Memory) -> None:
    title = item.title
    words = len(_WORD.findall(title))
    if not has_title(item):
        part.note = "no title: the slug stands in"
        part.suggestions.append("Add a `# Title` heading as the first line of the body (or a `title:` field) that "
                                "names the subject and the point.")
    elif title.strip().lower().rstrip(".!:") in GENERIC_TITLES or words == 0:
        part.score, part.note = 3, f"generic title {title!r}"
        part.suggestions.append(f"Replace the generic title {title!r} with one that names the subject and the "
                                "point, e.g. \"Redis cache keys expire after 24h\".")
    elif 3 <= words <= 12 and 12 <= len(title) <= 80:
        part.score, part.note = 15, f"{words} words"
    elif words >= 2 and len(title) <= 120:
        part.score, part.note = 10, f"{words} words, {len(title)} characters"
        part.suggestions.append("Shorten the title to under 80 characters and move details into the content."
                                if len(title) > 80 or words > 12 else
                                "Make the title more specific: 3-12 words naming the subject and the point.")
    else:
        part.score, part.note = 5, f"{words} word{'s' if words != 1 else ''}, {len(title)} characters"
        part.suggestions.append("Write a title of 3-12 words (under 80 characters) that names the subject "
                                "and the point.")


def _tags(part: Part, item: Memory) -> None:
    valid = list(dict.fromkeys(tag for tag in item.tags if memory.SLUG_RE.fullmatch(tag)
                               and len(tag) <= memory.MAX_TAG))
    invalid = [tag for tag in item.tags if tag not in valid]
    count = len(valid)
    if count == 0:
        part.note = "no valid tags"
        part.suggestions.append(f"Add 2-6 tags naming the topic: memory update {item.slug} --add-tags topic,area")
    elif count == 1:
        part.score, part.note = 6, "1 tag"
        part.suggestions.append(f"Add one or two more tags (areas, technologies): "
                                f"memory update {item.slug} --add-tags ...")
    elif count <= 6:
        part.score, part.note = 10, f"{count} tags"
    else:
        part.score, part.note = 7, f"{count} tags"
        part.suggestions.append("Keep the 6 most specific tags; many tags make matching less precise.")
    if invalid:
        part.score = max(0, part.score - 3 * len(invalid))
        part.note += f", {len(invalid)} invalid"
        part.suggestions.append(f"Fix the invalid tag{'s' if len(invalid) > 1 else ''} "
                                f"{', '.join(map(repr, invalid))}: lowercase words joined by hyphens "
                                "(`memory repair` lower-cases them).")


def _structure(part: Part, item: Memory, words: int) -> None:
    content = item.content
    sections = len(_SECTION.findall(content))
    paragraphs = len([block for block in _PARAGRAPH_BREAK.split(content.strip()) if block.strip()])
    blocks = _BLOCK.search(content) is not None or paragraphs >= 2
    if words < 10:
        length = 0
    elif words < 25:
        length = 5
    elif words < 50:
        length = 10
    elif words <= 1500:
        length = 15
    else:
        length = 10
    part.score = length + (5 if sections else 0) + (5 if blocks else 0)
    part.note = f"{words} words, {sections} section{'s' if sections != 1 else ''}"
    if words < 50:
        part.suggestions.append(f"Say more ({words} word{'' if words == 1 else 's'} now): what happened or was "
                                "decided, why, and an example; aim for 50 words or more.")
    elif words > 1500:
        part.suggestions.append(f"It is long ({words} words): split it into focused memories joined by a hub.")
    if not sections:
        part.suggestions.append("Add `## ` section headings (e.g. ## Context, ## Details) so readers can skim.")
    if not blocks:
        part.suggestions.append("Break the text into paragraphs, a list or a code block.")


def _links(part: Part, item: Memory | Scored, facts: GraphFacts, hub_hint: str | None) -> None:
    if item.type == "hub":
        members = facts.members
        part.score = 0 if members == 0 else 10 if members < 3 else 20
        part.note = f"{members} member{'s' if members != 1 else ''}"
        if members < 3:
            part.suggestions.append(f"Gather members into this hub: memory link MEMBER {item.slug} --label part-of")
        return
    edges, hubs = facts.edges, facts.hubs
    part.score = (0 if edges == 0 else 5 if edges == 1 else 10) + (10 if hubs else 0)
    part.note = f"{edges} link{'s' if edges != 1 else ''}, " + (f"hub {hubs[0]}" if hubs else "no hub")
    if not hubs:
        hub = hub_hint or "HUB"
        why = f" ({hub_hint} shares its tags)" if hub_hint else ""
        part.suggestions.append(f"Link it to a hub{why}: memory link {item.slug} {hub} --label part-of")
    if edges < 2:
        part.suggestions.append(f"Link related memories (memory search finds candidates): "
                                f"memory link {item.slug} OTHER")


def _freshness(part: Part, item: Memory | Scored, now: _dt.datetime) -> None:
    if item.status != "active":
        part.score, part.note = part.max, f"{item.status}: not expected to change"
        return
    moment = clock.parse(item.updated) or clock.parse(item.created)
    if moment is None:
        part.note = "no valid updated timestamp"
        part.suggestions.append("Give it valid `created` and `updated` timestamps (`memory repair` fills missing "
                                "ones from the file time).")
        return
    days = max(0, (now - moment).days)
    part.score = 10 if days <= 90 else 7 if days <= 180 else 4 if days <= 365 else 2
    part.note = f"updated {days} day{'s' if days != 1 else ''} ago"
    if days > 180:
        part.suggestions.append(f"Last updated {days} days ago: check it is still true and update it, "
                                "or set `status: archived`.")


# Per type: (name, test(text, facts, words), suggestion); the checks share the part's 20 points.
_CHECKS: dict[str, list[Any]] = {
    "decision": [
        ("rationale", lambda text, facts, words: text.has(*_RATIONALE),
         "State the rationale: add a `## Rationale` section saying why this option was chosen."),
        ("trade-offs", lambda text, facts, words: text.has(*_TRADE_OFFS),
         "State the trade-offs: add a `## Trade-offs` section with what it costs and the alternatives rejected."),
    ],
    "gotcha": [
        ("trigger", lambda text, facts, words: text.has(*_TRIGGER),
         "State the trigger: when does it bite, and what is the symptom (error message, wrong result)?"),
        ("fix", lambda text, facts, words: text.has(*_FIX),
         "State the fix: add a `## Fix` section with the workaround or the right way to do it."),
    ],
    "learning": [
        ("insight", lambda text, facts, words: text.has(*_INSIGHT),
         "Explain the insight: why it works this way, or what was learned (\"because ...\")."),
        ("example", lambda text, facts, words: text.has_code() or text.has(*_EXAMPLE),
         "Add an example: a command, a code snippet or a concrete case."),
    ],
    "artifact": [
        ("content", lambda text, facts, words: text.has_code() or text.has_place(),
         "Include the artifact itself (a code block) or where it lives (a path or URL)."),
        ("usage", lambda text, facts, words: text.has(*_USAGE),
         "Say how to use it: a `## Usage` section with the command or call."),
    ],
    "breadcrumb": [
        ("location", lambda text, facts, words: text.has_code() or text.has_place(),
         "Name the place it points to: a path, URL, command or [[memory]] in backticks or brackets."),
        ("context", lambda text, facts, words: words >= 15,
         "Say in a sentence or two what is there and when to go looking."),
    ],
    "hub": [
        ("overview", lambda text, facts, words: words >= 15,
         "Describe what this hub gathers and how its members relate (15 words or more)."),
        ("members", lambda text, facts, words: facts.members >= 3,
         "Link at least three members to it: memory link MEMBER HUB --label part-of"),
    ],
}
_GRAPH_TESTS = frozenset({"members"})  # tests reading only the graph facts; every other one reads only the text
_GENERIC_CHECKS: list[Any] = [  # the memory-graph kinds: file-summary, discovery, session, task, error
    ("detail", lambda text, facts, words: "\n#" in text.lower or _BLOCK.search(text.lower) is not None,
     "Organise the details under `## ` headings or in a list."),
    ("substance", lambda text, facts, words: words >= 50,
     "Record enough to act on later: 50 words or more."),
]


def _completeness(part: Part, item: Memory | Scored, facts: GraphFacts, words: int, tests: dict[str, bool]) -> None:
    checks = _CHECKS.get(item.type, _GENERIC_CHECKS)
    found, missing = [], []
    for name, test, suggestion in checks:
        if tests[name] if name in tests else test(None, facts, words):
            found.append(name)
        else:
            missing.append(name)
            part.suggestions.append(suggestion.replace("HUB", item.slug))
    part.score = round(part.max * len(found) / len(checks))
    part.note = (f"{item.type}: " + ", ".join([f"has {name}" for name in found] + [f"no {name}" for name in missing]))


# -- entry points -------------------------------------------------------------------------

def hub_suggestion(catalog: Catalog, item: Memory) -> str | None:
    """The hub sharing most tags with `item` (None when no hub shares one)."""
    return queries.hub_sharing_most_tags(catalog, item.slug, [tag for tag in item.tags if isinstance(tag, str)])


def assess_slug(workspace: Workspace, slug: str, scope: str | None = None) -> Quality:
    """The quality of memory `slug` in the most specific scope holding it."""
    from ..ops import lookup, store

    found, _ = store.locate(workspace, slug, scope)
    with open_catalog(workspace, found) as catalog:
        assert catalog is not None
        entry = catalog.get(slug)
        if entry is None:
            raise lookup.absent(found, slug)
        item = memory.read_file(entry.path, found.name, root=found.root)
        return assess(item, GraphView(catalog).facts(slug), hub_hint=hub_suggestion(catalog, item))


def assess_all(workspace: Workspace, scope: str | None = None) -> list[Quality]:
    """The quality of every memory in every readable scope (or one), lowest score first."""
    results: list[Quality] = []
    now = clock.now()
    for target in workspace.readable_scopes(scope):
        with open_catalog(workspace, target) as catalog:
            if catalog is None:
                continue
            view = GraphView(catalog)
            for entry in catalog.entries():
                try:
                    item = memory.read_file(entry.path, target.name, root=target.root)
                except errors.Error:
                    continue  # changed under us; `memory health` reports unreadable files
                results.append(assess(item, view.facts(entry.slug), now=now))
    results.sort(key=lambda result: (result.score, result.scope, result.slug))
    return results
