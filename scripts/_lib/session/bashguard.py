"""Which shell commands would change a memory directory or destroy one (the protect hook's Bash rules).

A command line is parsed as bash would run it (shellsyntax) and judged by what it would do,
not by the words it contains:
- A memory directory and everything in it may not be written, moved, removed or edited in
  place (rm, mv, cp/rsync/ln/install onto it, touch, chmod, truncate, tee, redirections,
  sed -i / perl -pi / ruby -i / awk -i inplace, dd of=, tar -x -C, find -delete/-exec rm,
  git rm/mv/checkout/restore of its files).
- A directory holding one (`.claude`, the project root, `~/.claude`, `~`, `/`), when the
  memory directory exists, may not be removed or moved (rm, rmdir, unlink, shred, mv, git rm,
  find -delete or -exec rm under it when the find could reach memory files), nor be the
  destination of a copy or move that would land on the memory directory (`cp -r x/memory
  ~/.claude`, `rsync --delete`). Copying, reading, chmod and `git checkout .`,
  `git restore .`, `git reset --hard`, `git stash -u` stay allowed: the plugin keeps the last
  content of every memory, so what they overwrite can be restored.
- `git clean -f` covering a memory directory is refused with -x or -X (they remove the
  gitignored local memories), and otherwise when the directory holds untracked files (new
  memories not committed yet), as `git ls-files --others` tells. -e/--exclude and `:!`
  pathspecs that keep the directory out are honoured; -n and -i are allowed.
- Globs are matched against the protected paths (component by component, as bash does: a
  wildcard does not match a leading dot unless the line runs `shopt -s dotglob`), never
  expanded. Variables are expanded from the hook's environment (PWD follows `cd`), from
  assignments, `export`, `for` and `read` earlier on the line; `$(pwd)` and
  `$(git rev-parse --show-toplevel)` are known, `$(find ...)`, `$(ls ...)`, `$(echo ...)`
  and `$(grep -l ...)` stand for the memory paths they would print. A value that cannot be
  known stands for any name not starting with a dot (`rm -rf .claude/$X` is refused,
  `rm -rf "$TMP"` and `rm -rf ./$X` are not); at the start of a word the word is judged by
  what follows it, which must name `.claude` or the memory directory with a letter
  (`$X/.claude` and `$(...)/mem*` are refused, `$X/*` is not).
- What runs inside `eval`, `sh|bash|zsh -c`, a here-document or a string piped into a shell,
  command substitutions and `xargs` (with the paths `find`, `echo`, `ls` or `grep -l` feed
  it) is judged the same way.
- Program text given to an interpreter (python -c, node -e, perl -e, ruby -e, php -r, or on
  standard input) is refused when it names a protected path (a string literal) together with
  a call that deletes, moves or writes (shutil.rmtree, os.remove, unlink, rmdir, rename,
  open(..., 'w'), write_text, fs.rm, rmSync, unlinkSync, writeFile, FileUtils.rm_rf, ...),
  or when one of its strings is a shell command that would be refused. A heuristic: a
  script file given by name is not read.
"""

from __future__ import annotations

import os
import re

from . import shellsyntax
from .protected import expand_user, inside, memory_directories
from .shellsyntax import SUB, TEXT, VAR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..workspace.scopes import Workspace

IN, HOLDS = "in", "holds"  # a path in a memory directory (or the directory itself); a directory holding one
# A hit: (IN or HOLDS, the path, the scope whose memory directory it concerns)

# Glob characters a quote made literal, and a value nobody can know, inside an expanded word.
QUOTED_STAR, QUOTED_QUESTION, QUOTED_BRACKET, UNKNOWN = "\ue000", "\ue001", "\ue002", "\ue003"
QUOTE_GLOBS = str.maketrans({"*": QUOTED_STAR, "?": QUOTED_QUESTION, "[": QUOTED_BRACKET})
UNQUOTE_GLOBS = str.maketrans({QUOTED_STAR: "*", QUOTED_QUESTION: "?", QUOTED_BRACKET: "["})
FNMATCH_FORM = str.maketrans({QUOTED_STAR: "[*]", QUOTED_QUESTION: "[?]", QUOTED_BRACKET: "[[]", UNKNOWN: "*"})
DROP_WILDCARDS = str.maketrans("", "", "*?[]" + UNKNOWN)
MAX_CANDIDATES = 32  # expansions of one word judged at most (brace lists, variables with several values)
MAX_DEPTH = 4  # eval / sh -c / $(...) / interpreter strings looked into at most this deep

RESERVED = frozenset("! { } if then else elif fi do done while until case esac in select function time".split())
# Programs that run the rest of their words as a command, with the short options taking a value.
WRAPPERS = {"sudo": "ugCDhprtTU", "doas": "uC", "env": "uCS", "command": "", "builtin": "", "exec": "a",
            "nohup": "", "time": "fo", "nice": "n", "ionice": "cnp", "stdbuf": "ioe", "chronic": "",
            "busybox": "", "setsid": "", "xargs": "adEILnPs", "timeout": "ks", "caffeinate": "w"}
DELETERS = frozenset("rm rmdir unlink shred srm wipe".split())  # remove every operand
CHANGERS = frozenset("touch mkdir chmod chown chgrp chattr setfacl truncate tee patch".split())  # change operands
TRANSFERS = frozenset("mv cp rsync scp ln install".split())  # the last operand (or -t DIR) is the destination
OPTION_VALUES = {"shred": "ns", "truncate": "sr", "touch": "dtr", "mkdir": "m", "cp": "tS", "mv": "tS", "ln": "tS",
                 "install": "tSmogb", "rsync": "efTB", "sed": "efl", "tee": "", "patch": "pdiorBDFVYz",
                 "tar": "fCbTXgHKLNV", "unzip": "dxP", "curl": "oXHdeuAbcEKrTwmxyYz", "wget": "OoPaeiUTtwdl",
                 "perl": "eEIMm", "ruby": "eIr", "awk": "fvi", "gawk": "fvi", "git": "Cc"}
