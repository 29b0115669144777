"""The plugin's runtime inside the real Claude Code CLI (2.1.330), offline.

python3 on PATH is a virtualenv without any package (as on a machine whose python3 lacks the
requirements). In the first session, the plugin's async SessionStart hook builds its own
virtualenv (pip installs from a local wheel directory, the namespace having no network), and
`memory doctor --json`, run by the model through Claude's Bash tool once the hook has recorded
the virtualenv, runs in that virtualenv: bin/memory found it through the variable the other
SessionStart hook exported, not through python3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.harness import REPO_ROOT, Session, tool_results

WAIT_FOR_BOOTSTRAP = (  # the Bash tool's command: wait (at most 90 s) for the venv to be recorded, then run doctor
    'for i in $(seq 900); do grep -qs /venv/ "$CLAUDE_MEMORY_DATA/interpreter" && break; sleep 0.1; done; '
    "memory doctor --json")


def registry_env() -> dict[str, str]:
    """The runner's environment without pip settings of its own: pip sees the public index only."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


@pytest.mark.e2e
@pytest.mark.slow
def test_memory_in_claudes_bash_tool_uses_the_venv_the_bootstrap_built(claude_cli: str, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"  # downloaded here, outside the namespace, which has no network
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "-d", str(wheels), "-r",
                    str(REPO_ROOT / "requirements.txt")], check=True, timeout=300, env=registry_env())
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    session = Session(tmp_path, plugin_dirs=[REPO_ROOT], claude=claude_cli)
    env = {"PATH": f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}", "PIP_CONFIG_FILE": os.devnull,
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    run = session.run("check the memory plugin", timeout=240, extra_env=env, extra_args=["--allowedTools", "Bash"],
                      script=[{"name": "Bash", "input": {"command": WAIT_FOR_BOOTSTRAP,
                                                         "description": "Check the memory plugin", "timeout": 120000}}])
    assert run.returncode == 0, run.describe()
    [result] = tool_results(run.model_requests[-1])
    assert not result.is_error, result.text
    report = json.loads(result.text[result.text.index("{"):])
    data = session.home / ".claude" / "plugins" / "data" / "memory-inline"
    venv = str(data / "venv" / "bin" / "python")
    interpreter = report["interpreter"]
    assert (interpreter["path"], interpreter["reason"], interpreter["dataDir"]) == (venv, "recorded", str(data))
    assert interpreter["why"].startswith(f"the plugin's virtualenv, built from requirements.txt because "
                                         f"{bare / 'bin' / 'python3'} lacks PyYAML (not installed)"), interpreter
    wanted = [line.split(">=")[0].strip() for line in (REPO_ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [(item["name"], item["ok"]) for item in report["packages"]] == [(name, True) for name in wanted]
    assert report["problems"] == 0, report["findings"]
