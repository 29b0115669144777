"""The plugin's runtime: the interpreter the hooks and `memory` run, its packages, `memory doctor`.

Everything runs the real launchers (`sh hooks/run bootstrap`, `bin/memory`) the way Claude Code
runs them. The Python without packages is a `python3 -m venv --without-pip` virtualenv put
first on PATH, as on a machine whose python3 lacks the requirements; the bootstrap hook
builds the plugin's virtualenv from the real package index (the one build is shared by the
module). A failed build uses an index on a closed loopback port. Semantic search talks to the
loopback embedding server of tests/servers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, SERVER_IDLE

sys.path.insert(0, str(REPO / "tests" / "servers"))

from embedding_stub import AUTH_SYNONYMS, EMBED, EmbeddingStub  # noqa: E402

from _lib.base import fsutil
from _lib.workspace import runtime  # noqa: E402

RUN = REPO / "hooks" / "run"
SH = shutil.which("sh") or "/bin/sh"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, connections are refused
AUTH = [("OAuth token refresh fails", "The oauth2 refresh token expires when the session ends."),
        ("Login issues on Safari", "Users could not login because third-party cookies are blocked."),
        ("Auth errors after deploy", "The auth service answered 401 errors until keys rotated.")]
OTHER = [("Postgres vacuum tuning", "Autovacuum thresholds for large tables."),
         ("CSS grid layout tips", "Use grid template areas for page layout.")]


class Machine:
    """A HOME, a git project, a plugin data directory, and a python3 on PATH chosen by the test."""

    def __init__(self, root: Path, python_dir: Path) -> None:
        self.root, self.python_dir = root, python_dir
        self.home, self.project, self.data = root / "home", root / "project", root / "plugin-data"
        for directory in (self.home, self.data):
            directory.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.session_id = str(uuid.uuid4())
        self.bash_env: dict[str, str] = {}  # what SessionStart hooks exported to Claude's Bash tool
        self.pip: dict[str, str] = {}  # pip settings of this machine (none: the public package index)

    def environ(self, **extra: str) -> dict[str, str]:
        """The runner's environment minus Claude's, memory's and pip's own settings (no local wheels or
        mirrors: pip sees only the index the test names), with this machine's HOME and python3."""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("CLAUDE", "MEMORY_", "PIP_"))}
        env.update(HOME=str(self.home), PATH=f"{self.python_dir}{os.pathsep}{env.get('PATH', '')}",
                   PYTHONDONTWRITEBYTECODE="1", PIP_CONFIG_FILE=os.devnull, MEMORY_HOOK_SERVER_IDLE=SERVER_IDLE,
                   **self.pip)
        env.update(extra)
        return env

    def hook(self, name: str, source: str = "startup", **extra: str) -> subprocess.CompletedProcess[str]:
        """`sh hooks/run NAME` with a SessionStart payload, in the environment of a plugin hook."""
        payload = {"session_id": self.session_id, "cwd": str(self.project), "hook_event_name": "SessionStart",
                   "transcript_path": f"{self.home}/.claude/projects/p/{self.session_id}.jsonl", "source": source}
        env = self.environ(CLAUDE_PLUGIN_DATA=str(self.data), CLAUDE_PROJECT_DIR=str(self.project),
                           CLAUDE_PLUGIN_ROOT=str(REPO), MEMORY_HOOK_RAISE="1", **extra)
        done = subprocess.run([SH, str(RUN), name], input=json.dumps(payload), capture_output=True, text=True,
                              cwd=self.project, env=env, timeout=900)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return done

    def start_session(self) -> None:
        """The SessionStart hook that exports variables for the Bash tool (through CLAUDE_ENV_FILE)."""
        env_file = self.root / "session-env" / f"{uuid.uuid4()}.sh"
        env_file.parent.mkdir(exist_ok=True)
        self.hook("start-memory-index", CLAUDE_ENV_FILE=str(env_file))
        for line in env_file.read_text().splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            self.bash_env[name] = subprocess.run([SH, "-c", f"printf %s {value}"], capture_output=True,
                                                 text=True, check=True).stdout

    def memory(self, *args: str, code: int | None = 0, **extra: str) -> subprocess.CompletedProcess[str]:
        """`memory ARGS` as Claude's Bash tool runs it: bin/ on PATH, the exported variables set."""
        env = self.environ(**{**self.bash_env, **extra})
        env["PATH"] = f"{REPO / 'bin'}{os.pathsep}{env['PATH']}"
        done = subprocess.run(["memory", *args], capture_output=True, text=True, cwd=self.project, env=env,
                              timeout=120)
        if code is not None:
            assert done.returncode == code, f"memory {args}: exit {done.returncode}\n{done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def record(self) -> dict[str, Any]:
        return json.loads((self.data / "runtime.json").read_text())

    def recorded(self) -> str:
        return (self.data / "interpreter").read_text()

    @property
    def memory_dir(self) -> Path:
        return self.project / ".claude" / "memory"


