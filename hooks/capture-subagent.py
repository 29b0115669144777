"""SubagentStop: keep a subagent's final report as a discovery memory."""

from __future__ import annotations

from _hook import run_hook, session_of, workspace_for

from _lib.session import capture


def handle(payload: dict) -> dict | None:
    agent = payload.get("agent_type")
    message = payload.get("last_assistant_message")
    if not isinstance(agent, str) or not agent.strip() or not isinstance(message, str):
        return None  # compaction fires SubagentStop with an empty agent_type: not a finding
    workspace, _ = workspace_for(payload)
    slug = capture.record_discovery(workspace, agent.strip(), message, payload.get("session_id"))
    session = session_of(payload)
    if slug and session is not None:
        session.update(lambda state: capture.note_written(state, slug))
    return None


run_hook(handle)