SCRIPT_OPTIONS = {"sed": "ef", "perl": "eE", "ruby": "e", "awk": "f", "gawk": "f"}  # else the 1st operand is it
LONG_OPTIONS_WITH_VALUES = frozenset("--target-directory --directory --output --output-document --exclude --eval "
                                     "--print".split())
# Interpreters: the short options taking a value, and those whose value is program text (node, bun: -e, -p).
INTERPRETER_VALUES = {"python": "cmWX", "pypy": "cmWX", "perl": "eEIMm", "ruby": "eIr", "php": "rdcf"}
CODE_OPTIONS = {"python": "c", "pypy": "c", "perl": "eE", "ruby": "e", "php": "r"}
SHELLS = frozenset("sh bash zsh dash ksh mksh ash fish".split())
INTERPRETERS = frozenset("python pypy perl ruby php node nodejs bun deno".split())  # with a version: python3.11
WRITE_REDIRECTIONS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
DECLARATIONS = frozenset({"export", "declare", "typeset", "local", "readonly"})
PROJECT_TOP_COMMAND = ("git", "rev-parse", "--show-toplevel")
# Code that deletes, moves or writes files, in the languages an interpreter runs. The patterns are
# compiled on first use (re caches them): most command lines run no interpreter.
DESTRUCTIVE_CODE = (
    r"rmtree|remove_tree|\brm_r|\brm_f|\bunlink|\brmdir|\bremove\s*\(|\brename|os\.replace|\bmove\s*\("
    r"|copy(?:file|tree|2)?\s*\(|copyFile|write_text|write_bytes|writeFile|appendFile|writeSync|"
    r"file_put_contents|\btruncate|rmSync|\bfs\.rm\b|\.rm\s*\(|(?:File|Dir)\.delete|(?:File|IO)\.write"
    r"|\bopen\s*\([^)]*['\"](?:[wax]b?\+?|r\+b?|\+?>>?)['\"]|\.open\s*\(\s*['\"](?:[wax]|r\+)"
    r"|['\"](?:rm|rmdir|unlink|mv|shred)['\"]")
