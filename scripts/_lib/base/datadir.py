"""Where the plugin keeps its own data (sessions, the venv record) when no variable says.

Kept apart and tiny: every hook asks for it, and the rest of the runtime checks are not
needed on that path.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping


def fallback_data_dir(env: Mapping[str, str]) -> Path:
    """The data directory when no variable names it: inside the global memory cache."""
    config_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    return Path(config_dir) / "memory" / ".cache" / "plugin-data"
