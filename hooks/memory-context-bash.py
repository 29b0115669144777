"""PostToolUse (Bash): warn about gotchas relevant to the command and to errors in its output."""

from __future__ import annotations

from _hook import context, run_hook, session_of, workspace_for

from _lib.session import gotchas


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

    def pick(state: dict) -> list:
        shown = state.setdefault("gotchas", [])
        matches = gotchas.for_command(workspace, command, output, limit=limit, exclude=shown)
        shown.extend(match.entry.slug for match in matches)
        return matches

    matches = session.update(pick) if session else pick({})
    if not matches:
        return context(event, "", workspace)  # what the command deleted from memory, if anything
    first = command.strip().splitlines()[0]
    subject = f"`{first[:80]}{'...' if len(first) > 80 else ''}`"
    return context(event, gotchas.format_warnings(matches, subject), workspace)


run_hook(handle)
