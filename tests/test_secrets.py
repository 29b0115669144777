"""Issue 13: secrets never reach disk, on any write path, and the detectors hold on a labelled corpus.

Figures (printed with -s, and by `python3 tests/secrets_corpus.py`): recall on generated
secrets of every claimed kind in varied contexts, and the share of the standard library's
and installed packages' source files that redaction would alter.
"""

from __future__ import annotations

import base64
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import secrets_corpus as corpus
from helpers import HOOKS, Env

from _lib.base import redact

RNG = random.Random(13)


def generated(kind: str) -> str:
    return corpus.GENERATORS[kind](RNG)


def lowercase_token(prefix: str, length: int) -> str:
    """A token in the alphabet of tags and slugs (lower case, digits), as a pasted one would be."""
    return prefix + corpus.pick(RNG, corpus.LOWER + corpus.DIGITS, length)


def scrubbed(text: str) -> str:
    return redact.scrub(text)[0]


# -- detectors: what issue 13 found missed, and what it found altered ------------------------------------

def aws_secret_with_slashes() -> str:
    while True:
        value = corpus.aws_secret(RNG)
        if value.count("/") >= 3:
            return value


BASIC = base64.b64encode(b"deploy:Tr0ub4dor-and-3").decode()
HF = generated("huggingface-token")
AWS_SECRET = aws_secret_with_slashes()

MISSED = {
    "DB_PASSWORD": ("DB_PASSWORD=Gr8-deploy-day", "DB_PASSWORD=[REDACTED:password]"),
    "POSTGRES_PASSWORD": ("services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: quartz-harbor-77\n",
                          "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: [REDACTED:password]\n"),
    "export PGPASSWORD": ("export PGPASSWORD=pg4deploy", "export PGPASSWORD=[REDACTED:password]"),
    "password=hunter2": ("password=hunter2", "password=[REDACTED:password]"),
    "lower-case password": ("db_password=dragonfly", "db_password=[REDACTED:password]"),
    "lower-case YAML password": ("password: letmeinplease", "password: [REDACTED:password]"),
    "spaced assignment": ("DB_PASSWORD = Hunter2024", "DB_PASSWORD = [REDACTED:password]"),
    "spaced passphrase": ('password = "correct horse battery staple"', 'password = "[REDACTED:password]"'),
    "redis://:pw@host": ("redis://:pw@cache:6379/0", "redis://:[REDACTED:url-password]@cache:6379/0"),
    "unlabelled AWS secret key": (f"the second value is {AWS_SECRET} ok",
                                  "the second value is [REDACTED:aws-secret-key] ok"),
    "Basic auth header": (f"Authorization: Basic {BASIC}", "Authorization: Basic [REDACTED:auth-header]"),
    "hf_ token": (f"pulled the weights with {HF} today", "pulled the weights with [REDACTED:huggingface-token] today"),
    "mysql -pPASS": ("mysql -u root -pS3cretPass shop", "mysql -u root -p[REDACTED:cli-password] shop"),
}


@pytest.mark.parametrize("name", MISSED)
def test_each_secret_issue_13_found_missed_is_redacted(name: str) -> None:
    text, expected = MISSED[name]
    assert scrubbed(text) == expected


ALTERED = {
    "long CamelCase identifier": "class AbstractSingletonProxyFactoryBean2Impl extends AbstractFactoryBean {}",
    "npm integrity string": '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5Aaw8tcE2HM2P2VRwzfj'
                            'WuJCUEn6iqOyQYc8pA==",',
    "password read from the environment": "password = os.environ['DB_PASSWORD']",
    "sk-learn": "pip install sk-learn-intelex-compat-layer-for-scikit",
}


@pytest.mark.parametrize("name", ALTERED)
def test_each_innocent_text_issue_13_found_altered_is_left_alone(name: str) -> None:
    assert scrubbed(ALTERED[name]) == ALTERED[name]


def test_placeholders_and_references_are_not_secrets() -> None:
    """The judgement calls: references, masks and stock examples stand for a secret, they are not one."""
    for text in ("DB_PASSWORD=${DB_PASSWORD}", "export PGPASSWORD=$DB_PASSWORD", "password: <your-password>",
                 "password: ********", "PASSWORD=changeme", 'api_key = "YOUR_API_KEY"',
                 "postgres://user:password@localhost:5432/mydb", "Authorization: Bearer $TOKEN",
                 "password = getpass.getpass('Password: ')", "mysql -u root -p mydb"):
        assert scrubbed(text) == text, text


