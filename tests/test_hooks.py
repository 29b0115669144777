"""Every Claude Code hook of the plugin, run the way Claude Code runs it.

Each hook is started as hooks.json states it (`sh hooks/run <name>`) with a payload in
Claude Code's shape (2.1.330, see shared/reference/hook-payloads.jsonl) on stdin and the
environment Claude Code gives a plugin hook: CLAUDE_PLUGIN_DATA, CLAUDE_PROJECT_DIR, a
HOME. `<data>/interpreter` names this interpreter, as after the bootstrap hook, and a
`python3` on PATH does too (the launcher's fallback).

Covered: the four acceptance scenarios of US4 (gotcha injection), the memory directory
guard, Bash context, session start summary and its budget, prompt context, reminders,
capture (file summaries, subagent findings, session memories), compaction, bootstrap, and
for every hook in hooks.json: garbage or ill-typed input never breaks Claude (exit 0, no
output, no traceback, nothing written outside the data directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, check_written_files
from hookenv import RUN, SH, HookRun, Hooks

from _lib.model import frontmatter
from _lib.base import text

HOOKS_JSON = REPO / "hooks" / "hooks.json"


def registered_hooks() -> list[tuple[str, str]]:
    """(event, hook name) for every command handler in hooks.json, in order, without repeats."""
    found: list[tuple[str, str]] = []
    for event, groups in json.loads(HOOKS_JSON.read_text())["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                args = handler.get("args") or []
                assert handler["command"] == "sh" and args[0] == "${CLAUDE_PLUGIN_ROOT}/hooks/run", handler
                if (event, args[1]) not in found:
                    found.append((event, args[1]))
    return found


@pytest.fixture
def hooks(tmp_path: Path) -> Any:
    environment = Hooks(tmp_path)
    yield environment
    problems = check_written_files(environment.home / ".claude" / "memory", environment.memory_dir)
    assert not problems, "files written by the hooks break their schemas:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def guard_empty(tmp_path_factory: pytest.TempPathFactory) -> Hooks:
    """A project without memories, shared by the guard's decisions (they change nothing)."""
    return Hooks(tmp_path_factory.mktemp("guard-empty"))


@pytest.fixture(scope="module")
def guard_full(tmp_path_factory: pytest.TempPathFactory) -> Hooks:
    """A project memory and a global one, shared by the guard's decisions (they change nothing)."""
    environment = Hooks(tmp_path_factory.mktemp("guard-full"))
    environment.memory("write", "Use OAuth2", "--type", "decision", "--content", "PKCE everywhere")
    environment.memory("write", "Global habit", "--type", "learning", "--scope", "global", "--content", "x")
    return environment


def auth_project(hooks: Hooks) -> dict[str, Path]:
    """src/auth/login.ts, src/auth/session.ts, src/billing/invoice.ts and one gotcha tagged auth."""
    files = {name: hooks.write_file(path, content) for name, path, content in [
        ("login", "src/auth/login.ts", "export async function login() { return refreshToken(); }\n"),
        ("session", "src/auth/session.ts", "export const SESSION_TTL_SECONDS = 3600;\n"),
        ("invoice", "src/billing/invoice.ts", "export function total(lines: number[]) { return 0; }\n"),
    ]}
    hooks.memory("write", "Token refresh must be serialised per user", "--type", "gotcha", "--tags", "auth",
                 "--content", "Two concurrent refreshes revoke each other because refresh tokens rotate. "
                              "Symptom: random 401 right after login. Fix: one in-flight refresh per user.")
    return files


GOTCHA = "gotcha-token-refresh-must-be-serialised-per-user"


# ---------------------------------------------------------------------------------------------
# US4: contextual gotcha injection (memory-context, PostToolUse Read)
# ---------------------------------------------------------------------------------------------

def test_us4_1_gotcha_tagged_auth_is_shown_when_reading_a_file_in_src_auth(hooks: Hooks) -> None:
    files = auth_project(hooks)
    result = hooks.run("memory-context", hooks.post_read(files["login"]))
    warning = result.context("PostToolUse")
    assert warning is not None, "no gotcha injected for src/auth/login.ts"
    assert warning.startswith("Known gotchas for src/auth/login.ts")
    assert f"Token refresh must be serialised per user [{GOTCHA}, project]" in warning
    assert "Two concurrent refreshes revoke each other" in warning  # the gist, not just the title


def test_us4_2_a_gotcha_shown_in_this_session_is_not_repeated(hooks: Hooks) -> None:
    files = auth_project(hooks)
    assert hooks.run("memory-context", hooks.post_read(files["login"])).context("PostToolUse")
    again = hooks.run("memory-context", hooks.post_read(files["session"]))
    assert again.out == "", "the same gotcha was repeated on another auth file in the same session"
    assert hooks.run("memory-context", hooks.post_read(files["login"])).out == ""
    # Another session is told again.
    other = hooks.run("memory-context", hooks.post_read(files["session"], session_id=str(uuid.uuid4())))
    assert GOTCHA in (other.context("PostToolUse") or "")


def test_us4_3_nothing_is_injected_when_no_gotcha_is_relevant(hooks: Hooks) -> None:
    files = auth_project(hooks)
    assert hooks.run("memory-context", hooks.post_read(files["invoice"])).out == ""
    readme = hooks.write_file("README.md", "# Project\n")
    assert hooks.run("memory-context", hooks.post_read(readme)).out == ""
    # Not a gotcha: a decision tagged auth is not a warning.
    hooks.memory("write", "Use OAuth2 with PKCE", "--type", "decision", "--tags", "billing",
                 "--content", "PKCE everywhere.")
    assert hooks.run("memory-context", hooks.post_read(files["invoice"])).out == ""


# Every tool call and prompt runs these hooks: what they import is most of their time. Modules
# only writes, the earlier plugin's stores, config files, YAML or commands use stay out.
NOT_ON_HOT_PATHS = ("copy", "typing", "dataclasses", "argparse", "subprocess", "_lib.catalog.rollback",
                    "_lib.model.predecessor", "_lib.base.schema", "_lib.base.redact", "_lib.base.deps")
LOADED_BY_HOOK = """
import os, posix, sys
hook = sys.argv[1]
sys.path.insert(0, os.path.dirname(hook))
real_exit = posix._exit
def exit_listing_modules(code):  # a hook ends with posix._exit: list what it loaded first
    sys.stderr.write("\\n".join(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    real_exit(code)
posix._exit = exit_listing_modules
with open(hook, encoding="utf-8") as handle:
    exec(compile(handle.read(), hook, "exec"), {"__name__": "__main__", "__file__": hook})
"""


@pytest.mark.parametrize("name", ["memory-context", "memory-context-bash", "memory-prompt-context"])
def test_hot_hooks_leave_write_and_command_machinery_unloaded(hooks: Hooks, name: str) -> None:
    files = auth_project(hooks)
    payload = {"memory-context": hooks.post_read(files["login"]),
               "memory-context-bash": hooks.post_bash("npm test -- src/auth/login.test.ts",
                                                      stderr="Error: token refresh failed"),
               "memory-prompt-context": hooks.prompt("Why must token refresh be serialised per user?")}[name]
    proc = subprocess.run([sys.executable, "-S", "-c", LOADED_BY_HOOK, str(REPO / "hooks" / f"{name}.py")],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=120,
                          cwd=hooks.project, env=hooks.environ(MEMORY_HOOK_SERVER="off"))  # (answered here)
    assert proc.returncode == 0, proc.stderr.decode()
    assert GOTCHA.encode() in proc.stdout or b"serialised" in proc.stdout, "the hook did not do its work"
    loaded = set(proc.stderr.decode().split())
    assert "_lib.catalog.catalog" in loaded  # the listing is real: the hook read the catalog
    assert sorted(loaded.intersection(NOT_ON_HOT_PATHS)) == []


def test_us4_3_nothing_is_injected_when_memory_is_empty(hooks: Hooks) -> None:
    path = hooks.write_file("src/auth/login.ts", "x\n")
    assert hooks.run("memory-context", hooks.post_read(path)).out == ""


