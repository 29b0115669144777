"""What every embedding provider shares: the status of a working one and the error of one that is not.

Kept apart from the providers themselves so the embedded model (imported only when chosen)
and the HTTP providers can both build on it.
"""

from __future__ import annotations

from ..base import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Failures meaning "not set up here" rather than "broken" (Unavailable.kind): no Ollama, the
# embedded model not downloaded (or its download client missing, or no network to get it).
NOT_SET_UP = ("down", "not-downloaded", "missing", "offline", "unreachable")


class Unavailable(errors.ProviderUnavailable):
    """Embeddings cannot be computed now.

    `kind`: disabled, down, timeout, no-model, auth, failed (HTTP error or malformed
    answer) or dimension (vectors whose size differs from the cached ones). `steps`
    are the setup instructions shown when semantic search falls back.
    """

    def __init__(self, kind: str, message: str, hint: str | None = None, steps: list[str] | None = None) -> None:
        super().__init__(message, hint)
        self.kind = kind
        self.steps = steps or []
        self.remembered = False  # replayed from the state file, not observed by this process

    def notice(self) -> str:
        """The message shown when semantic search falls back: what is wrong, how to enable it, and that
        keyword search answers meanwhile."""
        lines = [f"\u26a0\ufe0f Semantic search unavailable: {self.message}", ""]
        if self.steps:
            lines += ["To enable semantic search:"] + [f"  {step}" for step in self.steps] + [""]
        elif self.hint:
            lines += [self.hint[0].upper() + self.hint[1:], ""]
        lines.append("Falling back to keyword search.")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "hint": self.hint, "steps": self.steps}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Unavailable":
        return cls(str(data.get("kind") or "failed"), str(data.get("message") or "the embedding provider failed"),
                   data.get("hint") if isinstance(data.get("hint"), str) else None,
                   [str(step) for step in data.get("steps") or []])


class Status:
    """A working provider: the model it embeds with, how, what it told us, which provider
    it is and why it was chosen."""

    __slots__ = ("model", "api", "dim", "note", "provider", "reason")

    def __init__(self, model: str, api: str, dim: int | None = None, note: str | None = None, *,
                 provider: str = "ollama", reason: str | None = None) -> None:
        self.model, self.api, self.dim, self.note = model, api, dim, note
        self.provider, self.reason = provider, reason

    @property
    def in_process(self) -> bool:
        """Whether the model runs in this process (the embedded provider)."""
        return self.api == "static"

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "api": self.api, "dim": self.dim, "note": self.note,
                "reason": self.reason}
