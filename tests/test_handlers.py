"""The hook handlers called in-process (scripts/_lib/session/handlers.py), one test module for all.

What a hook prints is its handler's answer (hooks/_hook.py only reads stdin, calls it and
prints), so these tests call the handlers directly with Claude Code's payloads: the payloads
recorded from a real session (tests/hook_payloads.jsonl) and variations of them. The process
side (exit codes, failing open, the launcher) stays in test_hooks.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO

from _lib.ops import store
from _lib.session import handlers
from _lib.session.hookio import HookRun
from _lib.workspace.scopes import Workspace

RECORDED = [json.loads(line)["stdin"] for line in (REPO / "tests" / "hook_payloads.jsonl").read_text().splitlines()]
REGISTERED = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
SESSION = "504a77a6-78c7-4248-a1f8-0366310199d3"


class Session:
    """A fake HOME, a project (a git checkout by its .git) and the plugin data directory, in-process."""

    def __init__(self, root: Path) -> None:
        self.home, self.project, self.data = root / "home", root / "project", root / "plugin-data"
        for directory in (self.home, self.project / ".git", self.data):
            directory.mkdir(parents=True)
        self.memory_dir = self.project / ".claude" / "memory"
        self.memory_dir.mkdir(parents=True)
        (self.memory_dir / "config.json").write_text(json.dumps({"embedding": {"provider": "disabled"}}))
        self.env = {"HOME": str(self.home), "CLAUDE_PLUGIN_DATA": str(self.data), "PATH": "/usr/bin:/bin"}
        self.run = HookRun(self.env, name="test")

    def call(self, hook: str, payload: dict[str, Any]) -> Any:
        return handlers.HANDLERS[hook](payload, self.run)

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": SESSION, "cwd": str(self.project), "hook_event_name": event,
                "transcript_path": str(self.home / f"{SESSION}.jsonl"), **fields}

    def write(self, title: str, memory_type: str, tags: str, content: str, **fields: Any) -> str:
        new = store.NewMemory(title, memory_type, tags, content, fields=fields)
        return store.write(Workspace(self.project, self.env), new).slug

    def state(self) -> dict[str, Any]:
        path = self.data / "sessions" / f"{SESSION}.json"
        return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)


def context_of(answer: Any, event: str) -> str:
    assert answer is not None, "no answer"
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return answer["hookSpecificOutput"]["additionalContext"]


def registered(event: str, payload: dict[str, Any]) -> list[str]:
    """The hooks hooks.json runs for this payload (matchers are tool names, or SessionStart sources)."""
    names = []
    for group in REGISTERED.get(event, []):
        subject = payload.get("tool_name") if "tool_name" in payload else payload.get("source")
        if group.get("matcher") and subject not in group["matcher"].split("|"):
            continue
        names += [hook["args"][1] for hook in group["hooks"] if hook["args"][1] != "bootstrap"]
    return names


# -- every recorded payload --------------------------------------------------------------------

def test_every_handler_hooks_json_names_exists() -> None:
    named = {hook["args"][1] for groups in REGISTERED.values() for group in groups for hook in group["hooks"]}
    assert named == set(handlers.HANDLERS)
    scripts = {path.stem: path for path in (REPO / "hooks").glob("*.py") if not path.stem.startswith("_")}
    assert set(scripts) == named  # (_hook.py and _server.py run them)
    for name, path in scripts.items():  # each script answers as its own hook
        assert path.read_text().rstrip().endswith(f'run_hook("{name}")'), name


@pytest.mark.parametrize("recorded", RECORDED, ids=[f"{index}-{payload['hook_event_name']}"
                                                      for index, payload in enumerate(RECORDED)])
def test_each_recorded_payload_is_handled_by_its_hooks(session: Session, recorded: dict[str, Any]) -> None:
    """Claude Code's own payloads (paths moved into the test's project) go through every hook that
    hooks.json registers for them, in order, and each answer is one Claude Code accepts."""
    session.write("Greeting scripts print to stdout", "gotcha", "echo,shell", "echo writes a newline; use printf.")
    payload = json.loads(json.dumps(recorded).replace("/home/user/project", str(session.project))
                         .replace("/home/user", str(session.home)))
    event = payload["hook_event_name"]
    for name in registered(event, payload):
        answer = session.call(name, payload)
        if answer is None:
            continue
        assert json.loads(json.dumps(answer, ensure_ascii=False)) == answer
        if "systemMessage" in answer:
            assert name == "subagent-validation"
            continue
        specific = answer["hookSpecificOutput"]
        assert specific["hookEventName"] == event
        assert specific.get("additionalContext") or specific.get("permissionDecision") == "deny"


# -- PostToolUse (Read) ------------------------------------------------------------------------

def test_read_warns_about_a_gotcha_once_per_session(session: Session) -> None:
    slug = session.write("Token refresh must be serialised", "gotcha", "auth", "Two refreshes race; queue them.",
                         paths=["src/auth/**"])
    read = session.payload("PostToolUse", tool_name="Read",
                           tool_input={"file_path": str(session.project / "src/auth/login.ts")})
    text = context_of(session.call("memory-context", read), "PostToolUse")
    assert text.startswith("Known gotchas for src/auth/login.ts")
    assert f"[{slug}, project]" in text and "Two refreshes race; queue them." in text
    assert session.state()["gotchas"] == [slug]
    assert session.call("memory-context", read) is None  # shown once


def test_read_of_a_memory_file_or_without_a_path_says_nothing(session: Session) -> None:
    slug = session.write("Memory files gotcha", "gotcha", "memory", "Never edit by hand.", paths=["**"])
    memory_file = session.payload("PostToolUse", tool_name="Read",
                                  tool_input={"file_path": str(session.memory_dir / f"{slug}.md")})
    assert session.call("memory-context", memory_file) is None
    for tool_input in ({}, {"file_path": ""}, {"file_path": 3}, "src/x.py"):
        assert session.call("memory-context", session.payload("PostToolUse", tool_input=tool_input)) is None


def test_without_a_session_id_every_read_is_answered(session: Session) -> None:
    session.write("Auth gotcha", "gotcha", "auth", "Careful.")
    read = dict(session.payload("PostToolUse", tool_name="Read",
                                tool_input={"file_path": str(session.project / "auth/x.py")}), session_id="../x")
    for _ in range(2):
        assert "Auth gotcha" in context_of(session.call("memory-context", read), "PostToolUse")
    assert not (session.data / "sessions").exists()


# -- PostToolUse (Bash) ------------------------------------------------------------------------

def test_bash_warns_about_the_programs_and_errors_of_a_command(session: Session) -> None:
    session.write("Docker compose needs the env file", "gotcha", "docker", "Pass --env-file.")
    session.write("Migrations lock the orders table", "gotcha", "database",
                  "The migration deadlock on orders table happens when the worker runs.")
    failed = session.payload("PostToolUseFailure", tool_name="Bash",
                             tool_input={"command": "docker compose up && ./migrate"},
                             error="Exit code 1\nERROR: deadlock detected on orders table (migration worker)")
    text = context_of(session.call("memory-context-bash", failed), "PostToolUseFailure")
    assert text.startswith("Known gotchas for `docker compose up && ./migrate`")
    assert "Docker compose needs the env file" in text and "Migrations lock the orders table" in text


def test_bash_finds_a_gotcha_by_its_error_text_alone(session: Session) -> None:
    session.write("Migrations lock the orders table", "gotcha", "database",
                  "The migration deadlock on orders table happens when the worker runs.")
    failed = session.payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "./migrate"},
                             error="Exit code 1\nERROR: deadlock detected on orders table (migration worker)")
    assert "Migrations lock the orders table" in context_of(session.call("memory-context-bash", failed),
                                                            "PostToolUseFailure")


@pytest.mark.parametrize("command", ["memory write x", "'memory' search y", "/opt/plugin/bin/memory list",
                                     "   ", ""])
def test_bash_says_nothing_for_the_plugins_own_commands(session: Session, command: str) -> None:
    session.write("Memory command gotcha", "gotcha", "memory,write,list", "x")
    bash = session.payload("PostToolUse", tool_name="Bash", tool_input={"command": command})
    assert session.call("memory-context-bash", bash) is None


# -- edits, captures and reminders -------------------------------------------------------------

def test_edits_are_counted_and_a_memory_command_clears_the_count(session: Session) -> None:
    for index in (1, 2, 2, 3):
        edit = session.payload("PostToolUse", tool_name="Edit",
                               tool_input={"file_path": f"/p/src/f{index}.ts", "old_string": "a", "new_string": "b"})
        assert session.call("clear-memory-check-flag", edit) is None
    state = session.state()
    assert state["edits_since_capture"] == 4 and state["files_changed"] == ["/p/src/f1.ts", "/p/src/f2.ts",
                                                                           "/p/src/f3.ts"]
    captured = session.payload("PostToolUse", tool_name="Bash", tool_input={"command": "memory write 'T' --type x"},
                               tool_response={"stdout": "Created learning-t (project)\n", "stderr": ""})
    session.call("clear-memory-check-flag", captured)
    state = session.state()
    assert state["edits_since_capture"] == 0 and state["memories_written"] == ["learning-t"]


def test_the_skill_reminder_comes_after_five_edits_then_rests_six_prompts(session: Session) -> None:
    prompt = session.payload("UserPromptSubmit", prompt="next step")
    for index in range(5):
        session.call("clear-memory-check-flag", session.payload("PostToolUse", tool_name="Write",
                                                                tool_input={"file_path": f"/p/{index}"}))
    text = context_of(session.call("memory-skill-reminder", prompt), "UserPromptSubmit")
    assert text.startswith("Memory: 5 file edits since the last memory was saved.")
    answers = [session.call("memory-skill-reminder", prompt) for _ in range(6)]
    assert answers[:5] == [None] * 5 and answers[5] is not None
    notification = session.payload("UserPromptSubmit", prompt="  <task-notification>done</task-notification>")
    assert session.call("memory-skill-reminder", notification) is None


def test_the_think_reminder_answers_design_questions_first_then_every_tenth(session: Session) -> None:
    question = session.payload("UserPromptSubmit", prompt="Should we use Postgres or SQLite for the queue?")
    assert session.call("memory-think-reminder", session.payload("UserPromptSubmit", prompt="fix the typo")) is None
    first = context_of(session.call("memory-think-reminder", question), "UserPromptSubmit")
    assert first.startswith("Memory: this looks like a design decision.")
    assert [session.call("memory-think-reminder", question) is None for _ in range(10)] == [True] * 9 + [False]
    assert session.call("memory-think-reminder", dict(question, session_id=None)) is not None


# -- PreToolUse --------------------------------------------------------------------------------

def test_file_tools_are_denied_in_memory_directories_and_allowed_elsewhere(session: Session) -> None:
    inside = session.payload("PreToolUse", tool_name="Write",
                             tool_input={"file_path": str(session.memory_dir / "x.md"), "content": "hi"})
    answer = session.call("protect-memory-directory", inside)["hookSpecificOutput"]
    assert (answer["hookEventName"], answer["permissionDecision"]) == ("PreToolUse", "deny")
    assert "is in the project memory directory; memory files are managed" in answer["permissionDecisionReason"]
    outside = dict(inside, tool_input={"file_path": str(session.project / "w.txt"), "content": "hi"})
    assert session.call("protect-memory-directory", outside) is None
    bash = session.payload("PreToolUse", tool_name="Bash", tool_input={"command": "rm -rf .claude"})
    assert "would remove, move or overwrite" in session.call("protect-memory-directory", bash)[
        "hookSpecificOutput"]["permissionDecisionReason"]


# -- UserPromptSubmit and SessionStart ---------------------------------------------------------

def test_the_prompt_gets_relevant_memories_once_unless_they_change(session: Session) -> None:
    slug = session.write("Invoices are rounded per line", "decision", "billing,invoices",
                         "Round each invoice line, then sum, to match the ledger.")
    prompt = session.payload("UserPromptSubmit", prompt="How are invoices rounded in billing?")
    text = context_of(session.call("memory-prompt-context", prompt), "UserPromptSubmit")
    assert text.startswith("Relevant memories") and slug in text
    assert session.call("memory-prompt-context", prompt) is None
    assert f"project:{slug}" in session.state()["injected"]
    store.update(Workspace(session.project, session.env), slug,
                 store.Changes(content="Round each invoice line half-up, then sum."))
    assert "half-up" in context_of(session.call("memory-prompt-context", prompt), "UserPromptSubmit")


def test_session_start_summarises_memory_and_after_compaction_brings_back_the_notes(session: Session) -> None:
    session.write("Invoices are rounded per line", "decision", "billing", "Round each line.")
    start = session.payload("SessionStart", source="startup")
    assert "Invoices are rounded per line" in context_of(session.call("start-memory-index", start), "SessionStart")
    session.call("clear-memory-check-flag", session.payload("PostToolUse", tool_name="Edit",
                                                            tool_input={"file_path": "src/billing/round.ts"}))
    assert session.call("pre-compact-memory", session.payload("PreCompact", trigger="auto")) is None
    assert "src/billing/round.ts" in session.state()["compact_notes"]
    compact = context_of(session.call("start-memory-index", dict(start, source="compact")), "SessionStart")
    assert "## Before compaction this session" in compact and "src/billing/round.ts" in compact


def test_session_start_exports_the_data_directory_for_bin_memory(session: Session) -> None:
    env_file = session.home / "env.sh"
    session.env["CLAUDE_ENV_FILE"] = str(env_file)
    session.call("start-memory-index", session.payload("SessionStart", source="startup"))
    assert env_file.read_text() == f"export CLAUDE_MEMORY_DATA={session.data}\n"


def test_maintenance_runs_at_startup_only(session: Session) -> None:
    stale = session.data / "sessions" / "old.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    import os

    os.utime(stale, (0, 0))
    assert session.call("maintenance", session.payload("SessionStart", source="resume")) is None
    assert stale.exists()
    assert session.call("maintenance", session.payload("SessionStart", source="startup")) is None
    assert not stale.exists() and (session.memory_dir / "index.md").exists()


# -- SubagentStop, TodoWrite, SessionEnd --------------------------------------------------------

def test_a_subagents_report_becomes_a_discovery_memory(session: Session) -> None:
    report = "## Findings\nThe queue keeps one refresh in flight per user; tests fake the clock. " * 3
    stop = session.payload("SubagentStop", agent_type="memory:recall", last_assistant_message=report)
    assert session.call("capture-subagent", stop) is None
    [written] = session.state()["memories_written"]
    assert (session.memory_dir / "local").is_dir() or any(session.memory_dir.rglob(f"{written}.md"))
    for empty in ("", "  "):
        assert session.call("capture-subagent", dict(stop, agent_type=empty)) is None
        assert session.call("subagent-validation", dict(stop, agent_type=empty)) is None


def test_todos_become_tasks_of_the_session(session: Session) -> None:
    todos = [{"content": "Write the parser", "status": "completed", "activeForm": "Writing"},
             {"content": "Test the parser", "status": "in_progress", "activeForm": "Testing"}]
    todo = session.payload("PostToolUse", tool_name="TodoWrite", tool_input={"todos": todos})
    assert session.call("todowrite-capture", todo) is None
    tasks = [json.loads(path.read_text()) for path in (session.memory_dir / "tasks").glob("*.json")]
    by_title = {task["title"]: task["status"] for task in tasks}
    assert by_title["Write the parser"] == "done" and by_title["Test the parser"] == "in-progress"
    assert session.call("todowrite-capture", dict(todo, tool_name="Write")) is None


def test_session_end_writes_the_session_memory_and_forgets_the_state(session: Session) -> None:
    session.call("clear-memory-check-flag", session.payload("PostToolUse", tool_name="Edit",
                                                            tool_input={"file_path": "src/a.ts"}))
    assert session.call("end-memory", session.payload("SessionEnd", reason="resume")) is None
    assert session.state(), "a resumed session keeps its state"
    assert session.call("end-memory", session.payload("SessionEnd", reason="other")) is None
    assert session.state() == {}
    [saved] = [path for path in session.memory_dir.rglob("*.md") if "src/a.ts" in path.read_text()]
    assert "## Files changed" in saved.read_text()
