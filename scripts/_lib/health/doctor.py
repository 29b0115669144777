"""`memory doctor`: is the plugin set up to work here, and if not, the command that fixes it.

Sections: the interpreter (and why it was chosen), the runtime packages, the embedding
provider, each scope (directory, memories, layout, derived files), the hook log's errors.

Severities: a **problem** keeps something from working (a missing package, a failed
virtualenv build, a scope that cannot be written, a hook that crashed lately): doctor exits
1. A **warning** is something the plugin works around (no embedding provider: keyword search;
derived files behind: the next command rewrites them). Every finding carries its fix.
Nothing is changed, except what any read does: the remembered state of the embedding
provider and the scopes' search catalog.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import sys
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

    from ..workspace.scopes import Scope, Workspace

from ..base import errors
from ..workspace import layout, runtime

PROBLEM, WARNING = "problem", "warning"
PROVIDER_SECONDS = 2.0      # longest wait for an embedding provider that has no remembered state
RECENT_ERRORS = 7 * 86400   # hook crashes this recent are problems; older ones are history
SHOWN_LOG_ERRORS = 5
HOOK_LOG = "hooks.log"
# What stops working without a runtime requirement (by lowercase name); others: that package's features.
AFFECTS = {"pyyaml": "frontmatter in YAML the plugin's own parser does not handle (hand-written files) "
                     "cannot be read",
           "requests": "semantic search through Ollama or an OpenAI-compatible server falls back to keyword search",
           "huggingface_hub": "the embedded provider's model cannot be downloaded (a model already in the cache, "
                              "or a local model directory, still works)"}
_LOG_LINE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (\S+): (.*)")
_CRASH = re.compile(r"[A-Za-z_][\w.]*: .* \| ")  # run_hook's record of an exception: "Type: message | trace"


class Finding:
    """Something that needs fixing (problem) or is worked around (warning), and the command that fixes it."""

    __slots__ = ("section", "severity", "message", "fix")

    def __init__(self, section: str, severity: str, message: str, fix: str) -> None:
        self.section, self.severity, self.message, self.fix = section, severity, message, fix

    def as_json(self) -> dict[str, str]:
        return {"section": self.section, "severity": self.severity, "message": self.message, "fix": self.fix}


class Report:
    """Each section's facts (`sections`: name -> JSON-ready data) and every finding."""

    def __init__(self) -> None:
        self.sections: dict[str, Any] = {}
        self.findings: list[Finding] = []

    def add(self, section: str, severity: str, message: str, fix: str) -> None:
        self.findings.append(Finding(section, severity, message, fix))

    def count(self, severity: str) -> int:
        return sum(finding.severity == severity for finding in self.findings)

    @property
    def ok(self) -> bool:
        return self.count(PROBLEM) == 0

    def of(self, section: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.section == section]

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": self.count(PROBLEM), "warnings": self.count(WARNING), **self.sections,
                "findings": [finding.as_json() for finding in self.findings]}


def check(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Report:
    """Examine everything; never raises for what it finds."""
    from ..workspace.scopes import Workspace

    env = os.environ if env is None else env
    report = Report()
    data = runtime.data_dir(env)
    record = runtime.read_record(data)
    _interpreter(report, env, data, record)
    _packages(report, data, record, env)
    try:
        workspace = Workspace(cwd, env)
    except errors.ConfigError as exc:
        report.add("config", PROBLEM, exc.message, exc.hint or "fix the file named above (`memory config` shows "
                                                               "each setting and the file it comes from)")
        workspace = Workspace(cwd, env, load_config=False)
    _embedding(report, workspace)
    _scopes(report, workspace)
    _hook_log(report, data)
    return report


# -- the interpreter and its packages ----------------------------------------------------

def _in_plugin(env: Mapping[str, str], record: dict[str, Any]) -> bool:
    return bool(record) or any(env.get(name) for name in ("CLAUDE_PLUGIN_DATA", runtime.DATA_ENV))


def _interpreter(report: Report, env: Mapping[str, str], data: Path, record: dict[str, Any]) -> None:
    running = sys.executable
    checkout_venv = str(runtime.PLUGIN_ROOT / ".venv" / "bin" / "python")
    if record.get("python") == running:
        reason, why = "recorded", record.get("why") or "recorded by the plugin's bootstrap hook"
    elif env.get("CLAUDE_MEMORY_PYTHON") == running:
        reason, why = "CLAUDE_MEMORY_PYTHON", "CLAUDE_MEMORY_PYTHON names it"
    elif running == checkout_venv:
        reason, why = "checkout-venv", "the checkout's .venv, which bin/memory prefers to python3"
    else:
        reason, why = "started", ("the interpreter this command was started with (bin/memory: python3 from PATH "
                                  "when nothing else is recorded)")
    report.sections["interpreter"] = {
        "path": running, "version": ".".join(map(str, sys.version_info[:3])), "reason": reason, "why": why,
        "dataDir": str(data), "recorded": record or None}
    if record and record.get("python") != running and reason != "CLAUDE_MEMORY_PYTHON":
        report.add("interpreter", WARNING, f"the plugin's bootstrap hook recorded {record.get('python')}, but "
                   f"{running} runs this command",
                   f"start a new Claude Code session (it tells `memory` where the record is), or run "
                   f"`{runtime.DATA_ENV}={runtime.quote(str(data))} memory doctor`")
    if record.get("state") == runtime.MISSING:
        retry = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(record.get("retryAfter") or 0)))
        report.add("interpreter", PROBLEM,
                   f"the plugin could not build its virtualenv (attempt {record.get('attempts', 1)}): "
                   f"{record.get('error') or 'unknown error'}; the next session after {retry} tries again",
                   _build_fix(data, record))