def bare_python(where: Path, *options: str) -> Path:
    """A virtualenv made with `options` (--without-pip always); returns its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *options, str(where)], check=True, timeout=120)
    return where / "bin"


OFFLINE_INDEX = {"PIP_INDEX_URL": f"{CLOSED}/simple", "PIP_RETRIES": "0", "PIP_TIMEOUT": "5"}


def set_endpoint(scope_dir: Path, url: str = CLOSED) -> None:
    """The embedding endpoint of a scope's config (by default a closed port: the default endpoint,
    localhost:11434, is never asked)."""
    scope_dir.mkdir(parents=True, exist_ok=True)
    (scope_dir / "config.json").write_text(json.dumps({"embedding": {"endpoint": url}}))


# ----------------------------------------------------------------------------- a python without packages

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Machine:
    """A machine whose python3 has no packages, after the bootstrap hook of its first session."""
    root = tmp_path_factory.mktemp("bare-machine")
    machine = Machine(root, bare_python(root / "bare"))
    lacks = subprocess.run([str(machine.python_dir / "python3"), "-c", "import yaml"], capture_output=True)
    assert lacks.returncode != 0, "the bare interpreter must not see the runner's packages"
    (machine.data / "python").symlink_to(sys.executable)  # what earlier versions recorded
    machine.hook("bootstrap")
    machine.start_session()
    return machine


@pytest.mark.slow
def test_bootstrap_builds_the_plugins_venv_when_python3_lacks_the_requirements(built: Machine) -> None:
    venv = str(built.data / "venv" / "bin" / "python")
    bare = str(built.python_dir / "python3")
    assert built.recorded() == venv + "\n"  # the virtualenv's own bin/python, not a link to it
    record = built.record()
    assert (record["python"], record["state"]) == (venv, "ready"), record
    assert record["why"] == (f"the plugin's virtualenv, built from requirements.txt because {bare} lacks "
                             "PyYAML (not installed), requests (not installed), huggingface_hub (not installed)")
    assert not (built.data / "python").is_symlink()  # the old symlink, which hid the virtualenv, is gone
    assert subprocess.run([venv, "-c", "import yaml, requests"]).returncode == 0
    assert "runtime ready: " + venv in (built.data / "hooks.log").read_text()
    assert built.bash_env == {"CLAUDE_MEMORY_DATA": str(built.data)}


@pytest.mark.slow
def test_memory_semantic_from_claudes_bash_tool_runs_in_the_venv(built: Machine) -> None:
    with EmbeddingStub(synonyms=AUTH_SYNONYMS) as stub:
        set_endpoint(built.memory_dir, stub.url)
        for title, content in AUTH + OTHER:
            built.memory("write", title, "--type", "learning", "--tags", "notes", "--content", content)
        result = json.loads(built.memory("semantic", "authentication problems", "--mode", "semantic", "--limit", "3",
                                         "--json").stdout)
        # semantic mode needs `requests`, which only the virtualenv has
        assert (result["mode"], result.get("reason")) == ("semantic", None), result
        assert {hit["title"] for hit in result["results"]} == {title for title, _ in AUTH}
        assert stub.count(EMBED) > 0
        doctor = json.loads(built.memory("doctor", "--json").stdout)
        assert doctor["interpreter"]["path"] == str(built.data / "venv" / "bin" / "python")
        assert doctor["interpreter"]["reason"] == "recorded"
        assert [item["ok"] for item in doctor["packages"]] == [True] * len(runtime.requirements())
        # the bare python3 itself cannot: semantic search falls back
        fallback = built.memory("semantic", "authentication problems", "--json",
                                CLAUDE_MEMORY_PYTHON=str(built.python_dir / "python3"))
        assert json.loads(fallback.stdout)["mode"] == "keyword-fallback"
        assert "requests is not installed for " + str(built.python_dir / "python3") in fallback.stderr


@pytest.mark.slow
def test_a_later_session_keeps_the_built_venv_without_writing(built: Machine) -> None:
    record = built.data / "runtime.json"
    before = record.read_bytes(), record.stat().st_mtime_ns, (built.data / "interpreter").stat().st_mtime_ns
    built.hook("bootstrap", source="resume")
    after = record.read_bytes(), record.stat().st_mtime_ns, (built.data / "interpreter").stat().st_mtime_ns
    assert after == before


def test_hooks_run_the_recorded_interpreter(tmp_path: Path) -> None:
    machine = Machine(tmp_path, tmp_path / "no-python-here")
    witness = tmp_path / "witness"
    spy = tmp_path / "spy python"  # a space in the path: read as one line, not split
    spy.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{witness}'\nexec '{sys.executable}' \"$@\"\n")
    spy.chmod(0o755)
    (machine.data / "interpreter").write_text(f"{spy}\n")
    machine.hook("start-memory-index")
    assert witness.read_text().splitlines() == ["-S", "-X", "utf8", str(REPO / "hooks" / "start-memory-index.py")]


def venv_with_packages(where: Path) -> Path:
    """The bin directory of a virtualenv that has the requirements: the runner's own when it runs in
    one, else a new one that sees the runner's packages."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.executable).parent
    return bare_python(where, "--system-site-packages")


