"""What a prompt is, told from its text alone: a background task's result, a design question.

The reminder hooks ask this on every prompt: the regular expression (and `re`, some 6 ms to
import) is used only for a prompt holding one of the words every match needs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

DECISION_PROMPT = (r"\b(should (we|i)|which (approach|option|library|framework|database|one)|trade-?offs?|"
                   r"pros and cons|decide|decision|alternatives?|architect\w*|design (choice|decision)|"
                   r"compare .+ (vs|versus|or) |what('s| is) the best (way|approach))\b")
# Text every match of DECISION_PROMPT holds, in lower case (for an ASCII prompt: beyond ASCII, a
# case-insensitive match can also be made of letters such as the long s or the Kelvin sign).
DECISION_WORDS = ("should ", "which ", "trade", "pros and cons", "decide", "decision", "alternative",
                  "architect", "design ", "compare ", "the best ")
_compiled: list[re.Pattern[str]] = []


def is_task_notification(prompt: str) -> bool:
    """A background task's result delivered as a prompt: not the user asking anything."""
    return prompt.lstrip().startswith("<task-notification>")


def is_design_question(prompt: str) -> bool:
    """Whether the prompt asks for a design decision (which option, trade-offs, architecture...)."""
    if prompt.isascii():
        lowered = prompt.lower()
        if not any(word in lowered for word in DECISION_WORDS):
            return False
    if not _compiled:
        import re

        _compiled.append(re.compile(DECISION_PROMPT, re.IGNORECASE))
    return _compiled[0].search(prompt) is not None
