"""Memories anchored to the code they are about: fresh, changed since, gone; and hook output within
Claude Code's limits. Real git repositories, real hook and `memory` subprocesses."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from _lib.model import anchors, frontmatter
from _lib.session import output
from hookenv import Hooks

LOGIN = "src/auth/login.ts"
SLUG = "gotcha-token-refresh-must-be-serialised"
MARK = "(code changed since)"


@pytest.fixture
def hooks(tmp_path: Path) -> Any:
    return Hooks(tmp_path)


def git(hooks: Hooks, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=hooks.project,
                          check=True, capture_output=True, text=True).stdout


def commit(hooks: Hooks, message: str) -> None:
    git(hooks, "add", "-A", "--", "src")
    git(hooks, "commit", "-qm", message)


def new_session(hooks: Hooks) -> None:
    hooks.session_id = str(uuid.uuid4())


def read_context(hooks: Hooks, relpath: str) -> str:
    return hooks.run("memory-context", hooks.post_read(hooks.project / relpath)).context("PostToolUse") or ""


def anchor_lines(hooks: Hooks, slug: str) -> list[str]:
    document = frontmatter.split((hooks.memory_dir / f"{slug}.md").read_text())
    return frontmatter.parse(document.frontmatter or "").get("anchors") or []


def verify(hooks: Hooks, slug: str) -> dict[str, Any]:
    return json.loads(hooks.memory("verify", slug, "--json"))["memories"][0]


def health_kinds(hooks: Hooks) -> dict[str, str]:
    env = hooks.environ(CLAUDE_MEMORY_PYTHON="")
    proc = subprocess.run([str(Path(__file__).resolve().parent.parent / "bin" / "memory"), "health", "--json"],
                          cwd=hooks.project, env=env, capture_output=True, text=True, timeout=60, check=False)
    return {problem["slug"]: problem["kind"] for problem in json.loads(proc.stdout)["problems"]
            if problem["kind"] in ("drifted-memory", "obsolete-memory")}


@pytest.fixture
def login_gotcha(hooks: Hooks) -> Hooks:
    hooks.write_file(LOGIN, "export function verifyToken(token: string) {\n  return check(token);\n}\n")
    hooks.write_file("src/auth/session.ts", "export const SESSION_TTL = 3600;\n")
    commit(hooks, "auth")
    hooks.memory("write", "Token refresh must be serialised", "--type", "gotcha", "--tags", "auth",
                 "--paths", LOGIN, "--content",
                 f"`verifyToken()` in {LOGIN} races with a concurrent refresh; src/auth/session.ts holds the TTL.")
    return hooks


def test_gotcha_is_fresh_then_changed_then_gone_then_fresh_after_reanchor(login_gotcha: Hooks) -> None:
    hooks = login_gotcha
    head = git(hooks, "rev-parse", "HEAD").strip()
    blob = git(hooks, "hash-object", LOGIN).strip()
    session_blob = git(hooks, "hash-object", "src/auth/session.ts")
    assert anchor_lines(hooks, SLUG) == [f"{LOGIN} {blob[:12]} {head[:12]}",
                                         f"src/auth/session.ts {session_blob[:12]} {head[:12]}",
                                         f"{LOGIN}#verifyToken {blob[:12]} {head[:12]}"]

    fresh = read_context(hooks, LOGIN)
    assert f"Token refresh must be serialised [{SLUG}, project]\n" in fresh + "\n"
    assert MARK not in fresh and "obsolete" not in fresh
    assert verify(hooks, SLUG)["state"] == "fresh"

    hooks.write_file(LOGIN, "export function verifyToken(token: string) {\n  return check(token, now());\n}\n")
    commit(hooks, "check the clock")
    new_session(hooks)
    changed = read_context(hooks, LOGIN)
    assert f"Token refresh must be serialised [{SLUG}, project] {MARK}" in changed
    report = verify(hooks, SLUG)
    assert report["state"] == "changed"
    assert {(item["path"], item["symbol"]): (item["state"], item["commitsSince"]) for item in report["anchors"]} == {
        (LOGIN, None): ("changed", 1), ("src/auth/session.ts", None): ("fresh", None),
        (LOGIN, "verifyToken"): ("changed", 1)}
    assert health_kinds(hooks) == {SLUG: "drifted-memory"}

    (hooks.project / LOGIN).unlink()
    commit(hooks, "login moved to the gateway")
    new_session(hooks)
    bash = hooks.run("memory-context-bash", hooks.post_bash(f"git log --oneline -- {LOGIN}", "abc login moved")
                     ).context("PostToolUse") or ""
    assert "Known gotchas" not in bash and "races with a concurrent refresh" not in bash
    assert "May be obsolete" in bash and f"`memory verify {SLUG}`" in bash
    again = read_context(hooks, "src/auth/session.ts")  # the auth tag matches: named once, not again
    assert SLUG not in again
    new_session(hooks)
    elsewhere = read_context(hooks, "src/auth/session.ts")
    assert "Known gotchas" not in elsewhere and f"`memory verify {SLUG}`" in elsewhere
    assert verify(hooks, SLUG)["state"] == "gone"
    assert health_kinds(hooks) == {SLUG: "obsolete-memory"}

    hooks.memory("update", SLUG, "--reanchor")
    assert [line.split()[0] for line in anchor_lines(hooks, SLUG)] == ["src/auth/session.ts"]
    new_session(hooks)
    reanchored = read_context(hooks, "src/auth/session.ts")
    assert f"Token refresh must be serialised [{SLUG}, project]\n" in reanchored + "\n"
    assert MARK not in reanchored and "obsolete" not in reanchored
    assert verify(hooks, SLUG)["state"] == "fresh"
    assert health_kinds(hooks) == {}


def test_prompt_and_session_start_leave_gone_memories_out_of_advice(login_gotcha: Hooks) -> None:
    hooks = login_gotcha
    hooks.memory("write", "Sessions live for an hour", "--type", "decision", "--tags", "auth,sessions",
                 "--content", "SESSION_TTL in src/auth/session.ts is one hour: tokens are refreshed within it.")
    (hooks.project / "src/auth/session.ts").unlink()
    prompt = hooks.run("memory-prompt-context", hooks.prompt("How long do auth sessions live before refresh?")
                       ).context("UserPromptSubmit") or ""
    assert "Relevant memories" not in prompt and "`memory verify decision-sessions-live-for-an-hour`" in prompt
    start = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert "## Key decisions" not in start
    assert "`memory verify decision-sessions-live-for-an-hour`" in start


def test_an_update_keeps_the_recorded_state_and_reanchor_accepts_the_code(login_gotcha: Hooks) -> None:
    hooks = login_gotcha
    hooks.write_file(LOGIN, "export function verifyToken() { return true; }\n")
    hooks.memory("update", SLUG, "--add-tags", "tokens")
    assert verify(hooks, SLUG)["state"] == "changed"  # editing the memory is not reviewing the code
    hooks.memory("update", SLUG, "--reanchor")
    assert verify(hooks, SLUG)["state"] == "fresh"


def test_a_memory_without_anchors_is_injected_exactly_as_before(hooks: Hooks) -> None:
    hooks.write_file(LOGIN, "x\n")
    hooks.memory("write", "Token refresh must be serialised", "--type", "gotcha", "--tags", "auth",
                 "--content", "Concurrent refreshes revoke each other.")
    text = (hooks.memory_dir / f"{SLUG}.md").read_text()
    assert "anchors" not in text
    assert read_context(hooks, LOGIN) == (
        f"Known gotchas for {LOGIN} (from memory; `memory read <slug>` for details):\n"
        f"- Token refresh must be serialised [{SLUG}, project]\n  Concurrent refreshes revoke each other.")
    assert json.loads(hooks.memory("verify", "--all", "--json")) == {
        "counts": {"fresh": 0, "changed": 0, "gone": 0}, "memories": []}
    assert not (hooks.memory_dir / ".cache" / "anchor-stats.sqlite3").exists()  # nothing was looked at


def test_global_memories_are_not_anchored(hooks: Hooks) -> None:
    hooks.write_file(LOGIN, "x\n")
    hooks.memory("write", "Login pitfall", "--type", "gotcha", "--tags", "auth", "--scope", "global",
                 "--content", f"{LOGIN} is generated.")
    assert "anchors" not in (hooks.home / ".claude" / "memory" / "gotcha-login-pitfall.md").read_text()


# -- output within Claude Code's limits -------------------------------------------------------

def huge_config(hooks: Hooks) -> None:
    hooks.memory_dir.mkdir(parents=True, exist_ok=True)
    (hooks.memory_dir / "config.json").write_text(json.dumps({"injection": {
        "session_start_max_tokens": 1_000_000, "prompt_max_tokens": 1_000_000, "max_nodes_per_query": 400,
        "gotchas_per_read": 400}}))


def many_gotchas(hooks: Hooks, count: int) -> None:
    hooks.write_file(LOGIN, "x\n")
    for index in range(count):
        hooks.write_file(f"{hooks.memory_dir}/gotcha-auth-{index}.md".replace(str(hooks.project) + "/", ""),
                         f'---\ntype: gotcha\ntags:\n  - auth\ncreated: "2026-01-0{1 + index % 9}T10:00:00Z"\n'
                         f'updated: "2026-01-0{1 + index % 9}T10:00:00Z"\npaths:\n  - "src/auth/**"\n---\n\n'
                         f"# Token refresh pitfall number {index} " + "with a long title " * 8 + "\n\n"
                         + "Refresh tokens rotate on every use and a concurrent refresh revokes both. " * 6 + "\n")


def test_gotcha_warnings_never_exceed_the_hard_limit_and_name_what_was_left_out(hooks: Hooks) -> None:
    huge_config(hooks)
    many_gotchas(hooks, 60)
    context = read_context(hooks, LOGIN)
    assert len(context) <= output.HARD_LIMIT
    last = context.splitlines()[-1]
    assert last.startswith("+") and last.endswith(f"more: memory gotchas --path {LOGIN}"), last
    shown = context.count("\n- ")
    assert shown + int(last[1:].split()[0]) == 60
    later = read_context(hooks, LOGIN)  # the session saw the first ones: those left out come now
    first_slugs = {line.split("[")[1].split(",")[0] for line in context.splitlines() if line.startswith("- ")}
    next_slugs = {line.split("[")[1].split(",")[0] for line in later.splitlines() if line.startswith("- ")}
    assert next_slugs and not first_slugs & next_slugs
    new_session(hooks)
    bash = hooks.run("memory-context-bash", hooks.post_bash(f"cat {LOGIN}")).context("PostToolUse") or ""
    assert len(bash) <= output.HARD_LIMIT
    assert bash.splitlines()[-1].endswith(f"more: memory gotchas --command 'cat {LOGIN}'")


def test_prompt_and_session_start_never_exceed_the_hard_limit(hooks: Hooks) -> None:
    huge_config(hooks)
    many_gotchas(hooks, 30)  # under 40 memories no prompt word counts as too common to select
    prompt = hooks.run("memory-prompt-context", hooks.prompt("token refresh pitfall rotate concurrent revokes")
                       ).context("UserPromptSubmit") or ""
    assert len(prompt) <= output.HARD_LIMIT
    assert "more: memory search 'token refresh pitfall rotate concurrent revokes'" in prompt.splitlines()[-1]
    (hooks.memory_dir / "index.md").write_text("<!-- memory:manual:start -->\n## Project context\n"
                                               + ("A very long line about the project. " * 60 + "\n") * 12
                                               + "<!-- memory:manual:end -->\n")
    start = hooks.run("start-memory-index", hooks.session_start("startup")).context("SessionStart") or ""
    assert len(start) <= output.HARD_LIMIT
    assert "more: cat .claude/memory/index.md" in start.splitlines()[-1]


def test_every_field_claude_code_shows_is_capped() -> None:
    huge = "\n".join(f"line {index} " + "x" * 90 for index in range(500))
    answer = output.capped({"systemMessage": huge, "hookSpecificOutput": {"additionalContext": huge}})
    for text in (answer["systemMessage"], answer["hookSpecificOutput"]["additionalContext"]):
        assert len(text) <= output.HARD_LIMIT
        assert text.splitlines()[-1].startswith("+") and text.endswith("more lines: memory query --recent 8")
        assert text.startswith("line 0 ")
    one_line = output.cap("y" * 50_000)
    assert len(one_line) <= output.HARD_LIMIT and one_line.endswith("+1 more lines: memory query --recent 8")


# -- anchors without git ----------------------------------------------------------------------

def test_blob_and_head_are_read_as_git_would(hooks: Hooks, tmp_path: Path) -> None:
    hooks.write_file(LOGIN, "héllo\n")
    commit(hooks, "one")
    assert anchors.file_blob(hooks.project / LOGIN) == git(hooks, "hash-object", LOGIN).strip()
    assert anchors.head_commit(hooks.project) == git(hooks, "rev-parse", "HEAD").strip()
    git(hooks, "pack-refs", "--all")  # the branch now lives only in packed-refs
    assert anchors.head_commit(hooks.project / "src") == git(hooks, "rev-parse", "HEAD").strip()
    worktree = tmp_path / "wt"
    git(hooks, "worktree", "add", "-q", "-b", "other", str(worktree))
    (worktree / "f").write_text("f\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "add", "f"], cwd=worktree, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "wt"], cwd=worktree,
                   check=True)
    expected = subprocess.run(["git", "rev-parse", "HEAD"], cwd=worktree, check=True, capture_output=True,
                              text=True).stdout.strip()
    assert anchors.head_commit(worktree) == expected != anchors.head_commit(hooks.project)
    assert anchors.head_commit(tmp_path / "home") is None


def test_a_file_of_a_wildcard_area_going_alone_is_a_change_not_an_obsolete_memory(tmp_path: Path) -> None:
    (tmp_path / "src/db").mkdir(parents=True)
    for name in ("pool.py", "query.py"):
        (tmp_path / "src/db" / name).write_text(f"# {name}\n")
    lines = anchors.record(tmp_path, {"paths": ["src/db/*.py"]}, "Pools leak.")
    assert [line.split()[0] for line in lines] == ["src/db/pool.py", "src/db/query.py"]
    checker = anchors.Checker(tmp_path)
    assert checker.verdict(anchors.parse(lines), ["src/db/*.py"]).state == "fresh"  # type: ignore[union-attr]
    (tmp_path / "src/db/pool.py").unlink()
    assert anchors.Checker(tmp_path).verdict(anchors.parse(lines), ["src/db/*.py"]).state == "changed"  # type: ignore[union-attr]
    (tmp_path / "src/db/query.py").unlink()
    assert anchors.Checker(tmp_path).verdict(anchors.parse(lines), ["src/db/*.py"]).state == "gone"  # type: ignore[union-attr]


def test_anchor_lines_round_trip_and_refuse_paths_leaving_the_project() -> None:
    line = "src/a b/x.ts#doThing 0123456789ab -"
    (parsed,) = anchors.parse([line])
    assert (parsed.path, parsed.symbol, parsed.blob, parsed.commit, parsed.text()) == (
        "src/a b/x.ts", "doThing", "0123456789ab", "-", line)
    assert anchors.parse(["../etc/passwd 0123456789ab -", "/etc/passwd 0123456789ab -", "no ids", 3]) == []


def test_an_anchored_file_replaced_by_a_link_out_of_the_project_is_gone(login_gotcha: Hooks) -> None:
    hooks = login_gotcha
    outside = hooks.root / "outside.ts"
    outside.write_text("export function verifyToken(token: string) {}\n")  # the symbol, but not the project's
    (hooks.project / LOGIN).unlink()
    (hooks.project / LOGIN).symlink_to(outside)
    report = verify(hooks, SLUG)
    assert {finding["path"]: finding["state"] for finding in report["anchors"] if finding["symbol"] is None} == \
        {LOGIN: "gone", "src/auth/session.ts": "fresh"}
    assert report["state"] == "gone"
