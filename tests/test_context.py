"""Issue 8: query engine, statuses, injection budgets, capture, index.md, retention."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import Env, write_memories

ADR = Path(__file__).resolve().parents[2] / "shared" / "eval" / "adr"


def workspace(env: Env, **extra: str):
    from _lib.workspace.scopes import Workspace

    return Workspace(env.project, {"HOME": str(env.home), **extra})


def fields(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---\n")[1])


def test_query_selectors_filters_and_formats(env: Env) -> None:
    env.ok("write", "JWT with Redis sessions", "--type", "decision", "--tags", "auth,redis",
           "--content", "Stateless auth, Redis blacklist for invalidation.")
    env.ok("write", "Token refresh race", "--type", "gotcha", "--tags", "auth", "--content", "Refresh twice: 401.")
    env.ok("write", "Circular import fix", "--type", "error", "--tags", "python", "--content", "Extract shared types.")
    env.ok("link", "decision-jwt-with-redis-sessions", "gotcha-token-refresh-race", "--label", "relates-to")
    recent = env.ok("query", "--recent", "2", "--format", "json").json()
    assert recent["count"] == 2 and isinstance(recent["query_time_ms"], (int, float))
    assert {"id", "type", "summary", "path"} <= set(recent["nodes"][0])
    assert env.ok("query", "--tag", "auth", "--format", "json").json()["count"] == 2
    related = env.ok("query", "--related", "decision-jwt-with-redis-sessions", "--format", "json").json()["nodes"]
    assert related[0]["id"] == "gotcha-token-refresh-race" and "relates-to" in related[0]["reason"]
    found = env.ok("query", "--search", "circular import", "--type", "error").out
    assert found.startswith("[error] Circular import fix - Extract shared types.")
    full = env.ok("query", "--id", "gotcha-token-refresh-race", "--format", "full").out
    assert "Refresh twice: 401." in full
    env.fails("query", "--id", "x-missing")
    env.fails("query", "--id", "a", "--related", "b")


def test_supersedes_marks_old_and_links_both(env: Env) -> None:
    env.ok("write", "Use Redis for sessions", "--type", "decision", "--tags", "sessions")
    env.ok("write", "Use Memcached for sessions", "--type", "decision", "--tags", "sessions",
           "--supersedes", "decision-use-redis-for-sessions")
    old = fields(env.project_dir / "decision-use-redis-for-sessions.md")
    new = fields(env.project_dir / "decision-use-memcached-for-sessions.md")
    assert old["status"] == "superseded" and old["superseded-by"] == "decision-use-memcached-for-sessions"
    assert new["supersedes"] == "decision-use-redis-for-sessions"
    graph = env.graph(env.project_dir)
    assert {(e["target"], e["label"]) for e in graph["decision-use-memcached-for-sessions"]} == {
        ("decision-use-redis-for-sessions", "supersedes")}
    assert env.ok("search", "redis", "--json").json()["count"] == 1  # still searchable
    from _lib.session import injection as context

    injected, _ = context.prompt_context(workspace(env), "redis or memcached for sessions", {})
    assert "decision-use-memcached-for-sessions" in injected
    assert "decision-use-redis-for-sessions" not in injected  # superseded: never injected
    assert "no memory" in env.fails("write", "X", "--supersedes", "decision-nope").err


def test_prompt_context_budget_repeats_silence_and_age(env: Env) -> None:
    from _lib.session import injection as context
    from _lib.base import text

    for index in range(12):
        env.ok("write", f"Kafka consumer lag note {index}", "--tags", "kafka",
               "--content", "Kafka consumer lag grows when partitions rebalance. " * 30)
    ws = workspace(env)
    shown_text, shown = context.prompt_context(ws, "why does kafka consumer lag grow?", {})
    assert 0 < text.estimate_tokens(shown_text) <= 1000
    assert 0 < len(shown) <= 5
    assert "updated today" in shown_text
    again, again_shown = context.prompt_context(ws, "kafka consumer lag again", dict(shown))
    assert not set(again_shown) & set(shown), "a memory is injected at most once per session"
    for prompt in ("hi", "thanks!", "ok, go ahead", "what's next?"):
        assert context.prompt_context(ws, prompt, {}) == ("", {}), prompt
    env.ok("config", "injection.prompt_max_tokens", "60", "--scope", "project")
    tight, _ = context.prompt_context(workspace(env), "kafka consumer lag", {})
    assert text.estimate_tokens(tight) <= 60


def test_changed_memory_is_injected_again(env: Env) -> None:
    from _lib.session import injection as context

    env.ok("write", "Postgres vacuum settings", "--tags", "postgres", "--content", "Autovacuum thresholds.")
    _, shown = context.prompt_context(workspace(env), "postgres autovacuum thresholds", {})
    assert shown
    env.ok("update", "learning-postgres-vacuum-settings", "--append", "Scale factor 0.05.")
    text_again, _ = context.prompt_context(workspace(env), "postgres autovacuum thresholds", dict(shown))
    assert "Postgres vacuum settings" in text_again


def test_archived_memories_are_searchable_but_not_injected(env: Env) -> None:
    from _lib.session import injection as context

    env.ok("write", "Legacy deploy script", "--tags", "deploy", "--content", "Use fabric deploy script.",
           "--status", "archived")
    assert env.ok("search", "fabric deploy", "--json").json()["count"] == 1
    assert context.prompt_context(workspace(env), "fabric deploy script", {}) == ("", {})


def test_session_start_summary_within_budget(env: Env) -> None:
    from _lib.session import injection as context
    from _lib.base import text

    write_memories(env, [(f"Decision number {index} about the billing service", "decision", "billing", "")
                         for index in range(40)] + [("Billing hub", "hub", "billing", "")])
    summary = context.session_start(workspace(env), open_tasks=["1.1.1 Write tests (in-progress)"])
    assert text.estimate_tokens(summary) <= 500
    assert "Key decisions" in summary and "Open tasks" in summary and "today" in summary
    env.ok("config", "injection.session_start_max_tokens", "80", "--scope", "project")
    assert text.estimate_tokens(context.session_start(workspace(env))) <= 80


def test_index_md_regenerated_and_manual_section_kept(env: Env) -> None:
    env.ok("write", "Adopt trunk-based development", "--type", "decision", "--tags", "git")
    index_md = env.project_dir / "index.md"
    text = index_md.read_text()
    assert "## Active Decisions" in text and "[[decision-adopt-trunk-based-development]]" in text
    start, end = "<!-- memory:manual:start -->", "<!-- memory:manual:end -->"
    manual = "## Project context\nE-commerce API on Node.js; the team prefers pnpm."
    index_md.write_text(text.split(start)[0] + start + "\n" + manual + "\n" + end + text.split(end)[1])
    env.ok("write", "Use pnpm workspaces", "--type", "decision", "--tags", "build")
    text = index_md.read_text()
    assert manual in text and "[[decision-use-pnpm-workspaces]]" in text
    env.ok("delete", "decision-adopt-trunk-based-development")
    assert "decision-adopt-trunk-based-development" not in index_md.read_text()
    assert manual in index_md.read_text()


def test_index_md_follows_task_changes_and_keeps_the_scan_stamp(env: Env) -> None:
    from _lib.catalog import catalog as catalog_index
    from _lib.catalog.catalog import ROOT_KEY, file_stamp

    env.ok("write", "Adopt trunk-based development", "--type", "decision", "--tags", "git")
    env.ok("task", "add", "--title", "Payments epic")
    env.ok("task", "add", "--title", "Refund flow", "--parent", "1")
    env.ok("list")  # records the directory's stamp (creating tasks/ changed it)
    index_md = env.project_dir / "index.md"
    assert "Refund flow" in index_md.read_text()
    env.ok("task", "status", "1.1", "in-progress")
    focus = index_md.read_text().split("## Current Focus")[1].split("##")[0]
    assert "Refund flow" in focus
    env.ok("task", "status", "1.1", "done")
    assert "Refund flow" not in index_md.read_text()
    # index.md and task-index.json are replaced beside the memories: the catalog still knows the
    # directory's stamp, so the next hook does not rescan every memory file
    import sqlite3

    conn = sqlite3.connect(env.project_dir / ".cache" / catalog_index.DB_NAME)
    recorded = conn.execute("SELECT value FROM meta WHERE key=?", (ROOT_KEY,)).fetchone()[0]
    assert recorded == file_stamp(env.project_dir)


def big_source(lines: int) -> str:
    body = "\n".join(f"def helper_{index}(value):\n    return value * {index}\n" for index in range(lines))
    return '"""Payment gateway adapters for Stripe and Adyen."""\n\nimport json\nfrom decimal import Decimal\n\n' \
           + "class Gateway:\n    pass\n\n" + body


def test_file_summary_capture_created_refreshed_only_on_change(env: Env) -> None:
    from _lib.session import capture

    source = env.project / "src" / "payments" / "gateway.py"
    source.parent.mkdir(parents=True)
    source.write_text(big_source(1500))
    ws = workspace(env)
    slug = capture.refresh_file_summary(ws, str(source))
    assert slug == "file-src-payments-gateway-py"
    path = env.local_dir / f"{slug}.md"
    data = fields(path)
    assert data["type"] == "file-summary" and data["path"] == "src/payments/gateway.py" and data["source"] == "capture"
    body = path.read_text()
    assert "Payment gateway adapters for Stripe and Adyen." in body and "`Gateway`" in body and "`json`" in body
    before = path.read_bytes()
    assert capture.refresh_file_summary(ws, str(source)) is None
    assert path.read_bytes() == before
    source.write_text(big_source(1600))
    assert capture.refresh_file_summary(ws, str(source)) == slug
    assert fields(path)["line_count"] > data["line_count"]
    small = env.project / "src" / "tiny.py"
    small.write_text("x = 1\n")
    assert capture.refresh_file_summary(ws, str(small)) is None
    secret = env.project / ".env"
    secret.write_text("API_KEY=abc\n" * 10000)
    assert capture.refresh_file_summary(ws, str(secret)) is None
    keyfile = env.project / "src" / "secret_keys.py"
    keyfile.write_text(big_source(1500))
    assert capture.refresh_file_summary(ws, str(keyfile)) is None


def test_discovery_and_session_capture(env: Env) -> None:
    from _lib.session import capture

    ws = workspace(env)
    assert capture.record_discovery(ws, "memory:recall", "short") is None
    slug = capture.record_discovery(ws, "memory:recall", "The auth module uses a repository pattern.\n" * 10)
    assert slug and fields(env.local_dir / f"{slug}.md")["type"] == "discovery"
    assert capture.write_session_memory(ws, "abc123def", {}) is None
    state = {"started": "2026-11-22T09:00:00Z", "prompts": 4, "files_changed": [str(env.project / "a.py")],
             "memories_written": ["decision-x"], "todos": [{"content": "Add rate limiting", "status": "pending"}]}
    session_slug = capture.write_session_memory(ws, "abc123def", state)
    text = (env.local_dir / f"{session_slug}.md").read_text()
    assert "## Files changed" in text and "## Open threads" in text and "[[decision-x]]" in text


def test_retention_prunes_only_captured_memories(env: Env) -> None:
    from _lib.session import capture

    ws = workspace(env)
    env.ok("write", "Hand-written decision", "--type", "decision", "--tags", "x", "--scope", "local")
    env.ok("write", "Hand-written gotcha", "--type", "gotcha", "--tags", "x", "--scope", "local")
    for index in range(4):
        capture.record_discovery(ws, f"agent-{index}", f"Finding number {index}. " * 30)
    old = {"started": "2026-01-01T00:00:00Z", "files_changed": ["a.py"]}
    session_slug = capture.write_session_memory(ws, "oldsession", old)
    path = env.local_dir / f"{session_slug}.md"
    path.write_text(path.read_text().replace(fields(path)["updated"], "2026-01-02T00:00:00Z"))
    env.ok("config", "retention.max_nodes", "4", "--scope", "project")
    before = {p.name: p.read_bytes() for p in env.local_dir.glob("*.md")}
    plan = env.ok("prune", "--dry-run", "--json").json()["actions"]
    assert {item["action"] for item in plan} == {"archive", "remove"}
    assert all(item["slug"] not in ("decision-hand-written", "gotcha-hand-written") for item in plan)
    assert {p.name: p.read_bytes() for p in env.local_dir.glob("*.md")} == before  # a dry run changes nothing
    env.ok("prune")
    remaining = {p.stem for p in env.local_dir.glob("*.md")}
    assert {"decision-hand-written", "gotcha-hand-written"} <= remaining
    assert len(remaining) == 4
    if session_slug in remaining:
        assert fields(env.local_dir / f"{session_slug}.md")["status"] == "archived"


@pytest.mark.skipif(not (ADR / "docs.jsonl").exists(), reason="shared/eval/adr not beside the checkout")
def test_prompt_injection_finds_relevant_memory_as_often_as_keyword_search(env: Env) -> None:
    """Issue 8 relevance check on the ADR dev queries used as prompts (protocol of eval/adr/README.md)."""
    from _lib.session import injection as context
    from _lib.model import frontmatter
    from _lib.ops import store

    env.project_dir.mkdir(parents=True)
    head = frontmatter.render({"type": "decision", "tags": ["adr"], "created": "2026-01-01T00:00:00Z",
                               "updated": "2026-01-01T00:00:00Z"}, quoted=("created", "updated"))
    for line in (ADR / "docs.jsonl").read_text().splitlines():
        doc = json.loads(line)
        title = " ".join(doc["title"].split())[:200]
        (env.project_dir / f"{doc['id']}.md").write_text(f"---\n{head}---\n\n# {title}\n\n{doc['body']}")
    env.ok("reindex")
    ws = workspace(env)
    keyword = injected = 0
    for line in (ADR / "dev-queries.jsonl").read_text().splitlines():
        query = json.loads(line)
        excluded, relevant = set(query["exclude_ids"]), set(query["relevant_ids"])
        hits = store.search_memories(ws, query["query"], store.Filters(), limit=5 + len(excluded))
        keyword += bool(relevant & set([hit.entry.slug for hit in hits if hit.entry.slug not in excluded][:5]))
        shown = [candidate.entry.slug for candidate in context.relevant(ws, query["query"], limit=5 + len(excluded))]
        injected += bool(relevant & set([slug for slug in shown if slug not in excluded][:5]))
    print(f"\nprompt relevance on {ADR.name}: injected {injected}, keyword top 5 {keyword}")
    assert injected >= keyword, (injected, keyword)


def test_query_filters_alone_list_every_match(env: Env) -> None:
    for index in range(7):
        env.ok("write", f"Auth note {index}", "--tags", "auth", "--content", f"Note {index} about auth.")
    assert env.ok("query", "--tag", "auth", "--format", "json").json()["count"] == 7
    assert env.ok("query", "--type", "learning", "--status", "active", "--format", "json").json()["count"] == 7
    assert env.ok("query", "--recent", "--tag", "auth", "--format", "json").json()["count"] == 5
    assert env.ok("query", "--format", "json").json()["count"] == 5  # no filter: the 5 most recent


def test_file_summary_lists_classes_functions_and_symbols_bring_it_back(env: Env) -> None:
    from _lib.session import capture, injection as context

    source = env.project / "src" / "billing.py"
    source.parent.mkdir(parents=True)
    source.write_text(big_source(1500) + "\n\nclass InvoiceLedger:\n    pass\n")
    ws = workspace(env)
    slug = capture.refresh_file_summary(ws, str(source))
    body = (env.local_dir / f"{slug}.md").read_text()
    assert "## Classes\n- `Gateway`\n- `InvoiceLedger`" in body  # not lost behind 1500 functions
    assert "## Functions\n- `helper_0`" in body and "## Key exports" in body
    env.ok("write", "Fix for flaky CI", "--type", "error", "--tags", "ci", "--content", "Retry the job.")
    injected, _ = context.prompt_context(workspace(env), "who uses InvoiceLedger?", {})
    assert slug in injected
    injected, _ = context.prompt_context(workspace(env), "fix the WidgetRenderer component", {})
    assert "error-fix-for-flaky-ci" not in injected  # one shared filler word is not relevance


def test_session_memory_from_hooks_has_tasks_and_captures(env: Env) -> None:
    repo = Path(__file__).resolve().parents[1]
    data = env.root / "plugin-data"
    environ = env.environ(CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(env.project),
                          CLAUDE_PLUGIN_ROOT=str(repo), MEMORY_HOOK_RAISE="1")
    base = {"session_id": "feedbeef-1234", "transcript_path": str(env.root / "t.jsonl"), "cwd": str(env.project)}

    def hook(name: str, **payload: object) -> None:
        subprocess.run(["sh", str(repo / "hooks" / "run"), name], input=json.dumps({**base, **payload}).encode(),
                       cwd=env.project, env=environ, check=True, capture_output=True, timeout=60)

    hook("start-memory-index", hook_event_name="SessionStart", source="startup")
    hook("clear-memory-check-flag", hook_event_name="PostToolUse", tool_name="Edit",
         tool_input={"file_path": str(env.project / "src" / "rate.py")}, tool_response={})
    hook("todowrite-capture", hook_event_name="PostToolUse", tool_name="TodoWrite", tool_response={},
         tool_input={"todos": [{"content": "Add rate limiting", "status": "completed", "activeForm": "Adding"},
                               {"content": "Write the docs", "status": "in_progress", "activeForm": "Writing"}]})
    hook("capture-subagent", hook_event_name="SubagentStop", agent_type="Explore", agent_id="a1",
         last_assistant_message="Billing uses idempotency keys on every charge request. " * 6)
    hook("end-memory", hook_event_name="SessionEnd", reason="other")
    [session_file] = env.local_dir.glob("session-*.md")
    text = session_file.read_text()
    assert "- `src/rate.py`" in text
    assert "## Tasks done\n- [x] Add rate limiting" in text and "## Open threads\n- [ ] Write the docs" in text
    [discovery] = env.local_dir.glob("discovery-*.md")
    assert f"[[{discovery.stem}]]" in text
