"""PostToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash): track edits and memory captures.

Edits raise the session's "memory check" counter that memory-skill-reminder reads; a
`memory write`/`update`/`link`/`think` run clears it. Changed files and written memories
are kept for the session memory.
"""

from __future__ import annotations

import re

from _hook import run_hook, session_of

EDIT_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
MEMORY_COMMAND = re.compile(r"(?:^|[\s;&|/'\"])memory['\"]?\s+(write|update|link|think|commit)\b")
CREATED = re.compile(r"^(?:Created|Updated) ([a-z0-9]+(?:-[a-z0-9]+)*) ", re.M)
LIMIT = 500


def handle(payload: dict) -> dict | None:
    session = session_of(payload)
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    if session is None:
        return None
    if tool in EDIT_TOOLS:
        path = tool_input.get(EDIT_TOOLS[tool])
        if isinstance(path, str) and path:
            session.update(lambda state: _edited(state, path))
    elif tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str) and MEMORY_COMMAND.search(command):
            response = payload.get("tool_response")
            output = str(response.get("stdout") or "") if isinstance(response, dict) else str(response or "")
            session.update(lambda state: _captured(state, CREATED.findall(output)))
    return None


def _edited(state: dict, path: str) -> None:
    state["edits_since_capture"] = int(state.get("edits_since_capture") or 0) + 1
    files = state.setdefault("files_changed", [])
    if path not in files and len(files) < LIMIT:
        files.append(path)


def _captured(state: dict, slugs: list[str]) -> None:
    state["edits_since_capture"] = 0
    written = state.setdefault("memories_written", [])
    for slug in slugs:
        if slug not in written and len(written) < LIMIT:
            written.append(slug)


run_hook(handle)