def test_corpus_recall_and_files_altered(capsys: pytest.CaptureFixture[str]) -> None:
    """Every claimed kind in varied contexts is caught; real source files and innocent snippets are left alone."""
    figures = corpus.measure(scrubbed)
    with capsys.disabled():
        print("\n" + figures.report())
    assert figures.files_total >= 1000, "too few library source files to measure the false-positive rate"
    assert figures.recall >= corpus.RECALL_FLOOR, [(sample.kind, sample.text[:100]) for sample in figures.misses]
    assert all(caught / total >= 0.95 for caught, total in figures.per_kind.values()), figures.per_kind
    assert figures.altered_rate <= corpus.ALTERED_CEILING, figures.files_altered
    assert not figures.innocent_altered


# -- the regexes stay linear -------------------------------------------------------------------------------

try:
    from re import _constants as sre_constants, _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]


def _repeats(tree: Any, inside_repeat: bool, found: list[tuple[bool, bool, bool]]) -> None:
    """(nested in another repeat, unbounded, single character) for each repeat of a parsed pattern."""
    for op, argument in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            _, high, body = argument
            single = len(body) == 1 and body[0][0] in (sre_constants.IN, sre_constants.ANY, sre_constants.LITERAL,
                                                        sre_constants.NOT_LITERAL)
            found.append((inside_repeat, high == sre_constants.MAXREPEAT, single))
            _repeats(body, inside_repeat or high > 1, found)
        elif op == sre_constants.SUBPATTERN:
            _repeats(argument[-1], inside_repeat, found)
        elif op == sre_constants.BRANCH:
            for branch in argument[1]:
                _repeats(branch, inside_repeat, found)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _repeats(argument[1], inside_repeat, found)


def test_no_pattern_can_backtrack_catastrophically() -> None:
    """No repetition inside a repetition, and the patterns run over the whole text repeat
    a group only a bounded number of times: the work per character is bounded by a constant."""
    whole_text = [pattern for _, _, pattern, _ in redact._PATTERNS]
    lazy = {name: value._source for name, value in vars(redact).items() if isinstance(value, redact._Lazy)}
    whole_text += [lazy[name][0] for name in ("_TOKEN", "_PRIVATE_BEGIN", "_PRIVATE_END", "_PUBLIC_BEGIN",
                                              "_PUBLIC_END", "_SSH_PUBLIC", "PRIVATE_SPAN", "UNCLOSED_PRIVATE")]
    for pattern, flags in [(pattern, 0) for pattern in whole_text] + list(lazy.values()):
        found: list[tuple[bool, bool, bool]] = []
        _repeats(sre_parse.parse(pattern, flags), False, found)
        assert not any(nested and (unbounded or not single) for nested, unbounded, single in found), pattern
        if pattern in whole_text:
            assert all(single or not unbounded for _, unbounded, single in found), pattern


FRAGMENTS = ["password", "PASSWORD", "DB_PASSWORD", "token", "api_key", "secret", "pass", "key", "=", "==", ": ",
             " ", "\n", "\t", '"', "'", "`", "(", ")", "[", "]", "{", "}", ",", ";", "&", "?", "|", "-", "--",
             "://", "@", ":", "/", "+", ".", "$", "%", "*", "is ", "export ", "mysql -p", "sshpass -p ", "curl -u a:",
             "Bearer ", "Basic ", "Authorization: ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
             "-----BEGIN CERTIFICATE-----", "ssh-rsa AAAA", "AKIA", "ghp_", "sk-", "sk-ant-", "hf_", "eyJ", "xoxb-",
             "[REDACTED:password]", "<private>", "</private>", "sha512-", "base64,", "A" * 40, "aB3" * 12, "x1" * 20]
SECRETS = [generated(kind) for kind in corpus.GENERATORS] + [BASIC, AWS_SECRET, "hunter2", "Tr0ub4dor&3"]


@given(st.lists(st.sampled_from(FRAGMENTS + SECRETS) | st.text(max_size=12), max_size=120))
@settings(max_examples=400, deadline=None)
def test_hostile_text_is_scrubbed_once_and_for_all(parts: list[str]) -> None:
    """Whatever the input (bounded to 120 fragments), a second scrub finds nothing more: what
    the todo capture relies on to recognise its own redacted todo."""
    once, _ = redact.scrub("".join(parts))
    assert redact.scrub(once) == (once, [])


# -- every write path --------------------------------------------------------------------------------------

GITHUB = generated("github-token")


