"""PostToolUse (Bash): warn about gotchas relevant to the command and to errors in its output."""

from __future__ import annotations

from _hook import context, run_hook, session_of, workspace_for

from _lib.session import gotchas
from _lib.session.output import shell_quote


def handle(payload: dict) -> dict | None:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip():
        return None
    program = command.split(None, 1)[0].strip("\"'")
    if program == "memory" or program.endswith("/bin/memory"):  # also "${CLAUDE_PLUGIN_ROOT}/bin/memory"
        return None
    response = payload.get("tool_response")
    output = ""
    if isinstance(response, dict):
        output = "\n".join(str(response.get(key) or "") for key in ("stdout", "stderr"))
    elif isinstance(response, str):
        output = response
    if isinstance(payload.get("error"), str):  # PostToolUseFailure: "Exit code N\n<stderr>"
        output = "\n".join(filter(None, (output, payload["error"])))
    event = "PostToolUseFailure" if payload.get("hook_event_name") == "PostToolUseFailure" else "PostToolUse"
    workspace, _ = workspace_for(payload, notices=True)
    limit = int(workspace.config.get("injection.gotchas_per_read", 3))
    session = session_of(payload)

    first = command.strip().splitlines()[0]
    subject = f"`{first[:80]}{'...' if len(first) > 80 else ''}`"

    def pick(state: dict) -> str:
        return gotchas.warnings_once(workspace, state, lambda shown: gotchas.for_command(
            workspace, command, output, limit=limit, exclude=shown), subject,
            f"memory gotchas --command {shell_quote(first[:200])}")

    # with no gotcha, still what the command deleted from memory, if anything
    return context(event, session.update(pick) if session else pick({}), workspace)


run_hook(handle)
