"""The hook server, as processes: a hook handed over to it answers exactly as one answered in its
own process, with the hook's own directory, environment, umask and descriptors; and the hook
answers itself whenever the server is absent, refuses, is not safely reachable or runs other code.

Every server here runs under a TMPDIR of the test's own (the servers of other tests never
answer), and stops when the test does: terminated, or idle for a second.
"""

from __future__ import annotations

import array
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO

from hookenv import Hooks

GOTCHA_TITLE = "Token refresh must be serialised per user"


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def imported(self) -> set[str]:
        """The modules the hook process itself imported (run with -X importtime)."""
        return {line.rsplit("|", 1)[1].strip() for line in self.err.splitlines() if line.startswith("import time:")}

    @property
    def served(self) -> bool:
        """Run by a server: the process handed over before importing even `os` (which the work
        itself always needs)."""
        assert "_lib.session.hookclient" in self.imported, "run without -X importtime, or no hand-over tried"
        return "os" not in self.imported


def hook(root: Path, name: str, payload: Any, env: dict[str, str], *, cwd: Path, umask: int = -1,
         inside: list[str] | None = None) -> Run:
    """hooks/NAME.py of the plugin at `root` as hooks/run starts it (-S), listing its own imports
    (`inside`: a command prefix that runs it, e.g. in a namespace of its own)."""
    proc = subprocess.run([*(inside or []), sys.executable, "-S", "-X", "importtime", str(root / "hooks" / f"{name}.py")],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=120, cwd=cwd, env=env,
                          umask=umask)
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