def test_us4_4_top_three_gotchas_by_relevance(hooks: Hooks) -> None:
    path = hooks.write_file("src/auth/login.ts", "export function login() {}\n")
    gotchas = [  # (title, tags, paths): best first
        ("Login handler must rate limit", "auth,login", ["src/auth/login.ts"]),  # glob + directory + file
        ("Login form double submit", "auth,login", []),                          # directory + file
        ("Auth cookies need SameSite", "auth", []),                              # directory
        ("TypeScript enums break tree shaking", "typescript", []),               # language only
        ("Invoice totals use integer cents", "billing", []),                     # unrelated
    ]
    for title, tags, paths in gotchas:
        extra = [arg for glob in paths for arg in ("--paths", glob)]
        hooks.memory("write", title, "--type", "gotcha", "--tags", tags, "--content", f"{title}: details.", *extra)
    warning = hooks.run("memory-context", hooks.post_read(path)).context("PostToolUse") or ""
    shown = [line.split("[", 1)[1].split(",", 1)[0] for line in warning.splitlines() if line.startswith("- ")]
    assert shown == ["gotcha-login-handler-must-rate-limit", "gotcha-login-form-double-submit",
                     "gotcha-auth-cookies-need-samesite"], warning
    # The ones left out come later in the session, still by relevance.
    later = hooks.run("memory-context", hooks.post_read(path)).context("PostToolUse") or ""
    assert "gotcha-typescript-enums-break-tree-shaking" in later and "invoice" not in later


def test_gotchas_are_found_through_every_kind_of_key(hooks: Hooks) -> None:
    """The Read hook looks gotchas up by key, not by trying them all: a part of a hyphenated tag,
    a glob's literal segment, its extension, a glob with neither; and a memory that becomes a
    gotcha (or stops being one) is found (or not) from then on."""
    path = hooks.write_file("services/billing/invoice_total.py", "x\n")
    for title, tags, globs in [("Rounding of invoice totals", "invoice-rounding", []),
                               ("Billing service retries twice", "ops", ["services/billing/**"]),
                               ("Python float money", "money", ["**/*.py"]),
                               ("Generated files everywhere", "codegen", ["**/*_total*"]),
                               ("Unrelated frontend gotcha", "frontend-forms", ["web/**", "*.tsx"])]:
        hooks.memory("write", title, "--type", "gotcha", "--tags", tags, "--content", f"{title}.",
                     *[arg for glob in globs for arg in ("--paths", glob)])
    hooks.memory("write", "Totals are cached", "--type", "decision", "--tags", "invoice", "--content", "Cached.")
    hooks.memory("config", "injection.gotchas_per_read", "10", "--scope", "project")
    warning = hooks.run("memory-context", hooks.post_read(path)).context("PostToolUse") or ""
    shown = {line.split("[", 1)[1].split(",", 1)[0] for line in warning.splitlines() if line.startswith("- ")}
    assert shown == {"gotcha-rounding-of-invoice-totals", "gotcha-billing-service-retries-twice",
                     "gotcha-python-float-money", "gotcha-generated-files-everywhere"}, warning
    hooks.memory("update", "decision-totals-are-cached", "--type", "gotcha")
    hooks.memory("update", "gotcha-python-float-money", "--type", "learning")
    other = hooks.post_read(path, session_id=str(uuid.uuid4()))
    warning = hooks.run("memory-context", other).context("PostToolUse") or ""
    assert "decision-totals-are-cached" in warning or "gotcha-totals-are-cached" in warning, warning
    assert "python-float-money" not in warning


def test_gotcha_limit_follows_config(hooks: Hooks) -> None:
    path = hooks.write_file("src/auth/login.ts", "x\n")
    for index in range(3):
        hooks.memory("write", f"Auth pitfall number {index}", "--type", "gotcha", "--tags", "auth",
                     "--content", "details")
    hooks.memory("config", "injection.gotchas_per_read", "1", "--scope", "project")
    warning = hooks.run("memory-context", hooks.post_read(path)).context("PostToolUse") or ""
    assert sum(line.startswith("- ") for line in warning.splitlines()) == 1


def test_gotchas_of_every_readable_scope_are_shown(hooks: Hooks) -> None:
    path = hooks.write_file("src/auth/login.ts", "x\n")
    hooks.memory("write", "Global auth pitfall", "--type", "gotcha", "--tags", "auth", "--content", "g",
                 "--scope", "global")
    hooks.memory("write", "Local auth pitfall", "--type", "gotcha", "--tags", "auth", "--content", "l",
                 "--scope", "local")
    warning = hooks.run("memory-context", hooks.post_read(path)).context("PostToolUse") or ""
    assert "[gotcha-global-auth-pitfall, global]" in warning
    assert "[gotcha-local-auth-pitfall, local]" in warning


def test_reading_a_memory_file_injects_nothing(hooks: Hooks) -> None:
    auth_project(hooks)
    memory_file = hooks.memory_dir / f"{GOTCHA}.md"
    assert hooks.run("memory-context", hooks.post_read(memory_file)).out == ""


# ---------------------------------------------------------------------------------------------
# protect-memory-directory (PreToolUse)
# ---------------------------------------------------------------------------------------------

def _decision(result: HookRun) -> tuple[str, str] | None:
    answer = result.answer
    if answer is None:
        return None
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    return specific["permissionDecision"], specific["permissionDecisionReason"]


@pytest.mark.parametrize("tool,key", [("Write", "file_path"), ("Edit", "file_path"), ("MultiEdit", "file_path"),
                                      ("NotebookEdit", "notebook_path")])
@pytest.mark.parametrize("scope,where", [("project", "project/.claude/memory/x.md"),
                                         ("local", "project/.claude/memory/local/x.md"),
                                         ("project", "project/.claude/memory/nodes/decision/y.md"),
                                         ("global", "home/.claude/memory/x.md")])
def test_file_tools_are_denied_in_every_scope_directory(guard_empty: Hooks, tool: str, key: str, scope: str,
                                                        where: str) -> None:
    hooks = guard_empty
    target = hooks.root / where
    result = hooks.call("protect-memory-directory", hooks.pre_tool(tool, {key: str(target), "content": "x"}))
    decision = _decision(result)
    assert decision is not None, f"{tool} into {where} was not denied"
    verdict, reason = decision
    assert verdict == "deny"
    assert f"in the {scope} memory directory" in reason and "memory write" in reason, reason
    assert not target.exists()


def test_enterprise_directory_is_protected_when_enabled(hooks: Hooks) -> None:
    enterprise = hooks.root / "enterprise"
    enterprise.mkdir()
    hooks.extra_env["CLAUDE_MEMORY_ENTERPRISE_PATH"] = str(enterprise)
    hooks.memory("config", "scopes.enterprise.enabled", "true", "--scope", "global")
    write = hooks.run("protect-memory-directory", hooks.pre_tool("Write", {"file_path": str(enterprise / "x.md"),
                                                                           "content": "x"}))
    assert _decision(write) is not None and "enterprise memory directory" in _decision(write)[1]
    remove = hooks.run("protect-memory-directory", hooks.pre_tool("Bash", {"command": f"rm {enterprise}/x.md"}))
    assert _decision(remove) is not None and "enterprise" in _decision(remove)[1]


def test_claude_config_dir_moves_the_protected_global_directory(hooks: Hooks) -> None:
    config_dir = hooks.root / "config"
    hooks.extra_env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    denied = hooks.run("protect-memory-directory",
                       hooks.pre_tool("Write", {"file_path": str(config_dir / "memory" / "x.md"), "content": "x"}))
    assert _decision(denied) is not None and "global memory directory" in _decision(denied)[1]


