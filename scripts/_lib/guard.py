"""Keeping Claude's file tools out of the memory directories (the protect-memory-directory hook).

Memory files changed behind the plugin's back would still be picked up, but a Write that
bypasses `memory write` skips validation, slugs, links and secret redaction. So direct
writes, edits, moves and deletes in any scope's directory are refused with the command
to use instead. Reading stays allowed.
"""

from __future__ import annotations

import os
import re
import shlex

from .scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
# Programs that change every path they are given.
WRITING_PROGRAMS = frozenset("rm rmdir mv touch mkdir ln tee truncate shred unlink chmod chown chgrp "
                             "install patch".split())
# Programs that change only their last path argument (the destination).
COPYING_PROGRAMS = frozenset("cp rsync scp".split())
IN_PLACE_FLAGS = {"sed": ("-i", "--in-place"), "perl": ("-i", "-pi", "-i.bak"), "ruby": ("-i",)}
CONTROL_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;"})
WRITE_REDIRECTIONS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
READ_REDIRECTIONS = frozenset({"<", "<<", "<<<"})
HINT = ("memory files are managed by the memory plugin: use `memory write`, `memory update`, `memory delete`, "
        "`memory link` (or `memory task ...`, `memory file write` for task files, `memory config` for settings) "
        "so validation, the index and the graph stay right")


def memory_directories(workspace: Workspace) -> list[tuple[str, str]]:
    """(scope name, directory) for every scope this session could write to, as absolute paths."""
    directories = [("global", str(workspace.global_root)), ("project", str(workspace.project_root))]
    enterprise = workspace.env.get("CLAUDE_MEMORY_ENTERPRISE_PATH", "").strip()
    if enterprise:
        directories.append(("enterprise", _expand(enterprise, workspace.env)))
    return [(name, os.path.abspath(directory)) for name, directory in directories]


def protected_scope(workspace: Workspace, path: str, cwd: str) -> str | None:
    """The scope whose memory directory `path` is in (symlinks resolved), else None."""
    candidate = os.path.abspath(os.path.join(cwd, _expand(path, workspace.env)))
    forms = {candidate, os.path.realpath(candidate)}
    for name, directory in memory_directories(workspace):
        roots = {directory, os.path.realpath(directory)}
        for form in forms:
            for root in roots:
                if form == root or form.startswith(root.rstrip(os.sep) + os.sep):
                    return "local" if name == "project" and _inside(form, os.path.join(root, "local")) else name
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


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
            target = bash_target(workspace, command, cwd)
            if target:
                scope = protected_scope(workspace, target, cwd)
                return f"this command would change {target} in the {scope} memory directory; {HINT}."
    return None


def _expand(token: str, env: dict[str, str] | Any) -> str:
    """`~` and `$VAR` / `${VAR}` as the shell would expand them in this environment."""
    if token == "~" or token.startswith("~/"):
        token = env.get("HOME", os.path.expanduser("~")) + token[1:]
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda match: env.get(match.group(1), match.group(0)), token)


SHELLS = frozenset("sh bash zsh dash ksh".split())
DIRECTORY_CHANGES = frozenset({"cd", "pushd"})


def bash_target(workspace: Workspace, command: str, cwd: str, depth: int = 0) -> str | None:
    """A memory path that `command` would write, move or delete, if any (as an absolute path)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()`")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: judge the raw words
        tokens = command.split()
    env = workspace.env
    where = [cwd]  # the directory later words are relative to: `cd` moves it

    def protected(token: str) -> bool:
        return bool(token) and protected_scope(workspace, _expand(token, env), where[0]) is not None

    def absolute(token: str) -> str:
        return os.path.abspath(os.path.join(where[0], _expand(token, env)))

    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in CONTROL_OPERATORS or token in ("(", ")", "$", "`"):  # subshells and $(...) too
            commands.append([])
        else:
            commands[-1].append(token)
    for words in commands:
        plain: list[str] = []
        position = 0
        while position < len(words):
            word = words[position]
            if word in WRITE_REDIRECTIONS or word in READ_REDIRECTIONS:
                target = words[position + 1] if position + 1 < len(words) else ""
                if word in WRITE_REDIRECTIONS and protected(target):
                    return absolute(target)
                position += 2
                continue
            plain.append(word)
            position += 1
        if plain and plain[0] in DIRECTORY_CHANGES:
            arguments = [word for word in plain[1:] if not word.startswith("-")]
            where[0] = absolute(arguments[0]) if arguments else env.get("HOME", where[0])
            continue
        if len(plain) >= 3 and os.path.basename(plain[0]) in SHELLS and plain[1] == "-c" and depth < 3:
            inner = bash_target(workspace, plain[2], where[0], depth + 1)
            if inner:
                return inner
            continue
        hit = _segment_target(plain, protected, env)
        if hit:
            return absolute(hit)
    return None


def _segment_target(segment: list[str], protected: Any, env: Any) -> str | None:
    """The protected path one simple command would change (redirections excluded)."""
    words = list(segment)
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in ("sudo", "env", "command",
                                                                                      "nohup", "time", "xargs")):
        words = words[1:]
    if not words:
        return None
    program = os.path.basename(words[0])
    arguments = [word for word in words[1:] if not word.startswith("-")]
    if program in WRITING_PROGRAMS:
        return next((_expand(word, env) for word in arguments if protected(word)), None)
    if program in COPYING_PROGRAMS and arguments:
        destination = _target_directory(words) if program == "cp" else None  # `cp -t DIR src...`
        destination = destination if destination is not None else arguments[-1]
        if protected(destination):
            return _expand(destination, env)
    if program in IN_PLACE_FLAGS and any(word.startswith(IN_PLACE_FLAGS[program]) for word in words[1:]):
        return next((_expand(word, env) for word in arguments if protected(word)), None)
    if program == "tar" and (words[1:2] and "x" in words[1] and not words[1].startswith("-") or any(
            word in ("--extract", "--get") or word.startswith("-") and not word.startswith("--") and "x" in word
            for word in words[1:])):
        for index, word in enumerate(words):
            directory = words[index + 1] if word == "-C" and index + 1 < len(words) else \
                word.split("=", 1)[1] if word.startswith("--directory=") else None
            if directory and protected(directory):
                return _expand(directory, env)
    if program == "dd":
        return next((_expand(word[3:], env) for word in words if word.startswith("of=") and protected(word[3:])), None)
    if program == "find" and any(word in ("-delete", "-exec", "-execdir") for word in words):
        return next((_expand(word, env) for word in arguments if protected(word)), None)
    if program == "git" and len(words) > 1 and words[1] in ("rm", "mv", "checkout", "restore", "clean", "reset"):
        return next((_expand(word, env) for word in arguments[1:] if protected(word)), None)
    return None


def _target_directory(words: list[str]) -> str | None:
    """The DIR of `cp -t DIR`, `-tDIR`, `-rt DIR`, `--target-directory[=]DIR`, else None."""
    for index, word in enumerate(words[1:], 1):
        if word.startswith("--target-directory="):
            return word.split("=", 1)[1]
        if word == "--target-directory" or re.fullmatch(r"-[A-Za-z]*t", word):
            return words[index + 1] if index + 1 < len(words) else None
        if re.fullmatch(r"-[A-Za-su-z]*t.+", word):
            return word.split("t", 1)[1]
    return None
