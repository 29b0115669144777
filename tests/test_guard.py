"""The protect hook's rules for shell commands, judged in process (guard.check) on a real tree.

The tree: a HOME with a global memory directory and a git project whose memory directory
(with local/) is committed, src/, build/, node_modules/. ATTACKS are shell commands that
would destroy or change memories, one class per kind of hole in a deny list (parents of a
memory directory, globs, variables, find, in-place editors, interpreters, eval and shells,
git clean, ...); each must be denied, naming the scope it protects. ORDINARY commands are
everyday work beside the memories, and reading them; each must pass. The hook itself is run
as a process in test_hooks.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _lib.session import bashguard, guard, shellsyntax
from _lib.workspace.scopes import Workspace

GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]


class Place:
    """A HOME with ~/.claude/memory and a committed project with .claude/memory (local/ gitignored)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.global_dir = self.home / ".claude" / "memory"
        self.memory_dir = self.project / ".claude" / "memory"
        self.env = {"HOME": str(self.home), "CLAUDE_PROJECT_DIR": str(self.project), "PATH": os.environ["PATH"]}
        files = [(self.global_dir / "note.md", "# Global\n"), (self.memory_dir / "note.md", "# Shared\n"),
                 (self.memory_dir / "local" / "note.md", "# Mine\n"), (self.project / "src" / "app.py", "x\n"),
                 (self.project / "build" / "out.txt", "x\n"), (self.project / "node_modules" / "a.js", "x\n"),
                 (self.project / ".gitignore", "build/\nnode_modules/\n.claude/memory/local/\n")]
        for path, text in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-qm", "start")

    def git(self, *args: str) -> None:
        subprocess.run([*GIT, "-C", str(self.project), *args], check=True, capture_output=True)

    def judge(self, command: str, cwd: Path | None = None, **env: str) -> str | None:
        """The hook's reason to deny `command` run in `cwd` (the project by default), or None."""
        command = command.replace("{project}", str(self.project)).replace("{home}", str(self.home)) \
            .replace("{root}", str(self.root))
        workspace = Workspace(cwd or self.project, {**self.env, **env})
        return guard.check(workspace, "Bash", {"command": command}, str(cwd or self.project))


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


