"""What the protect-memory-directory hook refuses: direct changes to the memory directories.

Memory files changed behind the plugin's back would still be picked up, but a Write that
bypasses `memory write` skips validation, slugs, links and secret redaction, and a shell
command can destroy memories outright. So Claude's file tools are refused anywhere in a
scope's directory, and so are the shell commands that would change one or remove a directory
holding one (the rules are in bashguard, imported only for a Bash call: the hooks that ask
`protected_scope` on every Read stay light). Reading stays allowed, and so does every
`memory ...` command.
"""

from __future__ import annotations

from .protected import protected_scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..workspace.scopes import Workspace

__all__ = ["FILE_TOOLS", "HINT", "check", "protected_scope"]

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
HINT = ("memory files are managed by the memory plugin: use `memory write` and `memory update` to change them, "
        "`memory delete SLUG` or `memory update SLUG --status archived` to retire one (`memory task ...`, "
        "`memory file write` for task files, `memory config` for settings), so validation, the index and the "
        "graph stay right; what is deleted can be brought back with `memory restore SLUG` or `memory restore --all`")


def check(workspace: Workspace, tool_name: str, tool_input: dict[str, Any], cwd: str) -> str | None:
    """The reason to deny this tool call, or None to let it through."""
    if tool_name in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool_name])
        if isinstance(path, str) and path:
            scope = protected_scope(workspace, path, cwd)
            if scope:
                return f"{path} is in the {scope} memory directory; {HINT}."
        return None
    if tool_name == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str):
            from . import bashguard

            hit = bashguard.bash_target(workspace, command, cwd)
            if hit:
                relation, path, scope = hit
                if relation == bashguard.IN:
                    return f"this command would change {path} in the {scope} memory directory; {HINT}."
                return (f"this command would remove, move or overwrite {path}, which holds the {scope} memory "
                        f"directory; {HINT}.")
    return None
