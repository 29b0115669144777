"""Pytest wiring for the e2e tests: the ``e2e`` marker, ``sys.path``, and the CLI fixture.

* ``from e2e.harness import ...`` works because ``tests/`` is put on ``sys.path`` here (pytest's
  default import mode does the same, since ``tests/e2e`` is a package and ``tests`` is not).
* Tests that need the CLI take the ``claude_cli`` fixture.  Without the pinned CLI (install:
  ``bash .ci/install-claude-cli.sh``) or without ``unshare -n`` they are skipped, unless
  ``MEMORY_REQUIRE_E2E=1`` is set, which turns that into a failure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from e2e.harness import (  # noqa: E402
    CLI_VERSION,
    REQUIRE_ENV,
    e2e_required,
    find_claude,
    netns_available,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end-to-end test driving the real Claude Code CLI offline (tests/e2e)")


def _unavailable(reason: str) -> None:
    """Skip, or fail when MEMORY_REQUIRE_E2E=1."""
    if e2e_required():
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1 makes this a failure)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """Path of the pinned Claude Code CLI; skips (or fails) when it cannot be used here."""
    path = find_claude()
    if path is None:
        _unavailable("Claude Code CLI not installed: run `bash .ci/install-claude-cli.sh`")
    assert path is not None
    version = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=60).stdout.split(" ", 1)[0].strip()
    if version != CLI_VERSION:
        _unavailable(f"Claude Code CLI at {path} is {version or 'unknown'}, "
                     f"expected {CLI_VERSION}: rerun `bash .ci/install-claude-cli.sh`")
    if not netns_available():
        _unavailable("cannot create a network namespace (`unshare -n` failed)")
    return path


@pytest.fixture(scope="session")
def probe_plugin() -> Path:
    """The test-only probe plugin (tests/e2e/fixtures/probe-plugin)."""
    return Path(__file__).resolve().parent / "fixtures" / "probe-plugin"
