"""Check Mermaid diagrams with the real Mermaid toolchain (stdlib only).

One ``node check.mjs`` process drives one headless Chromium for the whole
session, so checking a diagram costs milliseconds, not a browser launch.

Use from a conftest (``pythonpath`` must include ``tests/mermaid``)::

    import pytest
    from mermaid_check import MermaidChecker, session_checker

    @pytest.fixture(scope="session")
    def mermaid_checker() -> Iterator[MermaidChecker]:
        yield from session_checker()

and in a test::

    def test_graph_is_valid_mermaid(mermaid_checker):
        ok, error = mermaid_checker.check(render_flowchart(...))
        assert ok, error

``session_checker`` skips the test when the toolchain is missing (install it
with ``.ci/install-mermaid.sh``), or fails it when ``MEMORY_REQUIRE_MERMAID=1``.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

HERE = Path(__file__).resolve().parent
CHECK_SCRIPT = HERE / "check.mjs"
NODE_MODULES = HERE / "node_modules"
REQUIRE_ENV = "MEMORY_REQUIRE_MERMAID"
INSTALL_HINT = "run .ci/install-mermaid.sh"


def chromium_path() -> str:
    """The browser check.mjs will launch (``MERMAID_CHROMIUM`` overrides)."""
    return os.environ.get("MERMAID_CHROMIUM", "/usr/bin/chromium")


def unavailable_reason() -> str | None:
    """Why the toolchain cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not os.access(chromium_path(), os.X_OK):
        return f"{chromium_path()} is missing ({INSTALL_HINT})"
    for package in ("mermaid/dist/mermaid.min.js", "puppeteer-core/package.json"):
        if not (NODE_MODULES / package).is_file():
            return f"tests/mermaid/node_modules/{package} is missing ({INSTALL_HINT})"
    return None


def available() -> bool:
    """True when node, Chromium and the pinned npm packages are all installed."""
    return unavailable_reason() is None


class MermaidCheckerError(RuntimeError):
    """The checker process could not start, died, or did not answer in time."""


class _ProcessGone(MermaidCheckerError):
    """The process was found dead; worth one restart."""


@dataclass(frozen=True)
class CheckResult:
    """One diagram's verdict; ``labels`` only when asked for (see check.mjs)."""

    ok: bool
    error: str | None
    svg_bytes: int = 0
    diagram_type: str | None = None
    labels: dict[str, dict[str, str]] = field(default_factory=dict)


class MermaidChecker:
    """Context manager around one long-lived ``node check.mjs`` process.

    Not meant to be shared between processes; calls from several threads are
    serialised. A diagram that makes the browser hang past ``timeout`` raises
    :class:`MermaidCheckerError`; the next call starts a fresh process.
    """

    def __init__(self, timeout: float = 60.0, startup_timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.versions: dict[str, str] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: IO[str] | None = None
        self._next_id = 0
        self._lock = threading.Lock()

    def __enter__(self) -> MermaidChecker:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start node + Chromium and wait until Mermaid is loaded."""
        reason = unavailable_reason()
        if reason is not None:
            raise MermaidCheckerError(f"Mermaid toolchain unavailable: {reason}")
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._lines = queue.Queue()
        self._proc = subprocess.Popen(
            ["node", str(CHECK_SCRIPT)],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        threading.Thread(
            target=self._pump, args=(self._proc.stdout, self._lines), daemon=True
        ).start()
        ready = self._read(self.startup_timeout)
        if not ready.get("ready"):
            raise self._failure(f"unexpected first line {ready!r}")
        self.versions = {"mermaid": ready.get("mermaid", "?"), "browser": ready.get("browser", "?")}

    def close(self) -> None:
        """Stop the process (closing stdin lets it shut Chromium down cleanly)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def check(self, diagram: str) -> tuple[bool, str | None]:
        """Parse and render ``diagram``; return ``(ok, error message or None)``."""
        result = self.check_detailed(diagram)
        return result.ok, result.error

    def check_detailed(self, diagram: str, labels: bool = False) -> CheckResult:
        """Like :meth:`check`, with SVG size, diagram type and optionally label texts.

        If the process turns out to have died, it is restarted and the diagram
        sent once more; a second death (or a timeout) raises.
        """
        with self._lock:
            try:
                answer = self._ask(diagram, labels)
            except _ProcessGone:
                answer = self._ask(diagram, labels)
        return CheckResult(
            ok=bool(answer["ok"]),
            error=answer.get("error"),
            svg_bytes=int(answer.get("svg_bytes", 0)),
            diagram_type=answer.get("diagram_type"),
            labels=answer.get("labels") or {},
        )

    def _ask(self, diagram: str, labels: bool) -> dict[str, Any]:
        """Send one request (starting the process if needed) and return its answer."""
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self.start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        request = {"id": self._next_id, "diagram": diagram, "labels": labels}
        try:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise self._failure(f"cannot write request: {exc}", _ProcessGone) from exc
        answer = self._read(self.timeout)
        if answer.get("id") != self._next_id:
            raise self._failure(f"answer out of order: {answer!r}")
        return answer

    @staticmethod
    def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
        """Reader thread: forward stdout lines; None marks end of stream."""
        assert stream is not None
        for line in stream:
            lines.put(line)
        lines.put(None)

    def _read(self, timeout: float) -> dict[str, Any]:
        """Next JSON line from the process, or raise after ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise self._failure(f"no answer within {timeout:g}s") from None
        if line is None:
            raise self._failure("process exited", _ProcessGone)
        try:
            data: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(f"unreadable line {line!r}") from None
        return data

    def _failure(
        self, what: str, kind: type[MermaidCheckerError] = MermaidCheckerError
    ) -> MermaidCheckerError:
        """Kill the process and build an error carrying the tail of its stderr."""
        if self._proc is not None:
            self._proc.kill()  # no-op if it already exited
            self._proc.wait()
        stderr = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            stderr = self._stderr.read()[-2000:]
        self.close()
        return kind(f"Mermaid checker: {what}\n{stderr}".rstrip())


def normalize_text(text: str) -> str:
    """Label text as compared in tests: white space runs squashed per line.

    Mermaid and the browser trim labels and may collapse runs of white space,
    so compare ``normalize_text(expected) == normalize_text(rendered)``.
    """
    lines = [" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def session_checker() -> Iterator[MermaidChecker]:
    """Body of a session-scoped pytest fixture: yields a started checker.

    Skips (or, with ``MEMORY_REQUIRE_MERMAID=1``, fails) when the toolchain is
    not installed or cannot start.
    """
    import pytest  # only imported when used as a fixture

    def give_up(reason: str) -> None:
        message = f"Mermaid toolchain unavailable: {reason}"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{message} ({REQUIRE_ENV}=1)", pytrace=False)
        pytest.skip(message)

    reason = unavailable_reason()
    if reason is not None:
        give_up(reason)
    checker = MermaidChecker()
    try:
        checker.start()
    except MermaidCheckerError as exc:
        give_up(str(exc))
    try:
        yield checker
    finally:
        checker.close()
