"""US6: four-tier scope resolution, the default scope, enterprise, and isolation (SC-007)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import Env, snapshot


def test_us6_1_global_scope(env: Env) -> None:
    env.ok("write", "Note", "--scope", "global")
    assert (env.global_dir / "learning-note.md").exists()
    assert not env.project_dir.exists()


def test_us6_2_project_scope(env: Env) -> None:
    env.ok("write", "Note", "--scope", "project")
    assert (env.project_dir / "learning-note.md").exists()


def test_us6_3_local_scope_is_gitignored(env: Env) -> None:
    env.ok("write", "Note", "--scope", "local")
    path = env.local_dir / "learning-note.md"
    assert path.exists()
    assert ".claude/memory/local/" in (env.project / ".gitignore").read_text().splitlines()
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=env.project)
    assert ignored.returncode == 0, "local memories must never be committed (FR-007)"
    subprocess.run(["git", "add", "-A"], cwd=env.project, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=env.project, capture_output=True,
                            text=True, check=True).stdout
    assert "local/" not in staged and "index.json" not in staged and ".cache" not in staged


def test_us6_3_existing_gitignore_is_appended_once(env: Env) -> None:
    (env.project / ".gitignore").write_text("node_modules/")
    env.ok("write", "One", "--scope", "local")
    env.ok("write", "Two", "--scope", "local")
    assert (env.project / ".gitignore").read_text().count(".claude/memory/local/") == 1
    assert (env.project / ".gitignore").read_text().startswith("node_modules/\n")


def enable_enterprise(env: Env, path: Path) -> dict[str, str]:
    env.ok("config", "scopes.enterprise.enabled", "true")
    return {"CLAUDE_MEMORY_ENTERPRISE_PATH": str(path)}


def test_us6_4_enterprise_scope_when_enabled(env: Env) -> None:
    enterprise = env.root / "enterprise"
    enterprise.mkdir()
    extra = enable_enterprise(env, enterprise)
    env.ok("write", "Note", "--scope", "enterprise", env=extra)
    assert (enterprise / "learning-note.md").exists()
    listed = env.ok("list", "--json", env=extra).json()["memories"]
    assert [item["scope"] for item in listed] == ["enterprise"]


def test_us6_5_enterprise_disabled_by_default_explains_how_to_enable(env: Env) -> None:
    enterprise = env.root / "enterprise"
    enterprise.mkdir()
    result = env.fails("write", "Note", "--scope", "enterprise",
                       env={"CLAUDE_MEMORY_ENTERPRISE_PATH": str(enterprise)})
    assert "disabled" in result.err
    assert "scopes.enterprise.enabled" in result.err and "managed-settings.json" in result.err
    assert list(enterprise.iterdir()) == []


def test_enterprise_path_missing_warns_and_other_scopes_work(env: Env) -> None:
    extra = enable_enterprise(env, env.root / "does-not-exist")
    env.ok("write", "Personal", "--scope", "global", env=extra)
    listing = env.ok("list", env=extra)
    assert "learning-personal" in listing.out
    assert listing.err.startswith("warning: skipping enterprise scope")
    assert env.fails("write", "X", "--scope", "enterprise", env=extra).err.count("does not exist") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any directory")
def test_enterprise_unreadable_warns(env: Env) -> None:
    enterprise = env.root / "enterprise"
    enterprise.mkdir(mode=0o000)
    extra = enable_enterprise(env, enterprise)
    listing = env.ok("list", env=extra)
    assert "not readable" in listing.err


def test_enterprise_read_only_for_user_keeps_derived_data_elsewhere(env: Env, tmp_path: Path) -> None:
    enterprise = env.root / "enterprise"
    enterprise.mkdir()
    (enterprise / "gotcha-vpn.md").write_text('---\ntype: gotcha\ntags: [vpn]\ncreated: "2026-01-01T00:00:00Z"\n'
                                             'updated: "2026-01-01T00:00:00Z"\n---\n\n# VPN drops SSH\n\nUse mosh.\n')
    extra = enable_enterprise(env, enterprise)
    if os.geteuid() != 0:
        enterprise.chmod(0o555)
    result = env.ok("search", "mosh", "--json", env=extra).json()
    assert [hit["slug"] for hit in result["results"]] == ["gotcha-vpn"]
    assert env.ok("read", "gotcha-vpn", env=extra).out.startswith("---\ntype: gotcha")


def test_us6_6_default_scope_project_in_git_repo_else_global(env: Env) -> None:
    env.ok("write", "Note")
    assert (env.project_dir / "learning-note.md").exists()
    elsewhere = env.root / "not-a-repo"
    elsewhere.mkdir()
    env.ok("write", "Note", cwd=elsewhere)
    assert (env.global_dir / "learning-note.md").exists()
    assert not (elsewhere / ".claude").exists()


def test_default_scope_from_config(env: Env) -> None:
    env.ok("config", "scopes.default", "global")
    env.ok("write", "Note")
    assert (env.global_dir / "learning-note.md").exists()
    env.ok("config", "scopes.default", "local", "--scope", "project")
    env.ok("write", "Other")
    assert (env.local_dir / "learning-other.md").exists()


def test_us6_7_list_merges_all_scopes_with_indicators(env: Env) -> None:
    env.ok("write", "Note", "--scope", "global")
    env.ok("write", "Note", "--scope", "project")
    env.ok("write", "Note", "--scope", "local")
    env.ok("write", "Only global", "--scope", "global")
    out = env.ok("list").out
    for scope in ("global", "project", "local"):
        assert scope in out
    memories = env.ok("list", "--json").json()["memories"]
    assert sorted((item["scope"], item["slug"]) for item in memories) == [
        ("global", "learning-note"), ("global", "learning-only-global"),
        ("local", "learning-note"), ("project", "learning-note")]


def test_read_resolution_most_specific_wins(env: Env) -> None:
    env.ok("write", "Note", "--scope", "global", "--content", "from global")
    env.ok("write", "Note", "--scope", "project", "--content", "from project")
    assert env.ok("read", "learning-note", "--json").json()["content"] == "from project"
    env.ok("write", "Note", "--scope", "local", "--content", "from local")
    assert env.ok("read", "learning-note", "--json").json()["scope"] == "local"
    assert env.ok("read", "learning-note", "--scope", "global", "--json").json()["content"] == "from global"


def test_sc007_no_leakage_between_scopes(env: Env) -> None:
    env.ok("write", "Secret plan", "--scope", "local", "--tags", "private", "--content", "zebra")
    env.ok("write", "Team plan", "--scope", "project", "--tags", "team", "--content", "giraffe")
    env.ok("write", "Own plan", "--scope", "global", "--tags", "mine", "--content", "okapi")
    for scope, word, others in [("local", "zebra", ("giraffe", "okapi")), ("project", "giraffe", ("zebra", "okapi")),
                                ("global", "okapi", ("zebra", "giraffe"))]:
        listed = env.ok("list", "--scope", scope, "--json").json()["memories"]
        assert {item["scope"] for item in listed} == {scope}
        assert len(listed) == 1
        for other in others:
            assert env.ok("search", other, "--scope", scope, "--json").json()["count"] == 0
        assert env.ok("search", word, "--scope", scope, "--json").json()["count"] == 1
    project_index = env.index(env.project_dir)["memories"]
    assert list(project_index) == ["learning-team-plan"]  # local/ is not part of the project scope
    assert list(env.index(env.local_dir)["memories"]) == ["learning-secret-plan"]
    other_project = env.root / "other"
    other_project.mkdir()
    subprocess.run(["git", "init", "-q", str(other_project)], check=True)
    listed = env.ok("list", "--json", cwd=other_project).json()["memories"]
    assert [item["slug"] for item in listed] == ["learning-own-plan"]


def test_links_across_scopes_refused(env: Env) -> None:
    env.ok("write", "Global one", "--scope", "global", "--tags", "a")
    before = snapshot(env.project_dir)
    result = env.fails("write", "Project one", "--scope", "project", "--tags", "a", "--links", "learning-global-one")
    assert "scope" in result.err
    assert snapshot(env.project_dir) == before


def test_claude_project_dir_and_config_dir_are_honoured(env: Env) -> None:
    config_dir = env.root / "claude-config"
    other = env.root / "elsewhere"
    other.mkdir()
    env.ok("write", "Note", "--scope", "global", env={"CLAUDE_CONFIG_DIR": str(config_dir)})
    assert (config_dir / "memory" / "learning-note.md").exists()
    env.ok("write", "Note", "--scope", "project", cwd=other, env={"CLAUDE_PROJECT_DIR": str(env.project)})
    assert (env.project_dir / "learning-note.md").exists()


def test_home_directory_has_no_separate_project_scope(env: Env) -> None:
    result = env.fails("write", "Note", "--scope", "project", cwd=env.home)
    assert "home directory" in result.err
    env.ok("write", "Note", cwd=env.home)
    assert (env.global_dir / "learning-note.md").exists()
    assert len(env.ok("list", "--json", cwd=env.home).json()["memories"]) == 1


def test_paths_with_spaces_and_unicode(env: Env, tmp_path: Path) -> None:
    home = tmp_path / "hôme dir"
    project = tmp_path / "prøject ✓ dir"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spaced = Env(tmp_path, home, project)
    spaced.ok("write", "Ünïcode title ✓", "--tags", "i18n")
    spaced.ok("write", "Global note", "--scope", "global")
    data = spaced.ok("list", "--json").json()
    assert {item["scope"] for item in data["memories"]} == {"project", "global"}
    index = json.loads((project / ".claude" / "memory" / "index.json").read_text())
    assert next(iter(index["memories"].values()))["filePath"].startswith(str(project))
