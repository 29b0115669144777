"""The bootstrap hook (SessionStart, async): give the hooks and `memory` a Python that has the plugin's requirements.

Claude Code installs no Python packages for a plugin. Once per session, in the background,
this hook records in $CLAUDE_PLUGIN_DATA/interpreter (see workspace/runtime.py) the first of:

1. the interpreter recorded before, or the one running this hook (python3 from PATH at the
   first session), when it can import requirements.txt: used as it is, never resolved to
   another path (a virtualenv's bin/python is that virtualenv);
2. the plugin's own virtualenv, $CLAUDE_PLUGIN_DATA/venv, when it has them;
3. that virtualenv built (or brought up to date) now with pip from requirements.txt.

When the build fails (offline, no venv module), the running interpreter is recorded with
what it lacks and why, and the build is tried again at the first session after a delay that
grows with each failure (a changed requirements.txt is tried at once). The commands keep
working meanwhile, without the features that need the missing packages (`memory doctor`
says which). After a change, the plugin is byte-compiled with the new interpreter so later
hooks start from cached bytecode. Sessions starting together do not race: one holds the lock,
the others leave.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ..base import errors, fsutil
from ..workspace import runtime
from .state import data_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from .hookio import HookRun

VENV_SECONDS = 120
PIP_SECONDS = 480  # the hook's own timeout (hooks.json) is 600 s


def ensure(run: HookRun) -> None:
    """Record a usable interpreter, unless another session is doing it now."""
    data = data_dir(run.env)
    os.makedirs(data, exist_ok=True)
    try:
        with fsutil.exclusive_lock(data / "bootstrap.lock", timeout=0.0, what="bootstrap"):
            prepare(data, run.log)
    except errors.Busy:
        pass  # another session is preparing it


def prepare(data: Path, log: Callable[[str], None]) -> None:
    record = runtime.read_record(data)
    digest = runtime.requirements_digest()
    _remove_legacy_link(data)
    running = sys.executable
    candidates = [path for path in dict.fromkeys([record.get("python"), running]) if path and _runs(path)]
    results_by_path = {}
    for python in candidates:
        results = runtime.probe(python)
        if not runtime.missing(results):
            return _choose(data, log, record, digest, python, _why_found(data, python))
        results_by_path[python] = results
    lacking = results_by_path.get(running)
    venv = runtime.venv_python(data)
    if venv not in results_by_path and _runs(venv) and not runtime.missing(runtime.probe(venv)):
        return _choose(data, log, record, digest, venv, _why_found(data, venv))
    if record.get("state") == runtime.MISSING and record.get("digest") == digest and \
            time.time() < float(record.get("retryAfter") or 0):
        if record["python"] not in candidates:  # the recorded fallback is gone: record one that runs
            runtime.save(data, {**record, "python": running})
        return  # the last build failed: the next try waits for its time
    error = _build_venv(data)
    built = None if error else runtime.probe(venv)
    if error is None and runtime.missing(built):
        error = f"{venv} was built but still lacks {runtime.describe_missing(built)}"
    if error is None:
        why = (f"the plugin's virtualenv, built from requirements.txt because {running} lacks "
               f"{runtime.describe_missing(lacking)}")
        return _choose(data, log, record, digest, venv, why)
    attempts = int(record.get("attempts") or 0) + 1 if record.get("state") == runtime.MISSING and \
        record.get("digest") == digest else 1
    now = time.time()
    why = f"{running} lacks {runtime.describe_missing(lacking)}, and building the plugin's virtualenv failed"
    runtime.save(data, {"python": running, "state": runtime.MISSING, "why": why, "base": _base(),
                        "missing": runtime.missing(lacking), "error": error, "attempts": attempts, "digest": digest,
                        "checked": now, "retryAfter": now + runtime.retry_delay(attempts)})
    log(f"runtime: {why}: {error} (attempt {attempts}; next try after "
        f"{int(runtime.retry_delay(attempts) // 60)} min)")


def _choose(data: Path, log: Callable[[str], None], record: dict, digest: str, python: str, why: str) -> None:
    if record.get("state") == runtime.READY and record.get("python") == python and record.get("digest") == digest \
            and runtime.recorded_interpreter(data) == python:
        return  # as recorded: nothing to write
    runtime.save(data, {"python": python, "state": runtime.READY, "why": why, "base": _base(), "digest": digest,
                        "checked": time.time()})
    subprocess.run([python, "-m", "compileall", "-q", str(runtime.PLUGIN_ROOT / "scripts"),
                    str(runtime.PLUGIN_ROOT / "hooks")],
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    log(f"runtime ready: {python} ({why})")


def _why_found(data: Path, python: str) -> str:
    if python == runtime.venv_python(data):
        return "the plugin's virtualenv, which has every requirement"
    return f"{python} already has every requirement"


def _base() -> str:
    """The interpreter a virtualenv is built from: the base of the running one when that is a virtualenv."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _runs(python: str) -> bool:
    return os.path.isfile(python) and os.access(python, os.X_OK)


def _starts(python: str) -> bool:
    try:
        return _runs(python) and subprocess.run([python, "-c", ""], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _build_venv(data: Path) -> str | None:
    """Create (or update) $CLAUDE_PLUGIN_DATA/venv with requirements.txt; None when done, else why not."""
    venv = data / runtime.VENV_NAME
    python = runtime.venv_python(data)
    steps = []
    if not _starts(python):
        steps.append([_base(), "-m", "venv", "--clear", str(venv)])  # missing or broken: from scratch
    steps.append([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
                  "-r", str(runtime.REQUIREMENTS)])
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, stdin=subprocess.DEVNULL,
                                  timeout=VENV_SECONDS if "venv" in step[1:3] else PIP_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"`{' '.join(step[:4])}` failed: {exc}"
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
            detail = " / ".join(line.strip() for line in output[-3:]) or f"exit status {done.returncode}"
            return f"`{' '.join(step[:4])}` failed: {detail}"[:600]
    return None


def _remove_legacy_link(data: Path) -> None:
    """Earlier versions recorded the interpreter as a symlink, which hides a virtualenv."""
    legacy = data / "python"
    if legacy.is_symlink():
        fsutil.remove_file(legacy)
