"""Fixtures for the Mermaid checker's own tests (see mermaid_check.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # lets mermaid_check import under any --import-mode
    sys.path.insert(0, HERE)

from mermaid_check import MermaidChecker, session_checker  # noqa: E402


@pytest.fixture(scope="session")
def mermaid_checker() -> Iterator[MermaidChecker]:
    """One started checker for the whole session; skips when not installed."""
    yield from session_checker()