PATH_LIKE = r"(?:^|\s)[~/.$*]"  # a string starting a path: absolute, ~, relative to ., a variable, a glob
STRING_LITERAL = r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`"
# Files a memory directory holds, for judging which ones a `find` would reach.
SAMPLE_ENTRIES = (("note.md", "f"), ("local", "d"), ("local/note.md", "f"), ("nodes", "d"),
                  ("nodes/decision/note.md", "f"), ("tasks/1.json", "f"), ("config.json", "f"))
FIND_TESTS_WITH_VALUE = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -user -group "
    "-perm -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -links -inum -samefile -uid -gid "
    "-fstype -used -context -printf -fprint -fprint0 -fls -maxdepth -mindepth -regextype -newermt -newerct".split())
FIND_OUTPUTS = frozenset("-print -print0 -printf -ls -fprint -fprint0 -fls -fprintf".split())
FIND_RUNS = frozenset("-exec -execdir -ok -okdir".split())
FIND_NAME_TESTS = frozenset("-name -iname -path -ipath -wholename -iwholename".split())
FIND_ALWAYS_TRUE = frozenset("-true -prune -quit -depth -maxdepth -mindepth -xdev -mount -noleaf -follow -daystart "
                             "-regextype -ignore_readdir_race -d".split())


def bash_target(workspace: Workspace, command: str, cwd: str) -> tuple[str, str, str] | None:
    """(IN or HOLDS, path, scope) for a memory path `command` would change or destroy, else None."""
    return _BashCheck(workspace, cwd).line(command, 0)


class _BashCheck:
    """One command line followed as bash would run it: its variables, its directory, its commands."""

    def __init__(self, workspace: Workspace, cwd: str) -> None:
        self.env = workspace.env
        self.project_dir = str(workspace.project_dir)
        self.where: str | None = os.path.abspath(cwd)  # the directory relative words resolve in; None: unknown
        self.stack: list[str | None] = []  # pushd
        self.variables: dict[str, list[str]] = {}  # assigned on this line: name -> possible values (patterns)
        self.dotglob = False
        self.directories: list[tuple[str, str, list[str]]] = []  # (scope, root, its components), each form
        for scope, root in memory_directories(workspace):
            for form in dict.fromkeys((root, os.path.realpath(root))):
                self.directories.append((scope, form, form.strip("/").split("/")))

    # -- command lines and commands --------------------------------------------------------------

    def line(self, text: str, depth: int) -> tuple[str, str, str] | None:
        return self.commands(shellsyntax.parse(text), depth)

    def commands(self, commands: list[shellsyntax.Command], depth: int) -> tuple[str, str, str] | None:
        for command in commands:
            hit = self.command(command, depth)
            if hit:
                return hit
        return None

    def command(self, command: shellsyntax.Command, depth: int) -> tuple[str, str, str] | None:
        if depth < MAX_DEPTH:  # substitutions run before the command they are in
            for parts in [*command.words, *(target for _, target in command.redirections), command.expansions]:
                for part in parts:
                    if part[0] == SUB and part[1]:
                        hit = self.commands(part[1], depth + 1)
                        if hit:
                            return hit
        for operator, target in command.redirections:
            if operator in WRITE_REDIRECTIONS:
                hit = self.first_hit([self.expand(target)], inside_only=True)
                if hit:
                    return hit
        words = [self.expand(parts) for parts in command.words]
        index = 0
        while index < len(words):  # assignments and reserved words before the program
            parts = command.words[index]
            if parts and parts[0][0] == TEXT and not parts[0][2] and "=" in parts[0][1] and \
                    re.match(shellsyntax.ASSIGNMENT_PREFIX, parts[0][1].split("=", 1)[0] + "="):
                self.assign(words[index])
            elif _plain(words[index]) not in RESERVED:
                break
            index += 1
        return self.program(words[index:], command, depth)

    def program(self, words: list[list[str]], command: shellsyntax.Command,
                depth: int) -> tuple[str, str, str] | None:
        """Judge one program run with `words` (each word's possible expansions)."""
        extra: list[str] = []  # the paths xargs adds
        while words and os.path.basename(_plain(words[0])) in WRAPPERS:
            words, added = self.unwrap(words, command)
            extra += added
        if not words or not words[0] or UNKNOWN in words[0][0]:
            return None
        name = os.path.basename(_plain(words[0]))
        arguments = words[1:] + ([extra] if extra else [])
        if name in DIRECTORY_CHANGES or name in DECLARATIONS or name in ("unset", "shopt", "for", "read"):
            self.builtin(name, arguments, command)
            return None
        if name == "eval":
            return self.line(" ".join(_plain(word) for word in arguments), depth + 1) if depth < MAX_DEPTH else None
        if name in SHELLS:
            return self.shell(arguments, command, depth)
        if name.rstrip("0123456789.") in INTERPRETERS:
            hit = self.interpreter(name, arguments, command, depth)
            if hit:
                return hit
        if name == "find":
            return self.find(arguments)
        if name == "git":
            return self.git(arguments)
        return self.paths(name, arguments)

    def unwrap(self, words: list[list[str]], command: shellsyntax.Command) -> tuple[list[list[str]], list[str]]:
        """The command a wrapper (sudo, env, timeout, xargs, ...) runs, and the paths xargs adds to it."""
        name = os.path.basename(_plain(words[0]))
        index, replace = 1, None
        while index < len(words):
            word = _plain(words[index])
            if name == "env" and "=" in word and not word.startswith("-"):
                index += 1
                continue
            if not word.startswith("-") or word in ("-", "--"):
                index += word == "--"
                break
            if name == "xargs":
                replace = _xargs_replacement(word, _plain(words[index + 1]) if index + 1 < len(words) else "") \
                    or replace
            index += 2 if len(word) == 2 and word[1] in WRAPPERS[name] else 1
        if name == "timeout" and index < len(words):
            index += 1  # the duration
        words = words[index:]
        if name != "xargs":
            return words, []
        paths = self.produced(command.piped_from) if command.piped_from else (command.stdin or "").split()
        if not replace or not paths:
            return words, paths
        return [[candidate.replace(replace, path) for candidate in word for path in paths]
                if any(replace in candidate for candidate in word) else word for word in words], []

    # -- state: variables, directory ---------------------------------------------------------------

    def assign(self, word: list[str]) -> None:
        name = word[0].split("=", 1)[0].rstrip("+")
        self.variables[name] = [candidate.split("=", 1)[1] for candidate in word if "=" in candidate]

    def builtin(self, name: str, arguments: list[list[str]], command: shellsyntax.Command) -> None:
        """Follow what a builtin changes for later commands: variables, dotglob, the directory."""
        plain = [_plain(word) for word in arguments]
        if name in DECLARATIONS:
            for word in arguments:
                if "=" in word[0] and re.match(shellsyntax.NAME, word[0]):
                    self.assign(word)
        elif name == "unset":
            for word in plain:
                self.variables.pop(word, None)
        elif name == "shopt":
            if "-s" in plain and "dotglob" in plain:
                self.dotglob = True
        elif name == "for" and plain:
            values = [candidate for word in arguments[2:] for candidate in word] if plain[1:2] == ["in"] else []
            self.variables[plain[0]] = values[:MAX_CANDIDATES] or [UNKNOWN]
        elif name == "read":
            produced = self.produced(command.piped_from) if command.piped_from else []
            for word in plain:
                if re.fullmatch(shellsyntax.NAME, word):
                    self.variables[word] = produced or [UNKNOWN]
        elif name == "popd":
            self.where = self.stack.pop() if self.stack else None
        else:
            operands = [word for word, text in zip(arguments, plain) if not text.startswith("-") or text == "-"]
            if name == "pushd":
                self.stack.append(self.where)
            target = operands[0][0] if operands else _escape(self.env.get("HOME", "/"))
            if _plain([target]) == "-" or UNKNOWN in target or _wild(target):
                self.where = None
            elif target.startswith("/") or self.where is not None:
                self.where = os.path.abspath(os.path.join(self.where or "/", _plain([target])))

    # -- words -------------------------------------------------------------------------------------

    def expand(self, parts: list[tuple]) -> list[str]:
        """The possible values of a word as patterns: live glob characters, quoted ones escaped, UNKNOWN."""
        results = [""]
        for part in parts:
            if part[0] == TEXT:
                options = [part[1].translate(QUOTE_GLOBS)] if part[2] else _braces(part[1])
            elif part[0] == VAR:
                options = self.variable(part)
            else:
                options = self.substitution(part[1])
            results = [left + right for left in results for right in options][:MAX_CANDIDATES]
        return results

    def variable(self, part: tuple) -> list[str]:
        _, name, quoted, default = part
        if name in self.variables:
            return self.variables[name]
        if name == "PWD":
            return [_escape(self.where)] if self.where else [UNKNOWN]
        value = self.env.get(name) if name else None
        if value is None:
            if default is not None:
                return self.expand(shellsyntax.parse_word(default))
            return [UNKNOWN]
        return [value.translate(QUOTE_GLOBS) if quoted else value]

    def substitution(self, commands: list[shellsyntax.Command] | None) -> list[str]:
        """What `$(...)` prints, when knowable: the directory, the project's top, the memory paths a
        find, echo, ls or grep -l prints; else UNKNOWN."""
        if commands and len(commands) == 1 and commands[0].words:
            words = tuple(shellsyntax.word_text(parts) for parts in commands[0].words)
            if words[0] == "pwd" and self.where:
                return [_escape(self.where)]
            if words == PROJECT_TOP_COMMAND:
                return [_escape(self.project_dir)]
            return self.produced(commands[0])[:MAX_CANDIDATES] or [UNKNOWN]
        return [UNKNOWN]

    def produced(self, producer: shellsyntax.Command) -> list[str]:
        """Paths a command prints, as far as a pipe into xargs or `read` needs them: find, echo, ls, grep -l."""
        words = [self.expand(parts) for parts in producer.words]
        if not words:
            return []
        name = os.path.basename(_plain(words[0]))
        if name == "find":
            return self.find_output(words[1:])
        plain = [_plain(word) for word in words[1:]]
        operands = [word for word, text in zip(words[1:], plain) if not text.startswith("-")]
        if name in ("echo", "ls", "printf"):
            return [candidate for word in operands[name == "printf":] for candidate in word]
        if name in ("grep", "egrep", "rg") and any(text == "--files-with-matches" or text[:1] == "-" and
                                                   text[1:2] != "-" and ("l" in text or "L" in text)
                                                   for text in plain):
            return [candidate for word in operands[1:] for candidate in word]
        return []

    # -- paths -------------------------------------------------------------------------------------

    def classify(self, pattern: str) -> tuple[str, str, str] | None:
        """The hit for one expanded word: a path in a memory directory, or one holding an existing one."""
        if not pattern:
            return None
        anchored = pattern.startswith("/") or not pattern.startswith(UNKNOWN) and self.where is not None
        if anchored and not pattern.startswith("/"):
            pattern = _escape(self.where) + "/" + pattern  # type: ignore[operator]
        components: list[str] = []
        for component in pattern.split("/"):
            if component == ".." and components and not _wild(components[-1]):
                components.pop()
            elif component not in ("", "."):
                components.append(component)
        if not anchored:
            return self.by_ending(components)
        if not any(_wild(component) for component in components):
            return self.literal("/" + "/".join(components).translate(UNQUOTE_GLOBS))
        for scope, root, parts in self.directories:
            length = min(len(components), len(parts))
            if all(self.matches(components[k], parts[k]) for k in range(length)):
                if len(components) < len(parts):
                    if os.path.isdir(root):
                        return HOLDS, "/" + "/".join(parts[:length]), scope
                    continue
                rest = "/".join(components[len(parts):]).translate(UNQUOTE_GLOBS)
                return IN, root + ("/" + rest if rest else ""), _local(scope, components[len(parts):])
        return None

    def literal(self, path: str) -> tuple[str, str, str] | None:
        forms = dict.fromkeys((path, os.path.realpath(path)))
        for scope, root, parts in self.directories:
            for form in forms:
                if inside(form, root):
                    return IN, path, _local(scope, form[len(root):].strip("/").split("/"))
                if inside(root, form) and os.path.isdir(root):
                    return HOLDS, path, scope
        return None

    def by_ending(self, components: list[str]) -> tuple[str, str, str] | None:
        """A word whose start is unknown (`$X/.claude`): judged by the names after the last unknown part."""
        unknown = [index for index, component in enumerate(components) if UNKNOWN in component]
        ending = components[unknown[-1] + 1:] if unknown else components
        if not ending:
            return None
        for scope, root, parts in self.directories:
            for stop in range(1, len(parts) + 1):  # the ending is the path down to parts[stop - 1]
                span = parts[max(0, stop - len(ending)):stop]
                if len(span) == len(ending) and all(map(self.matches, ending, span)) and any(
                        name in (".claude", parts[-1]) and _names_something(pattern)
                        for pattern, name in zip(ending, span)):
                    if stop < len(parts):
                        if os.path.isdir(root):
                            return HOLDS, "/" + "/".join(parts[:stop]), scope
                    else:
                        return IN, root, scope
            for inner in range(1, min(len(ending), len(parts) + 1)):  # ends inside the directory
                if all(map(self.matches, ending[:inner], parts[-inner:])) and _names_something(ending[inner - 1]):
                    rest = ending[inner:]
                    return IN, root + "/" + "/".join(rest).translate(UNQUOTE_GLOBS), _local(scope, rest)
        return None

    def matches(self, pattern: str, name: str) -> bool:
        """Whether one path component pattern matches a name, with bash's rule for leading dots."""
        if not _wild(pattern):
            return pattern.translate(UNQUOTE_GLOBS) == name
        if name.startswith(".") and not pattern.startswith(".") and not self.dotglob:
            return False
        from fnmatch import fnmatchcase

        return fnmatchcase(name, pattern.translate(FNMATCH_FORM))

    def first_hit(self, words: list[list[str]], inside_only: bool = False) -> tuple[str, str, str] | None:
        for word in words:
            for candidate in word:
                hit = self.classify(candidate)
                if hit and (hit[0] == IN or not inside_only):
                    return hit
        return None

    # -- programs ----------------------------------------------------------------------------------

    def paths(self, name: str, arguments: list[list[str]]) -> tuple[str, str, str] | None:
        """Programs that change the paths they are given."""
        options, operands = _options(arguments, OPTION_VALUES.get(name, ""))
        if name in DELETERS:
            return self.first_hit(operands)
        if name in CHANGERS:
            return self.first_hit(operands, inside_only=True)
        if name in TRANSFERS:
            return self.transfer(name, options, operands)
        if name in SCRIPT_OPTIONS and _edits_in_place(name, options, arguments):
            scripts = any(flag in ("--expression", "--file") or not flag.startswith("--") and value is not None
                          and flag[-1] in SCRIPT_OPTIONS[name] for flag, value in options)
            return self.first_hit(operands if scripts else operands[1:], inside_only=True)  # else the 1st: script
        targets = [value for flag, value in options if value is not None and (
            name == "tar" and flag in ("-C", "--directory") or name == "unzip" and flag == "-d" or
            name == "curl" and flag in ("-o", "--output") or name == "wget" and flag in ("-O", "--output-document"))]
        if name == "dd":
            targets = [[candidate[3:] for candidate in word] for word in operands if _plain(word).startswith("of=")]
        if name == "tar" and not any("x" in flag.lstrip("-") and not flag.startswith("--") or flag in (
                "--extract", "--get") for flag, _ in options) and not (operands and "x" in _plain(operands[0])):
            targets = []
        return self.first_hit(targets, inside_only=True)

    def transfer(self, name: str, options: list[tuple[str, Any]],
                 operands: list[list[str]]) -> tuple[str, str, str] | None:
        """mv, cp, rsync, scp, ln, install: sources (mv) and the destination."""
        flags = [flag for flag, _ in options]
        directory = next((value for flag, value in options if flag in ("-t", "--target-directory")), None)
        if directory is not None:
            destination, sources = directory, operands
        elif len(operands) >= 2:
            destination, sources = operands[-1], operands[:-1]
        else:
            destination, sources = ([_escape(self.where)] if name == "ln" and self.where else None), operands
        if name == "mv" or name == "rsync" and "--remove-source-files" in flags:
            hit = self.first_hit(sources, inside_only=name == "rsync")
            if hit:
                return hit
        for candidate in destination or []:
            hit = self.classify(candidate)
            if hit is None or hit[0] == IN:
                if hit:
                    return hit
                continue  # a directory holding a memory directory: does the copy land on it?
            if name == "rsync" and any(flag.startswith("--delete") for flag in flags) or name != "rsync" and any(
                    flag == "--no-target-directory" or flag[1:2] != "-" and "T" in flag for flag in flags):
                return hit
            for source in sources:  # `cp -r x/memory ~/.claude`: lands on the memory directory
                for path in source:
                    if not (name == "rsync" and path.endswith("/")):
                        landing = self.classify(candidate.rstrip("/") + "/" + path.rstrip("/").rsplit("/", 1)[-1])
                        if landing:
                            return landing
        return None

    def git(self, arguments: list[list[str]]) -> tuple[str, str, str] | None:
        plain = [_plain(word) for word in arguments]
        index, where = 0, self.where
        while index < len(plain) and plain[index].startswith("-"):  # git's own options
            if plain[index] in ("-C", "-c") and index + 1 < len(plain):
                if plain[index] == "-C" and where is not None:
                    where = os.path.abspath(os.path.join(where, plain[index + 1]))
                index += 1
            index += 1
        if index >= len(plain):
            return None
        subcommand, rest = plain[index], arguments[index + 1:]
        saved, self.where = self.where, where
        try:
            options, operands = _options(rest, "e" if subcommand == "clean" else "")
            flags = [flag for flag, _ in options]
            if subcommand == "rm" and "--cached" not in flags:
                return self.first_hit(operands)
            if subcommand == "mv":
                return self.first_hit(operands[:-1]) or self.first_hit(operands[-1:], inside_only=True)
            if subcommand in ("checkout", "restore") and not (
                    subcommand == "restore" and ("--staged" in flags or "-S" in flags) and not (
                    "--worktree" in flags or "-W" in flags)):
                return self.first_hit(operands, inside_only=True)
            if subcommand == "clean":
                return self.git_clean(options, operands)
            return None
        finally:
            self.where = saved

    def git_clean(self, options: list[tuple[str, Any]], operands: list[list[str]]) -> tuple[str, str, str] | None:
        letters = "".join(flag[1:] for flag, _ in options if not flag.startswith("--"))
        flags = [flag for flag, _ in options]
        if "n" in letters or "i" in letters or "--dry-run" in flags or "--interactive" in flags or not (
                "f" in letters or "--force" in flags):
            return None
        excludes = [_plain(value) for flag, value in options if value is not None and flag in ("-e", "--exclude")]
        excludes += [flag.split("=", 1)[1] for flag in flags if flag.startswith("--exclude=")]
        pathspecs, excluded = [], []
        for word in operands:
            text = _plain(word)
            if text.startswith((":!", ":^", ":(exclude)")):
                excluded.append(text.split(")", 1)[1] if text.startswith(":(") else text[2:])
            else:
                pathspecs.append(word)
        for word in pathspecs or [["."]]:
            hit = self.first_hit([word])
            if not hit:
                continue
            scope = "project" if hit[2] == "local" else hit[2]
            root = next(root for name, root, _ in self.directories if name == scope)
            if any(inside(root, os.path.abspath(os.path.join(self.where or "/", path))) for path in excluded) or \
                    any(_excludes(pattern, os.path.relpath(root, self.where or "/")) for pattern in excludes):
                continue
            if ("x" in letters or "X" in letters) and os.path.isdir(root) or \
                    _untracked(self.where or root, root, "d" in letters):
                return IN, root if hit[0] == HOLDS else hit[1], hit[2]
        return None

    def find(self, arguments: list[list[str]]) -> tuple[str, str, str] | None:
        """The hit for a find that deletes (-delete, -exec rm ...) what a memory directory holds."""
        roots, expression, tree = _find_parts(arguments)
        if not any(_find_destroys(node, self) for node in _find_actions(tree)):
            return None
        for root_hit, absolute, reached, _ in self.find_reach(roots, expression, tree):
            if "destroy" in reached:
                return self.classify(_escape(absolute)) or root_hit
        return None

    def find_output(self, arguments: list[list[str]]) -> list[str]:
        """The memory paths a find would print (for a pipe into xargs or `read`)."""
        roots, expression, tree = _find_parts(arguments)
        prints = not any(node[0] in FIND_OUTPUTS or node[0] in FIND_RUNS or node[0] == "-delete"
                         for node in _find_actions(tree))  # no action: -print
        return [_escape(absolute) for _, absolute, reached, values in self.find_reach(roots, expression, tree)
                if "output" in reached or prints and True in values]

    def find_reach(self, roots: list[list[str]], expression: list[str], tree: Any) -> Any:
        """(hit of the root, absolute path, actions reached, values) per sample path a find could visit.

        The samples are the directories from a root down to each memory directory under it, and
        typical files in one; each is run through the expression, with tests that depend on the
        disk (-mtime, -size, -empty, ...) counted as either value.
        """
        deletes = any(node[0] == "-delete" for node in _find_actions(tree))  # it implies -depth: -prune is void
        limits = {"-maxdepth": 1 << 30, "-mindepth": 0}
        for index, text in enumerate(expression[:-1]):
            if text in limits and expression[index + 1].isdigit():
                limits[text] = int(expression[index + 1])
        for candidate in (candidate for word in roots for candidate in word):
            hit = self.classify(candidate)
            if not hit:
                continue
            root = os.path.normpath(hit[1])
            shown = _plain([candidate]).rstrip("/") if not _wild(candidate) else root
            pruned: list[str] = []
            for relative, kind in self.samples(root, hit[0]):  # directories before what they hold
                absolute = os.path.join(root, relative) if relative else root
                levels = relative.count("/") + 1 if relative else 0
                if levels > limits["-maxdepth"] or any(inside(absolute, directory) for directory in pruned):
                    continue
                reached: set[str] = set()
                values = _find_evaluate(tree, (shown + "/" + relative if relative else shown, absolute, kind),
                                        reached, self)
                if "prune" in reached and not deletes:
                    pruned.append(absolute)
                if levels >= limits["-mindepth"]:
                    yield hit, absolute, reached, values

    def samples(self, root: str, relation: str) -> list[tuple[str, str]]:
        """(path relative to `root`, kind) for what a find from `root` could reach in a memory directory."""
        if relation == IN:
            return [("", "d")] + list(SAMPLE_ENTRIES)
        found: list[tuple[str, str]] = []
        depth = len(root.strip("/").split("/")) if root != "/" else 0
        for _, directory, parts in self.directories:
            if inside(directory, root) and directory != root and os.path.isdir(directory):
                below = parts[depth:]
                found += [("/".join(below[:level]), "d") for level in range(1, len(below) + 1)]
                found += [("/".join(below) + "/" + entry, kind) for entry, kind in SAMPLE_ENTRIES]
        return found

    def shell(self, arguments: list[list[str]], command: shellsyntax.Command,
              depth: int) -> tuple[str, str, str] | None:
        """`sh -c '...'`, a script on standard input (here-document, `echo ... | sh`)."""
        if depth >= MAX_DEPTH:
            return None
        plain = [_plain(word) for word in arguments]
        index, runs_string = 0, False
        while index < len(plain) and plain[index][:1] in ("-", "+") and plain[index] != "--":
            runs_string |= "c" in plain[index][1:] and not plain[index].startswith("--")
            index += 2 if plain[index] in ("-o", "+o", "-O", "+O") else 1
        index += index < len(plain) and plain[index] == "--"
        if runs_string:
            return self.line(plain[index], depth + 1) if index < len(plain) else None
        if index < len(plain):
            return None  # a script file
        text = self.standard_input(command)
        return self.line(text, depth + 1) if text else None

    def standard_input(self, command: shellsyntax.Command) -> str | None:
        """The text a command reads on standard input, when the line shows it."""
        if command.stdin is not None:
            return command.stdin
        producer = command.piped_from
        if producer and producer.words and shellsyntax.word_text(producer.words[0]) in ("echo", "printf"):
            return " ".join(_plain(self.expand(parts)) for parts in producer.words[1:]
                            if not shellsyntax.word_text(parts).startswith("-")).replace("\\n", "\n")
        return None

    def interpreter(self, name: str, arguments: list[list[str]], command: shellsyntax.Command,
                    depth: int) -> tuple[str, str, str] | None:
        """Program text that names a protected path and deletes, moves or writes (a heuristic)."""
        code = _program_text(name, arguments)
        if code is None:
            code = self.standard_input(command)
        if not code or depth >= MAX_DEPTH:
            return None
        destructive = re.search(DESTRUCTIVE_CODE, code) is not None
        names = {".claude"} | {parts[-1] for _, _, parts in self.directories}
        for match in re.finditer(STRING_LITERAL, code):
            literal = next(group for group in match.groups() if group is not None)
            if not literal or len(literal) > 4096 or not (any(name in literal for name in names) or
                                                          re.search(PATH_LIKE, literal)):
                continue  # names no memory directory, nor a path that could hold one
            if destructive:
                hit = self.classify(expand_user(literal, self.env)) or self.by_ending(
                    [part for part in literal.split("/") if part not in ("", ".")])
                if hit:
                    return hit
            if " " in literal:  # a shell command the program runs
                hit = self.line(literal, depth + 1)
                if hit:
                    return hit
        return None


# -- helpers -------------------------------------------------------------------------------------------

def _plain(word: list[str]) -> str:
    """The first expansion of a word as text (for options and program names)."""
    return word[0].translate(UNQUOTE_GLOBS) if word else ""


def _xargs_replacement(option: str, following: str) -> str | None:
    """The replace string of xargs -I R, -IR, -i[R], --replace[=R]; None for its other options."""
    if option.startswith("--replace"):
        return option.partition("=")[2] or "{}"
    if option.startswith("-I"):
        return option[2:] or following
    if option.startswith("-i"):
        return option[2:] or "{}"
    return None


def _wild(pattern: str) -> bool:
    """Whether an expanded word has a live glob character or an unknown value."""
    return "*" in pattern or "?" in pattern or "[" in pattern or UNKNOWN in pattern


def _escape(path: str) -> str:
    return path.translate(QUOTE_GLOBS)


def _names_something(pattern: str) -> bool:
    """Whether a path component is more than wildcards (`mem*`, `.c*`, not `*` or `$X`)."""
    return bool(pattern.translate(DROP_WILDCARDS))


def _local(scope: str, below: list[str]) -> str:
    return "local" if scope == "project" and below[:1] == ["local"] else scope


def _braces(text: str) -> list[str]:
    """Bash brace expansion of `a{b,c}d` (innermost groups first), at most MAX_CANDIDATES results."""
    if "{" not in text or "," not in text:
        return [text]
    results, expanding = [text], True
    while expanding:
        expanding, following = False, []
        for item in results:
            match = re.search(r"\{([^{}]*,[^{}]*)\}", item)
            if not match:
                following.append(item)
                continue
            expanding = True
            following += [item[:match.start()] + choice + item[match.end():] for choice in match.group(1).split(",")]
        results = following[:MAX_CANDIDATES]
    return results


def _options(arguments: list[list[str]], values: str,
             stop_at_operand: bool = False) -> tuple[list[tuple[str, Any]], list[list[str]]]:
    """(option, its value word or None) and the operands; `values` are the short options taking one.

    With `stop_at_operand`, everything from the first operand on is an operand (`python3 x.py -c`).
    """
    options: list[tuple[str, Any]] = []
    operands: list[list[str]] = []
    index = 0
    while index < len(arguments):
        text = _plain(arguments[index])
        if text == "--" or stop_at_operand and operands:
            operands += arguments[index + (text == "--"):]
            break
        if text.startswith("-") and len(text) > 1:
            if text.startswith("--"):
                flag, _, value = text.partition("=")
                options.append((flag, [value] if value else None) if "=" in text else (text, None))
                if flag in LONG_OPTIONS_WITH_VALUES and "=" not in text and index + 1 < len(arguments):
                    options[-1] = (flag, arguments[index + 1])
                    index += 1
            else:
                position = next((at for at, letter in enumerate(text[1:], 1) if letter in values), None)
                if position is None:
                    options.append((text, None))
                    index += 1
                    continue
                if position > 1:  # `-rt DIR`: the flags before the one taking a value
                    options.append((text[:position], None))
                flag = "-" + text[position]
                if position + 1 < len(text):  # -tDIR, -ofile
                    options.append((flag, [_escape(text[position + 1:])]))
                else:
                    options.append((flag, arguments[index + 1] if index + 1 < len(arguments) else None))
                    index += 1
        else:
            operands.append(arguments[index])
        index += 1
    return options, operands


def _edits_in_place(name: str, options: list[tuple[str, Any]], arguments: list[list[str]]) -> bool:
    """sed -i / -Ei / -i.bak / --in-place, perl -pi / -i.bak, ruby -i, awk -i inplace."""
    if name in ("awk", "gawk"):
        return any(_plain(word) in ("inplace", "-iinplace", "--include=inplace") for word in arguments)
    before = "Enrsuz" if name == "sed" else "acnpstTuUvwWXlS0123456789"
    for flag, _ in options:
        if flag == "--in-place" or flag.startswith("--in-place="):
            return True
        letters = flag[1:] if not flag.startswith("--") else ""
        if "i" in letters and all(letter in before for letter in letters[:letters.index("i")]):
            return True
    return False


def _untracked(where: str, root: str, directories: bool) -> bool:
    """Whether `git clean` (with -d or not) would remove files git does not track in `root`."""
    import subprocess

    arguments = ["git", "-C", where, "ls-files", "--others", "--exclude-standard", "-z"]
    try:
        listed = subprocess.run(arguments + ([] if directories else ["--directory"]) + ["--", root],
                                capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return False  # cannot tell: let it run (the plugin keeps what memories held)
    entries = [entry for entry in listed.stdout.decode("utf-8", "replace").split("\0") if entry]
    return listed.returncode == 0 and any(directories or not entry.endswith("/") for entry in entries)


def _excludes(pattern: str, relative: str) -> bool:
    """Whether a `git clean -e` pattern keeps `relative` (the memory directory below the clean root) out."""
    from fnmatch import fnmatchcase

    pattern = pattern.strip("/")
    parts = relative.split("/")
    if not pattern:
        return False
    return any(fnmatchcase(part, pattern) or fnmatchcase("/".join(parts[:count + 1]), pattern)
               for count, part in enumerate(parts))


def _program_text(name: str, arguments: list[list[str]]) -> str | None:
    """The program text an interpreter is given (-c, -e, -r, --eval); "" when it runs a file or a
    module; None when it reads its program on standard input."""
    family = name.rstrip("0123456789.")
    options, operands = _options(arguments, INTERPRETER_VALUES.get(family, "epr"), stop_at_operand=True)
    code = CODE_OPTIONS.get(family, "ep")
    texts = [_plain(value) for flag, value in options
             if value is not None and (flag[1:] in code or flag in ("--eval", "--print"))]
    if family == "deno" and operands and _plain(operands[0]) == "eval":
        texts += [_plain(word) for word in operands[1:2]]
    if texts:
        return "\n".join(texts)
    if operands and _plain(operands[0]) != "-" or family in ("python", "pypy") and any(
            flag == "-m" for flag, _ in options):
        return ""
    return None


# -- find expressions -----------------------------------------------------------------------------------
# A node: ("and"|"or", left, right) | ("not", node) | (primary, [its arguments])

def _find_expression(tokens: list[str], index: int) -> tuple[Any, int]:
    """Parse `find`'s expression (or-list) from `index`: the tree and the index after it."""
    left, index = _find_and(tokens, index)
    while index < len(tokens) and tokens[index] in ("-o", "-or"):
        right, index = _find_and(tokens, index + 1)
        left = ("or", left, right)
    return left, index


def _find_and(tokens: list[str], index: int) -> tuple[Any, int]:
    left, index = _find_unary(tokens, index)
    while index < len(tokens) and tokens[index] not in ("-o", "-or", ")", ","):
        if tokens[index] in ("-a", "-and"):
            index += 1
        right, index = _find_unary(tokens, index)
        left = ("and", left, right)
    return left, index


def _find_unary(tokens: list[str], index: int) -> tuple[Any, int]:
    if index >= len(tokens):
        return ("-true", []), index
    token = tokens[index]
    if token in ("!", "-not"):
        node, index = _find_unary(tokens, index + 1)
        return ("not", node), index
    if token == "(":
        node, index = _find_expression(tokens, index + 1)
        return node, index + 1
    if token in FIND_RUNS:
        end = index + 1
        while end < len(tokens) and tokens[end] not in (";", "+"):
            end += 1
        return (token, tokens[index + 1:end]), end + 1
    if token == "-fprintf":
        return (token, tokens[index + 1:index + 3]), index + 3
    if token in FIND_TESTS_WITH_VALUE or token.startswith("-newer"):
        return (token, tokens[index + 1:index + 2]), index + 2
    return (token, []), index + 1


def _find_parts(arguments: list[list[str]]) -> tuple[list[list[str]], list[str], Any]:
    """find's roots (the words before the first -x, (, ! or )), its expression and the expression's tree."""
    start = next((index for index, word in enumerate(arguments) if _plain(word).startswith(("-", "(", "!", ")"))),
                 len(arguments))
    expression = [_plain(word) for word in arguments[start:]]
    return arguments[:start] or [["."]], expression, _find_expression(expression, 0)[0]


def _find_actions(node: Any) -> list[Any]:
    if node[0] in ("and", "or"):
        return _find_actions(node[1]) + _find_actions(node[2])
    if node[0] == "not":
        return _find_actions(node[1])
    return [node]


def _find_destroys(node: Any, check: _BashCheck, path: str | None = None) -> bool:
    """Whether a primary deletes or changes files: -delete, or -exec of a command that would (for `path`)."""
    if node[0] == "-delete":
        return True
    if node[0] not in FIND_RUNS or not node[1]:
        return False
    program = os.path.basename(node[1][0])
    if path is None:  # for any path: is it a program that changes what it is given?
        return program in DELETERS or program in CHANGERS or program in TRANSFERS or program in SHELLS or \
            program in SCRIPT_OPTIONS or program in ("git", "xargs")
    if program in SHELLS:  # `-exec sh -c 'rm "$1"' _ {} \;`: what the script runs on its arguments
        return bool(re.search(r"\b(rm|rmdir|unlink|shred|mv|truncate)\b|sed\s+-[A-Za-z]*i", " ".join(node[1])))
    words = [[_escape(word.replace("{}", path))] for word in node[1]]
    return check.program(words, shellsyntax.Command(), MAX_DEPTH) is not None


def _find_evaluate(node: Any, sample: tuple[str, str, str], reached: set[str], check: _BashCheck) -> set[bool]:
    """The values an expression could take for one (path as find shows it, absolute path, kind) sample.

    Tests that depend on the disk (-mtime, -size, -empty, ...) could go either way. `reached`
    collects "destroy" when a deleting action could run, "output" when a printing one could.
    """
    from fnmatch import fnmatchcase

    operator = node[0]
    if operator in ("and", "or"):
        left = _find_evaluate(node[1], sample, reached, check)
        goes_on = operator == "and"
        values = {value for value in left if value != goes_on}
        if goes_on in left:
            values |= _find_evaluate(node[2], sample, reached, check)
        return values
    if operator == "not":
        return {not value for value in _find_evaluate(node[1], sample, reached, check)}
    path, absolute, kind = sample
    arguments = node[1]
    if operator in FIND_NAME_TESTS and arguments:
        subject = path.rsplit("/", 1)[-1] if operator in ("-name", "-iname") else path
        pattern = arguments[0]
        if operator.startswith("-i"):
            subject, pattern = subject.lower(), pattern.lower()
        return {fnmatchcase(subject, pattern)}
    if operator in ("-regex", "-iregex") and arguments:
        try:
            return {re.fullmatch(arguments[0], path, re.I if operator == "-iregex" else 0) is not None}
        except re.error:
            return {True, False}
    if operator in ("-type", "-xtype") and arguments:
        return {kind in arguments[0].split(",")}
    if operator in ("-false", "-empty"):  # a memory file, and a directory holding one, is never empty
        return {False}
    if operator == "-delete" or operator in FIND_RUNS:
        if _find_destroys(node, check, absolute):
            reached.add("destroy")
        return {True} if operator == "-delete" else {True, False}
    if operator in FIND_OUTPUTS or operator == "-prune":
        reached.add("output" if operator != "-prune" else "prune")
        return {True}
    if operator in FIND_ALWAYS_TRUE:
        return {True}
    return {True, False}
