"""What memory tells Claude on its own: the session-start summary and per-prompt context.

Both are bounded by token budgets from config (`injection.*`), counted with
`text.estimate_tokens` (one token per 3.5 characters, rounded up: conservative for
English and code) and never exceeded. Archived and superseded memories are never
injected. Every item shows its age, so stale knowledge is visible.
"""

from __future__ import annotations

import math
import re

from ..base import fsutil, text
from ..model import memory
from ..catalog import queries
from ..base.clock import age
from ..ops import search
from ..ops.entrypoint import MANUAL_PLACEHOLDER, manual_section
from ..catalog.catalog import Catalog, Entry, open_catalog
from ..workspace.scopes import Workspace
from . import codestate, output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

PRIORITY_TYPES = ("decision", "gotcha", "hub", "learning", "artifact", "breadcrumb", "discovery", "file-summary",
                  "error", "task", "session")
MIN_COVERAGE = 0.1     # share of the prompt's informative weight a memory must match to be injected
MIN_TERMS = 2          # ... and at least this many distinct prompt words
COMMON_WORD_SHARE = 0.5  # a prompt word in more than half of the memories does not select any
PROMPT_FILLER = frozenset("ok okay yes yeah yep nope sure please thanks thank hi hello hey great good cool nice "
                          "lgtm continue proceed ahead next again now just let lets alright fine done".split())
_FILLER_PHRASES = re.compile(r"\b(go ahead|let'?s go|sounds good|looks good|thank you|what'?s next)\b")


class Budget:
    """Collects lines until the token budget, or the hooks' hard character limit, would be
    exceeded; the text ends with what was left out and the command that shows it."""

    def __init__(self, tokens: int) -> None:
        self.tokens = max(tokens, 0)
        self.lines: list[str] = []
        self.used = 0
        self.chars = 0
        self.left_out: list[tuple[int, str]] = []

    def add(self, line: str) -> bool:
        cost = text.estimate_tokens(line + "\n")
        if self.used + cost > self.tokens or self.chars + len(line) + 1 > output.HARD_LIMIT:
            return False
        self.lines.append(line)
        self.used += cost
        self.chars += len(line) + 1
        return True

    def leave_out(self, count: int, command: str) -> None:
        """`count` items did not fit; `command` shows them."""
        if count > 0:
            self.left_out.append((count, command))

    def fits(self, candidate: str) -> bool:
        return text.estimate_tokens(candidate) <= self.tokens and len(candidate) <= output.HARD_LIMIT

    def text(self) -> str:
        return output.fit(self.lines, self.left_out, self.fits)


def _catalogs(workspace: Workspace) -> Iterable[Catalog]:
    for scope in workspace.readable_scopes():
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is not None:
                catalog.refresh_if_moved()
                yield catalog


def _active(entries: Iterable[Entry]) -> list[Entry]:
    return [entry for entry in entries if entry.status == "active"]


# -- session start ----------------------------------------------------------------------------

SECTION_COMMANDS = {"Key decisions": "memory list --type decision", "Hubs": "memory list --type hub",
                    "Open tasks": "memory task list", "Recent": "memory query --recent 8",
                    "Last session": "memory list --type session --limit 1",
                    "Project context": "cat .claude/memory/index.md"}  # what shows a section in full