def test_a_lone_surrogate_is_judged_as_claude_code_writes_it(hooks: Hooks) -> None:
    """JSON carries a lone surrogate and UTF-8 cannot: Node, which runs the tools, writes one as
    U+FFFD. A path or command holding one is judged as the file it names (no failing open)."""
    hooks.memory_dir.mkdir(parents=True)
    for tool_input in ({"file_path": f"{hooks.memory_dir}/x\ud800.md", "content": "x"},
                       {"command": f"echo x > {hooks.memory_dir}/\udfff.md"}):
        result = hooks.run("protect-memory-directory", hooks.pre_tool("Bash" if "command" in tool_input else "Write",
                                                                     tool_input))
        assert _decision(result) is not None and _decision(result)[0] == "deny", tool_input
    hooks.memory("write", "Refresh gotcha", "--type", "gotcha", "--paths", "src/**", "--content", "Serialise it.")
    for name in ("memory-context", "capture-file-summary", "clear-memory-check-flag"):
        hooks.run(name, hooks.post_read(hooks.project / "src" / "a\ud83d.ts"))  # exits 0, no traceback (70 if it raised)


def test_a_nul_byte_in_a_path_is_judged_as_written(hooks: Hooks) -> None:
    """JSON carries a NUL byte and no file's path holds one (the system refuses it, Node too): a
    path holding one is judged as written, not resolved, so the hooks neither crash nor fail open."""
    hooks.memory_dir.mkdir(parents=True)
    denied = hooks.run("protect-memory-directory",
                       hooks.pre_tool("Write", {"file_path": f"{hooks.memory_dir}/x\u0000.md", "content": "x"}))
    assert _decision(denied) is not None and _decision(denied)[0] == "deny"
    hooks.memory("write", "Refresh gotcha", "--type", "gotcha", "--paths", "src/**", "--content", "Serialise it.")
    for name in ("memory-context", "capture-file-summary", "clear-memory-check-flag"):
        hooks.run(name, hooks.post_read(hooks.project / "src" / "a\u0000.ts"))  # exits 0 (70 if it raised)


def test_a_locale_without_utf8_still_names_files_in_utf8(hooks: Hooks) -> None:
    # Node names files in UTF-8 whatever the locale: in the C locale with Python's UTF-8 mode off, a
    # path with an accent is still judged (it crashed the guard open) and a gotcha still found
    ascii_locale = hooks.environ(LC_ALL="C", LANG="C", PYTHONUTF8="0")
    hooks.memory_dir.mkdir(parents=True)
    denied = hooks.run("protect-memory-directory", hooks.pre_tool("Write", {"file_path": f"{hooks.memory_dir}/café.md",
                                                                           "content": "x"}), env=ascii_locale)
    assert _decision(denied) is not None and _decision(denied)[0] == "deny"
    hooks.memory("write", "Refresh gotcha", "--type", "gotcha", "--paths", "src/**", "--content", "Serialise it.")
    source = hooks.write_file("src/café.ts", "export const x = 1;\n")
    context = hooks.run("memory-context", hooks.post_read(source), env=ascii_locale).context("PostToolUse") or ""
    assert "Refresh gotcha" in context


def test_a_symlink_into_the_memory_directory_is_seen_through(hooks: Hooks) -> None:
    hooks.memory_dir.mkdir(parents=True)
    (hooks.project / "notes").symlink_to(hooks.memory_dir)
    result = hooks.run("protect-memory-directory",
                       hooks.pre_tool("Write", {"file_path": str(hooks.project / "notes" / "x.md"), "content": "x"}))
    assert _decision(result) is not None


@pytest.mark.parametrize("path", ["src/auth/login.ts", ".claude/settings.json", ".claude/memory-notes.md",
                                  "docs/.claude/memoryx/a.md"])
def test_file_tools_elsewhere_are_allowed(guard_empty: Hooks, path: str) -> None:
    hooks = guard_empty
    target = hooks.project / path
    for tool in ("Write", "Edit"):
        assert hooks.call("protect-memory-directory",
                         hooks.pre_tool(tool, {"file_path": str(target), "content": "x"})).out == ""


DENIED_COMMANDS = [
    "echo note > .claude/memory/a.md",
    "echo note >> ~/.claude/memory/a.md",
    'echo note > "$HOME/.claude/memory/a.md"',
    "echo note>.claude/memory/a.md",
    "cat > .claude/memory/a.md <<'EOF'\n# Note\nEOF",
    "cat draft.md | tee .claude/memory/a.md",
    "echo x | sudo tee -a .claude/memory/a.md",
    "rm .claude/memory/a.md",
    "rm -rf .claude/memory",
    "rm .claude/memory/local/a.md",
    "rm ~/.claude/memory/a.md",
    "FOO=1 rm {project}/.claude/memory/a.md",
    "mv draft.md .claude/memory/",
    "mv .claude/memory/a.md /tmp/",
    "cp draft.md .claude/memory/a.md",
    "cp -r notes/ .claude/memory",
    "cp -t .claude/memory draft.md",
    "cp -rt .claude/memory notes/",
    "cp --target-directory=.claude/memory draft.md",
    "rsync -a notes/ .claude/memory/",
    "sed -i 's/old/new/' .claude/memory/a.md",
    "sed -i.bak s/old/new/ .claude/memory/a.md",
    "perl -pi -e 's/old/new/' .claude/memory/a.md",
    "git rm .claude/memory/a.md",
    "git mv draft.md .claude/memory/b.md",
    "git checkout -- .claude/memory/a.md",
    "find .claude/memory -name '*.md' -delete",
    "find .claude/memory -name '*.md' -exec rm {} \\;",
    "touch .claude/memory/a.md",
    "truncate -s 0 .claude/memory/a.md",
    "dd if=/dev/zero of=.claude/memory/a.md",
    "ln -s /tmp/x .claude/memory/y.md",
    "chmod 000 .claude/memory/a.md",
    "mkdir -p .claude/memory/new && echo x > .claude/memory/new/a.md",
    "ls && rm .claude/memory/a.md",
    "cd .claude/memory && rm a.md",
    "(rm .claude/memory/a.md)",
    "sh -c 'rm .claude/memory/a.md'",
    "tar -xf notes.tar -C .claude/memory",
]


@pytest.mark.parametrize("command", DENIED_COMMANDS)
def test_bash_commands_that_change_memory_files_are_denied(guard_empty: Hooks, command: str) -> None:
    hooks = guard_empty
    command = command.replace("{project}", str(hooks.project))
    result = hooks.call("protect-memory-directory", hooks.pre_tool("Bash", {"command": command,
                                                                           "description": "Change a note"}))
    decision = _decision(result)
    assert decision is not None, f"not denied: {command}"
    assert decision[0] == "deny" and "memory directory" in decision[1] and "memory write" in decision[1]


ALLOWED_COMMANDS = [
    "cat .claude/memory/a.md",
    "grep -rn auth .claude/memory",
    "ls -la .claude/memory ~/.claude/memory",
    "head -5 ~/.claude/memory/a.md",
    "wc -l .claude/memory/*.md",
    "sed -n 1,5p .claude/memory/a.md",
    "find .claude/memory -name '*.md'",
    "diff .claude/memory/a.md draft.md",
    "cp .claude/memory/a.md /tmp/backup.md",
    "cp -t /tmp .claude/memory/a.md",
    "cat .claude/memory/a.md > /tmp/copy.md",
    "git diff -- .claude/memory",
    "git log --oneline -- .claude/memory",
    "git add .claude/memory/a.md",
    "memory write 'Use OAuth2' --type decision --tags auth --content 'PKCE everywhere'",
    "memory update decision-use-oauth2 --append 'Refresh after 7 days'",
    "memory delete gotcha-old",
    "memory file write .claude/memory/notes/plan.md --content '# Plan'",
    "memory health && memory search auth",
    "echo hi > notes.txt",
    "rm -rf build dist",
    "rm .claude/memory-notes.md",
    "npm test",
]


