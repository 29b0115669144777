"""Test helpers: an isolated HOME and git project, a runner for the real scripts, schema checks."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
HOOKS = REPO / "hooks"
SCHEMAS = REPO / "schemas"
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))


# The hook server, which also runs `memory` commands: the servers the suite starts (one per
# start-up environment it uses) leave a minute after its last command or hook.
SERVER_IDLE = "60"


def load_schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


@functools.cache
def _validator(name: str) -> Any:
    """The real jsonschema's validator of schemas/<name>.schema.json, built once per test session."""
    import jsonschema
    from referencing import Registry, Resource

    registry = Registry()
    for path in SCHEMAS.glob("*.schema.json"):
        registry = registry.with_resource(path.name, Resource.from_contents(json.loads(path.read_text())))
    return jsonschema.Draft202012Validator(load_schema(name), registry=registry)


def schema_errors(instance: Any, name: str) -> list[str]:
    """Violations of schemas/<name>.schema.json by `instance`, checked with the real jsonschema."""
    return [f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
            for error in _validator(name).iter_errors(instance)]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Env:
    """A fake HOME and a git project; `run` executes `memory <op>` as a subprocess."""

    root: Path
    home: Path
    project: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    unchecked: set[Path] = field(default_factory=set)  # files a test broke on purpose

    @property
    def global_dir(self) -> Path:
        return self.home / ".claude" / "memory"

    @property
    def project_dir(self) -> Path:
        return self.project / ".claude" / "memory"

    @property
    def local_dir(self) -> Path:
        return self.project_dir / "local"

    def environ(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("CLAUDE", "MEMORY_", "XDG_")) or key == "MEMORY_REQUIRE_E2E"}
        # HF_HUB_OFFLINE: the embedded provider never reaches the model hub from a test (one that
        # downloads sets HF_ENDPOINT to a loopback server and clears it)
        env.update(HOME=str(self.home), CLAUDE_MEMORY_PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1",
                   HF_HUB_OFFLINE="1", MEMORY_HOOK_SERVER_IDLE=SERVER_IDLE)
        env.update(self.extra_env)
        env.update(extra)
        return env

    def run(self, *args: str, cwd: Path | None = None, stdin: str | bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> Result:
        """Run `memory ARGS` via bin/memory, from the project directory by default."""
        command = [str(REPO / "bin" / "memory"), *args]
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = subprocess.run(command, cwd=cwd or self.project, env=self.environ(**(env or {})),
                              input=data, stdin=None if data is not None else subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
        return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))

    def hook(self, name: str, payload: dict[str, Any]) -> str:
        """Run the hook NAME as Claude Code does (`sh hooks/run NAME`, the payload on stdin, a plugin
        data directory whose `python` is this interpreter); what it printed. With MEMORY_HOOK_RAISE
        an error inside the hook fails it."""
        data = self.root / "plugin-data"
        data.mkdir(exist_ok=True)
        if not (data / "python").exists():
            (data / "python").symlink_to(sys.executable)
        environ = self.environ(CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(self.project),
                               MEMORY_HOOK_RAISE="1")
        proc = subprocess.run(["sh", str(HOOKS / "run"), name], input=json.dumps(payload).encode(),
                              capture_output=True, cwd=self.project, env=environ, timeout=60)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
        return proc.stdout.decode()

    def ok(self, *args: str, **kwargs: Any) -> Result:
        result = self.run(*args, **kwargs)
        assert result.code == 0, f"memory {' '.join(args)} failed ({result.code}):\n{result.out}\n{result.err}"
        return result

    def fails(self, *args: str, code: int = 1, **kwargs: Any) -> Result:
        result = self.run(*args, **kwargs)
        assert result.code == code, f"expected exit {code}, got {result.code}:\n{result.out}\n{result.err}"
        if code in (1, 2):
            assert result.err.startswith("error: "), result.err
            assert "Traceback" not in result.err, result.err
        return result

    def write_broken(self, path: Path, content: str | bytes) -> Path:
        """Write a file that is broken on purpose (exempt from the teardown schema check)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        self.unchecked.add(path)
        return path

    def index(self, scope_dir: Path) -> dict[str, Any]:
        return json.loads((scope_dir / "index.json").read_text())

    def graph(self, scope_dir: Path) -> dict[str, Any]:
        return json.loads((scope_dir / "graph.json").read_text())


def write_memories(env: Env, notes: list[tuple[str, str, str | None, str]]) -> list[str]:
    """Write (title, type, tags, content) memories in-process, in the project scope; their slugs.
    For setup: the command line's own behaviour is tested where a test is about it."""
    from _lib.ops import store
    from _lib.workspace.scopes import Workspace

    workspace = Workspace(env.project, env.environ())
    return [store.write(workspace, store.NewMemory(title, memory_type, tags, content)).slug
            for title, memory_type, tags, content in notes]