def session_start(workspace: Workspace, *, open_tasks: list[str] | None = None, extra: str = "") -> str:
    """A compact summary of what memory holds, within `injection.session_start_max_tokens`.
    Memories whose anchored code is gone are named as possibly obsolete instead of listed."""
    budget = Budget(int(workspace.config.get("injection.session_start_max_tokens", 500)))
    counts: list[str] = []
    decisions: list[Entry] = []
    hubs: list[tuple[Entry, int]] = []
    recent: list[Entry] = []
    sessions: list[Entry] = []
    manual = ""
    for catalog in _catalogs(workspace):
        rows = queries.counts_by_type(catalog)
        if not rows:
            continue
        total = sum(count for _, count in rows)
        counts.append(f"{catalog.scope.name} {total} (" + ", ".join(f"{count} {kind}" for kind, count in rows) + ")")
        decisions += _active(catalog.entries(types=["decision"], order="updated", descending=True, limit=5))
        for hub in _active(catalog.entries(types=["hub"], order="updated", descending=True, limit=5)):
            hubs.append((hub, sum(1 for _ in catalog.edges(hub.slug))))
        recent += _active(catalog.entries(order="updated", descending=True, limit=8))
        sessions += catalog.entries(types=["session"], order="updated", descending=True, limit=1)
        index_md = catalog.scope.root / "index.md"
        if not manual and catalog.scope.name == "project" and fsutil.escapes(index_md, catalog.scope.root) is None:
            try:
                manual = manual_section(index_md.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                manual = ""
    if not counts and not open_tasks and not extra:
        return ""
    found = codestate.states(workspace, [*decisions, *recent])
    obsolete = list({codestate.key(entry): entry for entry in [*decisions, *recent]
                     if codestate.is_gone(entry, found)}.values())
    decisions = [entry for entry in decisions if not codestate.is_gone(entry, found)]
    recent = [entry for entry in recent if not codestate.is_gone(entry, found)]
    budget.add("# Memory (persistent notes from earlier sessions; `memory search <words>`, `memory read <slug>`)")
    if counts:
        budget.add("Memories: " + "; ".join(counts) + ".")
    if extra:
        for line in extra.splitlines():
            budget.add(line)
    sections = []
    if manual and manual != MANUAL_PLACEHOLDER:
        sections.append(("Project context", manual.splitlines()[:12], manual.startswith("#")))
    sections += [
        ("Key decisions", [f"- {entry.title} [{entry.slug}] ({age(entry.updated)}){codestate.mark(entry, found)}"
                           for entry in sorted(decisions, key=lambda item: item.updated, reverse=True)[:5]], False),
        ("Hubs", [f"- {entry.title} [{entry.slug}], {count} linked" for entry, count in hubs[:4]], False),
        ("Open tasks", [f"- {item}" for item in (open_tasks or [])[:6]], False),
        ("Recent", [f"- [{entry.type}] {entry.title} [{entry.slug}] ({age(entry.updated)}){codestate.mark(entry, found)}"
                    for entry in sorted(recent, key=lambda item: item.updated, reverse=True)[:6]
                    if entry.type != "session"], False),
        ("Last session", [f"- {entry.title} [{entry.slug}] ({age(entry.updated)})" for entry in sessions[:1]], False),
        ("", codestate.obsolete_notice(obsolete), True),
    ]
    for heading, lines, headed in sections:
        if not lines:
            continue
        if not headed and not budget.add(f"## {heading}"):
            budget.leave_out(len(lines), SECTION_COMMANDS.get(heading, "memory verify --all"))
            continue
        for index, line in enumerate(lines):
            if not budget.add(line):
                budget.leave_out(len(lines) - index, SECTION_COMMANDS.get(heading, "memory verify --all"))
                break
    return budget.text()


# -- per prompt ------------------------------------------------------------------------------

# Each alternative starts only where its run of characters starts (what a later start could match,
# the run's start matches too): without that, a long word with no `/` or extension in it (a pasted
# blob) is scanned again from each of its positions, quadratic time.
_PATHISH = re.compile(r"(?<![\w.-])(?:[\w.-]+/)+[\w.-]+"
                      r"|(?<![\w-])[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|md|json|ya?ml|toml|sql|sh|c|h|cpp|cs)\b")


_IDENTIFIER = re.compile(r"(?<![\w$/.-])[A-Za-z_$][\w$]{3,}")
SYMBOL_MAX_DF = 20  # a symbol whose words are in more memories than this names nothing in particular


def prompt_symbols(prompt: str) -> list[str]:
    """Code identifiers a prompt names: camelCase / PascalCase or snake_case words."""
    return list(dict.fromkeys(name for name in _IDENTIFIER.findall(prompt)
                              if re.search(r"[a-z][A-Z]", name) or "_" in name.strip("_")))


class Candidate:
    __slots__ = ("entry", "score", "reason")

    def __init__(self, entry: Entry, score: float, reason: str) -> None:
        self.entry, self.score, self.reason = entry, score, reason


def prompt_terms(prompt: str) -> list[str]:
    """The words of a prompt that can point at a memory (conversational filler removed)."""
    return text.query_terms(_FILLER_PHRASES.sub(" ", prompt.lower()))


def relevant(workspace: Workspace, prompt: str, *, limit: int = 5) -> list[Candidate]:
    """Memories relevant enough to a prompt to inject, best first (empty when nothing is).

    Candidates come in keyword (BM25) order; one is kept when it matches at least two
    of the prompt's informative words carrying MIN_COVERAGE of their weight, or one word
    that is its tag or in its title (for prompts of one or two informative words). File
    paths and code identifiers named in the prompt bring the memories naming them.
    """
    terms = [term for term in prompt_terms(prompt) if term not in PROMPT_FILLER]
    paths = {match.group(0).lower().lstrip("./") for match in _PATHISH.finditer(prompt)}
    symbols = prompt_symbols(prompt)
    found: dict[tuple[str, str], Candidate] = {}
    for catalog in _catalogs(workspace):
        count = queries.count(catalog)
        if not count:
            continue
        # How informative each prompt word is here: words absent from memory carry no weight.
        common = COMMON_WORD_SHARE if count >= 40 else None  # in a tiny store every word looks common
        idf = {}
        for term in terms:
            df = queries.document_frequency(catalog, term)
            if df and (common is None or df <= common * count):
                idf[term] = math.log(1 + (count - df + 0.5) / (df + 0.5))
        total = sum(idf.values())
        ranked = search.rank(catalog, " ".join(idf), limit=limit * 4, max_df=common) if idf else []
        candidates = ranked[: limit * 4]
        entries = catalog.get_many(slug for slug, _ in candidates)
        held = queries.terms_held_by(catalog, [slug for slug, _ in candidates], idf)
        for slug, score in candidates:
            entry = entries.get(slug)
            if entry is None or entry.status != "active" or entry.type == "session":
                continue
            matched = held.get(slug, set())
            coverage = sum(idf[term] for term in matched) / total if total else 0.0
            named = matched & (set(entry.tags) | set(text.tokens(entry.title)))
            if (len(matched) >= MIN_TERMS and coverage >= MIN_COVERAGE) or (named and len(idf) == 1 and len(terms) <= 2):
                reason = "matches " + ", ".join(sorted(matched)[:4])
                found.setdefault((entry.scope, slug), Candidate(entry, score, reason))
        for name in symbols:  # memories that name a symbol of the prompt (`verifyToken`, `charge_card`)
            for entry in _naming(catalog, name):
                found.setdefault((entry.scope, entry.slug), Candidate(entry, 1e6, f"names {name}"))
        for path in paths:  # file summaries of files the prompt names
            for entry in catalog.entries(types=["file-summary"]):
                source = str(entry.extra.get("path") or "").lower().lstrip("./")
                if source and entry.status == "active" and (source.endswith(path) or path.endswith(source)):
                    found[(entry.scope, entry.slug)] = Candidate(entry, float("inf"), f"about {path}")
    ordered = sorted(found.values(), key=lambda candidate: -candidate.score)
    return ordered[:limit]


def _naming(catalog: Catalog, name: str) -> list[Entry]:
    """Active memories whose text holds the identifier `name` exactly (file summaries list them)."""
    words = text.tokens(name)
    if not words:
        return []
    rarest = min(words, key=lambda word: queries.document_frequency(catalog, word))
    rows = queries.active_holding(catalog, rarest, SYMBOL_MAX_DF + 1)
    if len(rows) > SYMBOL_MAX_DF:
        return []
    pattern = re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")
    named = []
    for slug in rows:
        entry = catalog.get(slug)
        try:
            if entry is not None and pattern.search(entry.path.read_text(encoding="utf-8")):
                named.append(entry)
        except (OSError, UnicodeDecodeError):
            continue
    return named


def prompt_context(workspace: Workspace, prompt: str, seen: dict[str, str],
                   session_state: dict | None = None) -> tuple[str, dict[str, str]]:
    """(text to inject, memories shown now as {scope:slug: content hash}) for one prompt.

    `seen` holds what this session was already shown; a memory comes again only if it changed.
    A memory whose anchored code is gone is named as possibly obsolete (once per session, recorded
    in `session_state`), not given as advice; one whose code changed carries a marker.
    """
    limit = int(workspace.config.get("injection.max_nodes_per_query", 5))
    budget = Budget(int(workspace.config.get("injection.prompt_max_tokens", 1000)))
    if limit <= 0:
        return "", {}
    shown: dict[str, str] = {}
    candidates = [candidate for candidate in relevant(workspace, prompt, limit=limit * 2)
                  if seen.get(f"{candidate.entry.scope}:{candidate.entry.slug}") != candidate.entry.content_hash]
    found = codestate.states(workspace, [candidate.entry for candidate in candidates[:limit]])
    obsolete = [candidate.entry for candidate in candidates[:limit] if codestate.is_gone(candidate.entry, found)]
    candidates = [candidate for candidate in candidates if not codestate.is_gone(candidate.entry, found)]
    notice = codestate.obsolete_notice(obsolete, session_state)
    if not candidates and not notice:
        return "", {}

    chosen = candidates[:limit]
    if chosen:
        budget.add("Relevant memories (from earlier sessions; `memory read <slug>` for the full text):")
    for index, candidate in enumerate(chosen):
        entry = candidate.entry
        head = (f"- [{entry.type}] {entry.title} [{entry.slug}, {entry.scope}, updated {age(entry.updated)}]"
                f"{codestate.mark(entry, found)}")
        if not budget.add(head):
            budget.leave_out(len(chosen) - index, "memory search " + output.shell_quote(" ".join(prompt_terms(prompt)[:8])))
            break
        detail = memory.summary_of_file(entry.path, width=400)
        if detail:
            budget.add(f"  {detail}")
        shown[f"{entry.scope}:{entry.slug}"] = entry.content_hash
    for line in notice:
        budget.add(line)
    if not shown and not notice:
        return "", {}
    return budget.text(), shown