def test_frontmatter_keys_holding_a_secret_are_refused(env: Env, tmp_path: Path) -> None:
    document = tmp_path / "note.md"
    document.write_text(f"---\ntitle: Deploy notes\ntags: [ops]\n{GITHUB}: true\n---\n\nBody.\n")
    result = env.fails("write", "--file", str(document))
    assert "key looks like a secret (github-token)" in result.err and GITHUB not in result.err
    assert not list(env.project_dir.glob("*.md"))


def test_frontmatter_values_are_judged_under_their_key(env: Env, tmp_path: Path) -> None:
    """`hunter2x` alone is a word; under `db_password:` it is a password."""
    document = tmp_path / "note.md"
    document.write_text("---\ntitle: Deploy notes\ntags: [ops]\ndb_password: hunter2x\nowner: ops-team\n---\n\nBody.\n")
    env.ok("write", "--file", str(document))
    text = (env.project_dir / "learning-deploy-notes.md").read_text()
    assert "hunter2x" not in text and "owner: ops-team" in text
    assert re.search(r"^db_password: [\"']\[REDACTED:password\][\"']$", text, re.M), text


@pytest.mark.parametrize("option", ["--tags", "--slug"])
def test_a_tag_or_slug_holding_a_secret_is_refused(env: Env, option: str) -> None:
    secret = lowercase_token("glpat-", 20) if option == "--tags" else lowercase_token("sk-ant-api03-", 40)
    extra = ["--tags", f"ops,{secret}"] if option == "--tags" else ["--tags", "ops", "--slug", secret]
    result = env.fails("write", "Deploy notes", "--content", "x", *extra)
    assert f"the {'tag' if option == '--tags' else 'slug'} looks like a secret" in result.err
    assert secret not in result.err and not list(env.project.rglob("*.md"))


def test_an_added_tag_holding_a_secret_is_refused(env: Env) -> None:
    env.ok("write", "Deploy notes", "--tags", "ops", "--content", "x")
    before = (env.project_dir / "learning-deploy-notes.md").read_text()
    secret = "sk-" + corpus.pick(RNG, "0123456789abcdef", 32)
    assert "looks like a secret (openai-key)" in env.fails("update", "learning-deploy-notes", "--add-tags", secret).err
    assert (env.project_dir / "learning-deploy-notes.md").read_text() == before


def test_tags_derived_from_a_title_hold_no_piece_of_its_secret(env: Env) -> None:
    secret = lowercase_token("glpat-", 24)
    env.ok("write", f"Rotate {secret} tomorrow")
    [path] = [path for path in env.project_dir.glob("*.md") if path.name != "index.md"]
    text = path.read_text()
    assert secret[6:] not in text and secret[6:] not in path.name


def test_memory_file_write_and_update_json_redact_json_values(env: Env) -> None:
    env.ok("file", "write", "notes/creds.json", "--content", json.dumps({"db": {"host": "db", "password": "hunter2"}}))
    written = json.loads((env.project_dir / "notes" / "creds.json").read_text())
    assert written == {"db": {"host": "db", "password": "[REDACTED:password]"}}
    env.ok("file", "write", "state.json", "--content", '{"runs": 1}')
    env.ok("file", "update-json", "state.json", "--patch", json.dumps({"github": {"token": GITHUB}}))
    assert json.loads((env.project_dir / "state.json").read_text()) == {
        "runs": 1, "github": {"token": "[REDACTED:github-token]"}}


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_memory_file_update_json_redacts_a_jq_result(env: Env) -> None:
    env.ok("file", "write", "state.json", "--content", '{"runs": 1}')
    env.ok("file", "update-json", "state.json", "--jq", f'.deploy = "export PGPASSWORD=pg4deploy && {GITHUB}"')
    assert json.loads((env.project_dir / "state.json").read_text())["deploy"] == \
        "export PGPASSWORD=[REDACTED:password] && [REDACTED:github-token]"


def test_memory_file_write_redacts_text_files(env: Env) -> None:
    env.ok("file", "write", "notes/deploy.md", "--content", "Run `export PGPASSWORD=pg4deploy` first.\n")
    assert (env.project_dir / "notes" / "deploy.md").read_text() == \
        "Run `export PGPASSWORD=[REDACTED:password]` first.\n"