# (class, command, the scope named in the reason: project, local or global; None: whichever is named first)
ATTACKS = [
    # a directory holding a memory directory: removed or moved
    ("parent", "rm -rf .claude", "project"),
    ("parent", "rm -r .claude/", "project"),
    ("parent", "rm -rf ./.claude", "project"),
    ("parent", "rm -rf {project}/.claude", "project"),
    ("parent", "rm -rf .", "project"),
    ("parent", "rm -rf {project}", "project"),
    ("parent", "cd src && rm -rf ..", "project"),
    ("parent", "rm -rf ~/.claude", "global"),
    ("parent", "rm -rf ~", "global"),
    ("parent", "rm -rf /", None),
    ("parent", "rmdir .claude", "project"),
    ("parent", "mv .claude .claude.bak", "project"),
    ("parent", "mv ~/.claude /tmp/old-claude", "global"),
    ("parent", "mv . ../elsewhere", "project"),
    ("parent", "git rm -r .claude", "project"),
    ("parent", "git rm -r .", "project"),
    ("parent", "cp -rT /tmp/empty .claude", "project"),
    ("parent", "cp -r /tmp/backup/.claude .", "project"),
    ("parent", "cp -r backup/memory ~/.claude/", "global"),
    ("parent", "rsync -a --delete /tmp/empty/ ./", "project"),
    ("parent", "rsync -a --delete /tmp/empty/ ~/.claude/", "global"),
    # the memory directory and what it holds
    ("inside", "rm -rf .claude/memory", "project"),
    ("inside", "rm .claude/memory/note.md", "project"),
    ("inside", "rm -rf .claude/memory/local", "local"),
    ("inside", "rm ~/.claude/memory/note.md", "global"),
    ("inside", "unlink .claude/memory/note.md", "project"),
    ("inside", "shred -u .claude/memory/note.md", "project"),
    ("inside", "truncate -s 0 .claude/memory/note.md", "project"),
    ("inside", "mv .claude/memory/note.md /tmp/", "project"),
    ("inside", "mv draft.md .claude/memory/", "project"),
    ("inside", "cp draft.md .claude/memory/note.md", "project"),
    ("inside", "ln -sf /tmp/x .claude/memory/note.md", "project"),
    ("inside", "echo x > .claude/memory/note.md", "project"),
    ("inside", "echo x 2>/dev/null >> ~/.claude/memory/note.md", "global"),
    ("inside", "echo x | tee -a .claude/memory/note.md", "project"),
    ("inside", "dd if=/dev/zero of=.claude/memory/note.md", "project"),
    ("inside", "tar -xzf notes.tgz -C .claude/memory", "project"),
    ("inside", "curl -so .claude/memory/note.md https://example.com/x", "project"),
    # globs: matched against the protected paths, never expanded
    ("glob", "rm -rf .c*", "project"),
    ("glob", "rm -rf .cl?ude", "project"),
    ("glob", "rm -rf .[c]laude", "project"),
    ("glob", "rm -rf .claude/*", "project"),
    ("glob", "rm -rf .claude/mem*", "project"),
    ("glob", "rm -rf .*/memory", "project"),
    ("glob", "shopt -s dotglob; rm -rf */memory", "project"),
    ("glob", "rm ~/.claude/mem*", "global"),
    ("glob", "rm -rf ~/.c*/memory", "global"),
    ("glob", "rm -f .claude/memory/*.md", "project"),
    ("glob", "rm -rf {root}/*/.claude", None),
    ("glob", "rm -rf .claude{,.bak}", "project"),
    ("glob", "mv .claude/memory/*.md /tmp/", "project"),
    ("glob", "cd .claude && rm -rf mem*", "project"),
    # variables and command substitutions
    ("variable", "D=.claude; rm -rf $D", "project"),
    ("variable", 'D=.claude && rm -rf "$D"', "project"),
    ("variable", 'export D=~/.claude; rm -rf "$D"', "global"),
    ("variable", 'rm -rf "$HOME/.claude"', "global"),
    ("variable", "rm -rf ${HOME}/.claude/memory", "global"),
    ("variable", 'rm -rf "$PWD/.claude"', "project"),
    ("variable", 'cd src; rm -rf "$PWD/../.claude"', "project"),
    ("variable", 'rm -rf "$CLAUDE_PROJECT_DIR/.claude/memory"', "project"),
    ("variable", 'rm -rf "$(pwd)/.claude"', "project"),
    ("variable", 'rm -rf "$(git rev-parse --show-toplevel)/.claude"', "project"),
    ("variable", "rm -rf `pwd`/.claude", "project"),
    ("variable", 'rm -rf "$UNSET_DIR/.claude"', None),
    ("variable", 'rm -rf "$(some-command)/memory"', None),
    ("variable", "rm -rf .claude/$NAME", "project"),
    ("variable", 'rm -rf "${ROOT:-.}/.claude"', "project"),
    ("variable", 'for d in build .claude; do rm -rf "$d"; done', "project"),
    ("variable", 'cd "$SOMEWHERE" && rm -rf .claude', None),
    ("variable", 'cd "$SOMEWHERE" && rm -rf mem*', None),
    ("variable", "for f in $(find . -name '*.md'); do sed -i s/a/b/ \"$f\"; done", "project"),
    ("variable", "rm -rf $(echo .claude)", "project"),
    ("variable", "rm $(ls .claude/memory/*.md)", "project"),
    # find
    ("find", "find . -delete", "project"),
    ("find", "find .claude -delete", "project"),
    ("find", "find ~/.claude -type f -delete", "global"),
    ("find", "find . -name '*.md' -delete", "project"),
    ("find", "find . -type f -name '*.json' -delete", "project"),
    ("find", "find . -path '*/.claude/*' -delete", "project"),
    ("find", "find . -name memory -type d -exec rm -rf {} +", "project"),
    ("find", "find .claude/memory -name '*.md' -exec rm {} \\;", "project"),
    ("find", "find . -name '*.md' -execdir rm {} \\;", "project"),
    ("find", "find . -name '*.md' -exec sed -i s/a/b/ {} +", "project"),
    ("find", "find . -name '*.md' -exec sh -c 'rm \"$1\"' _ {} \\;", "project"),
    ("find", "find . -path ./.claude -prune -o -name '*.md' -delete", "project"),  # -delete ignores -prune
    ("find", "find . -name '*.md' | xargs rm", "project"),
    ("find", "find . -name '*.md' -print0 | xargs -0 rm -f", "project"),
    ("find", "find . -name '*.md' | while read -r f; do rm \"$f\"; done", "project"),
    ("find", "sed -i s/a/b/ $(find . -name '*.md')", "project"),
    # in-place editors
    ("in-place", "sed -i 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "sed -Ei 's/a+/b/' .claude/memory/note.md", "project"),
    ("in-place", "sed -i.bak 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "sed -n -i 's/a/b/p' .claude/memory/note.md", "project"),
    ("in-place", "sed --in-place=.orig -e 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "perl -pi -e 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "perl -i.bak -pe 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "perl -pie 's/a/b/' .claude/memory/note.md", "project"),
    ("in-place", "ruby -i -pe 'sub(/a/, \"b\")' .claude/memory/note.md", "project"),
    ("in-place", "gawk -i inplace '{print}' .claude/memory/note.md", "project"),
    # interpreters: program text naming a protected path and deleting, moving or writing
    ("interpreter", "python3 -c \"import shutil; shutil.rmtree('.claude')\"", "project"),
    ("interpreter", "python3 -c \"import os, shutil; shutil.rmtree(os.path.expanduser('~/.claude/memory'))\"",
     "global"),
    ("interpreter", "python -c \"import os; os.remove('.claude/memory/note.md')\"", "project"),
    ("interpreter", "python3 -c \"from pathlib import Path; Path('.claude/memory/note.md').unlink()\"", "project"),
    ("interpreter", "python3 -c \"open('.claude/memory/note.md', 'w').write('x')\"", "project"),
    ("interpreter", "python3 -c \"from pathlib import Path; Path('.claude/memory/note.md').write_text('')\"",
     "project"),
    ("interpreter", "python3 -c \"import os; os.rename('.claude', '/tmp/x')\"", "project"),
    ("interpreter", "python3 -c \"import os; os.system('rm -rf .claude')\"", "project"),
    ("interpreter", "python3 -c \"import subprocess; subprocess.run(['rm', '-rf', '.claude'])\"", "project"),
    ("interpreter", "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('.claude/memory')\nEOF", "project"),
    ("interpreter", "node -e \"require('fs').rmSync('.claude', {recursive: true, force: true})\"", "project"),
    ("interpreter", "node --eval \"require('fs').unlinkSync('.claude/memory/note.md')\"", "project"),
    ("interpreter", "node -e \"require('fs').writeFileSync('.claude/memory/note.md', '')\"", "project"),
    ("interpreter", "perl -e 'unlink glob(\".claude/memory/*.md\")'", "project"),
    ("interpreter", "perl -MFile::Path=remove_tree -e 'remove_tree(\".claude\")'", "project"),
    ("interpreter", "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(\".claude\")'", "project"),
    ("interpreter", "php -r 'unlink(\".claude/memory/note.md\");'", "project"),
    # eval, shells, substitutions, xargs, wrappers
    ("eval", 'eval "rm -rf .claude"', "project"),
    ("eval", "eval rm -rf .claude", "project"),
    ("eval", "sh -c 'rm -rf .claude'", "project"),
    ("eval", 'bash -c "rm -rf ~/.claude"', "global"),
    ("eval", "bash -lc 'cd .claude && rm -rf memory'", "project"),
    ("eval", "sudo sh -c 'rm -rf .claude'", "project"),
    ("eval", "echo 'rm -rf .claude' | bash", "project"),
    ("eval", "printf 'rm -rf .claude\\n' | sh", "project"),
    ("eval", "bash <<'EOF'\nrm -rf .claude\nEOF", "project"),
    ("eval", "bash <<< 'rm -rf .claude'", "project"),
    ("eval", "echo $(rm -rf .claude)", "project"),
    ("eval", "x=`rm -rf .claude`", "project"),
    ("eval", "cat <<EOF > notes.md\n$(rm -rf .claude)\nEOF", "project"),
    ("eval", "echo .claude | xargs rm -rf", "project"),
    ("eval", "xargs rm -rf <<< .claude", "project"),
    ("eval", "echo .claude | xargs sudo rm -rf", "project"),
    ("eval", "echo .claude | xargs -i rm -rf {}", "project"),
    ("eval", "printf '%s\\n' .claude | xargs -I{} rm -rf {}", "project"),
    ("eval", "(cd .claude && rm -rf memory)", "project"),
    ("eval", "{ rm -rf .claude; }", "project"),
    ("eval", "if true; then rm -rf .claude; fi", "project"),
    ("eval", "timeout 5 rm -rf .claude", "project"),
    ("eval", "nice -n 5 rm -rf .claude", "project"),
    ("eval", "env X=1 rm -rf .claude", "project"),
    ("eval", "command rm -rf .claude", "project"),
    ("eval", "\\rm -rf .claude", "project"),
    ("eval", "/bin/rm -rf .claude", "project"),
    ("eval", "ls && rm -rf .claude # tidy", "project"),
    # git clean: -x / -X remove the gitignored local memories
    ("git-clean", "git clean -fdx", "project"),
    ("git-clean", "git clean -fdX", "project"),
    ("git-clean", "git clean -xdf", "project"),
    ("git-clean", "git clean -f -d -x", "project"),
    ("git-clean", "git clean --force -dx", "project"),
    ("git-clean", "git clean -fdx .claude", "project"),
    ("git-clean", "cd src && git -C .. clean -fdx", "project"),
    ("git-clean", "git checkout -- .claude/memory/note.md", "project"),
    ("git-clean", "git restore --source=HEAD~1 .claude/memory", "project"),
]

ORDINARY = [
    # git: what it overwrites is restorable (the plugin keeps the last content of every memory)
    "git checkout .", "git checkout -- .", "git restore .", "git reset --hard", "git reset --hard HEAD~1",
    "git stash -u", "git stash push --include-untracked", "git checkout main", "git switch -c feature",
    "git restore --staged .claude/memory/note.md", "git add .claude/memory", "git rm -r --cached .",
    "git clean -fdx build/", "git clean -ndx", "git clean -fdx -e .claude", "git clean -fd", "git clean -fx :!.claude",
    'git commit -m "Stop rm -rf .claude"', "git diff -- .claude/memory", "git log -p .claude/memory",
    # removing other things
    "rm -rf node_modules", "rm -rf build/", "rm -rf build dist", "rm -f *.log", "rm -rf ./*", "rm -rf *",
    'rm -rf "$OUT"', "rm -rf ./$NAME", 'tmp=$(mktemp -d) && rm -rf "$tmp"', 'rm -rf "$(mktemp -d)"',
    "rm .claude/settings.local.json", "rm -rf .claude/commands", "rm -rf ~/.cache/pip", "rm -rf */memory",
    "rm -rf {root}/scratch",
    "find . -name '*.pyc' -delete", "find . -name __pycache__ -type d -exec rm -rf {} +",
    "find . \\( -name '*.pyc' -o -name '*.pyo' \\) -delete", "find . -maxdepth 1 -name '*.md' -delete",
    "find . -path ./.claude -prune -o -name '*.md' -exec rm {} +", "find src -name '*.md' -delete",
    "find {root}/scratch -mtime +7 -delete", "find . -name '*.pyc' | xargs rm -f",
    "find . -name '*.pyc' | while read f; do rm \"$f\"; done", "find . -empty -delete",
    "find . -type d -empty -delete", "sed -i s/a/b/ $(find . -name '*.py')", "cd $(mktemp -d) && rm -rf *",
    "rm -rf $SCRATCH/*",
    # editing other files
    "sed -i 's/a/b/' src/app.py", "sed -i -e 's/a/b/' $(grep -rl a src)", "perl -pi -e 's/a/b/' src/app.py",
    "mv notes.txt ~", "cp notes.txt ~/.claude/", "rsync -a src/ ./", "chmod -R u+w .", "mkdir -p .claude/commands",
    "touch .claude/settings.json", "echo 'rm -rf .claude' > notes.txt", "cat <<'EOF' > notes.md\nrm -rf .claude\nEOF",
    # interpreters that write elsewhere or only read memories
    "python3 -c \"open('out.txt', 'w').write('x')\"", "python3 scripts/gen.py --out build/", "python3 -m pytest -q",
    "python3 -c \"print(open('.claude/memory/note.md').read())\"",
    "python3 -c \"import json; print(json.load(open('.claude/memory/index.json')))\"",
    "python3 -c \"import shutil; shutil.rmtree('build')\"",
    "node -e \"require('fs').writeFileSync('dist/x.js', '')\"",
    "python3 - <<'EOF'\nimport json\nopen('build/out.json', 'w').write(json.dumps({}))\nEOF",
    # the plugin's own commands
    "memory delete x", "memory update x --status archived", "memory write 'T' --content 'rm -rf .claude is bad'",
    '"$CLAUDE_PLUGIN_ROOT/bin/memory" delete x', "bin/memory file write .claude/memory/notes/plan.md --content x",
    "memory write \"Note\" --content \"$(cat <<'EOF'\ndon't rm -rf .claude (ever)\nEOF\n)\"",
    # reading memories
    "cat .claude/memory/note.md", "ls .claude", "ls -la ~/.claude/memory", "grep -r foo .claude/memory",
    "head -5 .claude/memory/note.md", "wc -l .claude/memory/*.md", "diff .claude/memory/note.md /tmp/x",
    "sed -n 1,5p .claude/memory/note.md", "perl -ne 'print' .claude/memory/note.md", "find .claude -name '*.md'",
    "cp .claude/memory/note.md /tmp/", "cp -r .claude /tmp/backup", "tar -czf /tmp/m.tgz .claude",
    "rsync -a .claude/ /tmp/backup/", "cd .claude && ls", "ls $(pwd)", 'echo "$HOME"', "npm test 2>&1 | tail -5",
]


@pytest.mark.parametrize("kind,command,scope", ATTACKS, ids=[f"{kind}: {command}" for kind, command, _ in ATTACKS])
def test_commands_that_would_destroy_or_change_memories_are_denied(place: Place, kind: str, command: str,
                                                                   scope: str | None) -> None:
    reason = place.judge(command)
    assert reason is not None, f"not denied: {command}"
    assert "memory directory" in reason and (scope is None or f"the {scope} memory directory" in reason), reason


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_pass(place: Place, command: str) -> None:
    assert place.judge(command) is None


def test_the_reason_names_what_is_protected_and_what_to_use(place: Place) -> None:
    parent = place.judge("rm -rf .claude")
    assert parent is not None
    assert f"{place.project / '.claude'}, which holds the project memory directory" in parent
    for advice in ("memory delete SLUG", "memory update SLUG --status archived", "memory write", "memory restore"):
        assert advice in parent
    inside = place.judge("sed -i s/a/b/ .claude/memory/note.md")
    assert inside is not None and f"{place.memory_dir / 'note.md'} in the project memory directory" in inside


def test_parents_of_a_memory_directory_that_does_not_exist_are_free(place: Place) -> None:
    """Nothing to lose: a project without memories may remove its .claude or clean everything."""
    shutil.rmtree(place.memory_dir)
    for command in ("rm -rf .claude", "rm -rf .", "mv .claude /tmp/x", "git clean -fdx", "find . -delete",
                    "rm -rf .c*", "find . -name '*.md' -delete"):
        assert place.judge(command) is None, command
    assert place.judge("echo x > .claude/memory/note.md") is not None  # writing one in stays refused


def test_git_clean_without_x_is_denied_while_memories_are_untracked(place: Place) -> None:
    (place.memory_dir / "new.md").write_text("# New\n")  # written by `memory write`, not committed yet
    assert place.judge("git clean -fd") is not None
    assert place.judge("git clean -f") is not None  # a file in a tracked directory goes without -d too
    assert place.judge("git clean -fd src") is None
    place.git("add", "-A")
    place.git("commit", "-qm", "memories")
    assert place.judge("git clean -fd") is None
    assert place.judge("git clean -fdx") is not None  # -x still removes the gitignored local memories


def test_git_clean_f_leaves_a_wholly_untracked_memory_directory_alone(place: Place) -> None:
    place.git("rm", "-rq", "--cached", ".claude")
    place.git("commit", "-qm", "untrack")
    assert place.judge("git clean -f") is None  # without -d git does not enter untracked directories
    assert place.judge("git clean -fd") is not None


def test_globs_follow_bash_rules_for_hidden_names(place: Place) -> None:
    """`*` does not match `.claude`; it does match a configuration directory that is not hidden."""
    assert place.judge("rm -rf */memory") is None
    config = place.root / "config"
    (config / "memory").mkdir(parents=True)
    assert "global memory directory" in (place.judge("rm -rf */memory", cwd=place.root,
                                                     CLAUDE_CONFIG_DIR=str(config)) or "")
    assert "global memory directory" in (place.judge("rm -rf c*", cwd=place.root, CLAUDE_CONFIG_DIR=str(config))
                                         or "")


def test_a_symlink_to_a_memory_directory_is_seen_through(place: Place) -> None:
    (place.project / "notes").symlink_to(place.memory_dir)
    assert place.judge("rm -rf notes/") is not None
    assert place.judge("sed -i s/a/b/ notes/note.md") is not None


def test_enterprise_and_configured_global_directories_are_protected(place: Place, tmp_path: Path) -> None:
    enterprise = tmp_path / "org" / "memory"
    enterprise.mkdir(parents=True)
    reason = place.judge(f"rm -rf {enterprise.parent}", CLAUDE_MEMORY_ENTERPRISE_PATH=str(enterprise))
    assert reason is not None and "enterprise memory directory" in reason
    config = tmp_path / "cfg"
    (config / "memory").mkdir(parents=True)
    reason = place.judge('rm -rf "$CLAUDE_CONFIG_DIR"', CLAUDE_CONFIG_DIR=str(config))
    assert reason is not None and "global memory directory" in reason


def test_file_tools_keep_their_rule(place: Place) -> None:
    workspace = Workspace(place.project, place.env)
    write = guard.check(workspace, "Write", {"file_path": str(place.memory_dir / "x.md")}, str(place.project))
    assert write is not None and "in the project memory directory" in write
    assert guard.check(workspace, "Write", {"file_path": str(place.project / ".claude" / "x.md")},
                       str(place.project)) is None
    assert guard.check(workspace, "Read", {"file_path": str(place.memory_dir / "note.md")}, str(place.project)) is None


# -- the shell syntax the rules stand on ------------------------------------------------------------

def _words(line: str) -> list[list[str]]:
    return [[shellsyntax.word_text(parts) for parts in command.words] for command in shellsyntax.parse(line)]


def test_commands_are_split_at_operators_newlines_and_parentheses() -> None:
    assert _words("a x && b 'y z' || c; d | e & f\n(g) # h i") == [
        ["a", "x"], ["b", "y z"], ["c"], ["d"], ["e"], ["f"], ["g"]]


def test_here_document_bodies_are_data_not_commands() -> None:
    commands = shellsyntax.parse("cat > f <<'EOF'\nrm -rf x\nEOF\nls")
    assert _words("cat > f <<'EOF'\nrm -rf x\nEOF\nls") == [["cat"], ["ls"]]
    assert commands[0].stdin == "rm -rf x"
    assert [(op, shellsyntax.word_text(target)) for op, target in commands[0].redirections] == [(">", "f")]


def test_a_substitution_holding_a_here_document_with_quotes_ends_where_bash_ends_it() -> None:
    line = "git commit -m \"$(cat <<'EOF'\ndon't (stop\nEOF\n)\" && rm x"
    assert _words(line) == [["git", "commit", "-m", "$(...)"], ["rm", "x"]]


def test_words_keep_quoting_variables_and_file_descriptors() -> None:
    command = shellsyntax.parse("echo \"$HOME\"/a'*' ~/b ${X:-d} 2>&1 >out")[0]
    home, tilde, default = command.words[1:]
    assert home == [(shellsyntax.VAR, "HOME", True, None), (shellsyntax.TEXT, "/a", False),
                    (shellsyntax.TEXT, "*", True)]
    assert tilde[0] == (shellsyntax.VAR, "HOME", False, None)
    assert default == [(shellsyntax.VAR, "X", False, "d")]
    assert [op for op, _ in command.redirections] == [">&", ">"]


NOWHERE = Workspace("/", {"HOME": "/nonexistent"})  # no memory directory exists: nothing can be denied but writes


@pytest.mark.parametrize("line", ["echo 'unclosed", 'echo "$(', "a ${", "cat <<EOF", "x=`", "echo \\", "((", ")))",
                                  "$(" * 2000, "(" * 5000, "| " * 5000, "`" * 5000, "${" * 5000,
                                  "echo " + "{a,b}" * 40, "cat <<EOF\n" + "line\n" * 20000 + "EOF"])
def test_malformed_and_huge_lines_are_judged_without_error(line: str) -> None:
    """Brace lists, nesting and pipes are bounded: these finish (a hang would time the suite out)."""
    shellsyntax.parse(line)
    assert bashguard.bash_target(NOWHERE, line, "/") is None


SHELL_PIECES = ["rm", "-rf", ".claude", "find", ".", "-delete", "-exec", "{}", ";", "(", ")", "$(", "`", "'", '"',
                "$X", "${X:-a}", "|", "&&", "\n", "<<EOF", "EOF", "<<<", ">", "2>&1", "<(", "xargs", "sh", "-c",
                "eval", "python3", "open('x','w')", "sed", "-i", "git", "clean", "-fdx", "cd", "..", "~", "*", "[",
                "{a,b}", "for", "in", "do", "read", "D=.claude", "$D", "\\", "#", "!", "-o", "-prune", "$((1))"]


@given(st.lists(st.sampled_from(SHELL_PIECES), max_size=16), st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_line_of_shell_pieces_is_judged_without_error(pieces: list[str], joined: bool) -> None:
    hit = bashguard.bash_target(NOWHERE, ("" if joined else " ").join(pieces), "/")
    assert hit is None or hit[0] in (bashguard.IN, bashguard.HOLDS) and hit[1].startswith("/")