def test_a_python_that_has_the_packages_is_recorded_as_it_is(tmp_path: Path) -> None:
    """A virtualenv's bin/python3 is recorded as it is, not as the interpreter it links to."""
    python_dir = venv_with_packages(tmp_path / "venv-with-packages")
    machine = Machine(tmp_path, python_dir)
    machine.hook("bootstrap")
    python = str(python_dir / "python3")
    assert os.path.realpath(python) != python
    assert machine.recorded() == python + "\n"
    record = machine.record()
    assert (record["python"], record["state"], record["why"]) == (python, "ready",
                                                                   f"{python} already has every requirement")
    assert not (machine.data / "venv").exists()


def test_a_second_session_leaves_while_the_first_prepares(tmp_path: Path) -> None:
    machine = Machine(tmp_path, Path(sys.executable).parent)
    with fsutil.exclusive_lock(machine.data / "bootstrap.lock", timeout=1.0, what="test"):
        machine.hook("bootstrap")
    assert not (machine.data / "runtime.json").exists() and not (machine.data / "interpreter").exists()


# ----------------------------------------------------------------------------- a failed build

@pytest.fixture
def offline(tmp_path: Path) -> Machine:
    machine = Machine(tmp_path, bare_python(tmp_path / "bare"))
    machine.pip = OFFLINE_INDEX
    set_endpoint(machine.memory_dir)
    return machine


