"""Shared fixtures: an isolated HOME and git project, and a runner for the real scripts.

Every test that uses `env` also gets, at teardown, a schema check of every derived
file the tools wrote (index.json, graph.json, embedding caches, task files, config).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "mermaid"))

from helpers import Env, check_written_files, tmpfs  # noqa: E402
from mermaid_check import session_checker  # noqa: E402


@pytest.fixture(scope="session")
def mermaid_checker() -> Any:
    """The real Mermaid toolchain (Chromium); skips when not installed unless MEMORY_REQUIRE_MERMAID=1."""
    yield from session_checker()


@pytest.fixture
def env(tmp_path: Path) -> Any:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    environment = Env(tmp_path, home, project)
    yield environment
    problems = check_written_files(environment.global_dir, environment.project_dir,
                                   unchecked=environment.unchecked)
    assert not problems, "files written by the tools break their schemas:\n" + "\n".join(problems)


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 2 MiB tmpfs mounted for the test (skipped where mounting is not permitted): room for a small
    store and the catalog's write-ahead log at its peak; the tests fill the rest themselves."""
    with tmpfs(tmp_path, "2m") as mount_point:
        yield mount_point
