"""`memory think`: a structured deliberation whose conclusion becomes a decision memory.

The deliberation (question, options with pros and cons) is kept as an artifact memory
tagged `deliberation`; the conclusion becomes a decision memory with its rationale,
trade-offs and the alternatives considered, linked to the deliberation
(decision -deliberated-in-> deliberation, deliberation -concluded-in-> decision).
"""

from __future__ import annotations

from ..base import errors
from . import links, store
from ..model import memory
from ..workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DELIBERATION_TAG = "deliberation"


class Option:
    """One option weighed in a deliberation."""

    __slots__ = ("name", "pros", "cons")

    def __init__(self, name: str, pros: list[str] | None = None, cons: list[str] | None = None) -> None:
        self.name = name.strip()
        self.pros = [item.strip() for item in pros or [] if item.strip()]
        self.cons = [item.strip() for item in cons or [] if item.strip()]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "pros": self.pros, "cons": self.cons}


class Outcome:
    """What `think` wrote."""

    def __init__(self, deliberation: memory.Memory, decision: memory.Memory | None) -> None:
        self.deliberation, self.decision = deliberation, decision

    def as_json(self) -> dict[str, Any]:
        return {"deliberation": self.deliberation.as_json(with_content=False),
                "decision": self.decision.as_json(with_content=False) if self.decision else None}


def _deliberation_text(question: str, options: list[Option], conclusion: str | None) -> str:
    lines = ["## Question", question, "", "## Options"]
    for option in options:
        lines.append(f"### {option.name}")
        lines += [f"- Pro: {pro}" for pro in option.pros] + [f"- Con: {con}" for con in option.cons]
        if not option.pros and not option.cons:
            lines.append("- (no pros or cons given)")
        lines.append("")
    lines += ["## Conclusion", conclusion or "(open: no conclusion yet)", ""]
    return "\n".join(lines)


def _decision_text(question: str, options: list[Option], chosen: Option | None, conclusion: str,
                   deliberation_slug: str) -> str:
    lines = ["## Decision", conclusion, "", "## Context", question, ""]
    lines += ["## Rationale"] + ([f"- {pro}" for pro in chosen.pros] if chosen and chosen.pros else
                                 ["- See the conclusion above."])
    lines += ["", "## Trade-offs"] + ([f"- {con}" for con in chosen.cons] if chosen and chosen.cons else
                                      ["- None recorded."])
    others = [option for option in options if option is not chosen]
    if others:
        lines += ["", "## Alternatives considered"]
        for option in others:
            against = "; ".join(option.cons) if option.cons else "not chosen"
            lines.append(f"- {option.name}: {against}")
    lines += ["", f"Deliberation: [[{deliberation_slug}]]", ""]
    return "\n".join(lines)


def _decision_title(conclusion: str, question: str) -> str:
    first = conclusion.strip().split("\n")[0]
    sentence = first.split(". ")[0].rstrip(".")
    title = sentence if 8 <= len(sentence) <= memory.MAX_TITLE else f"Decision: {question}"
    return title[: memory.MAX_TITLE].strip()


def deliberate(workspace: Workspace, question: str, options: list[Option], *, conclusion: str | None = None,
               choose: str | None = None, tags: list[str] | None = None, scope: str | None = None) -> Outcome:
    """Record a deliberation and, with a conclusion, the decision it led to."""
    question = " ".join(question.split())
    if not question:
        raise errors.InvalidInput("empty question", 'e.g. memory think "Which cache for sessions?"')
    memory.check_content(question)
    if any(not option.name for option in options):
        raise errors.InvalidInput("an option has no name", 'use --option "Redis" --pro "..." --con "..."')
    chosen = None
    if choose is not None:
        chosen = next((option for option in options if option.name.lower() == choose.strip().lower()), None)
        if chosen is None:
            raise errors.InvalidInput(f"--choose {choose!r} is not one of the options",
                                      "options: " + ", ".join(option.name for option in options))
        if not conclusion:
            conclusion = f"Choose {chosen.name}."
    tag_list = list(dict.fromkeys((tags or []) + [DELIBERATION_TAG]))
    title = question if len(question) <= memory.MAX_TITLE - 14 else question[: memory.MAX_TITLE - 17] + "..."
    record = store.write(workspace, store.NewMemory(
        title=f"Deliberation: {title}", type="artifact", tags=tag_list,
        content=_deliberation_text(question, options, conclusion)), scope=scope)
    if not conclusion:
        return Outcome(record, None)
    decision = store.write(workspace, store.NewMemory(
        title=_decision_title(conclusion, question), type="decision",
        tags=[tag for tag in tag_list if tag != DELIBERATION_TAG] or memory.tags_from_title(question, "decision"),
        content=_decision_text(question, options, chosen, conclusion, record.slug)), scope=record.scope)
    links.link(workspace, decision.slug, record.slug, label="deliberated-in", scope=record.scope)
    return Outcome(store.read(workspace, record.slug, scope=record.scope),
                   store.read(workspace, decision.slug, scope=record.scope))
