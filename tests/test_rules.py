"""Pure rules, tested in-process: no files, no processes.

Task roll-up, gotcha matching (globs, path and command signals), context budgets and the
truncation of session notes, the file-tool guard, and the small decisions the hook handlers make.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers  # noqa: F401 - puts scripts/ on sys.path

from _lib.base import text
from _lib.session import capture, gotchas, guard, handlers, injection, prompts, protected
from _lib.tasks import rules as task_rules, taskstore

# -- task roll-up ------------------------------------------------------------------------------


@pytest.mark.parametrize("children,parent", [
    ([], "pending"), (["pending"], "pending"), (["pending", "pending"], "pending"),
    (["done"], "done"), (["done", "done"], "done"), (["done", "pending"], "in-progress"),
    (["in-progress", "pending"], "in-progress"), (["in-progress"], "in-progress"),
    (["blocked", "pending"], "pending"), (["done", "blocked"], "in-progress"),
])
def test_a_parents_status_rolls_up_from_its_children(children: list[str], parent: str) -> None:
    assert task_rules.rolled_status(children) == parent
    assert task_rules.rolled_status(iter(children)) == parent  # any iterable, read once


def test_task_ids_sort_numerically_per_level_and_name_their_parent_and_kind() -> None:
    assert taskstore.sort_ids(["2", "1.10", "1.2", "1", "1.2.1"]) == ["1", "1.2", "1.2.1", "1.10", "2"]
    assert [taskstore.parent_of(task_id) for task_id in ("1", "1.2", "1.2.3")] == [None, "1", "1.2"]
    assert [taskstore.type_of(task_id) for task_id in ("3", "3.1", "3.1.4")] == ["epic", "feature", "task"]


# -- gotchas: globs and signals ----------------------------------------------------------------

@pytest.mark.parametrize("pattern,path,matches", [
    ("src/auth/**", "src/auth/login.ts", True), ("src/auth/**", "src/auth/deep/er/x.py", True),
    ("src/auth/**", "src/authz/login.ts", False), ("src/auth/", "src/auth/login.ts", True),
    ("*.sql", "db/migrations/001.sql", True), ("*.sql", "db/schema.sqlite", False),
    ("Dockerfile", "services/api/Dockerfile", True), ("src/*.ts", "src/a/b.ts", False),
    ("src/*.ts", "src/b.ts", True), ("src/?.ts", "src/b.ts", True), ("src/?.ts", "src/bb.ts", False),
    ("**/test_*.py", "tests/unit/test_x.py", True), ("./src/**", "src/x", True),
    ("/etc/hosts", "/etc/hosts", True), ("a+b(c).md", "docs/a+b(c).md", True), ("", "x", False),
    ("   ", "x", False),
])
def test_globs_match_like_gitignore(pattern: str, path: str, matches: bool) -> None:
    assert gotchas.glob_match(pattern, path) is matches


def test_a_glob_is_found_by_its_key_on_every_path_it_matches() -> None:
    """The Read hook tries only the globs whose key the path has (or that have none): a glob whose
    key a matching path lacks would silently never warn. Random globs and paths over a small
    alphabet, so that matches are common, and the awkward cases (`a**/b` swallowing a slash)."""
    import random

    from _lib.base.globs import glob_key, path_keys

    rng = random.Random(7)
    pieces = ["a", "b", "ab", "*", "**", "?", "a*", "*b", "**a", "a**", "*.ts", "x.ts", ".ts", "a.b.ts"]
    tried = matched = keyed = 0
    for _ in range(20000):
        pattern = "/".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) + rng.choice(["", "", "/"])
        pattern = rng.choice(["", "", "/", "./"]) + pattern
        path = "/".join(rng.choice(["a", "b", "ab", "ba", "x.ts", "a.b.ts", ".ts", "aab"])
                        for _ in range(rng.randint(1, 4)))
        tried += 1
        if gotchas.glob_match(pattern, path):
            matched += 1
            key = glob_key(pattern)
            keyed += key is not None
            assert key is None or key in path_keys(path), (pattern, path, key)
    assert matched > 1500 and keyed > 300, (tried, matched, keyed)  # the property was really exercised
    assert glob_key("src/auth/**") == "seg:auth" and glob_key("**/*.ts") == "ext:ts"
    assert glob_key("a**/b") is None and glob_key("**") is None
    assert path_keys("src/auth/login.ts") == {"seg:src", "seg:auth", "seg:login.ts", "ext:ts"}


def test_path_signals_are_directories_files_words_and_languages() -> None:
    directories, files, words, languages = gotchas.path_signals("src/auth/UserRepository.test-utils.tsx")
    assert directories == {"auth"}  # src is too common to mean anything
    assert files == {"userrepository.test-utils.tsx", "userrepository.test-utils"}
    assert {"user", "repository", "test", "utils", "auth", "tsx"} <= words and "src" not in words
    assert languages == {"typescript", "react", "tsx"}
    assert gotchas.path_signals("build/Dockerfile")[3] == {"docker"}
    assert gotchas.path_signals("../..") == (set(), set(), set(), set())


@pytest.mark.parametrize("command,programs,paths", [
    ("npm test -- src/auth/login.test.ts", {"npm", "test"}, ["src/auth/login.test.ts"]),
    ("FOO=1 sudo docker compose up -d", {"docker", "compose", "up"}, []),
    ("cd api && ./scripts/migrate.sh --dry-run", {"cd", "migrate.sh", "api"}, []),
    ("python3 scripts/migrate.py --to 3 schema.sql", {"python3"}, ["scripts/migrate.py", "schema.sql"]),
    ("cat 'unclosed db/x.sql", {"cat"}, ["db/x.sql"]),
    ("git log | grep Fix; make", {"git", "log", "grep", "make"}, []),
])
def test_command_signals_are_programs_subcommands_and_paths(command: str, programs: set[str],
                                                             paths: list[str]) -> None:
    found_programs, found_paths = gotchas.command_signals(command)
    assert programs <= found_programs, found_programs
    assert found_paths == paths


def test_relative_paths_are_shown_from_the_project_and_others_whole() -> None:
    assert gotchas.relative_path("/p/src/a.ts", "/p") == "src/a.ts"
    assert gotchas.relative_path("/p/../q/a.ts", "/p") == "/q/a.ts"
    assert gotchas.relative_path("/pp/a.ts", "/p") == "/pp/a.ts"


def test_a_path_scores_by_glob_then_each_tag_once() -> None:
    relpath = "src/auth/login_form.ts"
    signals = gotchas.path_signals(relpath)
    score, reasons = gotchas._path_score(["auth", "login", "typescript", "form-validation", "react"],
                                         ["src/**", "src/auth/**"], relpath, signals)
    assert score == gotchas.SCORE_GLOB + gotchas.SCORE_DIRECTORY + 2 * gotchas.SCORE_WORD + gotchas.SCORE_LANGUAGE
    assert reasons == ["path matches src/**", "tag auth names directory auth/", "tag login appears in the path",
                       "tag typescript is the file's language", "tag form-validation appears in the path"]


# -- budgets and truncation --------------------------------------------------------------------

def test_token_estimates_round_up_at_three_and_a_half_characters() -> None:
    assert [text.estimate_tokens("x" * size) for size in (0, 1, 3, 4, 7, 8)] == [0, 1, 1, 2, 2, 3]


def test_a_budget_keeps_whole_lines_until_the_next_would_not_fit() -> None:
    budget = injection.Budget(6)
    assert budget.add("a" * 10)  # 11 characters with the newline: 4 tokens
    assert not budget.add("b" * 10)  # 4 more would make 8
    assert budget.add("c")  # 2 characters: 1 token
    assert budget.text() == "a" * 10 + "\nc" and budget.used == 5
    assert not injection.Budget(-3).add("")  # a negative budget holds nothing but is no error


def test_session_notes_list_at_most_25_of_each_and_say_how_many_more() -> None:
    state = {"files_changed": [f"src/{index}.ts" for index in range(30)], "memories_written": ["learning-a"],
             "todos": [{"content": "ship", "status": "completed"}, {"content": "test", "status": "pending"}]}
    lines = capture.session_notes(state)
    assert lines[0] == "## Files changed" and lines[25] == "- `src/24.ts`" and lines[26] == "- ... and 5 more"
    assert lines[27:] == ["## Memories written", "- [[learning-a]]", "## Tasks done", "- [x] ship",
                          "## Open threads", "- [ ] test"]
    assert capture.session_notes({}) == []


def test_compact_notes_keep_30_lines_point_at_the_memory_and_redact_secrets() -> None:
    state = {"files_changed": [f"f{index}" for index in range(40)],
             "memories_written": [f"learning-{index}" for index in range(10)]}  # 27 + 11 lines of notes
    notes = capture.compact_notes(state, "session-2026-01-01-abc").splitlines()
    assert len(notes) == 31 and notes[29] == "- [[learning-1]]"
    assert notes[30] == "Full notes: `memory read session-2026-01-01-abc`."
    state = {"todos": [{"content": "rotate ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "status": "pending"}]}
    assert "ghp_a1B2" not in capture.compact_notes(state, None)


def test_the_state_keeps_at_most_500_of_each_list() -> None:
    state: dict = {}
    for index in range(510):
        handlers.note_edit(state, f"f{index}")
        capture.note_written(state, f"s{index}")
    handlers.note_capture(state, [f"t{index}" for index in range(10)])
    assert len(state["files_changed"]) == 500 and len(state["memories_written"]) == 500
    assert state["edits_since_capture"] == 0


def test_ages_read_as_people_say_them() -> None:
    now = dt.datetime(2026, 6, 1, 12, tzinfo=dt.timezone.utc)
    cases = {"2026-06-01T08:00:00Z": "today", "2026-05-31T08:00:00Z": "yesterday", "2026-05-01": "31 days ago",
             "2026-01-01": "5 months ago", "2020-01-01": "6 years ago", "soon": "age unknown"}
    assert {stamp: injection.age(stamp, now) for stamp in cases} == cases


# -- the file-tool guard -----------------------------------------------------------------------

class FakeWorkspace:
    """What guard reads of a workspace: where the scopes live and the environment."""

    def __init__(self, **env: str) -> None:
        self.global_root, self.project_root = "/home/u/.claude/memory", "/p/.claude/memory"
        self.env = {"HOME": "/home/u", **env}


@pytest.mark.parametrize("tool,path,scope", [
    ("Write", "/p/.claude/memory/x.md", "project"), ("Edit", ".claude/memory/local/x.md", "local"),
    ("MultiEdit", "~/.claude/memory/y.md", "global"), ("NotebookEdit", "$HOME/.claude/memory/n.ipynb", "global"),
    ("Write", "/p/.claude/memory", "project"), ("Write", "/p/.claude/memory-notes.md", None),
    ("Write", "/p/.claude/settings.json", None), ("Write", "/p/src/../.claude/memory/z.md", "project"),
    ("Write", "/ent/mem/a.md", "enterprise"), ("Write", "${UNSET}/x", None),
])
def test_file_tools_are_refused_inside_a_memory_directory(tool: str, path: str, scope: str | None) -> None:
    workspace = FakeWorkspace(CLAUDE_MEMORY_ENTERPRISE_PATH="/ent/mem")
    field = guard.FILE_TOOLS[tool]
    assert guard.protected_scope(workspace, path, "/p") == scope  # type: ignore[arg-type]
    reason = guard.check(workspace, tool, {field: path}, "/p")  # type: ignore[arg-type]
    assert (reason is not None) is (scope is not None)
    if reason:
        assert reason.startswith(f"{path} is in the {scope} memory directory; memory files are managed")


def test_other_tools_and_inputs_pass_the_file_guard() -> None:
    workspace = FakeWorkspace()
    for tool, tool_input in (("Read", {"file_path": "/p/.claude/memory/x.md"}), ("Write", {"file_path": 7}),
                             ("Write", {}), ("Edit", {"notebook_path": "/p/.claude/memory/x"})):
        assert guard.check(workspace, tool, tool_input, "/p") is None  # type: ignore[arg-type]


def test_paths_expand_as_the_shell_would() -> None:
    env = {"HOME": "/home/u", "A": "/a"}
    assert protected.expand_user("~/x", env) == "/home/u/x" and protected.expand_user("~user/x", env) == "~user/x"
    assert protected.expand_user("$A/b${A}c$NOPE", env) == "/a/b/ac$NOPE"
    assert protected.inside("/a/b", "/a") and protected.inside("/a", "/a") and not protected.inside("/ab", "/a")


# -- what the handlers decide ------------------------------------------------------------------

@pytest.mark.parametrize("command,own", [
    ("memory write x", True), ('"memory" list', True), ("/x/bin/memory search", True),
    ("${CLAUDE_PLUGIN_ROOT}/bin/memory read a", True), ("memoryless run", False), ("echo memory", False),
])
def test_the_plugins_own_commands_are_recognised(command: str, own: bool) -> None:
    assert handlers.is_memory_command(command) is own


@pytest.mark.parametrize("command,captures", [
    ("memory write 'x'", True), ("cd a && memory update s --tags b", True), ("'memory' link a b", True),
    ("bin/memory think q", True), ("memory commit", True), ("memory search write", False),
    ("rememory write", False), ("echo memory writes", False),
])
def test_memory_captures_are_recognised_in_commands(command: str, captures: bool) -> None:
    assert handlers.captures_memory(command) is captures


def test_created_and_updated_slugs_are_read_from_the_output() -> None:
    output = "Created learning-a-b (project)\nUpdated decision-x (local)\nCreated Not-A-Slug (x)\n  Created y (z)\n"
    assert handlers.memories_reported(output) == ["learning-a-b", "decision-x"]


def test_the_command_output_joins_stdout_stderr_and_the_failure() -> None:
    assert handlers.command_output({"tool_response": {"stdout": "out", "stderr": "err"}}) == "out\nerr"
    assert handlers.command_output({"tool_response": "text", "error": "Exit code 1\nboom"}) == "text\nExit code 1\nboom"
    assert handlers.command_output({"error": "Exit code 2"}) == "Exit code 2"
    assert handlers.command_output({"tool_response": 5}) == ""


def test_the_skill_reminder_schedule() -> None:
    state = {"edits_since_capture": 4}
    assert handlers.skill_reminder_due(state) == 0
    state["edits_since_capture"] = 5
    assert handlers.skill_reminder_due(state) == 5 and state["skill_reminded_at"] == 2
    due = [handlers.skill_reminder_due(state) for _ in range(6)]
    assert due == [0, 0, 0, 0, 0, 5]


def test_design_questions_are_told_from_other_prompts() -> None:
    for prompt in ("Should we use Redis?", "What are the trade-offs here?", "compare kafka vs rabbitmq",
                   "which library fits?", "What's the best approach to caching?"):
        assert prompts.is_design_question(prompt), prompt
    for prompt in ("fix the failing test", "rename decide.py", "shoulder the load"):
        assert not prompts.is_design_question(prompt) or "decide" in prompt, prompt


@given(st.from_regex(re.compile(prompts.DECISION_PROMPT, re.IGNORECASE)) | st.text(max_size=60))
@settings(max_examples=1500)
def test_a_design_question_is_never_passed_over_by_the_quick_word_check(prompt: str) -> None:
    assert prompts.is_design_question(prompt) == bool(re.search(prompts.DECISION_PROMPT, prompt, re.IGNORECASE))



def test_the_best_hub_for_an_orphan_is_the_one_sharing_most_tags_then_first_by_slug() -> None:
    """Health suggests a hub for a memory linked to none: found by intersecting the hubs of its
    tags, it must be the hub a plain count gives (most shared tags, ties by slug)."""
    import random
    from collections import Counter

    from _lib.health.organisation import _best_hub

    rng = random.Random(5)
    for _ in range(3000):
        tags = [f"t{number}" for number in range(rng.randint(3, 12))]
        hubs_by_tag = {tag: frozenset(f"hub-{rng.randint(0, 15)}" for _ in range(rng.randint(0, 6)))
                       for tag in tags if rng.random() < 0.8}
        wanted = rng.sample(tags, rng.randint(0, min(len(tags), 9)))
        slug = rng.choice(["hub-3", "learning-x"])
        counts = Counter(hub for tag in wanted for hub in hubs_by_tag.get(tag, ()) if hub != slug)
        expected = min(counts, key=lambda hub: (-counts[hub], hub)) if counts else None
        assert _best_hub(wanted, hubs_by_tag, slug) == expected, (wanted, slug)