def _build_fix(data: Path, record: dict[str, Any]) -> str:
    """Build the plugin's virtualenv by hand (the next session records it)."""
    command = runtime.build_command(data, record.get("base"))
    if "ensurepip" in str(record.get("error")):  # Debian/Ubuntu ship the venv module separately
        version = ".".join(map(str, sys.version_info[:2]))
        command = f"sudo apt install python{version}-venv && {command}"
    return command + "  (the next session uses it)"


def _packages(report: Report, data: Path, record: dict[str, Any], env: Mapping[str, str]) -> None:
    results = runtime.probe(sys.executable)
    report.sections["packages"] = results if results is not None else []
    if results is None:
        report.add("packages", PROBLEM, f"{sys.executable} did not run the check of its packages",
                   f"run `{runtime.quote(sys.executable)} -m site` to see why it fails with its site-packages")
        return
    lacking = [item for item in results if not item.get("ok")]
    if not lacking:
        return
    if _in_plugin(env, record):
        fix = _build_fix(data, record)
    elif _in_virtualenv_with_pip():
        fix = f"{runtime.quote(sys.executable)} -m pip install -r {runtime.quote(str(runtime.REQUIREMENTS))}"
    else:
        fix = runtime.checkout_command() + "  (bin/memory uses the checkout's .venv)"
    for item in lacking:
        affects = AFFECTS.get(item["name"].lower(), "")
        report.add("packages", PROBLEM, f"{item['name']} {item.get('wanted') or ''}".rstrip()
                   + f": {item.get('problem')}" + (f"; meanwhile {affects}" if affects else ""), fix)


def _in_virtualenv_with_pip() -> bool:
    """Whether this interpreter is a virtualenv's, with pip: the one place `pip install` may go (PEP 668)."""
    folder = os.path.dirname(sys.executable)
    return os.path.isfile(os.path.join(os.path.dirname(folder), "pyvenv.cfg")) and os.path.exists(
        os.path.join(folder, "pip"))


# -- the embedding provider --------------------------------------------------------------

def _embedding(report: Report, workspace: Workspace) -> None:
    from ..vectors import embedder as embed

    embedder = embed.Embedder(workspace)
    settings = embedder.settings
    section: dict[str, Any] = {"provider": settings.provider, "endpoint": settings.endpoint, "model": settings.model,
                               "reachable": None, "remembered": False, "status": None, "error": None}
    report.sections["embedding"] = section
    if embedder.disabled:
        return
    settings.timeout = min(settings.timeout, PROVIDER_SECONDS)
    try:
        status = embedder.ready()
    except embed.Unavailable as exc:
        section.update(reachable=False, remembered=exc.remembered, error=exc.as_json())
        if "is not installed" in exc.message:
            fix = "install the missing packages (Packages above)"
        else:
            fix = "; ".join(exc.steps) if exc.steps else (exc.hint or "check embedding.* with `memory config`")
        report.add("embedding", WARNING, f"{exc.message} (semantic search falls back to keyword search)", fix)
        return
    section.update(reachable=True, status=status.as_json())


# -- scopes and their derived files ------------------------------------------------------

def _scopes(report: Report, workspace: Workspace) -> None:
    found = []
    for scope in workspace.readable_scopes():
        found.append(_scope(report, workspace, scope))
    for warning in workspace.warnings:
        report.add("scopes", WARNING, warning, "`memory config scopes` shows the scope settings (README: Where "
                                               "memories live)")
    report.sections["scopes"] = found


