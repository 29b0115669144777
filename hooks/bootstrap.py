"""SessionStart (async): make sure the scripts have a Python with the plugin's requirements.

Claude Code installs no Python packages for a plugin. This hook, run in the background,
records an interpreter for the hooks and the `memory` command as $CLAUDE_PLUGIN_DATA/python:
the interpreter running it when that one can already import the requirements, else a
virtualenv built in $CLAUDE_PLUGIN_DATA/venv with pip (rebuilt when requirements.txt or
the Python version changes; a failed build is retried next session). It also byte-compiles
the plugin so every later hook starts from cached bytecode.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _hook import HOOKS_DIR, log, run_hook

from _lib import errors, fsutil, session

PLUGIN_ROOT = os.path.dirname(HOOKS_DIR)
REQUIRED = ("yaml", "requests", "jsonschema")


def handle(payload: dict) -> dict | None:
    data = session.data_dir()
    os.makedirs(data, exist_ok=True)
    try:
        with fsutil.exclusive_lock(data / "bootstrap.lock", timeout=0.0, what="bootstrap"):
            prepare(data)
    except errors.Busy:
        pass  # another session is already preparing it
    return None


def prepare(data_path: Path) -> None:
    data = str(data_path)
    with open(os.path.join(PLUGIN_ROOT, "requirements.txt"), "rb") as handle:
        digest = hashlib.sha256(handle.read() + sys.version.encode()).hexdigest()
    record_path = os.path.join(data, "runtime.json")
    link = os.path.join(data, "python")
    try:
        with open(record_path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        record = {}
    if record.get("digest") == digest and os.path.exists(link):
        return
    interpreter = os.path.realpath(sys.executable)
    if not _has_requirements(interpreter):
        interpreter = _build_venv(data) or interpreter
    temporary = f"{link}.{os.getpid()}.tmp"
    os.symlink(interpreter, temporary)
    os.replace(temporary, link)
    fsutil.write_atomically(Path(record_path),
                            json.dumps({"digest": digest, "python": interpreter, "prepared": time.time()}))
    subprocess.run([interpreter, "-m", "compileall", "-q", os.path.join(PLUGIN_ROOT, "scripts"), HOOKS_DIR],
                   capture_output=True, timeout=120, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    log(f"runtime ready: {interpreter}")


def _has_requirements(interpreter: str) -> bool:
    probe = subprocess.run([interpreter, "-c", "import " + ", ".join(REQUIRED)], capture_output=True, timeout=60)
    return probe.returncode == 0


def _build_venv(data: str) -> str | None:
    venv = os.path.join(data, "venv")
    python = os.path.join(venv, "bin", "python")
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True, capture_output=True, timeout=120)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r",
                        os.path.join(PLUGIN_ROOT, "requirements.txt")], check=True, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"could not build {venv}: {exc}; using {sys.executable} (install requirements.txt for full features)")
        return None
    return python if _has_requirements(python) else None


run_hook(handle)
