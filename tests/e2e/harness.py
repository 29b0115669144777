"""Offline end-to-end harness that drives the real Claude Code CLI (stdlib only).

Import it from tests as ``from e2e.harness import ...`` (``tests/e2e/conftest.py`` puts ``tests/``
on ``sys.path``).  Reference: ``shared/reference/claude-code.md`` §11.

How a run works
---------------
``run_session()`` (and :class:`Session`, which chains several runs in one HOME/project) writes a
job file and starts ``unshare -n python3 harness.py --driver JOB`` (``unshare -rn`` when not root).
Inside that fresh network namespace, which only has loopback, the driver brings ``lo`` up, starts
:class:`MockAnthropic` (a Messages API stand-in) on ``127.0.0.1:<free port>``, runs the CLI
commands one after the other with ``ANTHROPIC_BASE_URL`` pointing at it, and writes each command's
stdout, stderr and exit code to files plus ``result.json``.  Every HTTP request the CLI made is
appended to ``requests.jsonl`` as ``{"method", "path", "body"}``: that log is the test oracle
(see :func:`texts`, :func:`find_marker`, :func:`tool_results`).

The stand-in answers statelessly (§11.2): a request from the main agent that offers tools gets
tool call number ``n`` of the script, ``n`` being the number of ``tool_result`` blocks for this
run's tool calls already in ``messages``; anything else (script exhausted, no tools, subagents,
compaction, title generation) gets a plain text answer.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI_VERSION = "2.1.330"
DEFAULT_CLI = REPO_ROOT / ".tools" / "claude-cli" / "node_modules" / ".bin" / "claude"
DEFAULT_TEXT_REPLY = "Done (mock)."
REQUIRE_ENV = "MEMORY_REQUIRE_E2E"
# 2.1.330 puts this in the first system block of every subagent request (observed).
SUBAGENT_SYSTEM_MARKER = "cc_is_subagent=true"

Request = dict[str, Any]  # one logged request: {"method", "path", "body"}
ToolCall = Mapping[str, Any]  # {"name": "Read", "input": {...}}

# Environment handed to the CLI (§11.1); credentials and provider switches are dropped.
ISOLATION_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE", "AWS_BEARER_TOKEN", "VERTEX_", "OTEL_")
_DROP_NAMES = {
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "GOOGLE_APPLICATION_CREDENTIALS", "AWS_PROFILE", "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "CLOUD_ML_REGION",
}


# --------------------------------------------------------------------------- locating the CLI


def find_claude() -> str | None:
    """The pinned ``claude`` binary (``$MEMORY_CLAUDE_BIN`` or ``.tools/claude-cli``), or None.

    Install it with ``bash .ci/install-claude-cli.sh``.
    """
    for candidate in (os.environ.get("MEMORY_CLAUDE_BIN"), str(DEFAULT_CLI)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def e2e_required() -> bool:
    """True when ``MEMORY_REQUIRE_E2E=1``: a missing CLI or netns must fail tests, not skip them."""
    return os.environ.get(REQUIRE_ENV, "") == "1"


def unshare_argv() -> list[str]:
    """The ``unshare`` prefix that creates a network namespace with only loopback."""
    return ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-r", "-n"]


def netns_available() -> bool:
    """True when a fresh network namespace can be created here."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(unshare_argv() + ["true"], capture_output=True, timeout=30)
    return probe.returncode == 0


# --------------------------------------------------------------------------- request-log helpers


def load_requests(log_path: Path) -> list[Request]:
    """Read a ``requests.jsonl`` written by :class:`MockAnthropic`."""
    if not log_path.exists():
        return []
    lines = log_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def is_messages_request(request: Request) -> bool:
    """True for ``POST /v1/messages`` (not ``count_tokens``)."""
    path = request.get("path", "").split("?", 1)[0].rstrip("/")
    return request.get("method") == "POST" and path == "/v1/messages"