@pytest.mark.parametrize("command", ALLOWED_COMMANDS)
def test_bash_commands_that_only_read_memory_are_allowed(guard_empty: Hooks, command: str) -> None:
    result = guard_empty.call("protect-memory-directory", guard_empty.pre_tool("Bash", {"command": command,
                                                                           "description": "Look"}))
    assert result.out == "", f"denied: {command}: {result.out}"


# One command per way around a deny list (tests/test_guard.py judges many more in process).
DESTROYING_COMMANDS = [
    "rm -rf .claude",
    "mv .claude /tmp/old",
    "rm -rf ~/.claude",
    "rm -rf .c*",
    "D=.claude; rm -rf $D",
    'rm -rf "$HOME/.claude/memory"',
    "find . -name '*.md' -delete",
    "git clean -fdx",
    "sed -Ei 's/a+/b/' .claude/memory/a.md",
    "python3 -c \"import shutil; shutil.rmtree('.claude')\"",
    "node -e \"require('fs').rmSync('.claude', {recursive: true})\"",
    "eval 'rm -rf .claude'",
    "bash -c 'rm -rf .claude/memory'",
    "echo .claude | xargs rm -rf",
]


@pytest.mark.parametrize("command", DESTROYING_COMMANDS)
def test_bash_commands_that_destroy_a_memory_directory_are_denied(guard_full: Hooks, command: str) -> None:
    hooks = guard_full
    decision = _decision(hooks.call("protect-memory-directory", hooks.pre_tool("Bash", {"command": command})))
    assert decision is not None, f"not denied: {command}"
    assert decision[0] == "deny" and "memory directory" in decision[1] and "memory restore" in decision[1]


@pytest.mark.parametrize("command", ["git checkout .", "git restore .", "git reset --hard", "git stash -u",
                                     "rm -rf node_modules build/", "find . -name '*.pyc' -delete",
                                     "sed -i 's/a/b/' src/app.py", "memory delete decision-use-oauth2",
                                     "python3 -c \"open('out.txt', 'w').write('x')\"", "ls .claude",
                                     "grep -r PKCE .claude/memory"])
def test_ordinary_commands_beside_memories_pass_the_guard(guard_full: Hooks, command: str) -> None:
    result = guard_full.call("protect-memory-directory", guard_full.pre_tool("Bash", {"command": command}))
    assert result.out == "", f"denied: {command}: {result.out}"


def test_reads_and_other_tools_pass_the_guard(hooks: Hooks) -> None:
    target = str(hooks.memory_dir / "a.md")
    for tool, tool_input in [("Read", {"file_path": target}), ("Grep", {"pattern": "x", "path": target}),
                             ("Glob", {"pattern": "*.md", "path": str(hooks.memory_dir)})]:
        assert hooks.run("protect-memory-directory", hooks.pre_tool(tool, tool_input)).out == ""


# ---------------------------------------------------------------------------------------------
# memory-context-bash (PostToolUse Bash)
# ---------------------------------------------------------------------------------------------

def bash_project(hooks: Hooks) -> None:
    """Three gotchas among 15 unrelated memories (error matching ranks against the whole store)."""
    _bulk_memories(hooks, 15)
    hooks.write_file("src/auth/login.ts", "x\n")
    hooks.memory("write", "Compose needs the db healthcheck", "--type", "gotcha", "--tags", "docker",
                 "--content", "docker compose up starts the api before postgres accepts connections; "
                              "add depends_on condition service_healthy.")
    hooks.memory("write", "Token refresh must be serialised", "--type", "gotcha", "--tags", "auth",
                 "--content", "Concurrent refreshes revoke each other.")
    hooks.memory("write", "Redis connection refused in tests", "--type", "gotcha", "--tags", "testing",
                 "--content", "ECONNREFUSED 127.0.0.1:6379 during the integration tests means the redis "
                              "container is not running: start it with make redis.")


def test_bash_gotcha_for_the_program_used(hooks: Hooks) -> None:
    bash_project(hooks)
    warning = hooks.run("memory-context-bash", hooks.post_bash("docker compose up -d", "started")).context(
        "PostToolUse") or ""
    assert warning.startswith("Known gotchas for `docker compose up -d`")
    assert "gotcha-compose-needs-the-db-healthcheck" in warning
    assert "gotcha-token-refresh-must-be-serialised" not in warning


def test_bash_gotcha_for_a_command_holding_half_an_emoji(hooks: Hooks) -> None:
    # the answer quotes the command as Node ran it: a lone surrogate encoded as U+FFFD
    bash_project(hooks)
    payload = json.dumps(hooks.post_bash("docker compose up -d # HALF", "started")).replace("HALF", "\\ud83d")
    result = hooks.run("memory-context-bash", raw=payload.encode())
    warning = result.context("PostToolUse") or ""
    assert warning.startswith("Known gotchas for `docker compose up -d # \ufffd`")
    assert "gotcha-compose-needs-the-db-healthcheck" in warning


def test_bash_gotcha_for_a_path_in_the_command(hooks: Hooks) -> None:
    bash_project(hooks)
    warning = hooks.run("memory-context-bash", hooks.post_bash("cat src/auth/login.ts", "x")).context(
        "PostToolUse") or ""
    assert "gotcha-token-refresh-must-be-serialised" in warning


def test_bash_gotcha_for_the_error_in_the_output(hooks: Hooks) -> None:
    bash_project(hooks)
    error = ("FAIL tests/cache.test.ts\nError: connect ECONNREFUSED 127.0.0.1:6379\n"
             "    at TCPConnectWrap.afterConnect\n")
    warning = hooks.run("memory-context-bash", hooks.post_bash("npm run test:integration", "", error)).context(
        "PostToolUse") or ""
    assert "gotcha-redis-connection-refused-in-tests" in warning


def test_memory_gotchas_cli_matches_error_output(hooks: Hooks) -> None:
    """`memory gotchas` promises "the same matching as the hooks"; the CLI shows the crash directly."""
    bash_project(hooks)
    output = hooks.memory("gotchas", "--command", "npm run test:integration",
                          "--output", "Error: connect ECONNREFUSED 127.0.0.1:6379")
    assert "gotcha-redis-connection-refused-in-tests" in output


def test_bash_gotcha_for_the_error_in_the_output_of_a_small_store(hooks: Hooks) -> None:
    """A new project whose only memory is the gotcha naming the exact error."""
    hooks.memory("write", "Redis connection refused in tests", "--type", "gotcha", "--tags", "testing",
                 "--content", "ECONNREFUSED 127.0.0.1:6379 during the integration tests means the redis "
                              "container is not running: start it with make redis.")
    error = "Error: connect ECONNREFUSED 127.0.0.1:6379\n"
    warning = hooks.run("memory-context-bash", hooks.post_bash("npm run test:integration", "", error)).context(
        "PostToolUse") or ""
    assert "gotcha-redis-connection-refused-in-tests" in warning


def test_bash_context_is_silent_for_unrelated_commands_and_repeats(hooks: Hooks) -> None:
    bash_project(hooks)
    assert hooks.run("memory-context-bash", hooks.post_bash("ls -la", "a\nb")).out == ""
    assert hooks.run("memory-context-bash", hooks.post_bash("memory search docker", "...")).out == ""
    assert hooks.run("memory-context-bash", hooks.post_bash("docker compose ps", "up")).context("PostToolUse")
    assert hooks.run("memory-context-bash", hooks.post_bash("docker compose logs api", "x")).out == ""


def test_bash_context_is_silent_when_reading_memory_itself(hooks: Hooks) -> None:
    """Like a Read of a memory file: the gotcha being read is not injected back, nor for `memory` runs."""
    bash_project(hooks)
    gotcha = hooks.memory_dir / "gotcha-token-refresh-must-be-serialised.md"
    assert gotcha.is_file()
    for command in (f"cat {gotcha.relative_to(hooks.project)}", f"head -20 {gotcha}",
                    f'"{REPO}/bin/memory" gotchas --path src/auth/login.ts', "memory read gotcha-x"):
        assert hooks.run("memory-context-bash", hooks.post_bash(command, "x")).out == "", command
    # Another path in the same command still counts.
    warning = hooks.run("memory-context-bash", hooks.post_bash(f"cat src/auth/login.ts {gotcha}", "x")).context(
        "PostToolUse") or ""
    assert "gotcha-token-refresh-must-be-serialised" in warning