def _scope(report: Report, workspace: Workspace, scope: Scope) -> dict[str, Any]:
    from ..catalog.edges import graph_text
    from ..catalog import catalog as index

    root = scope.root
    item: dict[str, Any] = {"scope": scope.name, "path": str(root), "exists": root.is_dir(),
                            "writable": scope.root_writable, "memories": 0, "files": 0, "layout": None,
                            "index": None, "graph": None}
    if not scope.root_writable and scope.name != "enterprise":  # enterprise is read-only for users
        report.add("scopes", PROBLEM, f"the {scope.name} scope ({root}) cannot be written",
                   f"give yourself write access: chmod u+w {runtime.quote(str(_existing(root)))}")
    if not item["exists"]:
        return item
    found = layout.detect(root)
    item["layout"] = found.describe()
    files = index.scan(root)
    item["files"] = len(files)
    with index.open_catalog(workspace, scope, refresh=False) as catalog:
        assert catalog is not None
        entries = {entry.slug: entry for entry in catalog.entries()}
        known = {entry.relpath for entry in entries.values()}
        known |= {problem.path.relative_to(root).as_posix() for problem in catalog.problems()}
        edges = json.loads(graph_text(catalog))
    item["memories"] = len(entries)
    if known != set(files):
        report.add("scopes", WARNING, f"the {scope.name} scope's catalog is behind its {len(files)} memory files "
                   f"({len(known ^ set(files))} not catalogued as they are): any memory command reads them again",
                   f"memory list --scope {scope.name}")
        return item
    if not scope.root_writable:
        return item  # its derived files are kept by whoever writes it
    reindex = f"memory reindex --scope {scope.name}"
    listed = {slug: entry.index_entry() for slug, entry in entries.items()}
    item["index"] = _derived(report, scope.name, root / index.INDEX_NAME, found.index,
                             lambda data: data.get("memories") == listed, bool(entries), reindex)
    item["graph"] = _derived(report, scope.name, root / index.GRAPH_NAME, found.graph,
                             lambda data: data == edges, bool(edges), reindex)
    return item


def _derived(report: Report, scope: str, path: Path, found: str | None, current: Any, expected: bool,
             fix: str) -> dict[str, Any]:
    """The state of index.json or graph.json: absent, current, stale (behind the catalog), foreign or broken."""
    if found is None:
        state = "missing" if expected else "not needed yet"
    elif found == layout.FORMAT_BROKEN:
        state = "broken"
    elif found != layout.FORMAT_OURS:
        state = "foreign"  # another tool's format: read for what it holds, left as it is
    else:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        state = "current" if isinstance(data, dict) and current(data) else "stale"
    if state in ("missing", "broken", "stale"):
        report.add("scopes", WARNING, f"the {scope} scope's {path.name} is {state} "
                   f"({'not valid JSON' if state == 'broken' else 'out of step with the memory files'})", fix)
    return {"path": str(path), "format": found, "state": state}


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


# -- the hook log ------------------------------------------------------------------------

# What a hook logs when something went wrong (hooks/_hook.py and the hooks), and the fix; a hook's
# crash is "Type: message | traceback". The state of a failed build ("runtime:") is the
# interpreter section's; notes and progress lines are not errors.
_LOGGED = (("skipped: ", "the message says what was refused; `memory health` shows the same problem with its fix"),
           ("maintenance skipped: ", "the message says what was refused; `memory health` shows it with its fix"),
           ("config problem", "fix the config file (`memory config` shows each setting and its file)"),
           ("cannot write CLAUDE_ENV_FILE", "check that file's permissions; until then `memory` in Claude's Bash "
                                            "tool runs python3 from PATH"),
           ("runtime:", None))


def _log_kind(message: str) -> tuple[str, str | None] | None:
    """('crash', None), (prefix, fix) for a known error line, or None for any other line."""
    for prefix, fix in _LOGGED:
        if message.startswith(prefix):
            return prefix, fix
    if not message.startswith("note: ") and _CRASH.match(message):
        return "crash", None
    return None


def _hook_log(report: Report, data: Path) -> None:
    path = data / HOOK_LOG
    section: dict[str, Any] = {"path": str(path), "exists": path.is_file(), "errors": [], "total": 0}
    report.sections["hookLog"] = section
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return
    found = []
    for line in text.splitlines():
        match = _LOG_LINE.fullmatch(line.strip())
        if not match:
            continue  # not a line the hooks wrote (a partial write, something pasted in)
        stamp, hook, message = match.groups()
        kind = _log_kind(message)
        if kind is not None:
            try:
                when = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
            except ValueError:
                continue
            found.append(({"time": stamp, "hook": hook, "message": message}, when, kind))
    section["total"] = len(found)
    section["errors"] = [item for item, _, _ in found[-SHOWN_LOG_ERRORS:]]
    for item, when, (kind, fix) in found[-SHOWN_LOG_ERRORS:]:
        if kind == "crash":
            recent = time.time() - when < RECENT_ERRORS
            report.add("hook log", PROBLEM if recent else WARNING,
                       f"{item['time']} {item['hook']} failed: {item['message'].split(' | ', 1)[0]}",
                       f"report it with the lines of {path} (the hook let Claude go on without it); "
                       f"once dealt with: rm {runtime.quote(str(path))}")
        elif fix is not None:
            report.add("hook log", WARNING, f"{item['time']} {item['hook']}: {item['message']}", fix)
