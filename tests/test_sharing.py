"""Issue 9: team sharing through git, and secrets kept out of memory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from helpers import Env

SECRETS = {
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                   "-----END OPENSSH PRIVATE KEY-----",
    "aws-access-key": "AKIAQ3EGW7RX2M4N5P6K",  # AKIAIOSFODNN7EXAMPLE is AWS's published example: left alone
    "github-token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "gitlab-token": "glpat-xP4Hq9Lm2Nv8Rt6Ws1Yz",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "google-api-key": "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
    "stripe-key": "sk_live_51H8kGsJr9Lm2Nv8Rt6Ws1Yz4Qa",
    "openai-key": "sk-proj-Qm3x9LkP2vR7tY8wZ1aB4cD6eF0gH5jK",
    "anthropic-key": "sk-ant-api03-Zx8Ck2Lm9Pq4Rs7Tv1Wy3Ab6De0Fg",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6MTk5OTk5OTk5OX0.Xq8mPz2LkRt7Wv4Yb1Nc6Hd3Jf9Gs0Aa",
    "url-password": "postgres://deploy:Tr0ub4dor-and-3@db.internal:5432/app",
    "password": "password = correct-horse-battery",
    "high-entropy-string": "Zk9xR2tPcUw3bVR5WnFBNXJ0U2h1dGRvd24Qm",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}).stdout


def test_every_secret_kind_is_redacted_and_reported(env: Env) -> None:
    body = "Deploy notes.\n" + "\n".join(f"- {value}" for value in SECRETS.values()) + \
        "\nKeep this <private>home address 12 Elm St</private> out.\nCommit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 stays."
    result = env.ok("write", "Deploy notes", "--tags", "ops", "--content", body)
    assert "redacted" in result.err
    text = (env.project_dir / "learning-deploy-notes.md").read_text()
    for kind, value in SECRETS.items():
        secret_part = value.split("=")[-1].strip().split("//")[-1]
        assert secret_part[:12] not in text or kind == "url-password", (kind, secret_part)
        assert f"[REDACTED:{kind}]" in text, kind
    assert "12 Elm St" not in text and "[REDACTED:private]" in text
    assert "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39" in text, "commit hashes are not secrets"
    env.ok("update", "learning-deploy-notes", "--append", f"rotated to {SECRETS['github-token']}")
    assert SECRETS["github-token"] not in (env.project_dir / "learning-deploy-notes.md").read_text()


def test_health_finds_each_kind_of_secret_alone_and_ignores_look_alikes() -> None:
    """redact.kinds_in (health's scan of every memory) takes shortcuts; none may hide a secret."""
    from _lib.base import redact

    for kind, value in SECRETS.items():
        assert redact.kinds_in(f"Notes.\n\n{value}\n") == [kind], kind
    harmless = ("links:\n  - learning-a-rather-long-slug-about-the-deploy-pipeline-2\nCommit "
                "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, uuid 123e4567-e89b-12d3-a456-426614174000, "
                "SOME_VERY_LONG_CONSTANT_NAME_IN_UPPER_CASE, the password: required, tokens are counted.")
    assert redact.kinds_in(harmless) == []


def test_refuse_mode_changes_nothing(env: Env) -> None:
    env.ok("config", "redaction.mode", "refuse", "--scope", "project")
    result = env.fails("write", "Creds", "--tags", "ops", "--content", f"key {SECRETS['aws-access-key']}")
    assert "secret" in result.err and "aws-access-key" in result.err
    assert not list(env.project_dir.glob("*.md"))
    env.ok("write", "Fine", "--tags", "ops", "--content", "no secrets, just <private>mine</private>")
    assert "mine" not in (env.project_dir / "learning-fine.md").read_text()


def test_captures_and_task_text_are_redacted_too(env: Env) -> None:
    from _lib.session import capture
    from _lib.workspace.scopes import Workspace

    workspace = Workspace(env.project, {"HOME": str(env.home)})
    slug = capture.record_discovery(workspace, "memory:recall", ("The deploy uses " + SECRETS["github-token"] + ". ") * 10)
    assert SECRETS["github-token"] not in (env.local_dir / f"{slug}.md").read_text()
    env.ok("task", "add", "--title", f"Rotate {SECRETS['stripe-key']}", "--description", SECRETS["jwt"])
    task = (env.project_dir / "tasks" / "1.json").read_text()
    assert SECRETS["stripe-key"] not in task and SECRETS["jwt"] not in task and "[REDACTED:" in task


def clone(origin: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(target)], check=True, capture_output=True)
    return target


def test_two_clones_write_link_merge_without_conflict_and_lose_nothing(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(origin)], check=True)
    seed = Env(tmp_path, tmp_path / "hôme a", clone(origin, tmp_path / "ä clone with space"))
    seed.home.mkdir()
    other = Env(tmp_path, tmp_path / "home-b", tmp_path / "b")
    other.home.mkdir()
    git(seed.project, "checkout", "-q", "-B", "main")
    git(seed.project, "commit", "-q", "--allow-empty", "-m", "start")
    seed.ok("write", "Auth hub", "--type", "hub", "--tags", "auth")
    seed.ok("write", "Shared decision", "--type", "decision", "--tags", "auth", "--content", "Base text.")
    git(seed.project, "add", "-A")
    git(seed.project, "commit", "-q", "-m", "seed memories")
    git(seed.project, "push", "-q", "origin", "HEAD:main")
    clone(origin, other.project)
    committed = git(seed.project, "ls-files").split()
    assert not any(name.endswith(("index.json", "graph.json")) or ".cache" in name for name in committed)

    # Both sides link a new memory to the same hub and edit the same decision.
    seed.ok("write", "Token rotation", "--tags", "auth", "--links", "hub-auth")
    seed.ok("link", "learning-token-rotation", "hub-auth", "--label", "part-of")
    seed.ok("update", "decision-shared", "--append", "Clone A adds this.")
    other.ok("write", "Cookie flags", "--type", "gotcha", "--tags", "auth", "--links", "hub-auth")
    other.ok("update", "decision-shared", "--append", "Clone B adds that.")
    for side in (seed, other):
        git(side.project, "add", "-A")
        git(side.project, "commit", "-q", "-m", "more memories")
    git(seed.project, "push", "-q", "origin", "HEAD:main")
    git(other.project, "pull", "-q", "--no-rebase", "origin", "main")  # merges without a conflict
    assert "<<<<<<<" not in (other.project_dir / "hub-auth.md").read_text()

    health = other.run("health", "--json")
    if health.code != 0:
        other.ok("repair")
        other.ok("health")
    memories = {item["slug"] for item in other.ok("list", "--json").json()["memories"]}
    assert {"hub-auth", "decision-shared", "learning-token-rotation", "gotcha-cookie-flags"} <= memories
    hub = yaml.safe_load((other.project_dir / "hub-auth.md").read_text().split("---\n")[1])
    assert {"learning-token-rotation", "gotcha-cookie-flags"} <= set(hub["links"])
    decision = other.ok("read", "decision-shared").out
    assert "Clone A adds this." in decision and "Clone B adds that." in decision
    graph = other.graph(other.project_dir)
    assert {edge["target"] for edge in graph["hub-auth"]} >= {"learning-token-rotation", "gotcha-cookie-flags"}
    assert ("learning-token-rotation", "contains") in {(e["target"], e["label"]) for e in graph["hub-auth"]}