def model_requests(requests: Iterable[Request]) -> list[Request]:
    """Only the ``POST /v1/messages`` requests, in order."""
    return [r for r in requests if is_messages_request(r)]


def _block_texts(content: Any) -> Iterator[str]:
    """Yield the text of a ``content`` (string or block list), recursing into tool results."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                yield block["text"]
            if block.get("type") == "tool_result":
                yield from _block_texts(block.get("content"))
            elif block.get("type") == "tool_use":
                yield json.dumps(block.get("input", {}), ensure_ascii=False)


def texts(request: Request, roles: Sequence[str] = ("user", "system", "assistant")) -> list[str]:
    """All text of one request: the top-level ``system`` array and every block of every message.

    Accepts a logged request (``{"method", "path", "body"}``) or a bare request body.
    """
    body = request.get("body", request) if "path" in request else request
    if not isinstance(body, dict):
        return []
    out = list(_block_texts(body.get("system")))
    for message in body.get("messages", []):
        if isinstance(message, dict) and message.get("role") in roles:
            out.extend(_block_texts(message.get("content")))
    return out


@dataclass(frozen=True)
class MarkerHit:
    """A text chunk containing a marker: which model request, and the text after the marker."""

    request_index: int  # index into model_requests(requests)
    text: str  # the whole text chunk
    after: str  # text following the first occurrence of the marker


def find_marker(requests: Iterable[Request], marker: str) -> list[MarkerHit]:
    """Every text chunk, in every model request, that contains ``marker`` (in request order)."""
    hits = []
    for index, request in enumerate(model_requests(requests)):
        for text in texts(request):
            if marker in text:
                hits.append(MarkerHit(index, text, text.split(marker, 1)[1]))
    return hits


def first_request_with(requests: Iterable[Request], marker: str) -> int | None:
    """Index (into ``model_requests``) of the first model request whose text contains ``marker``."""
    hits = find_marker(requests, marker)
    return hits[0].request_index if hits else None


@dataclass(frozen=True)
class ToolResult:
    """A ``tool_result`` block with its content flattened to text."""

    tool_use_id: str
    is_error: bool
    text: str
    raw: dict[str, Any]


def tool_results(request: Request) -> list[ToolResult]:
    """All ``tool_result`` blocks of one request, in order."""
    body = request.get("body", request) if "path" in request else request
    found = []
    for message in body.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(ToolResult(
                    tool_use_id=str(block.get("tool_use_id", "")),
                    is_error=bool(block.get("is_error", False)),
                    text="\n".join(_block_texts(block.get("content"))),
                    raw=block,
                ))
    return found


def tool_names(request: Request) -> list[str]:
    """Names of the tools a request offers to the model."""
    body = request.get("body", request) if "path" in request else request
    return [t.get("name", "") for t in body.get("tools", []) or [] if isinstance(t, dict)]


# --------------------------------------------------------------------------- Messages API stand-in


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class MockAnthropic(ThreadingHTTPServer):
    """Threaded Messages API stand-in on 127.0.0.1 (§11.2); use as a context manager.

    ``script`` is a list of tool calls ``{"name", "input"}``; ``log_path`` receives one JSON line
    per request.  A request counts as the main agent's when it offers tools and its ``system``
    text holds neither :data:`SUBAGENT_SYSTEM_MARKER` nor any of ``subagent_markers``.
    Tool-use ids are ``toolu_mock_<nonce>_<n>``; only results for this nonce are counted, so a
    ``--continue`` run with a new script starts from call 0.
    """

    daemon_threads = True

    def __init__(
        self,
        script: Sequence[ToolCall],
        log_path: Path,
        text_reply: str = DEFAULT_TEXT_REPLY,
        subagent_markers: Sequence[str] = (),
        port: int = 0,
    ) -> None:
        self.script = [dict(call) for call in script]
        self.log_path = Path(log_path)
        self.text_reply = text_reply
        self.subagent_markers = list(subagent_markers)
        self.nonce = uuid.uuid4().hex[:8]
        self._log_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> MockAnthropic:
        """Serve in a daemon thread; the socket already listens, so the server is ready."""
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> MockAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self, method: str, path: str, body: Any) -> None:
        line = json.dumps({"method": method, "path": path, "body": body}, ensure_ascii=False)
        with self._log_lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def is_main_agent(self, body: dict[str, Any]) -> bool:
        """Main agent = offers tools and is not a subagent.

        2.1.330 marks subagent requests in the first ``system`` block
        (``x-anthropic-billing-header: …; cc_is_subagent=true;``); general-purpose subagents
        also carry the ``Agent`` tool, so the tool list alone cannot tell them apart.
        """
        if not tool_names(body):
            return False
        system_text = "\n".join(_block_texts(body.get("system")))
        markers = [SUBAGENT_SYSTEM_MARKER, *self.subagent_markers]
        return not any(marker in system_text for marker in markers)

    def choose_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant content block to send: next scripted tool call, or text."""
        if self.is_main_agent(body):
            prefix = f"toolu_mock_{self.nonce}_"
            done = sum(1 for r in tool_results(body) if r.tool_use_id.startswith(prefix))
            if done < len(self.script):
                call = self.script[done]
                return {"type": "tool_use", "id": f"{prefix}{done}", "name": call["name"],
                        "input": call.get("input", {})}
        return {"type": "text", "text": self.text_reply}


