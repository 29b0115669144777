"""Prove the offline e2e harness with the probe plugin (tests/e2e/fixtures/probe-plugin).

Tests marked ``e2e`` run the real, pinned Claude Code CLI in a loopback-only network namespace
(about 1 s per CLI run).  The stand-in tests at the bottom need no CLI.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from e2e.harness import (
    MockAnthropic,
    Session,
    find_marker,
    install_from_marketplace,
    load_requests,
    make_directory_marketplace,
    run_session,
    texts,
    tool_results,
    validate_plugin,
)

SESSION_START = "SessionStart hook additional context: "
POST_READ = "PostToolUse:Read hook additional context: "
PRE_WRITE_ERROR = "PreToolUse:Write hook error: "


def probe_events(session: Session, plugin_id: str = "probe-inline") -> list[dict[str, Any]]:
    """Hook payloads the probe logged in its data dir."""
    log = session.home / ".claude" / "plugins" / "data" / plugin_id / "probe-events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ----------------------------------------------------------------------------- real CLI


@pytest.mark.e2e
def test_session_start_context_reaches_first_request(
        claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    probe_log = tmp_path / "probe.jsonl"
    run = session.run("hello", extra_env={"PROBE_LOG": str(probe_log)})  # env reaches hooks
    assert run.returncode == 0, run.describe()
    first = run.model_requests[0]
    assert any(SESSION_START + "PROBE-SESSION-START startup" in t for t in texts(first)), \
        run.describe()
    events = [json.loads(line)["event"] for line in probe_log.read_text().splitlines()]
    assert events[:2] == ["SessionStart", "UserPromptSubmit"]


@pytest.mark.e2e
def test_post_tool_use_context_follows_read(
        claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    notes = session.project / "notes.txt"
    notes.write_text("the-notes-content\n")
    run = session.run("read the notes",
                      script=[{"name": "Read", "input": {"file_path": str(notes)}}])
    assert run.returncode == 0, run.describe()
    hits = run.find_marker(POST_READ)
    assert [h.request_index for h in hits] == [1], run.describe()
    assert hits[0].after == "PROBE-POST-READ notes.txt"
    [result] = tool_results(run.model_requests[1])
    assert not result.is_error and "the-notes-content" in result.text
    [post] = [e for e in probe_events(session) if e["event"] == "PostToolUse"]
    assert post["stdin"]["tool_input"] == {"file_path": str(notes)}


@pytest.mark.e2e
def test_pre_tool_use_deny_blocks_write(
        claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    forbidden, allowed = session.project / "forbidden.txt", session.project / "allowed.txt"
    run = session.run(
        "write two files",
        script=[{"name": "Write", "input": {"file_path": str(forbidden), "content": "no\n"}},
                {"name": "Write", "input": {"file_path": str(allowed), "content": "yes\n"}}],
        extra_args=["--permission-mode", "acceptEdits"])
    assert run.returncode == 0, run.describe()
    denied, written = tool_results(run.model_requests[-1])
    assert denied.is_error
    assert denied.text == f"{PRE_WRITE_ERROR}PROBE-DENY: writes to {forbidden} are blocked"
    assert not forbidden.exists()
    assert not written.is_error and allowed.read_text() == "yes\n"  # control: Write works


@pytest.mark.e2e
def test_plugin_command_expands(claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    run = session.run("/probe:hello Bob")
    assert run.returncode == 0, run.describe()
    hits = run.find_marker("PROBE-HELLO-COMMAND-BODY: ")
    assert hits and hits[0].after.strip() == "say hello to Bob.", run.describe()


@pytest.mark.e2e
def test_continue_resumes_same_conversation(
        claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    notes = session.project / "notes.txt"
    notes.write_text("x\n")
    session.run("first", script=[{"name": "Read", "input": {"file_path": str(notes)}}])
    # The second run's script starts at call 0 again although the history has a tool_result.
    second = session.run("second", continue_session=True,
                         script=[{"name": "Read", "input": {"file_path": str(notes)}}])
    assert second.returncode == 0, second.describe()
    last = second.model_requests[-1]
    assert len(tool_results(last)) == 2
    assert find_marker([last], SESSION_START + "PROBE-SESSION-START resume")
    assert any("first" == t for t in texts(last, roles=("user",)))


@pytest.mark.e2e
def test_subagent_gets_text_not_the_script(
        claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    session = Session(tmp_path, plugin_dirs=[probe_plugin], claude=claude_cli)
    call = {"name": "Agent", "input": {"description": "Help", "prompt": "say hi",
                                       "subagent_type": "probe:helper"}}
    run = session.run("delegate", script=[call])
    assert run.returncode == 0, run.describe()
    sub = [r for r in run.model_requests if find_marker([r], "PROBE-HELPER-AGENT-BODY")]
    assert len(sub) == 1, run.describe()  # the subagent was answered with text at once
    # Only one tool call was ever made: the subagent did not replay the main script.
    tool_use_ids = {block["id"] for r in run.model_requests for m in r["body"]["messages"]
                    if m["role"] == "assistant" and isinstance(m["content"], list)
                    for block in m["content"] if block.get("type") == "tool_use"}
    assert len(tool_use_ids) == 1, tool_use_ids


@pytest.mark.e2e
def test_validate_plugin_strict(claude_cli: str, probe_plugin: Path, tmp_path: Path) -> None:
    rc, output = validate_plugin(probe_plugin, strict=True, claude=claude_cli)
    assert rc == 0, output
    assert "commands: probe:hello" in output and "Validation passed" in output
    broken = tmp_path / "broken"
    shutil.copytree(probe_plugin, broken)
    manifest = broken / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps(dict(json.loads(manifest.read_text()), author="Someone")))
    rc, output = validate_plugin(broken, strict=True, claude=claude_cli)
    assert rc == 1 and "author: Invalid input" in output, output


@pytest.mark.e2e
def test_directory_marketplace_install_offline(
        claude_cli: str, probe_plugin: Path, tmp_path: Path,
        record_property: Any) -> None:
    mkt = make_directory_marketplace(probe_plugin, tmp_path / "mkt", marketplace="probe-mkt")
    rc, output = validate_plugin(mkt, strict=True, claude=claude_cli)
    assert rc == 0, output
    home = tmp_path / "home"
    installed = install_from_marketplace(mkt, "probe", "probe-mkt", home=home, claude=claude_cli)
    record_property("marketplace_install_seconds", round(installed.elapsed, 3))
    print(f"marketplace add+install took {installed.elapsed:.2f}s")
    assert installed.ok, installed.output
    assert "Successfully installed plugin: probe@probe-mkt" in installed.output
    registry = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    assert "probe@probe-mkt" in registry["plugins"]
    # The installed plugin's hooks run in a later session without --plugin-dir.
    run = run_session("hi", home=home, project=tmp_path / "project", run_dir=tmp_path / "run",
                      claude=claude_cli)
    assert run.find_marker(SESSION_START + "PROBE-SESSION-START startup"), run.describe()


# ----------------------------------------------------------------------------- stand-in only


def _post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["content-type"], response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["content-type"], err.read()


def test_stand_in_protocol(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    script = [{"name": "Bash", "input": {"command": "echo hi", "description": "greet"}}]
    first_turn: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    main: dict[str, Any] = {"model": "m", "tools": [{"name": "Bash"}], "messages": first_turn}
    with MockAnthropic(script, log) as server:
        status, ctype, data = _post(server.base_url + "/v1/messages?beta=true", main)
        assert status == 200 and ctype == "application/json"
        reply = json.loads(data)
        assert reply["stop_reason"] == "tool_use"
        tool_use = reply["content"][0]
        assert tool_use["name"] == "Bash" and tool_use["input"] == script[0]["input"]
        # Stateless: a request that already holds this call's result gets the text answer.
        follow = dict(main, stream=True, messages=first_turn + [
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [{"type": "tool_result",
                                          "tool_use_id": tool_use["id"], "content": "hi"}]}])
        status, ctype, data = _post(server.base_url + "/v1/messages", follow)
        assert status == 200 and ctype == "text/event-stream"
        assert b'"text_delta", "text": "Done (mock)."' in data and b"event: message_stop" in data
        subagent = dict(main, system=[{"type": "text", "text": "x; cc_is_subagent=true;"}])
        assert json.loads(_post(server.base_url + "/v1/messages", subagent)[2])[
            "stop_reason"] == "end_turn"
        assert json.loads(_post(server.base_url + "/v1/messages/count_tokens", main)[2]) == {
            "input_tokens": 100}
        status, _, data = _post(server.base_url + "/v1/other", {})
        assert status == 404 and json.loads(data)["error"]["type"] == "not_found_error"
        head = urllib.request.Request(server.base_url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as response:
            assert response.status == 200
    logged = load_requests(log)
    assert [r["path"] for r in logged] == [
        "/v1/messages?beta=true", "/v1/messages", "/v1/messages", "/v1/messages/count_tokens",
        "/v1/other", "/"]
    assert logged[0]["body"] == main


def test_text_helpers() -> None:
    request = {"method": "POST", "path": "/v1/messages", "body": {
        "system": [{"type": "text", "text": "top"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "u1"}]},
            {"role": "system", "content": "PostToolUse:Read hook additional context: ctx"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t0", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0",
                                          "is_error": True,
                                          "content": [{"type": "text", "text": "boom"}]}]},
        ]}}
    assert {"top", "u1", "boom"} <= set(texts(request))
    [hit] = find_marker([request], POST_READ)
    assert (hit.request_index, hit.after) == (0, "ctx")
    [result] = tool_results(request)
    assert (result.tool_use_id, result.is_error, result.text) == ("t0", True, "boom")