def test_memory_config_refuses_a_secret_for_the_committed_project_file(env: Env) -> None:
    result = env.fails("config", "embedding.endpoint", "https://embed:Tr0ub4dor@embed.example.com",
                       "--scope", "project")
    assert "looks like a secret (url-password)" in result.err and "committed" in result.err
    assert "embedding.apiKeyEnv" in result.err and "Tr0ub4dor" not in result.err
    assert not (env.project_dir / "config.json").exists()
    content = json.dumps({"embedding": {"apiKeyEnv": "EMBED_KEY", "endpoint": f"https://x.example.com/?key={GITHUB}"}})
    assert "committed" in env.fails("file", "write", "config.json", "--content", content).err
    assert not (env.project_dir / "config.json").exists()
    env.ok("config", "embedding.apiKeyEnv", "EMBED_KEY", "--scope", "project")  # naming the variable is the way


def run_hook(env: Env, name: str, payload: dict[str, Any]) -> subprocess.CompletedProcess:
    environ = env.environ(CLAUDE_PROJECT_DIR=str(env.project), CLAUDE_PLUGIN_DATA=str(env.root / "plugin-data"))
    proc = subprocess.run([sys.executable, "-S", str(HOOKS / f"{name}.py")], cwd=env.project, env=environ,
                          input=json.dumps(payload).encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def todo_write(env: Env, todos: list[dict[str, str]]) -> dict[str, Any]:
    return {"session_id": "5e55b0c1-aaaa-4bbb-8ccc-123456789abc", "cwd": str(env.project),
            "hook_event_name": "PostToolUse", "tool_name": "TodoWrite", "tool_input": {"todos": todos},
            "tool_response": {"oldTodos": [], "newTodos": todos}, "tool_use_id": "toolu_01"}


def test_session_state_and_notes_after_compaction_hold_no_secret(env: Env) -> None:
    todos = [{"content": f"Rotate {GITHUB} in CI", "status": "completed", "activeForm": "Rotating"},
             {"content": "Run `export PGPASSWORD=pg4deploy` on the box", "status": "pending", "activeForm": "Running"}]
    run_hook(env, "todowrite-capture", todo_write(env, todos))
    state_file = env.root / "plugin-data" / "sessions" / f"{todo_write(env, [])['session_id']}.json"
    state = state_file.read_text()
    assert GITHUB not in state and "pg4deploy" not in state and "[REDACTED:github-token]" in state
    common = {"session_id": todo_write(env, [])["session_id"], "cwd": str(env.project)}
    run_hook(env, "pre-compact-memory", {**common, "hook_event_name": "PreCompact", "trigger": "auto"})
    state = json.loads(state_file.read_text())
    assert "[REDACTED:github-token]" in state["compact_notes"] and GITHUB not in state_file.read_text()
    injected = run_hook(env, "start-memory-index", {**common, "hook_event_name": "SessionStart", "source": "compact"})
    assert "Before compaction" in injected.stdout.decode() and GITHUB not in injected.stdout.decode()
    assert "pg4deploy" not in injected.stdout.decode()


def test_a_todo_holding_a_secret_is_recognised_on_the_next_todo_write(env: Env) -> None:
    """The capture compares the redacted todo with the stored redacted title: no new task each time."""
    todos = [{"content": f"Rotate {GITHUB} in CI", "status": "in_progress", "activeForm": "Rotating"}]
    for _ in range(3):
        run_hook(env, "todowrite-capture", todo_write(env, todos))
    tasks = sorted(path.name for path in (env.project_dir / "tasks").glob("*.json"))
    assert tasks == ["1.1.1.json", "1.1.json", "1.json"]
    title = json.loads((env.project_dir / "tasks" / "1.1.1.json").read_text())["title"]
    assert title == "Rotate [REDACTED:github-token] in CI"


def test_a_detector_is_tried_only_where_its_literal_start_occurs_and_misses_nothing() -> None:
    """Detectors are skipped (never compiled) when their literal start is absent: every match of
    every detector over the corpus starts with it, and the start is never longer than certain."""
    assert redact.literal_start(r"gh[pousr]_[A-Za-z0-9]{36}") == "gh"
    assert redact.literal_start(r"SG\.[A-Za-z0-9_-]{22}") == "SG."
    assert redact.literal_start(r"zip?x") == "zi"  # the optional character is not required
    assert redact.literal_start(r"ab|cd") == ""  # alternatives at the top level share no start
    assert redact.literal_start(r"(?i)bearer\s") == ""
    text = "\n".join(sample.text for sample in corpus.positives())
    for _, _, pattern, _ in redact._PATTERNS:
        start = redact.literal_start(pattern)
        assert all(match.group().startswith(start) for match in re.finditer(pattern, text)), pattern
    assert [kind for kind, _, _, _, start in redact.patterns() if start] != []