class _Handler(BaseHTTPRequestHandler):
    server: MockAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def _parsed_body(self) -> Any:
        raw = self._read_body()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_HEAD(self) -> None:  # noqa: N802
        self.server.log("HEAD", self.path, None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        self.server.log("GET", self.path, None)
        self._not_found()

    def do_POST(self) -> None:  # noqa: N802
        body = self._parsed_body()
        self.server.log("POST", self.path, body)
        route = self.path.split("?", 1)[0].rstrip("/")
        if route == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": 100})
        elif route == "/v1/messages" and isinstance(body, dict):
            self._reply_message(body)
        else:
            self._not_found()

    def _not_found(self) -> None:
        self._send_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": f"mock: no route for {self.path}"}})

    def _reply_message(self, body: dict[str, Any]) -> None:
        block = self.server.choose_reply(body)
        stop_reason = "tool_use" if block["type"] == "tool_use" else "end_turn"
        model = body.get("model", "claude-mock")
        usage = {"input_tokens": 10, "output_tokens": 5,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": f"msg_mock_{uuid.uuid4().hex[:12]}", "type": "message",
                   "role": "assistant", "model": model, "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            message.update(content=[block], stop_reason=stop_reason)
            self._send_json(200, message)
            return
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"".join([
            _sse("message_start", {"type": "message_start", "message": message}),
            _sse("content_block_start",
                 {"type": "content_block_start", "index": 0, "content_block": start}),
            _sse("content_block_delta",
                 {"type": "content_block_delta", "index": 0, "delta": delta}),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                   "usage": {"output_tokens": 5}}),
            _sse("message_stop", {"type": "message_stop"}),
        ]))
        self.wfile.flush()
        self.close_connection = True


# --------------------------------------------------------------------------- driver (inside netns)


def _bring_loopback_up() -> None:
    """``ip link set lo up``; falls back to the SIOCSIFFLAGS ioctl when iproute2 is missing."""
    if shutil.which("ip"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh14x", fcntl.ioctl(sock, siocgifflags, ifreq))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sh14x", b"lo", flags | iff_up))


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group we created for one command (no-op when it is gone)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run_command(spec: dict[str, Any], base_url: str, out_dir: Path, index: int) -> dict[str, Any]:
    """Run one command with stdin from /dev/null; kill its process group on timeout."""
    env = dict(spec["env"])
    if spec.get("with_base_url", True):
        env["ANTHROPIC_BASE_URL"] = base_url
    stdout_path, stderr_path = out_dir / f"cmd{index}.stdout", out_dir / f"cmd{index}.stderr"
    started = time.monotonic()
    timed_out = False
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True)
        try:
            rc: int | None = proc.wait(timeout=spec["timeout"])
        except subprocess.TimeoutExpired:
            timed_out, rc = True, None
            _kill_group(proc.pid)
            proc.wait()
    elapsed = time.monotonic() - started
    _kill_group(proc.pid)  # leftovers (async hooks, background tasks) of this command
    return {"argv": spec["argv"], "returncode": rc, "timed_out": timed_out, "elapsed": elapsed,
            "stdout_path": str(stdout_path), "stderr_path": str(stderr_path)}


