"""Claude Code's hooks run as Claude Code runs them: `sh hooks/run <name>` with a JSON payload on
stdin, in a fake HOME and git project with a plugin data directory (shared by the hook tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import REPO, SERVER_IDLE

from _lib.model import frontmatter
from _lib.session import handlers
from _lib.session.hookio import HookRun as Run

RUN = REPO / "hooks" / "run"
SH = shutil.which("sh") or "/bin/sh"


@dataclass
class HookRun:
    code: int
    out: str
    err: str

    @property
    def answer(self) -> dict[str, Any] | None:
        """The JSON object printed (exactly one, alone on stdout), or None when silent."""
        if not self.out.strip():
            return None
        lines = self.out.strip().splitlines()
        assert len(lines) == 1, f"more than one line on stdout: {self.out!r}"
        data = json.loads(lines[0])
        assert isinstance(data, dict), data
        return data

    def context(self, event: str) -> str | None:
        """The additionalContext for `event`, or None when the hook printed nothing."""
        answer = self.answer
        if answer is None:
            return None
        specific = answer["hookSpecificOutput"]
        assert specific["hookEventName"] == event, answer
        assert isinstance(specific["additionalContext"], str) and specific["additionalContext"], answer
        assert len(specific["additionalContext"]) <= 10_000  # Claude Code's cap on injected strings
        return specific["additionalContext"]


class Hooks:
    """A fake HOME, a git project and a plugin data directory; runs hooks and `memory`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.data = root / "plugin-data"
        self.bin = root / "bin"
        for directory in (self.home, self.data, self.bin):
            directory.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        # hooks/run's fallback interpreter; a script, not a symlink, which would hide a virtualenv running the tests
        (self.bin / "python3").write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")
        (self.bin / "python3").chmod(0o755)
        (self.data / "interpreter").write_text(sys.executable + "\n")  # what the bootstrap hook records
        self.session_id = str(uuid.uuid4())
        self.extra_env: dict[str, str] = {}

    # -- environment and processes --------------------------------------------------------------

    def environ(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE", "MEMORY_"))}
        env.update(HOME=str(self.home), PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
                   PYTHONDONTWRITEBYTECODE="1", CLAUDE_PLUGIN_DATA=str(self.data), MEMORY_HOOK_RAISE="1",
                   MEMORY_HOOK_SERVER_IDLE=SERVER_IDLE,
                   CLAUDE_PROJECT_DIR=str(self.project))
        env.update(self.extra_env)
        env.update(extra)
        return env

    def run(self, name: str, payload: Any = None, *, raw: bytes | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> HookRun:
        """`sh hooks/run NAME` with `payload` as JSON (or `raw` bytes) on stdin."""
        data = raw if raw is not None else json.dumps(payload).encode()
        proc = subprocess.run([SH, str(RUN), name], input=data, capture_output=True, timeout=120,
                              cwd=cwd or self.project, env=env or self.environ())
        result = HookRun(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                         proc.stderr.decode("utf-8", "replace"))
        assert result.code == 0, f"{name} exited {result.code}: {result.err}"
        assert "Traceback" not in result.err, result.err
        return result

    def call(self, name: str, payload: Any) -> HookRun:
        """The hook's handler called in-process, answering as `run` would: for the rules a hook
        applies (the process users meet is `run`'s)."""
        answer = handlers.HANDLERS[name](json.loads(json.dumps(payload)), Run(self.environ(), name))
        return HookRun(0, json.dumps(answer, ensure_ascii=False) + "\n" if answer else "", "")

    def memory(self, *args: str) -> str:
        env = self.environ(CLAUDE_MEMORY_PYTHON=sys.executable)
        proc = subprocess.run([str(REPO / "bin" / "memory"), *args], cwd=self.project, env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"memory {' '.join(args)}: {proc.stdout}{proc.stderr}"
        return proc.stdout

    def write_file(self, relpath: str, content: str) -> Path:
        path = self.project / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return path

    @property
    def memory_dir(self) -> Path:
        return self.project / ".claude" / "memory"

    @property
    def local_dir(self) -> Path:
        return self.memory_dir / "local"

    def memories(self, directory: Path, memory_type: str) -> list[Path]:
        """Memory files of one type directly in `directory`."""
        found = []
        for path in sorted(directory.glob("*.md")):
            document = frontmatter.split(path.read_text(encoding="utf-8"))
            if frontmatter.parse(document.frontmatter or "").get("type") == memory_type:
                found.append(path)
        return found

    # -- payloads in Claude Code's shape (2.1.330) ------------------------------------------------

    def common(self, event: str, session_id: str | None = None) -> dict[str, Any]:
        session = session_id or self.session_id
        return {"session_id": session,
                "transcript_path": f"{self.home}/.claude/projects/{str(self.project).replace('/', '-')}/{session}.jsonl",
                "cwd": str(self.project), "hook_event_name": event}

    def session_start(self, source: str = "startup", **kw: Any) -> dict[str, Any]:
        payload = dict(self.common("SessionStart", **kw), source=source)
        if source == "compact":
            payload.update(prompt_id=str(uuid.uuid4()), model="claude-opus-5-5")
        return payload

    def prompt(self, text_: str, **kw: Any) -> dict[str, Any]:
        return dict(self.common("UserPromptSubmit", **kw), prompt_id=str(uuid.uuid4()), permission_mode="default",
                    prompt=text_)

    def _tool(self, event: str, tool: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return dict(self.common(event, **kw), prompt_id=str(uuid.uuid4()), permission_mode="default",
                    effort={"level": "medium"}, tool_name=tool, tool_input=tool_input,
                    tool_use_id=f"toolu_{uuid.uuid4().hex[:12]}")

    def pre_tool(self, tool: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return self._tool("PreToolUse", tool, tool_input, **kw)

    def post_read(self, path: Path, **kw: Any) -> dict[str, Any]:
        content = path.read_text() if path.exists() else ""
        lines = content.count("\n") + 1
        payload = self._tool("PostToolUse", "Read", {"file_path": str(path)}, **kw)
        payload.update(tool_response={"type": "text", "file": {"filePath": str(path), "content": content,
                                                               "numLines": lines, "startLine": 1,
                                                               "totalLines": lines}}, duration_ms=11)
        return payload

    def post_bash(self, command: str, stdout: str = "", stderr: str = "", **kw: Any) -> dict[str, Any]:
        payload = self._tool("PostToolUse", "Bash", {"command": command, "description": "Run a command"}, **kw)
        payload.update(tool_response={"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False,
                                      "noOutputExpected": False}, duration_ms=35)
        return payload

    def post_edit(self, path: Path, tool: str = "Edit", **kw: Any) -> dict[str, Any]:
        if tool == "Write":
            tool_input: dict[str, Any] = {"file_path": str(path), "content": "x\n"}
            response: dict[str, Any] = {"type": "create", "filePath": str(path), "content": "x\n",
                                        "structuredPatch": [], "originalFile": None, "userModified": False}
        else:
            tool_input = {"file_path": str(path), "old_string": "a", "new_string": "b", "replace_all": False}
            response = {"filePath": str(path), "oldString": "a", "newString": "b", "originalFile": "a\n",
                        "structuredPatch": [], "userModified": False, "replaceAll": False}
        return dict(self._tool("PostToolUse", tool, tool_input, **kw), tool_response=response, duration_ms=20)

    def pre_compact(self, trigger: str = "manual", **kw: Any) -> dict[str, Any]:
        return dict(self.common("PreCompact", **kw), prompt_id=str(uuid.uuid4()), trigger=trigger,
                    custom_instructions="focus on tests" if trigger == "manual" else "")

    def subagent_stop(self, agent_type: str, message: str, **kw: Any) -> dict[str, Any]:
        agent_id = uuid.uuid4().hex[:17]
        return dict(self.common("SubagentStop", **kw), prompt_id=str(uuid.uuid4()), permission_mode="default",
                    agent_id=agent_id, agent_type=agent_type, effort={"level": "medium"}, stop_hook_active=False,
                    agent_transcript_path=f"{self.home}/.claude/projects/x/subagents/agent-{agent_id}.jsonl",
                    last_assistant_message=message, background_tasks=[], session_crons=[])

    def session_end(self, reason: str = "other", **kw: Any) -> dict[str, Any]:
        return dict(self.common("SessionEnd", **kw), prompt_id=str(uuid.uuid4()), reason=reason)
