"""Typed errors raised by `_lib`; scripts render them as `error: ...` plus a hint."""

from __future__ import annotations


class Error(Exception):
    """An expected failure: the operation is refused and nothing was changed.

    `message` is one line saying what went wrong; `hint` says what to do next.
    """

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class InvalidInput(Error):
    """An argument or file content breaks a validation rule."""


class NotFound(Error):
    """A memory, task or file that was asked for does not exist."""


class ScopeUnavailable(Error):
    """A scope was asked for that is disabled, unconfigured or unreachable."""


class Conflict(Error):
    """The operation contradicts the current state (e.g. a slug already taken)."""


class Busy(Error):
    """Another process holds the scope lock for too long."""


class ConfigError(Error):
    """A config.json file is unreadable or violates the config schema."""


class DependencyMissing(Error):
    """A Python package the operation needs is not installed."""


class ProviderUnavailable(Error):
    """The embedding provider cannot serve a request and no fallback applies."""