def test_read_and_bash_share_the_session_deduplication(hooks: Hooks) -> None:
    bash_project(hooks)
    login = hooks.project / "src/auth/login.ts"
    assert hooks.run("memory-context", hooks.post_read(login)).context("PostToolUse")
    assert hooks.run("memory-context-bash", hooks.post_bash("cat src/auth/login.ts", "x")).out == ""


def test_bash_gotcha_for_a_failed_command(hooks: Hooks) -> None:
    """Observed with 2.1.330: `ls missing` (exit 2) fires PostToolUseFailure, not PostToolUse."""
    bash_project(hooks)
    events = {event for event, name in registered_hooks() if name == "memory-context-bash"}
    assert "PostToolUseFailure" in events, events
    payload = hooks._tool("PostToolUseFailure", "Bash", {"command": "npm run test:integration",
                                                         "description": "Run the integration tests"})
    payload.update(error="Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:6379", is_interrupt=False,
                   duration_ms=900)
    warning = hooks.run("memory-context-bash", payload).context("PostToolUseFailure") or ""
    assert "gotcha-redis-connection-refused-in-tests" in warning


# ---------------------------------------------------------------------------------------------
# start-memory-index (SessionStart)
# ---------------------------------------------------------------------------------------------

def _bulk_memories(hooks: Hooks, count: int) -> None:
    """`count` hand-written memories with long titles, then a reindex (faster than `memory write`)."""
    hooks.memory_dir.mkdir(parents=True, exist_ok=True)
    kinds = ["decision", "gotcha", "learning", "hub", "artifact"]
    for index in range(count):
        kind = kinds[index % len(kinds)]
        title = f"{kind.title()} {index} about the payment retry policy and the idempotency keys of every provider"
        (hooks.memory_dir / f"{kind}-bulk-{index}.md").write_text(
            f"---\ntype: {kind}\ntags:\n  - payments\ncreated: \"2026-03-0{index % 9 + 1}T10:00:00Z\"\n"
            f"updated: \"2026-03-0{index % 9 + 1}T10:00:00Z\"\n---\n\n# {title}\n\nBody {index}.\n")
    hooks.memory("reindex")


def test_session_start_summary_shape(hooks: Hooks) -> None:
    auth_project(hooks)
    hooks.memory("write", "Use OAuth2 with PKCE for all clients", "--type", "decision", "--tags", "auth",
                 "--content", "PKCE everywhere.")
    result = hooks.run("start-memory-index", hooks.session_start("startup"))
    answer = result.answer
    assert answer is not None and set(answer) == {"hookSpecificOutput"}
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    summary = result.context("SessionStart") or ""
    assert summary.startswith("# Memory")
    assert "Memories: project 2 (1 decision, 1 gotcha)" in summary or \
        "Memories: project 2 (1 gotcha, 1 decision)" in summary, summary
    assert "## Key decisions" in summary and "[decision-use-oauth2-with-pkce-for-all-clients]" in summary
    assert GOTCHA in summary and "(today)" in summary


@pytest.mark.parametrize("budget", [None, 150])
def test_session_start_summary_fits_its_token_budget(hooks: Hooks, budget: int | None) -> None:
    _bulk_memories(hooks, 80)
    if budget:
        hooks.memory("config", "injection.session_start_max_tokens", str(budget), "--scope", "project")
    limit = budget or 500  # the default of injection.session_start_max_tokens
    summary = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert summary.startswith("# Memory") and "Memories: project 80" in summary
    tokens = text.estimate_tokens(summary)
    assert tokens <= limit, f"{tokens} estimated tokens > {limit}"
    assert tokens > limit * 0.6, f"budget {limit} left mostly unused ({tokens}) with 80 memories"


def _edit_manual_section(hooks: Hooks, text_: str) -> None:
    index_md = hooks.memory_dir / "index.md"
    start, end = "<!-- memory:manual:start -->", "<!-- memory:manual:end -->"
    head, rest = index_md.read_text().split(start, 1)
    index_md.write_text(head + start + "\n" + text_ + "\n" + end + rest.split(end, 1)[1])


def test_session_start_carries_the_hand_written_project_context(hooks: Hooks) -> None:
    prompt_project(hooks)  # a decision: index.md is generated
    _edit_manual_section(hooks, "## Project context\nE-commerce API in TypeScript; pnpm, never npm.")
    summary = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert "E-commerce API in TypeScript; pnpm, never npm." in summary


def test_session_start_project_context_is_clean(hooks: Hooks) -> None:
    prompt_project(hooks)
    summary = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert "edit this part by hand" not in summary, summary  # the template is not context
    _edit_manual_section(hooks, "## Project context\nE-commerce API in TypeScript.")
    summary = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert summary.count("## Project context") == 1, summary


def test_session_start_is_silent_without_memories(hooks: Hooks) -> None:
    for source in ("startup", "resume", "clear", "compact"):
        assert hooks.run("start-memory-index", hooks.session_start(source)).out == ""


def test_session_start_exports_the_prepared_interpreter_for_the_bash_tool(hooks: Hooks) -> None:
    env_file = hooks.root / "session-env" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir()
    hooks.run("start-memory-index", hooks.session_start("startup"),
              env=hooks.environ(CLAUDE_ENV_FILE=str(env_file)))
    assert f"export CLAUDE_MEMORY_DATA={hooks.data}\n" in env_file.read_text()  # bin/memory reads interpreter there


# ---------------------------------------------------------------------------------------------
# memory-prompt-context (UserPromptSubmit)
# ---------------------------------------------------------------------------------------------

DECISION = "decision-use-oauth2-with-pkce-for-all-clients"


def prompt_project(hooks: Hooks) -> None:
    hooks.memory("write", "Use OAuth2 with PKCE for all clients", "--type", "decision", "--tags", "auth,api",
                 "--content", "Every client (web, mobile, CLI) authenticates with OAuth2 authorization code "
                              "and PKCE. Implicit flow rejected: tokens leak through redirects.")


def test_prompt_context_injects_the_relevant_memory(hooks: Hooks) -> None:
    prompt_project(hooks)
    context = hooks.run("memory-prompt-context", hooks.prompt("How do the clients authenticate with OAuth2?")
                        ).context("UserPromptSubmit") or ""
    assert f"[{DECISION}, project, updated today]" in context
    assert "Implicit flow rejected" in context


@pytest.mark.parametrize("prompt", ["hi", "thanks, looks good", "fix the typo in README", "   ", "/clear"])
def test_prompt_context_is_silent_on_irrelevant_prompts(hooks: Hooks, prompt: str) -> None:
    prompt_project(hooks)
    assert hooks.run("memory-prompt-context", hooks.prompt(prompt)).out == ""


def test_prompt_context_once_per_session_unless_the_memory_changed(hooks: Hooks) -> None:
    prompt_project(hooks)
    question = "Why do the mobile clients use PKCE with OAuth2?"
    assert hooks.run("memory-prompt-context", hooks.prompt(question)).context("UserPromptSubmit")
    assert hooks.run("memory-prompt-context", hooks.prompt(question)).out == ""
    assert hooks.run("memory-prompt-context", hooks.prompt("OAuth2 PKCE for the CLI client?")).out == ""
    hooks.memory("update", DECISION, "--append", "The CLI uses the device code flow with PKCE.")
    again = hooks.run("memory-prompt-context", hooks.prompt(question)).context("UserPromptSubmit") or ""
    assert DECISION in again
    other_session = hooks.prompt(question, session_id=str(uuid.uuid4()))
    assert DECISION in (hooks.run("memory-prompt-context", other_session).context("UserPromptSubmit") or "")