@pytest.mark.slow
def test_a_failed_build_is_recorded_waits_and_is_retried_at_a_later_session(offline: Machine) -> None:
    bare = str(offline.python_dir / "python3")
    offline.hook("bootstrap")
    record = offline.record()
    assert (record["python"], record["state"], record["attempts"]) == (bare, "missing", 1), record
    assert record["missing"] == ["PyYAML", "requests", "huggingface_hub"]
    assert "pip install" in record["error"], record["error"]
    assert record["retryAfter"] - record["checked"] == runtime.FIRST_RETRY
    assert offline.recorded() == bare + "\n"  # hooks and memory run meanwhile, without the packages
    assert "and building the plugin's virtualenv failed" in (offline.data / "hooks.log").read_text()

    # the next session within the delay: no new try
    before = (offline.data / "runtime.json").read_bytes()
    offline.hook("bootstrap", source="resume")
    assert (offline.data / "runtime.json").read_bytes() == before

    # memory works meanwhile: keyword search, and semantic search falls back with the reason
    offline.start_session()
    offline.memory("write", "Token rotation schedule", "--type", "decision", "--tags", "auth",
                   "--content", "Rotate signing keys every 90 days.")
    assert "decision-token-rotation-schedule" in offline.memory("search", "rotation").stdout
    semantic = offline.memory("semantic", "rotation", "--json")
    assert json.loads(semantic.stdout)["mode"] == "keyword-fallback"

    # doctor says what is missing and how to fix it
    doctor = offline.memory("doctor", "--json", code=1)
    report = json.loads(doctor.stdout)
    assert report["ok"] is False and report["interpreter"]["path"] == bare
    fix = runtime.build_command(offline.data, record["base"]) + "  (the next session uses it)"
    problems = [(item["section"], item["message"].split(":")[0], item["fix"]) for item in report["findings"]
                if item["severity"] == "problem"]
    assert problems == [("interpreter", "the plugin could not build its virtualenv (attempt 1)", fix),
                        ("packages", "PyYAML >=6.0", fix), ("packages", "requests >=2.28", fix),
                        ("packages", "huggingface_hub >=0.23", fix)], problems
    assert doctor.stderr == "error: memory doctor found 4 problems\nhint: run the fix shown under each problem\n"
    text = offline.memory("doctor", code=1).stdout
    assert "  problem  requests >=2.28: not installed; meanwhile semantic search through Ollama" in text
    assert f"fix: {fix}" in text

    # a later session, still offline: a second try, and a longer wait after it
    record["retryAfter"] = time.time() - 1
    (offline.data / "runtime.json").write_text(json.dumps(record))
    offline.hook("bootstrap")
    again = offline.record()
    assert (again["state"], again["attempts"]) == ("missing", 2)
    assert again["retryAfter"] - again["checked"] == runtime.FIRST_RETRY * 4

    # a later session with the index reachable again: the virtualenv is built and recorded
    again["retryAfter"] = time.time() - 1
    (offline.data / "runtime.json").write_text(json.dumps(again))
    offline.pip = {}
    offline.hook("bootstrap")
    venv = str(offline.data / "venv" / "bin" / "python")
    assert (offline.record()["python"], offline.record()["state"]) == (venv, "ready")
    assert offline.recorded() == venv + "\n"
    report = json.loads(offline.memory("doctor", "--json").stdout)
    assert report["interpreter"]["path"] == venv
    assert [item["severity"] for item in report["findings"]] == ["warning"]  # only: no embedding provider


# ----------------------------------------------------------------------------- memory doctor in a checkout

def test_doctor_in_a_checkout(env: Any) -> None:
    with EmbeddingStub() as stub:
        set_endpoint(env.project_dir, stub.url)
        env.ok("write", "Use OAuth2", "--type", "decision", "--tags", "auth", "--content", "OAuth2 with PKCE.")
        result = env.ok("doctor")
        report = env.ok("doctor", "--json").json()
    assert result.err == ""
    text = result.out
    assert text.startswith("Memory doctor: 0 problems, 0 warnings\n"), text
    for heading in ("Interpreter", "Packages", "Embedding provider", "Scopes", "Hook log"):
        assert f"\n\n{heading}" in text, heading
    assert f"  {sys.executable} (Python {'.'.join(map(str, sys.version_info[:3]))})" in text
    assert "  chosen: CLAUDE_MEMORY_PYTHON names it" in text
    assert "  embedding.provider auto: ollama embeds with embeddinggemma" in text
    assert "  why: auto: Ollama is the first provider that works" in text
    assert f"  project    {env.project_dir}\n             1 memory, writable; this plugin's flat layout" in text
    assert report["ok"] is True and report["findings"] == []
    assert report["interpreter"]["reason"] == "CLAUDE_MEMORY_PYTHON" and report["interpreter"]["recorded"] is None
    assert [(item["name"], item["ok"]) for item in report["packages"]] == [
        (requirement.name, True) for requirement in runtime.requirements()]
    assert report["embedding"]["reachable"] is True
    project = next(scope for scope in report["scopes"] if scope["scope"] == "project")
    assert (project["memories"], project["files"], project["writable"]) == (1, 1, True)
    assert project["index"]["state"] == "current" and project["index"]["format"] == "ours"
    assert report["hookLog"]["errors"] == []


