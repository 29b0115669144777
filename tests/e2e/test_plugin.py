"""The plugin's manifests and components as Claude Code sees them.

`claude plugin validate --strict` (the real, pinned CLI, offline) must pass on the
repository root (which holds marketplace.json, so the CLI validates the marketplace and
the plugin it lists at "./") and on the plugin manifest itself. The tests without the CLI
check what the validator does not: the skills, commands and agents load with the
frontmatter Claude Code reads, and every `memory <op>` they tell Claude to run exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from e2e.harness import REPO_ROOT, validate_plugin

MANIFEST = REPO_ROOT / ".claude-plugin" / "plugin.json"
MARKETPLACE = REPO_ROOT / ".claude-plugin" / "marketplace.json"
SKILLS = sorted((REPO_ROOT / "skills").glob("*/SKILL.md"))
COMMANDS = sorted((REPO_ROOT / "commands").glob("*.md"))
AGENTS = sorted((REPO_ROOT / "agents").glob("*.md"))
DESCRIPTION_LIMIT = 1536  # Claude Code truncates description + when_to_use in the skill listing
# Operations being built at the time of writing; the docs name them already.
PLANNED_OPERATIONS = {"health", "quality", "repair", "semantic", "embed"}

PROVIDES = ["skills: memory:memory", "skills: memory:recall", "skills: memory:capture",
            "commands: memory:check-health", "commands: memory:check-gotchas", "commands: memory:commit",
            "agents: memory:recall", "agents: memory:curator", "bin: memory"]


# ----------------------------------------------------------------------------- real CLI


@pytest.mark.e2e
def test_repository_root_validates_strict(claude_cli: str) -> None:
    """The marketplace at the repository root (what `/plugin marketplace add <git-url>` reads)."""
    rc, output = validate_plugin(REPO_ROOT, strict=True, claude=claude_cli)
    assert rc == 0, output
    assert "Validating marketplace manifest" in output and "✔ Validation passed" in output, output
    assert "Validation passed with warnings" not in output, output
    assert "These checks found nothing to report" in output, output  # the plugin directory's checks (icon ...)
    for item in PROVIDES:
        assert item in output, f"{item!r} missing from the validator's Provides list:\n{output}"


@pytest.mark.e2e
def test_plugin_manifest_validates_strict(claude_cli: str) -> None:
    rc, output = validate_plugin(MANIFEST, strict=True, claude=claude_cli)
    assert rc == 0, output
    assert "Validating plugin manifest" in output and "✔ Validation passed" in output, output
    assert "Validation passed with warnings" not in output, output
    for item in PROVIDES:
        assert item in output, f"{item!r} missing:\n{output}"
    hooks = json.loads((REPO_ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    handlers = sum(len(group["hooks"]) for groups in hooks.values() for group in groups)
    assert output.count("❯ hooks: ") == handlers, output


# ----------------------------------------------------------------------------- static checks


def frontmatter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no frontmatter"
    head, body = text[4:].split("\n---\n", 1)
    data = yaml.safe_load(head)
    assert isinstance(data, dict), path
    return data, body


def test_there_are_skills_commands_and_agents() -> None:
    assert {path.parent.name for path in SKILLS} == {"memory", "recall", "capture"}
    assert {path.stem for path in COMMANDS} == {"check-health", "check-gotchas", "commit"}
    assert {path.stem for path in AGENTS} == {"recall", "curator"}


@pytest.mark.parametrize("path", SKILLS, ids=lambda path: path.parent.name)
def test_skill_frontmatter(path: Path) -> None:
    data, body = frontmatter(path)
    assert data["name"] == path.parent.name
    description = data["description"] + data.get("when_to_use", "")
    assert 100 <= len(description) <= DESCRIPTION_LIMIT, len(description)
    assert description.count("memory") >= 1 and "Use " in description  # says when to reach for it
    assert "Bash(memory:*)" in data["allowed-tools"]
    assert "${CLAUDE_PLUGIN_ROOT}/bin/memory" in body  # the fallback when bin/ is not on PATH
    assert len(body) < 12_000


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: path.stem)
def test_command_frontmatter(path: Path) -> None:
    data, body = frontmatter(path)
    assert set(data) >= {"description", "argument-hint", "allowed-tools"}, data
    assert 20 <= len(data["description"]) <= 200
    rules = [rule.strip() for rule in re.split(r",\s*(?=[A-Z])", data["allowed-tools"])]
    for rule in rules:
        assert re.fullmatch(r"[A-Z][A-Za-z]+(\(.+:\*\))?", rule), f"{path.name}: odd permission rule {rule!r}"
    assert "$ARGUMENTS" in body
    # A command must not hand Claude blanket write access it does not need.
    if path.stem in ("check-health", "check-gotchas"):
        for verb in ("write", "update", "delete", "link", "repair:"):
            assert f"Bash(memory {verb}" not in data["allowed-tools"], (path.name, verb)


@pytest.mark.parametrize("path", AGENTS, ids=lambda path: path.stem)
def test_agent_frontmatter(path: Path) -> None:
    data, body = frontmatter(path)
    assert data["name"] == path.stem and re.fullmatch(r"[a-z][a-z0-9-]*", data["name"])
    assert 100 <= len(data["description"]) <= DESCRIPTION_LIMIT
    tools = [tool.strip() for tool in data["tools"].split(",")]
    assert "Bash" in tools and not {"Write", "Edit", "MultiEdit", "NotebookEdit"} & set(tools), tools
    assert data["model"] in ("sonnet", "opus", "haiku", "inherit")
    assert "memory search" in body and "${CLAUDE_PLUGIN_ROOT}/bin/memory" in body


def existing_operations() -> set[str]:
    names = {path.stem.replace("_", "-") for path in (REPO_ROOT / "scripts").glob("*.py")}
    return {name for name in names if not name.startswith("-") and name != "memory"}


def code_spans(text: str) -> list[str]:
    """The `inline code` and fenced code of a markdown text."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return fenced + re.findall(r"`([^`\n]+)`", rest)


@pytest.mark.parametrize("path", SKILLS + COMMANDS + AGENTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_memory_operation_mentioned_exists(path: Path) -> None:
    mentioned = {match for span in code_spans(path.read_text(encoding="utf-8"))
                 for match in re.findall(r"(?:^|[\s;&|(])memory ([a-z][a-z-]*)", span)}
    assert mentioned, path
    unknown = mentioned - existing_operations() - PLANNED_OPERATIONS
    assert not unknown, f"{path.name} tells Claude to run `memory {sorted(unknown)}`, which does not exist"


def test_the_icon_is_a_square_png_the_manifest_names() -> None:
    """What the plugin directory accepts: a square PNG (or JPEG) of 512 to 2048 pixels, under 2 MB."""
    manifest = json.loads(MANIFEST.read_text())
    icon = REPO_ROOT / manifest["icon"]
    data = icon.read_bytes()
    assert manifest["icon"].startswith("./") and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 2 * 1024 * 1024
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == height and 512 <= width <= 2048, (width, height)


def test_marketplace_lists_this_plugin_at_the_root() -> None:
    marketplace = json.loads(MARKETPLACE.read_text())
    manifest = json.loads(MANIFEST.read_text())
    [entry] = [plugin for plugin in marketplace["plugins"] if plugin["name"] == manifest["name"]]
    assert entry["source"] in ("./", ".")
    assert entry.get("version", manifest["version"]) == manifest["version"]