def _driver_main(job_path: Path) -> int:
    """Entry point inside the namespace: lo up, stand-in up, commands, result.json."""
    job = json.loads(job_path.read_text())
    out_dir = Path(job["out_dir"])
    _bring_loopback_up()
    server = MockAnthropic(job["script"], out_dir / "requests.jsonl", job["text_reply"],
                           job["subagent_markers"])
    results = []
    with server:
        for index, spec in enumerate(job["commands"]):
            results.append(_run_command(spec, server.base_url, out_dir, index))
            if spec.get("stop_on_failure") and results[-1]["returncode"] != 0:
                break
    (out_dir / "result.json").write_text(json.dumps(results, indent=2))
    return 0


# --------------------------------------------------------------------------- caller side


@dataclass
class CommandResult:
    """Outcome of one CLI command run inside the namespace."""

    argv: list[str]
    returncode: int | None  # None when killed on timeout
    timed_out: bool
    elapsed: float  # seconds, wall clock, measured inside the namespace
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class RunResult:
    """One ``claude -p`` run: its command result plus the stand-in's request log."""

    command: CommandResult
    requests: list[Request]
    run_dir: Path
    debug_file: Path

    @property
    def returncode(self) -> int | None:
        return self.command.returncode

    @property
    def stdout(self) -> str:
        return self.command.stdout

    @property
    def stderr(self) -> str:
        return self.command.stderr

    @property
    def model_requests(self) -> list[Request]:
        return model_requests(self.requests)

    def debug_log(self) -> str:
        return self.debug_file.read_text(errors="replace") if self.debug_file.exists() else ""

    def find_marker(self, marker: str) -> list[MarkerHit]:
        return find_marker(self.requests, marker)

    def describe(self) -> str:
        """Short diagnostic text for assertion messages."""
        return (f"rc={self.returncode} timed_out={self.command.timed_out} "
                f"requests={len(self.requests)} run_dir={self.run_dir}\n"
                f"--- stdout\n{self.stdout[-2000:]}\n--- stderr\n{self.stderr[-2000:]}")


def cli_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for the CLI: inherited env minus credentials/providers/proxies, plus §11.1."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_DROP_PREFIXES) and k not in _DROP_NAMES}
    env.update(ISOLATION_ENV)
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_STATE_HOME"] = str(home / ".local" / "state")
    env["TMPDIR"] = str(home / "tmp")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra_env or {})
    return env