def test_doctor_reports_derived_files_out_of_step(env: Any) -> None:
    set_endpoint(env.project_dir)
    env.ok("write", "Use OAuth2", "--type", "decision", "--content", "OAuth2 with PKCE.")
    env.write_broken(env.project_dir / "index.json", '{"memories": {"decision-use-oauth2": {"slug": "x"}}')
    report = env.ok("doctor", "--json").json()
    project = next(scope for scope in report["scopes"] if scope["scope"] == "project")
    assert project["index"]["state"] == "broken"
    assert {"section": "scopes", "severity": "warning",
            "message": "the project scope's index.json is broken (not valid JSON)",
            "fix": "memory reindex --scope project"} in report["findings"]
    env.write_broken(env.project_dir / "index.json", '{"version": "1.0.0", "memories": {}}')
    project = next(scope for scope in env.ok("doctor", "--json").json()["scopes"] if scope["scope"] == "project")
    assert project["index"]["state"] == "stale"
    env.ok("reindex", "--scope", "project")
    project = next(scope for scope in env.ok("doctor", "--json").json()["scopes"] if scope["scope"] == "project")
    assert project["index"]["state"] == "current"


def test_doctor_reads_a_store_of_the_earlier_plugin_and_changes_nothing(env: Any) -> None:
    import predecessor_store

    store = predecessor_store.build(env.project_dir, memories=20, edges=16)
    env.unchecked.update(env.project_dir.rglob("*"))  # its files follow the earlier plugin's schema
    set_endpoint(env.global_dir)
    before = store.snapshot()
    report = env.ok("doctor", "--json").json()  # before any other command: nothing catalogued yet
    assert {"section": "scopes", "severity": "warning",
            "message": "the project scope's catalog is behind its 20 memory files (20 not catalogued as they are): "
                       "any memory command reads them again",
            "fix": "memory list --scope project"} in report["findings"]
    env.ok("list", "--scope", "project")
    report = env.ok("doctor", "--json").json()
    assert store.snapshot() == before
    project = next(scope for scope in report["scopes"] if scope["scope"] == "project")
    assert project["layout"].startswith("the earlier plugin's layout (permanent/, temporary/, archive/)")
    assert (project["index"]["state"], project["graph"]["state"]) == ("foreign", "foreign")
    assert (project["memories"], project["files"]) == (len(store.memories), 20)
    assert [item for item in report["findings"] if item["section"] == "scopes"] == []


def hook_log(env: Any) -> Path:
    path = env.home / ".claude" / "memory" / ".cache" / "plugin-data" / "hooks.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def stamp(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def test_doctor_reports_a_hook_that_crashed_and_ignores_broken_log_lines(env: Any) -> None:
    set_endpoint(env.project_dir)
    log = hook_log(env)
    crashed = stamp(60)
    crash = (f"{crashed} memory-context.py: KeyError: 'tool_input' | File \"/p/hooks/memory-context.py\", "
             "line 12, in handle / KeyError: 'tool_input'")
    log.write_bytes(f"{stamp(120)} maintenance.py: retention: 2 captured memories archived or removed\n"
                    "garbage without a timestamp: Error: x | y\n".encode() + b"\xff\xfe half a line\n"
                    + f"{crash}\n{stamp(30)} start-memory-index.py: config problem, using defaults: bad\n"
                      f"{stamp(20)} memory-context.py: note: skipping enterprise scope: x | y\n"
                      f"{stamp(10)} memory-context.py: skipped: the project memory directory is a link\n".encode())
    result = env.fails("doctor")
    assert result.err == "error: memory doctor found 1 problem\nhint: run the fix shown under each problem\n"
    assert f"  problem  {crashed} memory-context.py failed: KeyError: 'tool_input'\n" in result.out
    assert f"fix: report it with the lines of {log} (the hook let Claude go on without it); once dealt with: rm {log}" \
        in result.out
    report = env.fails("doctor", "--json").json()
    assert [item["hook"] for item in report["hookLog"]["errors"]] == ["memory-context.py", "start-memory-index.py",
                                                                      "memory-context.py"]
    assert [(item["severity"], item["fix"].split(" ")[0]) for item in report["findings"]
            if item["section"] == "hook log"] == [("problem", "report"), ("warning", "fix"), ("warning", "the")]
    # a crash from last month is history: a warning, and doctor passes
    log.write_text(crash.replace(crashed, stamp(30 * 86400)) + "\n")
    report = env.ok("doctor", "--json").json()
    assert [item["severity"] for item in report["findings"] if item["section"] == "hook log"] == ["warning"]