def test_prompt_context_reads_a_pasted_blob_in_one_pass(hooks: Hooks) -> None:
    # a pasted minified bundle or base64 blob is one long word: looking for file paths in it must
    # not try every position of the word again (it took minutes, past Claude Code's hook timeout)
    prompt_project(hooks)
    for blob in ("A" * 300_000, "a-" * 150_000):
        prompt = f"{blob}\nHow do the clients authenticate with OAuth2?"
        context = hooks.run("memory-prompt-context", hooks.prompt(prompt)).context("UserPromptSubmit") or ""
        assert "Implicit flow rejected" in context
        hooks.session_id = str(uuid.uuid4())


def test_prompt_context_skips_task_notifications(hooks: Hooks) -> None:
    prompt_project(hooks)
    notification = ("<task-notification>\n<task-id>ae258d1585810e1e5</task-id>\n<status>completed</status>\n"
                    "<summary>Agent \"Review OAuth2 PKCE clients\" completed</summary>\n</task-notification>")
    assert hooks.run("memory-prompt-context", hooks.prompt(notification)).out == ""


# ---------------------------------------------------------------------------------------------
# reminders (UserPromptSubmit) and the memory-check flag (PostToolUse)
# ---------------------------------------------------------------------------------------------

def _edit(hooks: Hooks, count: int, start: int = 0) -> None:
    for index in range(start, start + count):
        path = hooks.project / f"src/module_{index}.py"
        result = hooks.run("clear-memory-check-flag", hooks.post_edit(path, "Write" if index % 2 else "Edit"))
        assert result.out == ""


def _skill_reminder(hooks: Hooks, prompt: str = "continue with the next step") -> str | None:
    return hooks.run("memory-skill-reminder", hooks.prompt(prompt)).context("UserPromptSubmit")


def test_skill_reminder_only_after_five_edits(hooks: Hooks) -> None:
    _edit(hooks, 4)
    assert _skill_reminder(hooks) is None
    _edit(hooks, 1, start=4)
    reminder = _skill_reminder(hooks) or ""
    assert "5 file edits since the last memory was saved" in reminder and "memory write" in reminder


def test_skill_reminder_is_rare(hooks: Hooks) -> None:
    shown = 0
    for prompt in range(12):
        _edit(hooks, 2, start=prompt * 2)
        shown += _skill_reminder(hooks) is not None
    assert 1 <= shown <= 2, f"{shown} reminders in 12 prompts"


def test_skill_reminder_ignores_task_notifications(hooks: Hooks) -> None:
    _edit(hooks, 6)
    assert _skill_reminder(hooks, "<task-notification>\n<status>completed</status>\n</task-notification>") is None


# The hooks that only count and remember run on every prompt and every edit: they load neither
# pathlib nor the json package, nor (outside a design question or a Bash command) regular expressions.
HEAVY_MODULES = {"pathlib", "json", "re", "contextlib", "sqlite3", "datetime"}


def _imported(result: HookRun) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in result.err.splitlines() if line.startswith("import time:")}


def test_the_counting_hooks_import_nothing_heavy(hooks: Hooks) -> None:
    env = hooks.environ(PYTHONPROFILEIMPORTTIME="1", MEMORY_HOOK_SERVER="off")  # (answered in the hook process)
    runs = {"clear-memory-check-flag": hooks.post_edit(hooks.project / "src/app.py", "Edit"),
            "memory-skill-reminder": hooks.prompt("continue with the next step"),
            "memory-think-reminder": hooks.prompt("continue with the next step")}
    for name, payload in runs.items():
        imported = _imported(hooks.run(name, payload, env=env))
        assert "_lib.session.handlers" in imported, name  # (the import times were read)
        assert not imported & HEAVY_MODULES, (name, sorted(imported & HEAVY_MODULES))
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text())
    assert state["edits_since_capture"] == 1 and state["prompts"] == 1  # and they did their work


def test_an_edit_is_counted_when_its_payload_holds_half_an_emoji(hooks: Hooks) -> None:
    # JSON carries a lone surrogate as an escape (a string cut between the two halves of a pair); UTF-8
    # cannot hold one: the session state is written, the path as Node wrote the file (U+FFFD for it)
    _edit(hooks, 1)
    payload = json.dumps(hooks.post_edit(hooks.project / "src/notes-HALF.md", "Write")).replace("HALF", "\\ud83d")
    assert hooks.run("clear-memory-check-flag", raw=payload.encode()).out == ""
    _edit(hooks, 1, start=1)
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text(encoding="utf-8"))
    assert state["edits_since_capture"] == 3
    assert state["files_changed"][1] == f"{hooks.project}/src/notes-\ufffd.md"



def test_memory_write_clears_the_flag(hooks: Hooks) -> None:
    _edit(hooks, 6)
    output = hooks.memory("write", "Module loader needs absolute imports", "--type", "learning",
                          "--tags", "python", "--content", "Relative imports break the plugin loader.")
    command = ("memory write \"Module loader needs absolute imports\" --type learning --tags python "
               "--content \"Relative imports break the plugin loader.\"")
    assert hooks.run("clear-memory-check-flag", hooks.post_bash(command, output)).out == ""
    assert _skill_reminder(hooks) is None
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text())
    assert state["edits_since_capture"] == 0
    assert state["memories_written"] == ["learning-module-loader-needs-absolute-imports"]


def test_memory_write_by_the_plugin_path_clears_the_flag(hooks: Hooks) -> None:
    """The skills say: if `memory` is not on PATH, run "${CLAUDE_PLUGIN_ROOT}/bin/memory" (quoted)."""
    _edit(hooks, 6)
    command = f'"{REPO}/bin/memory" write "Loader note" --type learning --tags python --content "x"'
    hooks.run("clear-memory-check-flag", hooks.post_bash(command, "Created learning-loader-note (project scope): x\n"))
    assert _skill_reminder(hooks) is None
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text())
    assert state["edits_since_capture"] == 0 and state["memories_written"] == ["learning-loader-note"]


def test_other_bash_commands_do_not_clear_the_flag(hooks: Hooks) -> None:
    _edit(hooks, 5)
    hooks.run("clear-memory-check-flag", hooks.post_bash("memory search loader", "No memories match."))
    hooks.run("clear-memory-check-flag", hooks.post_bash("git commit -m 'write memory tests'", "ok"))
    assert _skill_reminder(hooks) is not None


@pytest.mark.parametrize("prompt", ["Should we use Redis or Postgres for the session store?",
                                    "What are the trade-offs between a monorepo and separate repos?",
                                    "Which approach is better for the retry logic, pros and cons?"])
def test_think_reminder_on_design_questions(hooks: Hooks, prompt: str) -> None:
    reminder = hooks.run("memory-think-reminder", hooks.prompt(prompt)).context("UserPromptSubmit") or ""
    assert "memory think" in reminder


@pytest.mark.parametrize("prompt", ["fix the typo in README", "run the tests", "hi"])
def test_no_think_reminder_otherwise(hooks: Hooks, prompt: str) -> None:
    assert hooks.run("memory-think-reminder", hooks.prompt(prompt)).out == ""


def test_no_think_reminder_on_task_notifications(hooks: Hooks) -> None:
    """A background agent's completion arrives as a synthetic prompt (§5.1); it is not the user asking."""
    notification = ("<task-notification>\n<task-id>ae258d1585810e1e5</task-id>\n<status>completed</status>\n"
                    "<summary>Agent \"Should we use Redis or Postgres?\" completed</summary>\n</task-notification>")
    assert hooks.run("memory-think-reminder", hooks.prompt(notification)).out == ""


def test_think_reminder_is_rare(hooks: Hooks) -> None:
    questions = [f"Should we use option {index} or option {index + 1} for the cache?" for index in range(10)]
    shown = sum(hooks.run("memory-think-reminder", hooks.prompt(question)).out != "" for question in questions)
    assert shown == 1, f"{shown} think reminders for 10 design questions in one session"