class Server:
    """hooks/_server.py of the plugin at `root`, started as a hook would start it, ready once it said so."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-S", str(root / "hooks" / "_server.py")], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()  # type: ignore[union-attr]
        assert line.startswith("listening "), (line, self.proc.stderr.read())  # type: ignore[union-attr]
        self.socket = Path(line.split(" ", 1)[1].strip())
        # then it lets go of the pipes: whoever started it is not kept waiting for more
        assert self.proc.stdout.read() == b"" and self.proc.poll() is None  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=60)


@pytest.fixture
def hooks(tmp_path: Path):  # type: ignore[no-untyped-def]
    hooks = Hooks(tmp_path)
    hooks.write_file("src/auth/login.ts", "export async function login() { return refreshToken(); }\n")
    hooks.memory("write", GOTCHA_TITLE, "--type", "gotcha", "--tags", "auth",
                 "--content", "Two concurrent refreshes revoke each other because refresh tokens rotate.")
    runtime = tempfile.mkdtemp(prefix="hs", dir="/tmp")  # (short: a socket's path holds ~100 bytes)
    hooks.extra_env.update(TMPDIR=runtime, MEMORY_HOOK_SERVER_IDLE="120")  # from here on, this test's servers
    yield hooks
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def server(hooks: Hooks):  # type: ignore[no-untyped-def]
    started = Server(REPO, hooks.environ())
    yield started
    started.stop()


@pytest.fixture(scope="module")
def plugin_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin's hooks and scripts copied, plus a hook `boom` whose handler raises."""
    root = tmp_path_factory.mktemp("plugin")
    for part in ("hooks", "scripts", "schemas"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    with (root / "scripts" / "_lib" / "session" / "handlers.py").open("a") as handlers:
        handlers.write("\n\ndef boom(payload, run):\n    raise RuntimeError('boom inside the hook')\n\n\n"
                       "HANDLERS['boom'] = boom\n")
    (root / "hooks" / "boom.py").write_text('from _hook import run_hook\n\nrun_hook("boom")\n')
    return root


def read_payload(hooks: Hooks, **kw: Any) -> dict[str, Any]:
    return hooks.post_read(hooks.project / "src/auth/login.ts", session_id=str(uuid.uuid4()), **kw)


# -- answers ----------------------------------------------------------------------------------------

def test_a_served_hook_answers_as_its_own_process_would_importing_almost_nothing(hooks: Hooks, server: Server) -> None:
    env = hooks.environ()
    for name, payload in [("memory-context", lambda: read_payload(hooks)),
                          ("memory-prompt-context", lambda: hooks.prompt("Why must token refresh be serialised?",
                                                                         session_id=str(uuid.uuid4())))]:
        alone = hook(REPO, name, payload(), dict(env, MEMORY_HOOK_SERVER="off"), cwd=hooks.project)
        served = hook(REPO, name, payload(), env, cwd=hooks.project)
        assert (alone.code, served.code) == (0, 0), served.err
        assert served.served and not alone.served
        assert GOTCHA_TITLE in served.out and served.out == alone.out
        # the hook process loads nothing but the hand-over: not even os
        assert not served.imported & {"os", "re", "pathlib", "json", "sqlite3", "_lib.base.jsontext"}, served.imported


def test_the_child_takes_over_the_hooks_directory_environment_and_umask(hooks: Hooks, server: Server,
                                                                        tmp_path: Path) -> None:
    other_data = tmp_path / "other-data"  # not the data directory the server was started with
    other_project = tmp_path / "elsewhere"
    subprocess.run(["git", "init", "-q", str(other_project)], check=True)
    payload = read_payload(hooks)
    del payload["cwd"]  # the hook's working directory decides the project
    env = hooks.environ(CLAUDE_PLUGIN_DATA=str(other_data))
    env.pop("CLAUDE_PROJECT_DIR")
    there = hook(REPO, "memory-context", payload, env, cwd=other_project, umask=0o077)
    assert there.served and there.code == 0 and there.out == ""  # no gotcha in that project
    again = dict(payload, session_id=str(uuid.uuid4()))
    here = hook(REPO, "memory-context", again, env, cwd=hooks.project, umask=0o077)
    assert here.served and GOTCHA_TITLE in here.out
    # the sessions' state went to the hook's data directory
    assert {path.stem for path in (other_data / "sessions").glob("*.json")} == {payload["session_id"],
                                                                              again["session_id"]}
    assert stat.S_IMODE(other_data.stat().st_mode) == 0o700  # made under the hook's umask, not the server's
    assert not (hooks.data / "sessions").exists()


def test_parallel_hooks_through_one_server_lose_no_update(hooks: Hooks, server: Server) -> None:
    env = hooks.environ()
    edits = [hooks.post_edit(hooks.project / f"src/file{index}.py") for index in range(24)]
    procs = [subprocess.Popen([sys.executable, "-S", str(REPO / "hooks" / "clear-memory-check-flag.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=hooks.project, env=env) for _ in edits]
    for proc, payload in zip(procs, edits):
        out, err = proc.communicate(json.dumps(payload).encode(), timeout=120)
        assert proc.returncode == 0 and out == b"", err
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text())
    assert state["edits_since_capture"] == 24
    assert len(state["files_changed"]) == 24


# -- failures inside the hook -----------------------------------------------------------------------

def test_an_error_inside_a_served_hook_reaches_the_hooks_exit_status_and_stderr(hooks: Hooks, plugin_copy: Path) -> None:
    server = Server(plugin_copy, hooks.environ())
    try:
        raised = hook(plugin_copy, "boom", read_payload(hooks), hooks.environ(), cwd=hooks.project)
        assert raised.served
        assert raised.code == 70 and "RuntimeError: boom inside the hook" in raised.err  # with the tests' switch
        quiet = hook(plugin_copy, "boom", read_payload(hooks), hooks.environ(MEMORY_HOOK_RAISE=""), cwd=hooks.project)
        assert quiet.served and quiet.code == 0 and quiet.out == "" and "Traceback" not in quiet.err  # fails open
        assert "RuntimeError: boom inside the hook" in (hooks.data / "hooks.log").read_text()
    finally:
        server.stop()


# -- when the hook answers itself -----------------------------------------------------------------

def test_changed_code_sends_hooks_back_home_and_the_server_leaves(hooks: Hooks, plugin_copy: Path) -> None:
    server = Server(plugin_copy, hooks.environ())
    try:
        assert hook(plugin_copy, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project).served
        changed = plugin_copy / "scripts" / "_lib" / "catalog" / "bm25.py"
        status = changed.stat()
        os.utime(changed, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))  # as an update would
        after = hook(plugin_copy, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project)
        assert not after.served and GOTCHA_TITLE in after.out  # answered all the same, by the hook itself
        assert server.proc.wait(timeout=60) == 0
        assert not server.socket.exists()
    finally:
        server.stop()


def test_an_idle_server_leaves_and_takes_its_socket(hooks: Hooks) -> None:
    server = Server(REPO, hooks.environ(MEMORY_HOOK_SERVER_IDLE="0.5"))
    assert server.proc.wait(timeout=60) == 0
    assert not server.socket.exists()


def test_a_stalled_or_garbled_client_delays_no_other_hook(hooks: Hooks, server: Server) -> None:
    stalled = socket.socket(socket.AF_UNIX)
    stalled.connect(str(server.socket))  # and never says anything
    garbled = socket.socket(socket.AF_UNIX)
    garbled.connect(str(server.socket))
    garbled.sendall(b"\x00\x00\x00\x05hello")
    assert not garbled.recv(16).startswith(b"A")  # refused: the child leaves without taking anything over
    garbled.close()
    answered = hook(REPO, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project)
    assert answered.served and GOTCHA_TITLE in answered.out
    stalled.close()
    assert server.proc.poll() is None


def test_a_hook_with_no_server_answers_itself_and_starts_one(hooks: Hooks) -> None:
    env = hooks.environ(MEMORY_HOOK_SERVER_IDLE="1")  # the server it starts leaves a second after the last hook
    first = hook(REPO, "memory-context", read_payload(hooks), env, cwd=hooks.project)
    assert not first.served and GOTCHA_TITLE in first.out
    directory = Path(env["TMPDIR"]) / f"claude-memory-{os.getuid()}"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert [path.suffix for path in directory.iterdir() if path.suffix == ".started"] == [".started"]
    for _ in range(200):  # the server starts in the background: some hook soon hands over to it
        later = hook(REPO, "memory-context", read_payload(hooks), env, cwd=hooks.project)
        assert GOTCHA_TITLE in later.out
        if later.served:
            break
    else:
        pytest.fail("no hook was handed over to the server the first hook started")


@pytest.mark.parametrize("unsafe", ["open to others", "a symlink", "switched off"])
def test_no_server_where_it_is_not_safely_ours_or_when_switched_off(hooks: Hooks, tmp_path: Path, unsafe: str) -> None:
    env = hooks.environ()
    directory = Path(env["TMPDIR"]) / f"claude-memory-{os.getuid()}"
    if unsafe == "open to others":
        directory.mkdir(mode=0o755)
        directory.chmod(0o755)
    elif unsafe == "a symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        directory.symlink_to(tmp_path / "elsewhere")
    else:
        env["MEMORY_HOOK_SERVER"] = "off"
    before = sorted(Path(env["TMPDIR"]).rglob("*"))
    for _ in range(3):
        answered = hook(REPO, "memory-context", read_payload(hooks), env, cwd=hooks.project)
        assert not answered.served and GOTCHA_TITLE in answered.out
    assert sorted(Path(env["TMPDIR"]).rglob("*")) == before  # nothing started, nothing written there


@pytest.mark.skipif(shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"]).returncode != 0,
                    reason="needs unshare and the right to make a network namespace")
def test_a_hook_in_a_sandbox_of_its_own_answers_inside_it(hooks: Hooks, server: Server) -> None:
    # bubblewrap, as Claude Code's sandbox uses it, gives a command its own namespaces: a child
    # out here would do its work outside the sandbox
    sandboxed = hook(REPO, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project,
                     inside=["unshare", "-n"])
    assert not sandboxed.served and GOTCHA_TITLE in sandboxed.out
    assert hook(REPO, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project).served


# -- a hook's own process: closed descriptors, killed, held up ------------------------------------

@pytest.mark.parametrize("closed", [0, 1])
def test_a_hook_started_with_stdin_or_stdout_closed_answers_itself(hooks: Hooks, server: Server, closed: int) -> None:
    # the hand-over's socket would take the closed descriptor's number and be handed over as it: a
    # child reading its own socket as stdin would wait forever, one writing to it as stdout would
    # answer into the hand-over
    proc = subprocess.run(["sh", "-c", f'exec "$@" {closed}>&-', "sh", sys.executable, "-S", "-X", "importtime",
                           str(REPO / "hooks" / "memory-context.py")],
                          input=json.dumps(read_payload(hooks)).encode(), capture_output=True, timeout=60,
                          cwd=hooks.project, env=hooks.environ())
    # answered here, as without a server (with the tests' switch a missing stream is an internal error)
    assert proc.returncode == 70 and b"AttributeError: 'NoneType'" in proc.stderr


def test_killing_a_served_hook_ends_its_work_as_it_would_its_own_process(hooks: Hooks, server: Server) -> None:
    # Claude Code kills a hook past its timeout or when the user interrupts: the child answering it
    # stops there too, and does not update the session afterwards
    edit = hooks.post_edit(hooks.project / "src/late.py", session_id=str(uuid.uuid4()))
    proc = subprocess.Popen([sys.executable, "-S", str(REPO / "hooks" / "clear-memory-check-flag.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=hooks.project, env=hooks.environ())
    assert proc.stdin is not None
    # more than a pipe holds: once written, the child (the hook never reads its stdin) is reading it
    proc.stdin.write(json.dumps(edit).encode() + b" " * (1 << 20))
    proc.stdin.flush()
    proc.kill()
    proc.wait(timeout=60)
    # the child dies with its hook: the pipe is left without a reader (a child still reading would
    # take 8 MB, then stop reading and answer from what it has)
    os.set_blocking(proc.stdin.fileno(), False)
    with pytest.raises(BrokenPipeError):
        for _ in range(1024):
            assert select.select([], [proc.stdin], [], 60)[1], "the pipe stayed full: someone holds it unread"
            try:
                os.write(proc.stdin.fileno(), b" " * 65536)
            except BlockingIOError:
                continue
    proc.stdin = None  # (closed by the kernel's reckoning already)
    assert not (hooks.data / "sessions" / f"{edit['session_id']}.json").exists()


def test_a_hook_held_up_between_accepted_and_go_is_answered_by_the_child(hooks: Hooks, server: Server) -> None:
    # a hook suspended (Ctrl-Z, a loaded machine) after the child's ACCEPTED sends GO late: the child
    # must still answer it, since after GO the hook no longer answers itself
    from _lib.session import hookclient

    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    os.write(stdin_write, json.dumps(read_payload(hooks)).encode())
    os.close(stdin_write)
    directory = os.open(hooks.project, os.O_RDONLY)
    request = hookclient.encode_request("memory-context", [], {os.fsencode(k): os.fsencode(v)
                                                               for k, v in hooks.environ().items()})
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(server.socket))
        connection.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                        array.array("i", [stdin_read, stdout_write, stdout_write, directory]))])
        for fd in (stdin_read, stdout_write, directory):
            os.close(fd)
        assert connection.recv(5)[:1] == hookclient.ACCEPTED
        # held up past the time the hook itself waits for ACCEPTED: the child is still there
        assert select.select([connection], [], [], hookclient.ACCEPT_SECONDS + 0.5)[0] == []
        connection.sendall(hookclient.GO)
        assert connection.recv(2) == hookclient.EXITED + b"\0"
    with os.fdopen(stdout_read, "rb") as answer:
        assert GOTCHA_TITLE in answer.read().decode()


def test_a_relative_tmpdir_puts_no_socket_directory_in_the_hooks_directory(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.session import hookclient

    monkeypatch.chdir(tmp_path)  # (the project, for a hook)
    assert hookclient.runtime_directory({b"TMPDIR": b"."}) == b"/tmp/claude-memory-%d" % os.getuid()
    assert list(tmp_path.iterdir()) == []


# -- `memory` commands ------------------------------------------------------------------------------

def memory(args: list[str], env: dict[str, str], *, cwd: Path, stdin: bytes = b"", shell: str = "") -> Run:
    """scripts/memory.py as bin/memory starts it (-S), listing its own imports (`shell`: a sh
    command run first, e.g. a ulimit)."""
    command = [sys.executable, "-S", "-X", "importtime", str(REPO / "scripts" / "memory.py"), *args]
    if shell:
        command = ["sh", "-c", f'{shell}; exec "$@"', "sh", *command]
    proc = subprocess.run(command, input=stdin, capture_output=True, timeout=120, cwd=cwd, env=env)
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def own_lines(err: str) -> str:
    return "\n".join(line for line in err.splitlines() if not line.startswith("import time:"))


def test_a_served_command_does_what_its_own_process_would(hooks: Hooks, server: Server) -> None:
    served_env, alone_env = hooks.environ(), hooks.environ(MEMORY_HOOK_SERVER="off")
    runs = [(["write", "Okapi feeding rota {}", "--tags", "zoo", "--content", "Feed the okapi at dawn."], b""),
            (["write", "Piped note {}", "--file", "-"], "Fed through stdin, ünïcödé.".encode()),
            (["search", "okapi", "--json"], b""), (["read", "no-such-memory"], b""), (["nonsense"], b""),
            (["write", "x" * 300], b""), (["list", "--limit", "3"], b"")]
    for args, stdin in runs:
        results = []
        for token, env in (("uno", served_env), ("dos", alone_env)):
            run = memory([arg.format(token) for arg in args], env, cwd=hooks.project, stdin=stdin)
            assert run.served == (env is served_env), (args, run.imported)
            results.append((run.code, *(text.replace("uno", "*").replace("dos", "*") for text in (run.out, own_lines(run.err)))))
        assert results[0] == results[1], args
    assert {path.name for path in hooks.memory_dir.glob("*.md")} >= {
        "learning-okapi-feeding-rota-uno.md", "learning-okapi-feeding-rota-dos.md",
        "learning-piped-note-uno.md", "learning-piped-note-dos.md"}
    assert "ünïcödé" in (hooks.memory_dir / "learning-piped-note-uno.md").read_text()


@pytest.mark.parametrize(("sent", "outcome"), [(signal.SIGINT, (130, b"error: interrupted\n")),
                                              (signal.SIGTERM, (-signal.SIGTERM, b""))])
def test_a_signal_to_a_served_command_acts_as_on_its_own_process(hooks: Hooks, server: Server, tmp_path: Path,
                                                                sent: int, outcome: tuple[int, bytes]) -> None:
    # Ctrl-C: the command's own "interrupted"; SIGTERM: it dies of it (the server tells the caller,
    # which dies of the same signal)
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)
    for env in (hooks.environ(), hooks.environ(MEMORY_HOOK_SERVER="off")):
        proc = subprocess.Popen([sys.executable, "-S", str(REPO / "scripts" / "memory.py"), "write", "Interrupted",
                                 "--file", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=hooks.project, env=env)
        with open(fifo, "wb"):  # opened once the command opens it to read: it is running
            proc.send_signal(sent)
            out, err = proc.communicate(timeout=60)
        assert (proc.returncode, err) == outcome and out == b""
    assert not list(hooks.memory_dir.glob("*interrupted*"))


def test_a_server_started_by_a_caller_ignoring_interrupts_passes_them_on_later(hooks: Hooks, tmp_path: Path) -> None:
    # a hook run from `... &` in a script ignores Ctrl-C and starts the server: the server's
    # children, which serve every later caller, start with signals as a process does
    env = hooks.environ()
    first = hook(REPO, "memory-context", read_payload(hooks), env, cwd=hooks.project,
                 inside=["sh", "-c", 'trap "" INT; exec "$@"', "sh"])
    assert not first.served
    for _ in range(200):  # the server starts in the background: some hook soon hands over to it
        if hook(REPO, "memory-context", read_payload(hooks), env, cwd=hooks.project).served:
            break
    else:
        pytest.fail("no hook was handed over to the server the first hook started")
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-S", "-X", "importtime", str(REPO / "scripts" / "memory.py"), "write",
                             "Interrupted", "--file", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=hooks.project, env=env)
    with open(fifo, "wb"):  # opened once the command opens it to read: it is running
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    run = Run(proc.returncode, out.decode(), err.decode())
    assert run.served and (run.code, own_lines(run.err)) == (130, "error: interrupted")


def test_a_served_command_keeps_its_resource_limits(hooks: Hooks, server: Server) -> None:
    # `ulimit -f 1`: a write past 512 bytes fails (EFBIG: Python ignores SIGXFSZ), served or not
    body = "A long body. " * 200
    outcomes = []
    for env in (hooks.environ(), hooks.environ(MEMORY_HOOK_SERVER="off")):
        run = memory(["write", "Too big to write", "--content", body], env, cwd=hooks.project, shell="ulimit -f 1")
        outcomes.append((run.code, own_lines(run.err)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == 1 and outcomes[0][1].startswith("error: ")
    assert not list(hooks.memory_dir.glob("*too-big*.md"))


@pytest.mark.parametrize("sent", [signal.SIGHUP, signal.SIGINT])
def test_a_signal_the_caller_ignores_leaves_a_served_command_running(hooks: Hooks, server: Server, tmp_path: Path,
                                                                     sent: signal.Signals) -> None:
    # `nohup memory ...` (hangup ignored), `memory ... &` in a script (interrupt ignored): the
    # command goes on and finishes, as its own process would
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)
    for token, env in (("uno", hooks.environ()), ("dos", hooks.environ(MEMORY_HOOK_SERVER="off"))):
        ignoring = ["sh", "-c", f'trap "" {sent.name[3:]}; exec "$@"', "sh"]
        proc = subprocess.Popen([*ignoring, sys.executable, "-S", "-X", "importtime", str(REPO / "scripts" / "memory.py"),
                                 "write", f"Ignored {token}", "--file", str(fifo)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=hooks.project, env=env)
        with open(fifo, "wb") as body:  # opened once the command opens it to read: it is running
            proc.send_signal(sent)
            body.write(b"Finished all the same.")
        out, err = proc.communicate(timeout=60)
        run = Run(proc.returncode, out.decode(), err.decode())
        assert run.served == (token == "uno")
        assert (run.code, own_lines(run.err)) == (0, ""), token
    assert {path.name for path in hooks.memory_dir.glob("learning-ignored-*.md")} == {
        "learning-ignored-uno.md", "learning-ignored-dos.md"}


def test_a_command_outlives_its_server_leaving_and_gets_its_exit_status(hooks: Hooks, plugin_copy: Path,
                                                                       tmp_path: Path) -> None:
    # the plugin is updated (its code changes) while a command runs: the server stops listening
    # at the next call, but the command finishes and its caller exits as the command did
    server = Server(plugin_copy, hooks.environ())
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)
    try:
        proc = subprocess.Popen([sys.executable, "-S", "-X", "importtime", str(plugin_copy / "scripts" / "memory.py"),
                                 "write", "Outlived its server", "--file", str(fifo)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=hooks.project, env=hooks.environ())
        with open(fifo, "wb") as body:  # the command is running
            changed = plugin_copy / "scripts" / "_lib" / "catalog" / "bm25.py"
            status = changed.stat()
            os.utime(changed, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
            after = hook(plugin_copy, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project)
            assert not after.served and GOTCHA_TITLE in after.out  # the server has stopped listening
            body.write(b"Written after the server stopped listening.")
        out, err = proc.communicate(timeout=60)
        run = Run(proc.returncode, out.decode(), err.decode())
        assert run.served and (run.code, own_lines(run.err)) == (0, "")
        assert run.out.startswith("Created learning-outlived-its-server ")
        assert server.proc.wait(timeout=60) == 0 and not server.socket.exists()
    finally:
        server.stop()


def reader_of(fifo: Path) -> int:
    """The pid of the process holding `fifo` open (the command reading it, wherever it runs)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if any(os.readlink(fd) == str(fifo) for fd in (entry / "fd").iterdir()):
                    return int(entry.name)
            except OSError:
                continue
    raise AssertionError(f"nobody holds {fifo} open")


@pytest.mark.skipif(not (Path("/proc/self/fd").is_dir() and shutil.which("taskset") and shutil.which("nice")),
                    reason="finds the command's process through /proc; runs it under nice and taskset")
def test_a_served_command_keeps_its_niceness_and_cpus(hooks: Hooks, server: Server, tmp_path: Path) -> None:
    # `nice memory reindex`, `taskset -c 0 memory ...`: the work runs as niced and pinned as its own process would
    fifo = tmp_path / "body.fifo"
    os.mkfifo(fifo)
    cpus = sorted(os.sched_getaffinity(0))[:1]
    wanted = (os.getpriority(os.PRIO_PROCESS, 0) + 5, set(cpus))
    for env in (hooks.environ(), hooks.environ(MEMORY_HOOK_SERVER="off")):
        proc = subprocess.Popen(["nice", "-n", "5", "taskset", "-c", str(cpus[0]), sys.executable, "-S",
                                 str(REPO / "scripts" / "memory.py"), "write", "Niced", "--file", str(fifo)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=hooks.project, env=env)
        with open(fifo, "wb"):  # the command is reading it: it runs
            worker = reader_of(fifo)
            found = (os.getpriority(os.PRIO_PROCESS, worker), os.sched_getaffinity(worker))
        assert proc.wait(timeout=60) == 0, proc.stderr.read()  # type: ignore[union-attr]
        assert found == wanted, env.get("MEMORY_HOOK_SERVER")


def test_no_more_than_eight_servers_run_for_a_user(hooks: Hooks) -> None:
    # plugin copies, interpreters and start-up environments each have a server: past eight, the
    # callers do their work themselves rather than fill the memory with idle servers
    import fcntl

    directory = Path(hooks.environ()["TMPDIR"]) / f"claude-memory-{os.getuid()}"
    directory.mkdir(mode=0o700)
    held = []
    for number in range(8):
        handle = open(directory / f"hooks-other{number}.lock", "w")
        fcntl.flock(handle, fcntl.LOCK_EX)
        held.append(handle)
    proc = subprocess.run([sys.executable, "-S", str(REPO / "hooks" / "_server.py")], env=hooks.environ(),
                          capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"no server: 8 others are running\n")
    held.pop().close()  # one leaves: there is room again
    server = Server(REPO, hooks.environ())
    try:
        assert hook(REPO, "memory-context", read_payload(hooks), hooks.environ(), cwd=hooks.project).served
    finally:
        server.stop()
        for handle in held:
            handle.close()


REHEARSE = """
import os, sys, tempfile
sys.path.insert(0, sys.argv[1])
def descriptors():
    return {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")}
before = descriptors()
from _lib.session import hookserver
hookserver.rehearse()
left = {fd: path for fd, path in descriptors().items() if before.get(fd) != path and "/proc/" not in path}
print(repr((left, sorted(name for name in os.listdir(tempfile.gettempdir()) if name.startswith("memory-rehearsal-")),
            "yaml" in sys.modules)))
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists descriptors through /proc")
def test_the_servers_rehearsal_leaves_nothing_behind(hooks: Hooks, tmp_path: Path) -> None:
    # the server runs the hot hooks on a throwaway project before forking (their bytecode
    # specialised once): nothing open, nothing left, nothing of the user's touched
    runtime = tmp_path / "tmp"
    runtime.mkdir()
    env = hooks.environ(TMPDIR=str(runtime))  # (HOME and the plugin data directory: the user's)
    before = sorted(tmp_path.rglob("*"))
    proc = subprocess.run([sys.executable, "-S", "-c", REHEARSE, str(REPO / "scripts")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(({}, [], False))
    assert sorted(tmp_path.rglob("*")) == before