def test_doctor_with_a_missing_package(env: Any, tmp_path: Path) -> None:
    set_endpoint(env.project_dir)
    python = bare_python(tmp_path / "bare") / "python3"
    result = env.fails("doctor", "--json", env={"CLAUDE_MEMORY_PYTHON": str(python)})
    report = result.json()
    assert report["interpreter"]["path"] == str(python)
    assert [(item["name"], item["problem"]) for item in report["packages"]] == [
        ("PyYAML", "not installed"), ("requests", "not installed"), ("huggingface_hub", "not installed")]
    fix = runtime.checkout_command() + "  (bin/memory uses the checkout's .venv)"
    assert [(item["message"], item["fix"]) for item in report["findings"] if item["section"] == "packages"] == [
        ("PyYAML >=6.0: not installed; meanwhile frontmatter in YAML the plugin's own parser does not handle "
         "(hand-written files) cannot be read", fix),
        ("requests >=2.28: not installed; meanwhile semantic search through Ollama or an OpenAI-compatible server "
         "falls back to keyword search", fix),
        ("huggingface_hub >=0.23: not installed; meanwhile the embedded provider's model cannot be downloaded (a "
         "model already in the cache, or a local model directory, still works)", fix)]
    embedding = [item for item in report["findings"] if item["section"] == "embedding"]
    assert [item["severity"] for item in embedding] == ["warning"]
    assert embedding[0]["message"].endswith("(semantic search falls back to keyword search)")


# ----------------------------------------------------------------------------- requirements: one list

def test_runtime_requirements_are_only_what_the_scripts_import() -> None:
    """Every runtime requirement is a module the scripts load (deps.load); a module loaded only by a
    feature not yet turned on (huggingface_hub, for downloading static models) may wait."""
    imported = set()
    for path in list((REPO / "scripts").rglob("*.py")) + list((REPO / "hooks").glob("*.py")):
        imported |= set(re.findall(r"deps\.load\(\"([\w.]+)\"\)", path.read_text(encoding="utf-8")))
    checked = runtime.check(runtime.requirements())
    assert {"yaml", "requests"} <= {item["module"] for item in checked} <= imported
    assert all(item["ok"] for item in checked), checked
    dev = (REPO / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in dev and any(line.startswith("jsonschema") for line in dev)


def test_pyproject_dependencies_are_requirements_txt() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    listed = [line for line in (REPO / "requirements.txt").read_text().splitlines() if line and line[0] != "#"]
    assert project["dependencies"] == listed


@pytest.mark.parametrize(("line", "version", "accepted"), [
    ("PyYAML>=6.0", "6.0.3", True), ("PyYAML>=6.0", "5.4.1", False), ("requests>=2.28", "2.28", True),
    ("requests>=2.28,<3", "3.0.0", False), ("x==1.2", "1.2.0", True), ("x!=1.2", "1.2", False),
    ("x~=2.28", "2.31.0", True), ("x~=2.28", "3.0", False), ("x>1.0", "1.0.1rc1", True), ("x[extra] >= 1", "1", True),
])
def test_a_requirement_accepts_versions_by_its_specifiers(tmp_path: Path, line: str, version: str,
                                                          accepted: bool) -> None:
    path = tmp_path / "requirements.txt"
    path.write_text(f"# comment\n-r other.txt\n{line}  # why\ntomli>=1; python_version < '3.11'\n\n")
    [requirement] = runtime.requirements(path)
    assert requirement.accepts(version) is accepted


def test_the_wait_after_failed_builds_grows_to_a_day() -> None:
    assert [runtime.retry_delay(attempts) for attempts in (1, 2, 3, 8)] == [300, 1200, 4800, 86400]