def test_hooks_of_one_event_run_in_parallel_without_losing_state(hooks: Hooks) -> None:
    """Claude Code starts every matching hook of an event at once; they share the session state."""
    prompt_project(hooks)
    _edit(hooks, 2)
    for round_ in range(6):
        payload = json.dumps(hooks.prompt(f"Should we keep OAuth2 with PKCE for client {round_}?")).encode()
        running = [subprocess.Popen([SH, str(RUN), name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=hooks.project, env=hooks.environ())
                   for name in ("memory-prompt-context", "memory-skill-reminder", "memory-think-reminder",
                                "memory-prompt-context")]
        for process in running:
            out, err = process.communicate(payload, timeout=60)
            assert process.returncode == 0 and err == b"", err
            assert not out or json.loads(out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    state = json.loads((hooks.data / "sessions" / f"{hooks.session_id}.json").read_text())
    assert state["prompts"] == 6 and state["think_prompts"] == 6, state
    assert state["edits_since_capture"] == 2 and len(state["files_changed"]) == 2


# ---------------------------------------------------------------------------------------------
# compaction and session end
# ---------------------------------------------------------------------------------------------

def _busy_session(hooks: Hooks) -> None:
    hooks.run("start-memory-index", hooks.session_start("startup"))
    hooks.run("memory-skill-reminder", hooks.prompt("refactor the login flow"))
    for path in ("src/auth/login.ts", "src/auth/session.ts"):
        hooks.run("clear-memory-check-flag", hooks.post_edit(hooks.project / path))
    output = hooks.memory("write", "Login keeps one refresh in flight", "--type", "learning", "--tags", "auth",
                          "--content", "RefreshQueue serialises refreshes per user.")
    hooks.run("clear-memory-check-flag", hooks.post_bash('memory write "Login keeps one refresh in flight"', output))


def test_pre_compact_notes_come_back_after_compaction(hooks: Hooks) -> None:
    _busy_session(hooks)
    assert hooks.run("pre-compact-memory", hooks.pre_compact("manual")).out == ""
    [saved] = hooks.memories(hooks.local_dir, "session")
    notes = saved.read_text()
    assert "src/auth/login.ts" in notes and "[[learning-login-keeps-one-refresh-in-flight]]" in notes
    summary = hooks.run("start-memory-index", hooks.session_start("compact")).context("SessionStart") or ""
    assert "## Before compaction this session" in summary
    assert "src/auth/login.ts" in summary and "src/auth/session.ts" in summary
    assert f"memory read {saved.stem}" in summary
    # A new session does not inherit them.
    fresh = hooks.run("start-memory-index", hooks.session_start("startup", session_id=str(uuid.uuid4())))
    assert "Before compaction" not in (fresh.context("SessionStart") or "")


def test_session_end_writes_the_session_memory(hooks: Hooks) -> None:
    """(Its time against SessionEnd's 1.5 s budget: bench/bench_hooks.py.)"""
    _busy_session(hooks)
    result = hooks.run("end-memory", hooks.session_end("other"))
    assert result.out == ""
    [saved] = hooks.memories(hooks.local_dir, "session")
    notes = saved.read_text()
    assert "## Files changed" in notes and "src/auth/session.ts" in notes
    assert "## Memories written" in notes and "[[learning-login-keeps-one-refresh-in-flight]]" in notes
    assert not (hooks.data / "sessions" / f"{hooks.session_id}.json").exists()
    assert "session" in hooks.memory("list", "--type", "session", "--scope", "local")


def test_session_end_after_pre_compact_updates_one_session_memory(hooks: Hooks) -> None:
    _busy_session(hooks)
    hooks.run("pre-compact-memory", hooks.pre_compact("auto"))
    hooks.run("clear-memory-check-flag", hooks.post_edit(hooks.project / "src/billing/invoice.ts", "Write"))
    hooks.run("end-memory", hooks.session_end("other"))
    [saved] = hooks.memories(hooks.local_dir, "session")
    assert "src/billing/invoice.ts" in saved.read_text()


def test_an_idle_session_leaves_no_memory(hooks: Hooks) -> None:
    hooks.run("start-memory-index", hooks.session_start("startup"))
    hooks.run("memory-prompt-context", hooks.prompt("hi"))
    hooks.run("memory-skill-reminder", hooks.prompt("hi"))
    hooks.run("pre-compact-memory", hooks.pre_compact("auto"))
    result = hooks.run("end-memory", hooks.session_end("prompt_input_exit"))
    assert result.out == ""
    assert not hooks.local_dir.exists() or not hooks.memories(hooks.local_dir, "session")


def test_a_resumed_session_keeps_its_state(hooks: Hooks) -> None:
    _busy_session(hooks)
    hooks.run("end-memory", hooks.session_end("resume"))
    assert (hooks.data / "sessions" / f"{hooks.session_id}.json").exists()


# ---------------------------------------------------------------------------------------------
# capture-file-summary (PostToolUse Read) and capture-subagent (SubagentStop)
# ---------------------------------------------------------------------------------------------

def _large_python(functions: int = 700, purpose: str = "Order processing: validation, pricing and persistence") -> str:
    parts = [f'"""{purpose} of customer orders."""\n',
             "import json\nfrom decimal import Decimal\n\n"]
    for index in range(functions):
        parts.append(f"def handle_{index}(order: dict) -> Decimal:\n"
                     f"    \"\"\"Step {index} of the order pipeline.\"\"\"\n"
                     f"    return Decimal(order.get('total_{index}', 0)) * Decimal('1.{index % 10}')\n\n\n")
    return "".join(parts)


def test_reading_a_large_source_file_creates_a_file_summary(hooks: Hooks) -> None:
    source = hooks.write_file("src/orders/pipeline.py", _large_python())
    assert source.stat().st_size > 50 * 1024
    assert hooks.run("capture-file-summary", hooks.post_read(source)).out == ""
    [summary] = hooks.memories(hooks.local_dir, "file-summary")
    content = summary.read_text()
    assert "path: src/orders/pipeline.py" in content
    assert "Order processing: validation, pricing and persistence" in content and "`handle_0`" in content


def test_file_summary_is_refreshed_only_when_the_file_changes(hooks: Hooks) -> None:
    source = hooks.write_file("src/orders/pipeline.py", _large_python())
    hooks.run("capture-file-summary", hooks.post_read(source))
    [summary] = hooks.memories(hooks.local_dir, "file-summary")
    os.utime(summary, ns=(10**18, 10**18))  # a rewrite would give it the current time (and a new inode)
    first = summary.read_bytes(), summary.stat().st_mtime_ns, summary.stat().st_ino
    hooks.run("capture-file-summary", hooks.post_read(source))
    assert (summary.read_bytes(), summary.stat().st_mtime_ns, summary.stat().st_ino) == first, \
        "rewritten although unchanged"
    source.write_text(_large_python(purpose="Order processing v2: validation and refunds"))
    hooks.run("capture-file-summary", hooks.post_read(source))
    assert "Order processing v2: validation and refunds" in summary.read_text()
    assert len(hooks.memories(hooks.local_dir, "file-summary")) == 1


@pytest.mark.parametrize("relpath", ["src/secret_store.py", "config/credentials_loader.py", "deploy/.env",
                                     "certs/server.key", "src/orders/small.py", "assets/data.rb"])
def test_excluded_small_or_other_files_are_never_summarised(hooks: Hooks, relpath: str) -> None:
    content = "x = 1\n" if relpath.endswith("small.py") else _large_python()
    source = hooks.write_file(relpath, content)
    assert hooks.run("capture-file-summary", hooks.post_read(source)).out == ""
    assert not hooks.local_dir.exists() or not hooks.memories(hooks.local_dir, "file-summary")


def test_subagent_findings_become_a_discovery_memory(hooks: Hooks) -> None:
    report = ("## Findings\nThe repository uses the repository pattern for data access: every table has a "
              "Repository class in src/db/repositories, services never import the ORM directly, and "
              "transactions are opened by the unit of work in src/db/uow.ts. Tests use the in-memory "
              "repositories from tests/fakes.")
    payload = hooks.subagent_stop("memory:recall", report)
    assert hooks.run("capture-subagent", payload).out == ""
    [discovery] = hooks.memories(hooks.local_dir, "discovery")
    document = frontmatter.split(discovery.read_text())
    fields = frontmatter.parse(document.frontmatter or "")
    assert fields["agent"] == "memory:recall" and fields["session_id"] == hooks.session_id
    assert fields["tags"] == ["subagent", "recall"]
    assert "unit of work in src/db/uow.ts" in document.body


@pytest.mark.parametrize("agent_type", ["", "   "])
def test_subagent_stop_without_agent_type_is_ignored(hooks: Hooks, agent_type: str) -> None:
    """Compaction fires SubagentStop with an empty agent_type (observed with 2.1.330)."""
    payload = hooks.subagent_stop(agent_type, "Summary of the conversation so far. " * 20)
    assert hooks.run("capture-subagent", payload).out == ""
    assert not hooks.memory_dir.exists()


# ---------------------------------------------------------------------------------------------
# bootstrap (SessionStart, async) and the launcher
# ---------------------------------------------------------------------------------------------

def test_bootstrap_records_the_interpreter_once(hooks: Hooks) -> None:
    (hooks.data / "interpreter").unlink()
    first = hooks.run("bootstrap", hooks.session_start("startup"))
    assert first.out == ""
    recorded = hooks.data / "interpreter"
    assert recorded.read_text() == sys.executable + "\n"  # as it runs: not resolved to another path
    record = hooks.data / "runtime.json"
    runtime = json.loads(record.read_text())
    assert (runtime["python"], runtime["state"]) == (sys.executable, "ready")
    assert runtime["why"] == f"{sys.executable} already has every requirement"
    before = record.read_bytes(), record.stat().st_mtime_ns, recorded.stat().st_mtime_ns
    second = hooks.run("bootstrap", hooks.session_start("resume"))
    assert second.out == ""
    assert (record.read_bytes(), record.stat().st_mtime_ns, recorded.stat().st_mtime_ns) == before
    assert not (hooks.data / "venv").exists()  # this interpreter has the requirements


def test_launcher_without_any_python_is_a_silent_no_op(hooks: Hooks) -> None:
    (hooks.data / "interpreter").unlink()
    tools = hooks.root / "coreutils-only"  # a PATH with the shell's tools but no python3
    tools.mkdir()
    (tools / "dirname").symlink_to(shutil.which("dirname") or "/usr/bin/dirname")
    result = hooks.run("start-memory-index", hooks.session_start("startup"), env=hooks.environ(PATH=str(tools)))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_launcher_falls_back_to_python3_when_the_recorded_one_is_gone(hooks: Hooks) -> None:
    files = auth_project(hooks)
    (hooks.data / "interpreter").write_text(f"{hooks.root / 'deleted-venv' / 'bin' / 'python'}\n")
    assert GOTCHA in (hooks.run("memory-context", hooks.post_read(files["login"])).context("PostToolUse") or "")


# ---------------------------------------------------------------------------------------------
# every hook: bad input never breaks Claude
# ---------------------------------------------------------------------------------------------

GARBAGE = {
    "empty": b"",
    "blank": b" \n\t",
    "malformed": b'{"session_id": "abc", "tool_input": {',
    "not-utf8": b"\xff\xfe{\x00",
    "array": b'[{"hook_event_name": "PreToolUse"}]',
    "null": b"null",
    "number": b"42",
    "string": b'"PostToolUse"',
    # nested past Python's stack, to the decoder or to the pass that mends lone surrogates
    "deep": b'{"session_id": "abc", "tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "deep-surrogate": b'{"session_id": "abc", "tool_input": ' + b"[" * 900 + b'"\\ud800"' + b"]" * 900 + b"}",
}


def ill_typed(hooks: Hooks, event: str) -> dict[str, dict[str, Any]]:
    """Payloads with missing fields or fields of the wrong type, for `event`."""
    project = str(hooks.project)
    # The first four lack what any hook needs, or have it in the wrong type: silence. The last
    # two keep the fields a hook needs (a file path, a prompt) but lose or spoil the session:
    # a hook may still answer (e.g. deny the Write), with valid JSON for its event.
    return {
        "empty-object": {},
        "event-only": {"hook_event_name": event},
        "no-session": {"cwd": project, "hook_event_name": event, "tool_name": "Read",
                       "tool_input": {"file_path": f"{project}/src/auth/login.ts"}, "prompt": "auth token refresh"},
        "wrong-types": {"session_id": 123, "transcript_path": [], "cwd": 456, "hook_event_name": 7,
                        "tool_name": ["Read"], "tool_input": "src/auth/login.ts", "tool_response": [1, 2],
                        "prompt": ["hi"], "source": 5, "trigger": {}, "reason": [], "agent_type": {"a": 1},
                        "last_assistant_message": 9, "custom_instructions": 3, "error": 4},
        "wrong-nested": {"session_id": str(uuid.uuid4()), "cwd": project, "hook_event_name": event,
                         "tool_name": "Bash", "tool_input": {"file_path": 5, "command": ["rm", "-rf", "x"],
                                                             "notebook_path": None, "todos": "x"},
                         "tool_response": {"stdout": 5, "stderr": None, "file": "x"}, "prompt": None,
                         "source": None, "agent_type": "memory:recall", "last_assistant_message": None},
        "unsafe-session": {"session_id": "../../../etc/passwd", "cwd": "/nonexistent/dir", "hook_event_name": event,
                           "tool_name": "Write", "tool_input": {"file_path": f"{project}/.claude/memory/x.md"},
                           "prompt": "<task-notification>", "agent_type": "", "last_assistant_message": "x"},
    }


def _snapshot(*roots: Path) -> dict[str, str]:
    found = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and ".git" not in path.relative_to(root).parts[:1]:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir() and not any(path.iterdir()):
                found[str(path)] = "empty directory"
    return found


MAY_ANSWER_WITHOUT_FIELDS = {"start-memory-index"}  # a summary needs no field of the payload


@pytest.mark.parametrize("event,name", registered_hooks(), ids=[name for _, name in registered_hooks()])
def test_bad_input_never_breaks_a_hook(hooks: Hooks, event: str, name: str) -> None:
    auth_project(hooks)
    prompt_project(hooks)
    hooks.memory("list")  # the catalog is fresh: nothing left for a hook to refresh
    cwd = hooks.root / "elsewhere"
    cwd.mkdir()
    watched = (hooks.home, hooks.project, cwd)
    cases: list[tuple[str, bytes, bool]] = [(label, raw, False) for label, raw in GARBAGE.items()]
    cases += [(label, json.dumps(payload).encode(),
               name in MAY_ANSWER_WITHOUT_FIELDS or label in ("no-session", "unsafe-session"))
              for label, payload in ill_typed(hooks, event).items()]
    for label, raw, may_answer in cases:
        before = _snapshot(*watched)
        result = hooks.run(name, raw=raw, cwd=cwd)
        assert result.err == "", f"{name} / {label}: stderr {result.err!r}"
        if may_answer and result.out:
            answer = result.answer
            assert answer is not None and answer["hookSpecificOutput"]["hookEventName"] == event, (label, answer)
        else:
            assert result.out == "", f"{name} / {label}: printed {result.out!r}"
        after = _snapshot(*watched)
        changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
        assert not changed, f"{name} / {label} wrote outside the data directory: {changed}"


def test_every_hook_in_hooks_json_exists_and_has_a_test() -> None:
    names = {name for _, name in registered_hooks()}
    for name in names:
        assert (REPO / "hooks" / f"{name}.py").is_file(), name
    source = Path(__file__).read_text()
    tested_here = {name for name in names if f'hooks.run("{name}"' in source}
    others = {"todowrite-capture", "subagent-validation", "maintenance"}  # covered by their owners' tests
    assert names - tested_here - others == set(), "hooks without a functional test here"
