"""Which Python runs the plugin, and whether it has the runtime requirements.

requirements.txt at the plugin root is the one list of runtime packages: the bootstrap hook
installs it and `probe` checks an interpreter against it, so adding a package there is all
a new dependency needs.

The plugin's data directory ($CLAUDE_PLUGIN_DATA) holds:

  interpreter   one line, the absolute path of the interpreter that hooks/run and bin/memory
                start (they read it with the shell's `read`, no extra process). It is never a
                symlink: Python started through a link to a virtualenv's bin/python does not
                find the virtualenv's pyvenv.cfg, and so none of its packages.
  runtime.json  why that interpreter was chosen, for `memory doctor`, and after a failed
                virtualenv build when the next try is due.

Stdlib only: the bootstrap hook and the probe run it on interpreters without any package.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..base.paths import DATA_ENV, data_dir  # noqa: F401  (where the runtime lives: part of its API)

PLUGIN_ROOT = Path(__file__).resolve().parents[3]
REQUIREMENTS = PLUGIN_ROOT / "requirements.txt"
INTERPRETER_NAME = "interpreter"
RECORD_NAME = "runtime.json"
VENV_NAME = "venv"
RECORD_VERSION = 1
READY, MISSING = "ready", "missing"  # runtime.json `state`: the interpreter has every requirement, or not
FIRST_RETRY = 300.0   # seconds after a failed build before the next session tries again ...
LAST_RETRY = 86400.0  # ... growing fourfold per failure up to this
PROBE_SECONDS = 60.0

_REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)")
_SPECIFIER = re.compile(r"(~=|==|!=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.*+!-]*)")


# -- requirements --------------------------------------------------------------------------

class Requirement:
    """One line of requirements.txt: a distribution name and its version specifiers."""

    __slots__ = ("name", "specifiers")

    def __init__(self, name: str, specifiers: list[tuple[str, str]]) -> None:
        self.name, self.specifiers = name, specifiers

    @property
    def wanted(self) -> str:
        return ",".join(op + version for op, version in self.specifiers)

    def accepts(self, version: str) -> bool:
        have = _release(version)
        for op, bound in self.specifiers:
            want = _release(bound)
            width = max(len(have), len(want))
            left, right = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
            if op == "~=":  # compatible release: >= bound, same release prefix but the last part
                prefix = want[:-1] or want
                ok = left >= right and have[:len(prefix)] == prefix
            else:
                ok = {"==": left == right, "!=": left != right, "<=": left <= right, ">=": left >= right,
                      "<": left < right, ">": left > right}[op]
            if not ok:
                return False
        return True


def _release(version: str) -> tuple[int, ...]:
    """The release numbers of a version ("2.32.3" -> (2, 32, 3); "6.0b1" -> (6, 0))."""
    numbers = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if not digits:
            break
        numbers.append(int(digits.group()))
        if digits.end() != len(part):
            break
    return tuple(numbers)


def requirements(path: Path = REQUIREMENTS) -> list[Requirement]:
    """The requirements listed in `path`. Options (-r, -i ...) are skipped, and so are lines with
    an environment marker: whether they apply is pip's call, not the probe's."""
    found = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return found
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")) or ";" in line:
            continue
        match = _REQUIREMENT.fullmatch(line)
        if match:
            found.append(Requirement(match.group(1), _SPECIFIER.findall(match.group(2))))
    return found


def requirements_digest(path: Path = REQUIREMENTS) -> str:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


# -- checking an interpreter ---------------------------------------------------------------

def check(wanted: list[Requirement]) -> list[dict[str, Any]]:
    """Each requirement in *this* interpreter: installed version, importable, acceptable."""
    import importlib
    import importlib.metadata as metadata

    results = []
    for requirement in wanted:
        item: dict[str, Any] = {"name": requirement.name, "wanted": requirement.wanted, "module": None,
                                "version": None, "ok": False, "problem": None}
        try:
            distribution = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            item["problem"] = "not installed"
            results.append(item)
            continue
        item["version"] = version = distribution.version
        item["module"] = module = _top_module(distribution, requirement.name)
        if not requirement.accepts(version):
            item["problem"] = f"version {version} installed, {requirement.wanted} needed"
        else:
            try:
                importlib.import_module(module)
            except Exception as exc:  # noqa: BLE001 - any failure to import means it is unusable
                item["problem"] = f"installed but `import {module}` fails: {type(exc).__name__}: {exc}"[:300]
            else:
                item["ok"] = True
        results.append(item)
    return results


def _top_module(distribution: Any, name: str) -> str:
    """The module a distribution provides (PyYAML -> yaml): top_level.txt, else its files."""
    listed = (distribution.read_text("top_level.txt") or "").split()
    if not listed:
        for file in distribution.files or []:
            top = str(file).split("/", 1)[0]
            if top.endswith(".py"):
                top = top[:-3]
            if top.isidentifier() and top not in listed:
                listed.append(top)
    public = [module for module in listed if not module.startswith("_")]
    return (public or listed or [name.lower().replace("-", "_")])[0]


def probe(python: str, path: Path = REQUIREMENTS) -> list[dict[str, Any]] | None:
    """`check` run by the interpreter `python` (with its normal site setup); None when it does not run."""
    import subprocess

    code = ("import sys; del sys.path[0]; sys.path.append(sys.argv[1]); "
            "from _lib.workspace import runtime; runtime.probe_main(sys.argv[2])")
    try:
        done = subprocess.run([python, "-c", code, str(PLUGIN_ROOT / "scripts"), str(path)], capture_output=True,
                              timeout=PROBE_SECONDS, cwd=str(PLUGIN_ROOT), stdin=subprocess.DEVNULL)
        results = json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return results if isinstance(results, list) and all(isinstance(item, dict) for item in results) else None


def probe_main(path: str) -> None:
    sys.stdout.write(json.dumps(check(requirements(Path(path)))) + "\n")


def missing(results: list[dict[str, Any]] | None) -> list[str]:
    """The requirements not usable according to `probe`/`check` results (all of them when None)."""
    if results is None:
        return [requirement.name for requirement in requirements()]
    return [item["name"] for item in results if not item.get("ok")]


def describe_missing(results: list[dict[str, Any]] | None) -> str:
    """'PyYAML (not installed), requests (version 2.0 installed, >=2.28 needed)'."""
    if results is None:
        return "its packages could not be checked (it did not run the check)"
    return ", ".join(f"{item['name']} ({item.get('problem') or 'unusable'})" for item in results if not item.get("ok"))


# -- the data directory --------------------------------------------------------------------

def venv_python(data: Path) -> str:
    return str(data / VENV_NAME / "bin" / "python")


def read_record(data: Path) -> dict[str, Any]:
    """runtime.json, or {} when absent, unreadable or from an older bootstrap."""
    try:
        record = json.loads((data / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or not isinstance(
            record.get("python"), str):
        return {}
    return record


def save(data: Path, record: dict[str, Any]) -> None:
    """Write runtime.json and the interpreter file (the interpreter last: the launchers read only it)."""
    from ..base import fsutil

    record = {"version": RECORD_VERSION, **record}
    fsutil.write_atomically(data / RECORD_NAME, json.dumps(record, indent=1) + "\n")
    fsutil.write_atomically(data / INTERPRETER_NAME, record["python"] + "\n")


def recorded_interpreter(data: Path) -> str | None:
    try:
        with open(data / INTERPRETER_NAME, encoding="utf-8") as handle:
            line = handle.readline().rstrip("\n")
    except OSError:
        return None
    return line or None


def retry_delay(attempts: int) -> float:
    """Seconds to wait after the `attempts`-th failed build in a row: 5 min, 20 min, 80 min ... 1 day."""
    return min(FIRST_RETRY * 4 ** max(attempts - 1, 0), LAST_RETRY)


def build_command(data: Path, base: str | None = None) -> str:
    """The shell command that builds the plugin's virtualenv by hand, as the bootstrap hook does."""
    venv = data / VENV_NAME
    return (f"{quote(base or 'python3')} -m venv {quote(str(venv))} && "
            f"{quote(venv_python(data))} -m pip install -r {quote(str(REQUIREMENTS))}")


def checkout_command() -> str:
    """The shell command that gives a checkout (not a plugin install) its own virtualenv, which bin/memory uses."""
    venv = PLUGIN_ROOT / ".venv"
    return (f"python3 -m venv {quote(str(venv))} && "
            f"{quote(str(venv / 'bin' / 'pip'))} install -r {quote(str(REQUIREMENTS))}")


def quote(text: str) -> str:
    """`text` as one shell word."""
    if re.fullmatch(r"[A-Za-z0-9_./:=@%+-]+", text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