@contextlib.contextmanager
def tmpfs(tmp_path: Path, size: str) -> Any:
    """A tmpfs of `size` (e.g. "512k") mounted for a test: a disk that really fills up. Needs the
    right to mount (root in CI); the test is skipped elsewhere."""
    import pytest

    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (derived caches excluded) with its bytes."""
    found = {}
    if directory.exists():
        for path in sorted(directory.rglob("*")):
            if path.is_file() and ".cache" not in path.parts:
                found[str(path.relative_to(directory))] = path.read_bytes()
    return found


def check_written_files(*roots: Path, unchecked: set[Path] = frozenset()) -> list[str]:
    """Schema problems in every derived JSON file under the given roots."""
    problems = []
    for root in roots:
        if not root.exists():
            continue
        for path in root.rglob("*.json"):
            if ".cache" in path.parts or "node_modules" in path.parts or path in unchecked:
                continue
            name = {"index.json": "index", "graph.json": "graph", "task-index.json": "task-index",
                    "config.json": "config"}.get(path.name)
            if name is None and path.parent.name == ".embedding-cache":
                name = "embedding-cache"
            if name is None and path.parent.name == "tasks":
                name = "task"
            if name is None:
                continue
            try:
                data = json.loads(path.read_text())
            except (ValueError, UnicodeDecodeError) as exc:
                problems.append(f"{path}: not valid JSON: {exc}")
                continue
            problems += [f"{path}: {error}" for error in schema_errors(data, name)]
        problems += _frontmatter_problems(root, unchecked)
    return problems


def _frontmatter_problems(root: Path, unchecked: set[Path]) -> list[str]:
    """Frontmatter of every memory file under `root` (flat and nodes/) against its schema."""
    from _lib.model import frontmatter

    problems = []
    candidates = list(root.glob("*.md")) + list(root.glob("nodes/**/*.md")) + list(root.glob("local/*.md"))
    for path in candidates:
        if path in unchecked or path.name in ("index.md", "README.md"):
            continue
        document = frontmatter.split(path.read_text(encoding="utf-8"))
        data = frontmatter.parse(document.frontmatter or "")
        problems += [f"{path}: {error}" for error in schema_errors(data, "frontmatter")]
    return problems


# A memory file written as the first plugin wrote it: read and rewritten byte for byte.
OAUTH_EXAMPLE = """---
type: decision
tags:
  - auth
  - oauth2
  - security
created: "2026-01-10T10:00:00Z"
updated: "2026-01-10T10:30:00Z"
links:
  - learning-token-refresh
  - hub-authentication
---

# OAuth2 Implementation Decision

We decided to use OAuth2 with PKCE flow for authentication...

## Rationale

- Industry standard
- Better security than basic auth
- Supports refresh tokens

## Trade-offs

- More complex than basic auth
- Requires token management
"""


def memory_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.glob("*.md") if path.name != "index.md")


def assert_consistent(directory: Path) -> None:
    """Files, index.json and graph.json agree; every edge has its inverse; every file is whole."""
    from _lib.model import frontmatter, graph

    files = {path.stem: path for path in memory_files(directory)}
    for path in files.values():
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\n---\n" in text, f"{path.name} is not a whole memory file"
        frontmatter.parse(frontmatter.split(text).frontmatter or "")
    index = json.loads((directory / "index.json").read_text())
    assert set(index["memories"]) == set(files)
    graph_path = directory / "graph.json"
    if graph_path.exists():
        edges = json.loads(graph_path.read_text())
    else:  # written once the scope has its first edge: then no file may declare a link
        declared = {path.name for path in files.values() if "\nlinks:" in path.read_text(encoding="utf-8")}
        assert not declared, f"graph.json is missing but {sorted(declared)} declare links"
        edges = {}
    inverse = graph.Labels().inverse
    for source, items in edges.items():
        assert source in files
        for edge in items:
            assert edge["target"] in files and edge["target"] != source
            assert any(back["target"] == source and back["label"] == inverse(edge["label"])
                       for back in edges.get(edge["target"], [])), f"{source}->{edge['target']} lacks its inverse"


def fill_disk(disk: Path) -> None:
    """Write zeros into `disk` until it is full."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def memory_text(title: str, *, tags: str = "[hand]", body: str = "Body.") -> str:
    """A memory file as written by hand: a learning with a heading for its title."""
    return (f'---\ntype: learning\ntags: {tags}\ncreated: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n'
            f"---\n\n# {title}\n\n{body}\n")
