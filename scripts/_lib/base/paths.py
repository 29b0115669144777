"""Where the user's directories are, from an environment (os.environ, or a Workspace's env).

HOME gives the home directory (else the account's); CLAUDE_CONFIG_DIR moves Claude
Code's directory (default ~/.claude), and with it the global memory scope and the plugin's
fallback data directory.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

DATA_ENV = "CLAUDE_MEMORY_DATA"  # the data directory, exported to Claude's Bash tool for bin/memory


def home(env: Mapping[str, str]) -> Path:
    from pathlib import Path

    return Path(_home(env))


def claude_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's directory: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    from pathlib import Path

    return Path(_claude_dir(env))


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The plugin data directory: $CLAUDE_PLUGIN_DATA in hooks, $CLAUDE_MEMORY_DATA in Claude's Bash
    tool (the SessionStart hook exports it), else a directory inside the global memory cache."""
    from pathlib import Path

    return Path(data_directory(env))


# The same as str: the hooks that keep only session state do without pathlib.

def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _claude_dir(env: Mapping[str, str]) -> str:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return os.path.expanduser(configured) if configured else os.path.join(_home(env), ".claude")


def data_directory(env: Mapping[str, str] | None = None) -> str:
    """data_dir() as a str."""
    env = os.environ if env is None else env
    for name in ("CLAUDE_PLUGIN_DATA", DATA_ENV):
        if env.get(name):
            return env[name]
    return os.path.join(_claude_dir(env), "memory", ".cache", "plugin-data")
