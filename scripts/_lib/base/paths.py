"""Where the user's directories are, from an environment (os.environ, or a Workspace's env).

HOME gives the home directory (else the account's); CLAUDE_CONFIG_DIR moves Claude
Code's directory (default ~/.claude), and with it the global memory scope and the plugin's
fallback data directory.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

DATA_ENV = "CLAUDE_MEMORY_DATA"  # the data directory, exported to Claude's Bash tool for bin/memory


def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def claude_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's directory: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home(env) / ".claude"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The plugin data directory: $CLAUDE_PLUGIN_DATA in hooks, $CLAUDE_MEMORY_DATA in Claude's Bash
    tool (the SessionStart hook exports it), else a directory inside the global memory cache."""
    env = os.environ if env is None else env
    for name in ("CLAUDE_PLUGIN_DATA", DATA_ENV):
        if env.get(name):
            return Path(env[name])
    return claude_dir(env) / "memory" / ".cache" / "plugin-data"
