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


class ScopeRefused(ScopeUnavailable):
    """A scope whose directory is there but is not used (it leads outside its project, or its
    path is not UTF-8): a command reading every scope says so as it skips it."""


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


class NoSpace(Error):
    """The disk (or quota) holding a scope is full: nothing more can be written there."""


class ReadOnly(Error):
    """A scope lies on a read-only file system or in a directory this user may not write."""


_NO_SPACE = (28, 122)          # ENOSPC, EDQUOT
_READ_ONLY = (30, 13, 1)       # EROFS, EACCES, EPERM


def storage_error(exc: BaseException, where: object) -> Error | None:
    """The typed error for a write refused by the storage (full, read-only), or None.

    Works for OSError and sqlite3's OperationalError alike (the latter only says so in words)."""
    code = getattr(exc, "errno", None)
    text = str(exc).lower()
    if code in _NO_SPACE or "disk is full" in text or "no space" in text:
        return NoSpace(f"no space left on the device holding {where}",
                       "free some space there (`df -h` shows it); reading memories still works, and "
                       "`memory delete` can remove memories to make room")
    if code in _READ_ONLY or "readonly database" in text or "read-only" in text:
        return ReadOnly(f"{where} cannot be written (read-only file system or no permission)",
                        "check the directory's permissions and mount; reading memories still works")
    return None