def run_in_netns(
    commands: Sequence[Mapping[str, Any]],
    out_dir: Path,
    script: Sequence[ToolCall] = (),
    text_reply: str = DEFAULT_TEXT_REPLY,
    subagent_markers: Sequence[str] = (),
) -> tuple[list[CommandResult], list[Request]]:
    """Run ``commands`` (dicts: argv, cwd, env, timeout[, with_base_url, stop_on_failure]) in a
    fresh loopback-only network namespace next to a :class:`MockAnthropic`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    job = {"out_dir": str(out_dir), "script": list(map(dict, script)), "text_reply": text_reply,
           "subagent_markers": list(subagent_markers), "commands": [dict(c) for c in commands]}
    job_path = out_dir / "job.json"
    job_path.write_text(json.dumps(job, indent=2))
    budget = sum(float(c["timeout"]) for c in commands) + 30
    driver = subprocess.run(
        unshare_argv() + [sys.executable, str(Path(__file__).resolve()), "--driver", str(job_path)],
        capture_output=True, text=True, timeout=budget)
    result_path = out_dir / "result.json"
    if driver.returncode != 0 or not result_path.exists():
        raise RuntimeError(f"netns driver failed (rc={driver.returncode}):\n"
                           f"{driver.stdout}\n{driver.stderr}")
    results = []
    for item in json.loads(result_path.read_text()):
        results.append(CommandResult(
            argv=item["argv"], returncode=item["returncode"], timed_out=item["timed_out"],
            elapsed=item["elapsed"],
            stdout=Path(item["stdout_path"]).read_text(errors="replace"),
            stderr=Path(item["stderr_path"]).read_text(errors="replace")))
    return results, load_requests(out_dir / "requests.jsonl")


def _require_claude(claude: str | None) -> str:
    found = claude or find_claude()
    if not found:
        raise FileNotFoundError("Claude Code CLI not installed: run bash .ci/install-claude-cli.sh")
    return found


def run_session(
    prompt: str,
    *,
    home: Path,
    project: Path,
    plugin_dirs: Sequence[Path] = (),
    run_dir: Path,
    script: Sequence[ToolCall] = (),
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    continue_session: bool = False,
    timeout: float = 60.0,
    text_reply: str = DEFAULT_TEXT_REPLY,
    subagent_markers: Sequence[str] = (),
    claude: str | None = None,
) -> RunResult:
    """Run ``claude -p PROMPT --plugin-dir P... [--continue] [extra_args]`` offline in ``project``.

    ``home`` is the scratch HOME (``~/.claude`` lives there); reuse it and ``project`` with
    ``continue_session=True`` for a follow-up run of the same conversation.  ``run_dir`` receives
    ``job.json``, ``requests.jsonl``, ``debug.log``, ``cmd0.stdout``/``cmd0.stderr``.
    """
    binary = _require_claude(claude)
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    debug_file = run_dir / "debug.log"
    argv = [binary, "-p", prompt, "--debug-file", str(debug_file)]
    for plugin in plugin_dirs:
        argv += ["--plugin-dir", str(Path(plugin).resolve())]
    if continue_session:
        argv.append("--continue")
    argv += list(extra_args)
    command = {"argv": argv, "cwd": str(project), "env": cli_env(home, extra_env),
               "timeout": timeout}
    results, requests = run_in_netns([command], run_dir, script, text_reply, subagent_markers)
    return RunResult(results[0], requests, run_dir, debug_file)


class Session:
    """Several ``claude -p`` runs sharing one scratch HOME and project dir (a conversation).

    >>> s = Session(tmp_path, plugin_dirs=[plugin])            # doctest: +SKIP
    >>> first = s.run("hi", script=[{"name": "Read", "input": {...}}])
    >>> again = s.run("more", continue_session=True)
    """

    def __init__(self, root: Path, plugin_dirs: Sequence[Path] = (), claude: str | None = None,
                 project: Path | None = None) -> None:
        self.root = Path(root)
        self.home = self.root / "home"
        self.project = Path(project) if project else self.root / "project"
        self.plugin_dirs = [Path(p) for p in plugin_dirs]
        self.claude = claude
        self.runs: list[RunResult] = []
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)

    def run(self, prompt: str, **kwargs: Any) -> RunResult:
        """Like :func:`run_session`; HOME, project, plugins and run dir are filled in."""
        kwargs.setdefault("plugin_dirs", self.plugin_dirs)
        kwargs.setdefault("claude", self.claude)
        result = run_session(prompt, home=self.home, project=self.project,
                             run_dir=self.root / f"run{len(self.runs)}", **kwargs)
        self.runs.append(result)
        return result


def validate_plugin(path: Path, strict: bool = True, claude: str | None = None,
                    timeout: float = 60.0, work_dir: Path | None = None) -> tuple[int | None, str]:
    """``claude plugin validate [--strict] PATH`` offline in the namespace: (returncode, output)."""
    binary = _require_claude(claude)
    with tempfile.TemporaryDirectory(prefix="e2e-validate-", dir=work_dir) as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        argv = [binary, "plugin", "validate"] + (["--strict"] if strict else [])
        argv.append(str(Path(path).resolve()))
        results, _ = run_in_netns(
            [{"argv": argv, "cwd": str(home), "env": cli_env(home), "timeout": timeout}],
            Path(tmp) / "run")
    return results[0].returncode, results[0].output


@dataclass
class MarketplaceInstall:
    """Outcome of :func:`install_from_marketplace`."""

    add: CommandResult
    install: CommandResult | None  # None when ``marketplace add`` failed
    home: Path

    @property
    def ok(self) -> bool:
        return self.add.returncode == 0 and self.install is not None and \
            self.install.returncode == 0

    @property
    def elapsed(self) -> float:
        """Seconds for add + install (as measured inside the namespace)."""
        return self.add.elapsed + (self.install.elapsed if self.install else 0.0)

    @property
    def output(self) -> str:
        return self.add.output + (self.install.output if self.install else "")


# Never copy these into a staged marketplace: a directory-marketplace install copies the plugin
# folder wholesale (gitignored files included) into ~/.claude/plugins/cache (observed, 2.1.330).
STAGE_IGNORE = (".git", ".tools", "node_modules", ".venv", "__pycache__", ".pytest_cache",
                ".hypothesis", "*.pyc", "build", "dist", "*.egg-info")


def make_directory_marketplace(plugin_dir: Path, dest: Path, marketplace: str = "e2e-mkt",
                               plugin: str | None = None,
                               ignore: Sequence[str] = STAGE_IGNORE) -> Path:
    """Stage ``dest/.claude-plugin/marketplace.json`` + ``dest/plugins/<plugin>`` (a clean copy of
    ``plugin_dir`` without ``ignore`` patterns) and return ``dest``.

    ``plugin`` defaults to the ``name`` in ``plugin_dir/.claude-plugin/plugin.json``.
    """
    manifest = Path(plugin_dir) / ".claude-plugin" / "plugin.json"
    name = plugin or json.loads(manifest.read_text())["name"]
    shutil.copytree(plugin_dir, dest / "plugins" / name, ignore=shutil.ignore_patterns(*ignore))
    (dest / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (dest / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": marketplace, "description": "Staged by tests/e2e/harness.py",
        "owner": {"name": "e2e tests"},
        "plugins": [{"name": name, "source": f"./plugins/{name}",
                     "description": f"{name} (staged for e2e tests)"}],
    }, indent=2))
    return dest


def install_from_marketplace(marketplace_dir: Path, plugin: str, marketplace: str, *,
                             home: Path, claude: str | None = None, timeout: float = 60.0,
                             extra_args: Sequence[str] = ()) -> MarketplaceInstall:
    """``claude plugin marketplace add DIR`` then ``claude plugin install PLUGIN@MKT`` offline.

    ``home`` is a scratch HOME that keeps the installed state, so later :func:`run_session`
    calls with the same ``home`` see the plugin installed (run them without ``--plugin-dir``).
    """
    binary = _require_claude(claude)
    home.mkdir(parents=True, exist_ok=True)
    env = cli_env(home)
    common = {"cwd": str(home), "env": env, "timeout": timeout, "stop_on_failure": True}
    commands = [
        dict(common, argv=[binary, "plugin", "marketplace", "add",
                           str(Path(marketplace_dir).resolve())]),
        dict(common, argv=[binary, "plugin", "install", f"{plugin}@{marketplace}",
                           *extra_args]),
    ]
    results, _ = run_in_netns(commands, home.parent / f"{home.name}-install-run")
    return MarketplaceInstall(results[0], results[1] if len(results) > 1 else None, home)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--driver":
        sys.exit(_driver_main(Path(sys.argv[2])))
    print("usage: harness.py --driver JOB.json  (internal; see module docstring)", file=sys.stderr)
    sys.exit(2)
