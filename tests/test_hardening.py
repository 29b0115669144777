"""Issue 9: nothing lost or corrupted under concurrency, crashes and hostile input.

Figures for the README come from these tests (counts are printed with -s).
"""

from __future__ import annotations

import json
import os
import uuid
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from helpers import REPO, Env, assert_consistent, fill_disk, memory_files, snapshot

if TYPE_CHECKING:
    import predecessor_store

SCRIPTS = REPO / "scripts"
HOOKS = REPO / "hooks"


# -- concurrency --------------------------------------------------------------------------------

WORKER = textwrap.dedent("""
    import json, random, sys
    sys.path.insert(0, {scripts!r})
    from _lib.base import errors
    from _lib.ops import links, store
    from _lib.tasks import taskstore as tasks
    from _lib.workspace.scopes import Workspace

    worker, steps = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(worker)
    mine, acked = [], {{}}
    def ws():
        return Workspace()
    for step in range(steps):
        action = rng.choice(["write", "write", "update", "delete", "link", "unlink", "task"])
        try:
            if action == "write" or not mine:
                slug = f"learning-w{{worker}}-{{step}}"
                store.write(ws(), store.NewMemory(title=f"Worker {{worker}} step {{step}}", slug=slug, tags=["load"],
                                                  content=f"marker {{worker}}-{{step}}"))
                mine.append(slug)
                acked[slug] = f"marker {{worker}}-{{step}}"
            elif action == "update":
                slug = rng.choice(mine)
                store.update(ws(), slug, store.Changes(content=f"marker {{worker}}-{{step}}-u"))
                acked[slug] = f"marker {{worker}}-{{step}}-u"
            elif action == "delete":
                slug = mine.pop(rng.randrange(len(mine)))
                store.delete(ws(), slug)
                acked.pop(slug)
            elif action in ("link", "unlink"):
                others = [path[:-3] for path in __import__("os").listdir(".claude/memory") if path.startswith("learning-")]
                target = rng.choice(others)
                source = rng.choice(mine)
                if source != target:
                    if action == "link":
                        links.link(ws(), source, target, label=rng.choice(["relates-to", "builds-on", "part-of"]))
                    else:
                        links.unlink(ws(), source, target)
            else:
                store_ = tasks.TaskStore(ws())
                store_.set_status(rng.choice(["1.1.1", "1.1.2", "1.2.1", "1.2.2"]),
                                  rng.choice(["pending", "in-progress", "done"]), force=True)
        except errors.Error:
            pass  # refused: e.g. the link target was deleted by another worker meanwhile
    print(json.dumps(acked))
""")


def test_8_processes_random_mixes_keep_everything_consistent(env: Env) -> None:
    env.ok("task", "add", "--title", "Epic")
    for feature in ("1", "1"):
        env.ok("task", "add", "--title", "Feature", "--parent", feature)
    for parent in ("1.1", "1.1", "1.2", "1.2"):
        env.ok("task", "add", "--title", "Task", "--parent", parent)
    script = env.root / "mix.py"
    script.write_text(WORKER.format(scripts=str(SCRIPTS)))
    workers = [subprocess.Popen([sys.executable, str(script), str(n), "30"], cwd=env.project, env=env.environ(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(8)]
    acked: dict[str, str] = {}
    for proc in workers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]
        acked.update(json.loads(out.decode().strip().splitlines()[-1]))
    env.ok("list")  # one more command, as a user would run
    on_disk = {path.stem for path in memory_files(env.project_dir)}
    assert on_disk == set(acked), "every acknowledged write (and only those) is on disk"
    for slug, marker in acked.items():
        assert (env.project_dir / f"{slug}.md").read_text().rstrip().endswith(marker), slug
    assert_consistent(env.project_dir)
    env.ok("task", "validate")
    print(f"\nconcurrency: 8 processes x 30 operations, {len(acked)} memories acknowledged, 0 lost")


def test_graph_neighbours_match_frontmatter_after_concurrent_links(env: Env) -> None:
    """Links made concurrently end symmetric in both files and in graph.json."""
    for index in range(6):
        env.ok("write", f"Node {index}", "--slug", f"learning-node-{index}", "--tags", "n")
    pairs = [(a, b) for a in range(6) for b in range(a + 1, 6)]
    procs = [subprocess.Popen([str(REPO / "bin" / "memory"), "link", f"learning-node-{a}", f"learning-node-{b}",
                               "--label", "builds-on"], cwd=env.project, env=env.environ(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for a, b in pairs]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode() if proc.stderr else ""
    graph = env.graph(env.project_dir)
    for a, b in pairs:
        assert (f"learning-node-{b}", "builds-on") in {(e["target"], e["label"]) for e in graph[f"learning-node-{a}"]}
        assert (f"learning-node-{a}", "foundation-for") in {(e["target"], e["label"])
                                                              for e in graph[f"learning-node-{b}"]}
    for index in range(6):
        text = (env.project_dir / f"learning-node-{index}.md").read_text()
        links = set(yaml.safe_load(text.split("---\n")[1]).get("links") or [])
        assert links == {f"learning-node-{other}" for other in range(6) if other != index}
    assert_consistent(env.project_dir)


# -- crash safety ---------------------------------------------------------------------------------

def _crash_argv(rng: random.Random, action: str, round_: int) -> list[str]:
    base = f"learning-base-{rng.randrange(8)}"
    return {"write": ["write", f"Crash {round_}", "--tags", "c", "--content", "y" * rng.randrange(10, 40000)],
            "update": ["update", base, "--content", "z" * rng.randrange(10, 40000)],
            "link": ["link", base, f"learning-base-{rng.randrange(8)}", "--label", "relates-to"],
            "delete": ["delete", f"learning-crash-{rng.randrange(max(round_, 1))}"]}[action]


@pytest.mark.slow
def test_sigkill_at_random_moments_never_corrupts(env: Env) -> None:
    """Kill ~300 commands at random moments of their own lives: no file is ever half-written.

    The kill moment is drawn from each command's measured duration on this machine (a loaded
    2-core runner is several times slower than an idle one), so most kills land mid-work."""
    import time

    rng = random.Random(2026)
    for index in range(8):
        env.ok("write", f"Base {index}", "--slug", f"learning-base-{index}", "--tags", "b", "--content", "x" * 2000)
    actions = ["write", "update", "link", "delete"]
    durations: dict[str, list[float]] = {action: [] for action in actions}
    for round_ in range(3):  # calibration: whole, unkilled runs of each kind
        for action in actions:
            started = time.monotonic()
            subprocess.run([str(REPO / "bin" / "memory"), *_crash_argv(rng, action, round_)], cwd=env.project,
                           env=env.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            durations[action].append(time.monotonic() - started)
    kills = rounds = 0
    for round_ in range(300):
        action = rng.choice(actions)
        typical = sorted(durations[action])[len(durations[action]) // 2]
        started = time.monotonic()
        proc = subprocess.Popen([str(REPO / "bin" / "memory"), *_crash_argv(rng, action, round_)], cwd=env.project,
                                env=env.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rounds += 1
        try:
            proc.wait(timeout=rng.uniform(0.0, typical))  # a random moment of its life
            durations[action].append(time.monotonic() - started)  # finished: the machine may have sped up
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        for path in memory_files(env.project_dir):
            text = path.read_text(encoding="utf-8")
            assert text.startswith("---\n") and text.count("\n---\n") >= 1, f"{path.name} was left half-written"
        for name in ("index.json", "graph.json"):
            if (env.project_dir / name).exists():
                json.loads((env.project_dir / name).read_text())  # never invalid: written atomically
        if round_ % 40 == 39:
            env.ok("list")
            assert_consistent(env.project_dir)
    env.ok("list")  # the next operation succeeds: no stuck lock
    assert not list(env.project_dir.glob(".*.tmp")), "temp files of killed writes are cleaned up"
    assert_consistent(env.project_dir)
    env.unchecked.update(env.project_dir.glob("*.md"))  # contents are random lengths of filler
    print(f"\ncrash safety: {kills} of {rounds} processes killed with SIGKILL, 0 corrupted files")
    assert kills >= rounds // 3, f"only {kills} of {rounds} commands were killed: the kill window missed their work"


KILLED_BEFORE_EXPORT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {scripts!r})
    from _lib.catalog import catalog as index
    from _lib.ops import links, store
    from _lib.workspace.scopes import Workspace
    index.Catalog.export = lambda self: os._exit(9)  # dies after the catalog committed, before index/graph.json
    if sys.argv[1] == "write":
        store.write(Workspace(), store.NewMemory(title="Written then killed", tags=["k"], content="body"))
    else:
        links.link(Workspace(), "learning-alpha", "learning-beta", label="builds-on")
""")


@pytest.mark.parametrize("operation", ["write", "link"])
def test_a_process_killed_between_catalog_and_exports_loses_nothing(env: Env, operation: str) -> None:
    """The catalog commits before index.json and graph.json are patched: a process killed in
    between must not leave them behind for good (the next command rewrites them whole)."""
    env.ok("write", "Alpha", "--tags", "k")
    env.ok("write", "Beta", "--tags", "k")
    script = env.root / "killed.py"
    script.write_text(KILLED_BEFORE_EXPORT.format(scripts=str(SCRIPTS)))
    died = subprocess.run([sys.executable, str(script), operation], cwd=env.project, env=env.environ())
    assert died.returncode == 9
    env.ok("list")
    assert_consistent(env.project_dir)
    if operation == "write":
        assert "learning-written-then-killed" in env.index(env.project_dir)["memories"]
    else:
        edges = json.loads((env.project_dir / "graph.json").read_text())
        assert {"target": "learning-beta", "label": "builds-on"}.items() <= edges["learning-alpha"][0].items()
    env.ok("write", "Gamma", "--tags", "k")  # and the next mutation splices again from a whole file
    assert_consistent(env.project_dir)
    assert "learning-gamma" in env.index(env.project_dir)["memories"]


KILLED_DURING_EXPORT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {scripts!r})
    from _lib.ops import links, store
    from _lib.workspace.scopes import Workspace
    pwrite = os.pwrite
    writes = [0]
    def dying(descriptor, data, offset):  # dies before its Nth write into the export, the earlier ones done
        if os.readlink(f"/proc/self/fd/{{descriptor}}").endswith(sys.argv[2]):
            writes[0] += 1
            if writes[0] == int(sys.argv[3]):
                os._exit(9)
        return pwrite(descriptor, data, offset)
    os.pwrite = dying
    if sys.argv[1] == "write":
        store.write(Workspace(), store.NewMemory(title="Written then killed", tags=["k"], content="body",
                                                 links=["learning-alpha"]))
    else:
        links.link(Workspace(), "learning-alpha", "learning-beta", label="builds-on")
""")


@pytest.mark.parametrize("operation", ["write", "link"])
@pytest.mark.parametrize("export", ["index.json", "graph.json"])
@pytest.mark.parametrize("killed_at", [1, 2])
def test_a_process_killed_while_patching_an_export_leaves_it_whole(env: Env, operation: str, export: str,
                                                                   killed_at: int) -> None:
    """index.json and graph.json are patched for a one-memory change in place, one write per
    changed line: killed before any or between two, readers still find valid JSON with every
    entry the change does not touch, and the next command brings the file up to date."""
    for number in range(30):
        env.ok("write", f"Filler {number}", "--tags", "k")
    env.ok("write", "Alpha", "--tags", "k")
    env.ok("write", "Beta", "--tags", "k")
    env.ok("link", "learning-filler-0", "learning-filler-1")
    before = (env.project_dir / export).read_bytes()
    script = env.root / "killed.py"
    script.write_text(KILLED_DURING_EXPORT.format(scripts=str(SCRIPTS)))
    died = subprocess.run([sys.executable, str(script), operation, export, str(killed_at)], cwd=env.project,
                          env=env.environ())
    if killed_at == 1:
        assert died.returncode == 9  # every such change writes at least once into either file
    after = json.loads((env.project_dir / export).read_bytes())
    untouched = {"learning-filler-0", "learning-filler-5", "learning-filler-29"}
    key = "memories" if export == "index.json" else None
    assert {slug: value for slug, value in (after[key] if key else after).items() if slug in untouched} == \
        {slug: value for slug, value in (json.loads(before)[key] if key else json.loads(before)).items()
         if slug in untouched}
    env.ok("list")
    assert_consistent(env.project_dir)
    assert not list(env.project_dir.glob(".*.tmp"))
    if operation == "write":
        assert "learning-written-then-killed" in env.index(env.project_dir)["memories"]
    else:
        edges = json.loads((env.project_dir / "graph.json").read_text())
        assert {"target": "learning-beta", "label": "builds-on"}.items() <= edges["learning-alpha"][0].items()


# -- hostile input --------------------------------------------------------------------------------

HOSTILE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300) | st.sampled_from([
    "key: value", "- list item", "[flow, list]", "{a: b}", "&anchor", "*alias", "!!python/object:os.system", "---",
    "...", "# comment", "'quoted'", '"double"', "yes", "null", "~", "0x1F", "1e3", "2026-01-01", "\r\n", "\u202e",
    "שלום עולם", "🎉🔥", "a" * 5000, "line1\r\nline2\r\n", "tab\tsep", "\x00nul", "\ufeffbom"])


@given(title=HOSTILE, body=HOSTILE, tags=st.lists(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}",
                                                                fullmatch=True), min_size=1, max_size=4))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_hostile_titles_and_bodies_round_trip_or_are_refused(tmp_path_factory, title: str, body: str,
                                                             tags: list[str]) -> None:
    from _lib.base import errors
    from _lib.ops import store
    from _lib.workspace.scopes import Workspace

    root = tmp_path_factory.mktemp("hostile")
    (root / "home").mkdir()
    workspace = Workspace(root, {"HOME": str(root / "home")})
    new = store.NewMemory(title=title, tags=tags, content=body, fields={"owner": title[:50]})
    try:
        created = store.write(workspace, new, scope="global")
    except errors.InvalidInput:
        assert not list((root / "home").rglob("*.md")), "a refused write leaves nothing"
        return
    back = store.read(workspace, created.slug)
    assert back.title == title.strip()
    from _lib.base import redact

    expected_body, _ = redact.scrub(body)
    assert back.content == expected_body
    assert back.tags == list(dict.fromkeys(tags))
    assert back.fields["owner"] == redact.scrub(title[:50])[0]


SCRIPT_OPTIONS = ["--json", "--scope", "global", "project", "local", "enterprise", "--type", "decision", "gotcha",
                  "--tags", "a,b", "--limit", "-1", "0", "3", "--content", "x", "--file", "/etc/passwd", "-",
                  "--label", "implements", "--depth", "99", "--since", "7d", "bogus", "--format", "dot", "--all",
                  "../../etc", "learning-x", "--set", "title=x", "--patch", "{", "--help", "add", "status", "1"]


@given(st.sampled_from(sorted(path.stem for path in SCRIPTS.glob("*.py") if not path.stem.startswith("_")
                              and path.stem != "memory")),
       st.lists(st.sampled_from(SCRIPT_OPTIONS) | st.text(max_size=20) | st.binary(max_size=12).map(os.fsdecode),
                max_size=6))  # (bytes: arguments that are not UTF-8)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_argv_never_crashes_a_script(tmp_path_factory, script: str, argv: list[str]) -> None:
    assume(all("\x00" not in arg for arg in argv))
    root = tmp_path_factory.mktemp("argv")
    (root / "home").mkdir()
    (root / "project").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "project")], check=True)
    env = {"HOME": str(root / "home"), "PATH": os.environ["PATH"], "CLAUDE_MEMORY_PYTHON": sys.executable,
           "LANG": "C.UTF-8"}
    (root / "home" / ".claude" / "memory").mkdir(parents=True)
    (root / "home" / ".claude" / "memory" / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    proc = subprocess.run([sys.executable, str(SCRIPTS / f"{script}.py"), *argv], cwd=root / "project", env=env,
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1, 2), (script, argv, proc.returncode, proc.stderr[-800:])
    assert b"Traceback" not in proc.stderr, (script, argv, proc.stderr[-800:])
    if proc.returncode:
        assert proc.stderr.startswith(b"error: ") or b"usage:" in proc.stderr[:300], (script, argv, proc.stderr)
    journal = root / "home" / ".cache" / "claude-memory"  # last known contents, kept outside on purpose
    outside = [path for path in root.rglob("*") if path.is_file() and ".claude" not in path.parts
               and ".git" not in path.parts and path.name not in (".gitignore",) and journal not in path.parents]
    assert not outside, f"{script} {argv} wrote outside the memory directories: {outside}"


HOOK_NAMES = sorted(path.stem for path in HOOKS.glob("*.py") if not path.stem.startswith("_")
                    and path.stem not in ("bootstrap",))


@given(st.sampled_from(HOOK_NAMES), st.one_of(
    st.binary(max_size=300),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                 lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children,
                                                                                   max_size=5), max_leaves=15)
    .map(lambda value: json.dumps(value).encode()),
    st.fixed_dictionaries({"session_id": st.text(max_size=40), "cwd": st.sampled_from(["/", "/nonexistent", "."]),
                           "tool_name": st.sampled_from(["Read", "Bash", "Write", "Edit", "TodoWrite", ""]),
                           "tool_input": st.dictionaries(st.sampled_from(["file_path", "command", "todos", "content"]),
                                                         st.text(max_size=40) | st.integers() | st.none()
                                                         | st.text(st.characters(blacklist_categories=()), max_size=8)),
                           "prompt": st.text(max_size=80), "agent_type": st.text(max_size=20)})
    .map(lambda value: json.dumps(value).encode())))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_stdin_never_crashes_or_blocks_a_hook(tmp_path_factory, hook: str, stdin: bytes) -> None:
    root = tmp_path_factory.mktemp("hookfuzz")
    (root / "home").mkdir()
    (root / "data").mkdir()
    env = {"HOME": str(root / "home"), "PATH": os.environ["PATH"], "CLAUDE_PLUGIN_DATA": str(root / "data"),
           "CLAUDE_PROJECT_DIR": str(root), "MEMORY_HOOK_RAISE": "1"}  # an error inside fails the test
    os.symlink(sys.executable, root / "data" / "python")
    proc = subprocess.run(["sh", str(HOOKS / "run"), hook], input=stdin, capture_output=True, env=env, timeout=60,
                          cwd=root)
    assert proc.returncode == 0, (hook, stdin[:200], proc.stderr[-500:])
    assert b"Traceback" not in proc.stderr
    if proc.stdout.strip():
        answer = json.loads(proc.stdout)
        decision = answer.get("hookSpecificOutput", {}).get("permissionDecision")
        assert decision in (None, "deny"), answer
        assert answer.get("decision") != "block"
    written = [path for path in root.rglob("*") if path.is_file() and "data" not in path.relative_to(root).parts[:1]
               and ".claude" not in path.parts]
    assert not written, f"{hook} wrote outside its data and memory directories: {written}"


# -- paths ------------------------------------------------------------------------------------------

def test_symlinks_inside_memory_dirs_are_never_followed_for_writes(env: Env) -> None:
    outside = env.root / "outside.md"
    original = ('---\ntype: learning\ntags: [x]\ncreated: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n'
                "---\n\n# Outside\n\nprivate stuff\n")
    outside.write_text(original)
    env.ok("write", "Inside", "--tags", "x")
    link = env.project_dir / "learning-evil.md"
    os.symlink(outside, link)
    env.unchecked.add(link)
    listing = env.ok("list")
    assert "outside the memory directory" in listing.err and "learning-evil" not in listing.out
    assert env.ok("search", "private stuff", "--json").json()["count"] == 0
    env.fails("read", "learning-evil")
    env.fails("update", "learning-evil", "--append", "x")
    env.fails("delete", "learning-evil")
    assert outside.read_text() == original, "the file outside was never written"
    os.unlink(link)


def test_paths_given_to_file_operations_cannot_escape(env: Env) -> None:
    env.ok("write", "Inside", "--tags", "x")
    target = env.root / "victim.txt"
    target.write_text("untouched")
    for path in ("../../victim.txt", str(target), ".claude/memory/../../victim.txt", ".claude/memory/x.sh"):
        env.fails("file", "write", path, "--content", "pwned")
    os.symlink(env.root, env.project_dir / "escape")
    env.fails("file", "write", ".claude/memory/escape/victim.txt", "--content", "pwned")
    assert target.read_text() == "untouched"
    for slug in ("../victim", "/etc/passwd", "a/b", "..", "learning-x/../../y"):
        env.fails("read", slug)
        env.fails("delete", slug)


def test_enterprise_directory_not_writable_gives_a_clear_error(env: Env) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    enterprise = env.root / "enterprise"
    enterprise.mkdir(mode=0o555)
    env.ok("config", "scopes.enterprise.enabled", "true")
    result = env.fails("write", "X", "--scope", "enterprise", env={"CLAUDE_MEMORY_ENTERPRISE_PATH": str(enterprise)})
    assert "read-only" in result.err


# -- stores of the earlier plugin under load --------------------------------------------------------

ADOPTED_WORKER = textwrap.dedent("""
    import json, random, sys
    sys.path.insert(0, {scripts!r})
    from _lib.base import errors
    from _lib.ops import links, store
    from _lib.workspace.scopes import Workspace

    worker, steps, originals = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    rng = random.Random(worker)
    mine, acked, linked = [], {{}}, []
    for step in range(steps):
        action = rng.choice(["write", "write", "link", "link", "unlink", "delete"])
        try:
            if action == "write" or not mine:
                created = store.write(Workspace(), store.NewMemory(title=f"Worker {{worker}} note {{step}}", type="learning",
                                                                  tags=["load"], content=f"marker {{worker}}-{{step}}"))
                mine.append(created.slug)
                acked[created.slug] = f"marker {{worker}}-{{step}}"
            elif action == "link":
                source, target = rng.choice(mine), rng.choice(originals + mine)
                if source != target:
                    links.link(Workspace(), source, target, label=rng.choice(["relates-to", "part-of", "extends"]))
                    linked.append([source, target])
            elif action == "unlink" and linked:
                source, target = linked.pop(rng.randrange(len(linked)))
                links.unlink(Workspace(), source, target)
            elif action == "delete":
                slug = mine.pop(rng.randrange(len(mine)))
                store.delete(Workspace(), slug)
                acked.pop(slug)
        except errors.Error:
            pass  # e.g. the target another worker deleted meanwhile
    print(json.dumps(acked))
""")


def _original_edges_kept(env: Env, store: predecessor_store.Store) -> None:
    graph = json.loads((env.project_dir / "graph.json").read_text())
    on_disk = {(edge["source"], edge["target"], edge.get("label") or edge.get("relation"))
               for edge in graph["edges"]}
    assert set(store.edges) <= on_disk, "an edge of the earlier plugin was lost"
    shown = {(edge["source"], edge["target"], edge["label"])
             for edge in env.ok("graph", "--all", "--json").json()["edges"]}
    assert {edge for edge in store.edges if edge[1] in store.memories} <= shown
    index = json.loads((env.project_dir / "index.json").read_text())
    assert isinstance(index["memories"], list)


def test_adopted_store_under_concurrent_writers_loses_nothing(env: Env) -> None:
    import predecessor_store

    store = predecessor_store.build(env.project_dir, memories=80, edges=120)
    env.unchecked.update(env.project_dir.rglob("*"))
    script = env.root / "adopted.py"
    script.write_text(ADOPTED_WORKER.format(scripts=str(SCRIPTS)))
    originals = ",".join(sorted(slug for slug in store.memories if slug not in store.archived)[:30])
    workers = [subprocess.Popen([sys.executable, str(script), str(n), "25", originals], cwd=env.project,
                                env=env.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(6)]
    acked: dict[str, str] = {}
    for proc in workers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]
        acked.update(json.loads(out.decode().strip().splitlines()[-1]))
    listing = {item["slug"]: item for item in env.ok("list", "--json").json()["memories"]}
    assert set(store.memories) | set(acked) == set(listing), "every memory, old and acknowledged, is there"
    for slug, marker in acked.items():
        assert Path(listing[slug]["filePath"]).read_text().rstrip().endswith(marker)
        assert listing[slug]["filePath"].startswith(str(env.project_dir / "permanent"))
    _original_edges_kept(env, store)
    entries = {item["id"] for item in json.loads((env.project_dir / "index.json").read_text())["memories"]}
    assert set(acked) <= entries
    print(f"\nadopted store: 6 processes x 25 operations, {len(acked)} memories acknowledged, "
          f"{len(store.edges)} earlier edges kept")


@pytest.mark.slow
def test_adopted_store_survives_sigkill_at_random_moments(env: Env) -> None:
    import time

    import predecessor_store

    store = predecessor_store.build(env.project_dir, memories=60, edges=90)
    env.unchecked.update(env.project_dir.rglob("*"))
    rng = random.Random(7)
    originals = sorted(slug for slug in store.memories if slug not in store.archived)
    made: list[str] = []

    def argv(action: str, round_: int) -> list[str]:
        if action == "write" or not made:
            return ["write", f"Crash note {round_}", "--tags", "c", "--content", "z" * rng.randrange(10, 20000)]
        if action == "link":
            return ["link", rng.choice(made), rng.choice(originals), "--label", "extends"]
        if action == "unlink":
            return ["unlink", rng.choice(made), rng.choice(originals)]
        return ["delete", rng.choice(made)]

    durations = []
    for round_ in range(4):
        started = time.monotonic()
        env.run(*argv("write", round_))
        durations.append(time.monotonic() - started)
        made.append(f"learning-crash-note-{round_}")
    typical = sorted(durations)[len(durations) // 2]
    kills = 0
    for round_ in range(4, 124):
        action = rng.choice(["write", "link", "link", "unlink", "delete"])
        proc = subprocess.Popen([str(REPO / "bin" / "memory"), *argv(action, round_)], cwd=env.project,
                                env=env.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if action == "write":
            made.append(f"learning-crash-note-{round_}")
        try:
            proc.wait(timeout=rng.uniform(0.0, typical * 1.5))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        for name in ("graph.json", "index.json"):
            json.loads((env.project_dir / name).read_text())  # never half-written
    env.ok("list")
    _original_edges_kept(env, store)
    assert kills >= 30, kills
    print(f"\nadopted store: {kills} of 120 commands killed, every earlier edge and label kept")


# -- maintenance verbs: rename, move and bulk changes -------------------------------------------------

def _markers_kept(env: Env, count: int) -> dict[int, list[Path]]:
    """Where each base memory's marker is now (project and global scope files)."""
    found: dict[int, list[Path]] = {number: [] for number in range(count)}
    for directory in (env.project_dir, env.global_dir):
        for path in memory_files(directory):
            text = path.read_text(encoding="utf-8")
            for number in range(count):
                if f"marker-{number}-end" in text:
                    found[number].append(path)
    return found


def _maintenance_base(env: Env, count: int) -> None:
    for number in range(count):
        env.ok("write", f"Base {number}", "--slug", f"learning-m{number}", "--tags", "base",
               "--content", f"marker-{number}-end" + (f" see [[learning-m{number - 1}]]" if number else ""))
    for number in range(0, count - 2, 2):
        env.ok("link", f"learning-m{number}", f"learning-m{number + 2}", "--label", "builds-on")


def _maintenance_argv(env: Env, rng: random.Random, number: int, action: str, round_: int) -> list[str]:
    """A rename, move or bulk command for memory `number`, from wherever it is now."""
    candidates = [(directory, path.stem) for directory in (env.project_dir, env.global_dir)
                  for path in memory_files(directory) if path.stem.startswith(f"learning-m{number}")
                  and path.stem[len(f"learning-m{number}"):] in ("", "-renamed")]
    directory, slug = rng.choice(candidates) if candidates else (env.project_dir, f"learning-m{number}")
    scope = "project" if directory == env.project_dir else "global"
    if action == "rename":
        new = f"learning-m{number}" if slug.endswith("-renamed") else f"learning-m{number}-renamed"
        return ["rename", slug, new, "--scope", scope]
    if action == "move":
        return ["move", slug, "--to", "global" if scope == "project" else "project", "--scope", scope]
    if action == "bulk-move":
        return ["move", "--tag", f"pick{number % 3}", "--to", "global", "--scope", "project", "--yes"]
    if action == "tag":
        return ["tag", "--tag", "base", f"pick{round_ % 3}", "--scope", scope, "--yes"]
    return ["untag", "--tag", f"pick{round_ % 3}", f"pick{round_ % 3}", "--scope", scope, "--yes"]


def test_concurrent_renames_moves_and_bulk_changes_lose_nothing(env: Env) -> None:
    """Renames, moves, bulk tags and links racing each other: every memory survives exactly
    once, and both scopes end consistent with symmetric graphs."""
    count = 10
    _maintenance_base(env, count)
    # the global scope exists before the race: a refused first write to a scope that does not
    # exist yet removes the directory it scaffolded, which races with a concurrent first write
    env.ok("write", "Already global", "--slug", "learning-global", "--tags", "g", "--scope", "global")
    rng = random.Random(11)
    procs = []
    for round_ in range(24):
        number = rng.randrange(count)
        action = rng.choice(["rename", "move", "tag", "untag", "bulk-move", "link"])
        if action == "link":
            argv = ["link", f"learning-m{number}", f"learning-m{rng.randrange(count)}", "--label", "part-of"]
        else:
            argv = _maintenance_argv(env, rng, number, action, round_)
        procs.append(subprocess.Popen([str(REPO / "bin" / "memory"), *argv], cwd=env.project, env=env.environ(),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for proc in procs:
        proc.wait(timeout=600)
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in err, err
    env.ok("list")
    kept = _markers_kept(env, count)
    assert all(len(paths) == 1 for paths in kept.values()), f"lost or duplicated: {kept}"
    for directory in (env.project_dir, env.global_dir):
        assert_consistent(directory)


@pytest.mark.slow
def test_renames_moves_and_bulk_changes_killed_at_random_moments_lose_nothing(env: Env) -> None:
    """SIGKILL at random moments of renames, moves and bulk tags: no file is half-written, no
    memory is lost (a killed move or rename may leave the old and the new copy: never none),
    and after the next command both scopes are consistent."""
    import time

    count = 8
    _maintenance_base(env, count)
    rng = random.Random(2027)
    actions = ["rename", "move", "tag", "untag", "bulk-move"]
    durations: dict[str, list[float]] = {action: [] for action in actions}
    for round_ in range(2):
        for action in actions:
            started = time.monotonic()
            env.run(*_maintenance_argv(env, rng, rng.randrange(count), action, round_))
            durations[action].append(time.monotonic() - started)
    kills = rounds = 0
    for round_ in range(80):
        action = rng.choice(actions)
        typical = sorted(durations[action])[len(durations[action]) // 2]
        proc = subprocess.Popen([str(REPO / "bin" / "memory"),
                                 *_maintenance_argv(env, rng, rng.randrange(count), action, round_)],
                                cwd=env.project, env=env.environ(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        rounds += 1
        try:
            proc.wait(timeout=rng.uniform(0.0, typical))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        for directory in (env.project_dir, env.global_dir):
            for path in memory_files(directory):
                text = path.read_text(encoding="utf-8")
                assert text.startswith("---\n") and "\n---\n" in text, f"{path} was left half-written"
            for name in ("index.json", "graph.json"):
                if (directory / name).exists():
                    json.loads((directory / name).read_text())
        missing = [number for number, paths in _markers_kept(env, count).items() if not paths]
        assert not missing, f"memories lost after round {round_} ({action}): {missing}"
        if round_ % 20 == 19:
            env.ok("list")
            for directory in (env.project_dir, env.global_dir):
                assert_consistent(directory)
    env.ok("list")
    for directory in (env.project_dir, env.global_dir):
        assert not list(directory.glob(".*.tmp")), "temp files of killed writes are cleaned up"
        assert_consistent(directory)
    print(f"\nmaintenance verbs: {kills} of {rounds} commands killed with SIGKILL, 0 memories lost")
    assert kills >= rounds // 4, f"only {kills} of {rounds} commands were killed"


# -- links that lead out of a scope -------------------------------------------------------------------

def _tree(directory: Path) -> dict[str, bytes | str]:
    """Every entry under `directory` (files with their bytes, links with their target)."""
    found: dict[str, bytes | str] = {}
    for path in sorted(directory.rglob("*")):
        key = str(path.relative_to(directory))
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_file():
            found[key] = path.read_bytes()
        else:
            found[key] = "dir"
    return found


def _hooks_and_commands(env: Env) -> None:
    """A session's hooks and a user's commands, each allowed to refuse, never to write outside."""
    data = env.root / "plugin-data"
    data.mkdir(exist_ok=True)
    if not (data / "python").exists():
        (data / "python").symlink_to(sys.executable)
    hook_env = env.environ(CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(env.project), MEMORY_HOOK_RAISE="1")
    common = {"session_id": "s-escape", "cwd": str(env.project), "transcript_path": str(env.root / "t.jsonl")}
    source = env.project / "src" / "app.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text("def app():\n    return 1\n")
    for name, payload in (("start-memory-index", {"hook_event_name": "SessionStart", "source": "startup"}),
                          ("maintenance", {"hook_event_name": "SessionStart", "source": "startup"}),
                          ("memory-prompt-context", {"hook_event_name": "UserPromptSubmit", "prompt": "app auth"}),
                          ("memory-context", {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                              "tool_input": {"file_path": str(source)}, "tool_response": {}}),
                          ("capture-file-summary", {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                                    "tool_input": {"file_path": str(source)}, "tool_response": {}}),
                          ("todowrite-capture", {"hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
                                                 "tool_input": {"todos": [{"content": "ship", "status": "pending"}]}}),
                          ("end-memory", {"hook_event_name": "SessionEnd", "reason": "other"})):
        proc = subprocess.run(["sh", str(HOOKS / "run"), name], input=json.dumps({**common, **payload}).encode(),
                              capture_output=True, cwd=env.project, env=hook_env, timeout=60)
        assert proc.returncode == 0, (name, proc.stderr[-800:])
    for args in (("list",), ("write", "Escape attempt", "--tags", "x"), ("write", "Local note", "--tags", "x",
                 "--scope", "local"), ("search", "escape"), ("health",), ("reindex",), ("embed",),
                 ("task", "add", "--title", "Escape task"), ("link", "learning-base", "learning-other")):
        result = env.run(*args)
        assert result.code in (0, 1), (args, result.err)
        assert "Traceback" not in result.err


@pytest.mark.parametrize("name", [None, ".cache", ".embedding-cache", "local", "graph.json", "index.json",
                                  "index.md"])
def test_links_leaving_the_scope_lead_no_read_or_write_outside(env: Env, name: str | None) -> None:
    """A link leading out of the memory directory (the directory itself, or one of the entries the
    plugin reads and writes) never makes it read or write there."""
    victim = env.root / "victim"
    victim.mkdir()
    (victim / "index.md").write_text("hand-written, outside\n")
    (victim / "graph.json").write_text(json.dumps({"learning-base": [{"target": "learning-other",
                                                                      "label": "stolen-label",
                                                                      "timestamp": "2026-01-01T00:00:00Z"}]}))
    (victim / "index.json").write_text('{"outside": true}\n')
    if name is None:  # the whole project memory directory
        (env.project / ".claude").mkdir()
        os.symlink(victim, env.project_dir)
        env.unchecked.update(env.project_dir / entry for entry in ("index.json", "graph.json"))
    else:
        env.ok("write", "Base", "--slug", "learning-base", "--tags", "x")
        env.ok("write", "Other", "--slug", "learning-other", "--tags", "x")
        target = victim / name if (victim / name).exists() else victim
        if (env.project_dir / name).exists():
            if (env.project_dir / name).is_dir():
                import shutil

                shutil.rmtree(env.project_dir / name)
            else:
                (env.project_dir / name).unlink()
        os.symlink(target, env.project_dir / name)
        env.unchecked.add(env.project_dir / name)
    before = _tree(victim)
    _hooks_and_commands(env)
    assert _tree(victim) == before, "something was written outside the memory directory"
    if name is None:
        refused = env.fails("write", "Escape", "--tags", "x")
        assert "leads outside the project" in refused.err
    elif name == "graph.json":
        edges = env.ok("edges", "learning-base", "--json").json()["edges"]
        assert all(edge["label"] != "stolen-label" for edge in edges), "labels were read through the link"


# -- a lock holder that stops ------------------------------------------------------------------------

STOPPED_HOLDER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {scripts!r})
    from pathlib import Path
    from _lib.base import fsutil
    with fsutil.exclusive_lock(Path(sys.argv[1]), what="test"):
        os.kill(os.getpid(), signal.SIGSTOP)  # as Ctrl-Z does, with the lock held
""")


def test_a_stopped_lock_holder_never_stalls_hooks_and_commands_say_who_holds_it(env: Env) -> None:
    env.ok("write", "Login gotcha", "--type", "gotcha", "--tags", "auth", "--content", "Tokens expire early.")
    env.ok("config", "locks.waitSeconds", "1", "--scope", "global")
    env.ok("write", "Long command", "--tags", "x", "--content", "a long line " * 40)  # a longer holder before
    script = env.root / "holder.py"
    script.write_text(STOPPED_HOLDER.format(scripts=str(SCRIPTS)))
    holder = subprocess.Popen([sys.executable, str(script), str(env.project_dir / ".cache" / "lock")])
    try:
        _, status = os.waitpid(holder.pid, os.WUNTRACED)  # returns once it has stopped
        assert os.WIFSTOPPED(status)
        # a hand edit: every hook now wants the lock to bring the catalog up to date
        (env.project_dir / "learning-hand-added.md").write_text(
            '---\ntype: learning\ntags: [auth]\ncreated: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n'
            "---\n\n# Hand added\n\nAuth tokens need refresh.\n")
        data = env.root / "plugin-data"
        data.mkdir()
        (data / "python").symlink_to(sys.executable)
        hook_env = env.environ(CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(env.project),
                               MEMORY_HOOK_RAISE="1")
        common = {"session_id": "s-stopped", "cwd": str(env.project)}
        for name, payload in (("memory-prompt-context", {"hook_event_name": "UserPromptSubmit",
                                                         "prompt": "login tokens expire"}),
                              ("start-memory-index", {"hook_event_name": "SessionStart", "source": "startup"})):
            proc = subprocess.run(["sh", str(HOOKS / "run"), name], input=json.dumps({**common, **payload}).encode(),
                                  capture_output=True, cwd=env.project, env=hook_env, timeout=10)  # never 30 s
            assert proc.returncode == 0, proc.stderr
            assert b"additionalContext" in proc.stdout, (name, proc.stdout)  # answered from what it had
        refused = env.fails("write", "Blocked", "--tags", "x")
        lock = env.project_dir / ".cache" / "lock"
        assert f"held by process {holder.pid} ({script} {lock}) for " in refused.err, refused.err  # nothing left over
        assert " s\n" in refused.err
        assert "Ctrl-Z" in refused.err and "kill -CONT" in refused.err
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.wait(timeout=30)
    env.ok("write", "Unblocked", "--tags", "x")
    assert "learning-hand-added" in env.ok("list").out



def test_files_and_locks_named_without_a_directory_are_in_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _lib.base import fsutil

    monkeypatch.chdir(tmp_path)
    fsutil.write_atomically("one.json", "1")
    fsutil.write_many([(Path("two.json"), "2")])
    with fsutil.exclusive_lock("three.lock"):
        assert (tmp_path / "three.lock").read_text().startswith(f"{os.getpid()} ")
    assert (tmp_path / "one.json").read_text() == "1" and (tmp_path / "two.json").read_text() == "2"
    assert sorted(os.listdir(tmp_path)) == ["one.json", "three.lock", "two.json"]

# -- a full disk, a read-only file system -----------------------------------------------------------

def _disk_env(disk: Path) -> Env:
    (disk / "home").mkdir()
    subprocess.run(["git", "init", "-q", str(disk / "project")], check=True)
    env = Env(disk, disk / "home", disk / "project")
    for number in range(1, 6):
        env.ok("write", f"Note {number}", "--tags", "a", "--content", f"body {number} about retries")
    env.ok("link", "learning-note-1", "learning-note-2")
    return env


def test_a_full_disk_gives_one_error_line_and_reading_still_works(small_disk: Path) -> None:
    env = _disk_env(small_disk)
    fill_disk(small_disk)
    before = snapshot(env.project_dir)
    for args in (("list",), ("search", "retries"), ("read", "learning-note-3"), ("edges", "learning-note-1"),
                 ("health",), ("export",), ("query", "--recent", "3")):
        result = env.run(*args)
        assert result.code in (0, 1) and "Traceback" not in result.err, (args, result.err)
    assert "learning-note-5" in env.ok("list").out
    for args in (("write", "Full", "--tags", "a"), ("update", "learning-note-3", "--append", "more"),
                 ("link", "learning-note-3", "learning-note-4"), ("task", "add", "--title", "x")):
        refused = env.fails(*args)
        assert refused.err.startswith("error: no space left on the device"), refused.err
        assert refused.err.count("\n") == 2 and "hint: free some space" in refused.err
    after = snapshot(env.project_dir)
    assert {key: value for key, value in after.items() if key.endswith(".md")} == \
        {key: value for key, value in before.items() if key.endswith(".md")}, "a refused command changed a memory"
    deleted = env.ok("delete", "learning-note-2")  # deleting is how a full disk gets room
    assert "memory repair" in deleted.err
    assert not (env.project_dir / "learning-note-2.md").exists()
    (small_disk / "filler").unlink()
    env.ok("repair")
    assert env.ok("health", "--json").json()["errors"] == 0
    env.ok("write", "Room again", "--tags", "a")


def test_a_read_only_file_system_is_read_and_refuses_writes_in_one_line(small_disk: Path) -> None:
    env = _disk_env(small_disk)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        assert "learning-note-4" in env.ok("list").out
        assert env.ok("search", "retries", "--json").json()["count"] == 5
        env.ok("health")
        refused = env.fails("write", "Read only", "--tags", "a")
        assert "cannot be written" in refused.err and "Traceback" not in refused.err
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=False)


# -- hostile frontmatter under rewrites -------------------------------------------------------------

WORD = st.text(st.sampled_from(list("abcxyz019 éß日🎉-_.")), min_size=1, max_size=12).map(str.strip).filter(bool)
FAKE_KEY = st.sampled_from(["updated", "tags", "links", "link-labels", "type", "created", "status"])
STAMP = '"2026-01-10T10:00:00Z"'


@st.composite
def hostile_frontmatter(draw) -> tuple[str, list[str]]:
    """Frontmatter a person or another tool may write, valid YAML, with the fields a memory needs:
    (text, comment markers it holds)."""
    comments: list[str] = []

    def comment() -> str:
        marker = f"c{len(comments)}-{draw(WORD)}"
        comments.append(marker)
        return marker

    def maybe_comment() -> str:
        return f"  # {comment()}" if draw(st.booleans()) else ""

    if draw(st.integers(0, 9)) == 0:  # the whole frontmatter as one flow mapping
        text = f"{{type: learning, tags: [t], created: {STAMP},\n updated: {STAMP}, owner: {draw(WORD)!r}}}"
        return text + (f"  # {comment()}\n" if draw(st.booleans()) else "\n"), comments
    required = [
        draw(st.sampled_from(["type: learning", "? type\n: learning", "type: &ty learning"])) + maybe_comment(),
        draw(st.sampled_from(["tags:\n  - t", "tags: [t]", "tags: &tg ['t']", "tags:\n- t  # x"])),
        draw(st.sampled_from([f"created: {STAMP}", "created: 2026-01-10T10:00:00Z"])),
        draw(st.sampled_from([f"updated: {STAMP}", "updated: 2026-01-10T10:00:00Z", f"? updated\n: {STAMP}",
                              f"updated: &up {STAMP}"])) + maybe_comment(),
    ]
    if "tags:\n- t  # x" in required:
        comments.append("x")
    extras = []
    for index in range(draw(st.integers(0, 5))):
        key = f"field{index}"
        first, fake, last = draw(WORD), draw(FAKE_KEY), draw(WORD)
        extras.append(draw(st.sampled_from([
            f"{key}: {first!r}",
            f'{key}: "{first}\n{fake}: {last}\n  {last}"',
            f"{key}: '{first}\n{fake}: {last}'",
            f"{key}: |\n  {first}\n  {fake}: {last}\n",
            f"{key}: >-\n  {first}\n\n  {fake}: {last}",
            f"? {key}\n: {first!r}",
            f"{key}: {{x: {first!r}, y: [{last!r}]}}",
            f"{key}: [{first!r}, \"{last}\"]",
            f"{key}: &anchor{index} [{first!r}]",
            f"notes: [{first!r}]",  # may repeat: a union merge's leftover
        ])) + maybe_comment())
        if draw(st.booleans()):
            extras.append(f"# {comment()}")
    blocks = draw(st.permutations(required + extras))
    aliases = [f"alias{index}: *{anchor}" for index, anchor in enumerate(("ty", "tg", "up"))
               if f"&{anchor}" in "\n".join(required)]
    aliases += [f"copy{index}: *anchor{index}" for index in range(len(extras)) if f"&anchor{index} " in
                "\n".join(extras)]
    return "\n".join(blocks + aliases) + "\n", comments


@given(hostile_frontmatter(), st.sampled_from(["add-tag", "status", "link", "link-unlink"]), st.booleans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
def test_rewrites_of_hostile_frontmatter_are_lossless_or_refused(tmp_path_factory, generated, operation: str,
                                                                 crlf: bool) -> None:
    """Whatever the YAML looks like, a command that changes a memory either keeps every other
    field, every comment and the body exactly, or is refused and changes nothing."""
    from _lib.base import errors
    from _lib.model import frontmatter
    from _lib.ops import links, store
    from _lib.workspace.scopes import Workspace

    head, comments = generated
    root = tmp_path_factory.mktemp("rewrite")
    memories = root / "home" / ".claude" / "memory"
    memories.mkdir(parents=True)
    (memories / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    workspace = Workspace(root, {"HOME": str(root / "home")})
    store.write(workspace, store.NewMemory(title="Other", tags=["t"], content="x"))
    text = f"---\n{head}---\n\n# Hostile\n\nBody: key: value\n---\nmore\n"
    path = memories / "learning-hostile.md"
    path.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode("utf-8"))
    before = {file: file.read_bytes() for file in memories.glob("*.md")}
    old = frontmatter.split(path.read_bytes().decode("utf-8"))
    old_fields = frontmatter.parse(old.frontmatter or "")
    try:
        if operation == "add-tag":
            store.update(workspace, "learning-hostile", store.Changes(add_tags="added"))
            changed = {"tags": [*old_fields["tags"], "added"]}
        elif operation == "status":
            store.update(workspace, "learning-hostile", store.Changes(fields={"status": "archived"}))
            changed = {"status": "archived"}
        else:
            links.link(workspace, "learning-hostile", "learning-other", label="part-of")
            changed = {"links": ["learning-other"], "link-labels": {"learning-other": "part-of"}}
            if operation == "link-unlink":
                links.unlink(workspace, "learning-hostile", "learning-other")
                changed = {"links": [], "link-labels": None}
    except errors.Error as refused:
        event("refused")
        assert "frontmatter" in refused.message, refused.message
        assert {file: file.read_bytes() for file in memories.glob("*.md")} == before, "a refusal changed files"
        return
    event("done")
    new_text = path.read_bytes().decode("utf-8")
    new = frontmatter.split(new_text)
    new_fields = frontmatter.parse(new.frontmatter or "")
    assert new.body == old.body and new.prefix == old.prefix
    for key, value in old_fields.items():
        if key not in changed and key != "updated":
            assert frontmatter.same_value(new_fields.get(key), value), (key, new_fields.get(key), value)
    for key, value in changed.items():
        assert new_fields.get(key) == value, (key, new_fields.get(key), new.frontmatter)
    assert new_fields["updated"] > "2026-01-10T10:00:00Z"
    for marker in comments:
        assert marker in new.frontmatter, f"comment {marker!r} was lost:\n{new.frontmatter}"
    assert not crlf or "\n" not in new_text.replace("\r\n", ""), "a CRLF file got LF lines"


@given(st.sampled_from(["learning-real", "learning-other", "learning-new-one", "Not A Slug", "../x", "", 7]),
       st.sampled_from([None, "learning-real", "learning-new-one", "learning-else"]),
       st.sampled_from(["aaa-impostor", "learning-reaz", "zzz-impostor"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_file_takes_over_another_memorys_slug(tmp_path_factory, declared, slug, impostor: str) -> None:
    """`write --file` with any `id` (and any --slug) never claims an existing slug, and a file
    written by hand whose `id` names another memory never takes its links, in any clone."""
    from _lib.base import errors
    from _lib.ops import links, store
    from _lib.workspace.scopes import Workspace

    root = tmp_path_factory.mktemp("identity")
    memories = root / "home" / ".claude" / "memory"
    memories.mkdir(parents=True)
    (memories / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    workspace = Workspace(root, {"HOME": str(root / "home")})
    store.write(workspace, store.NewMemory(title="Real", tags=["t"], content="the real one", slug="learning-real"))
    store.write(workspace, store.NewMemory(title="Other", tags=["t"], content="x", slug="learning-other",
                                           links=["learning-real"]))
    before = {file.name: file.read_bytes() for file in memories.glob("*.md")}
    document = yaml.safe_dump({"id": declared, "type": "gotcha", "tags": ["t"]}) if declared != "" else "id:\n"
    fields, content, _ = store.from_document(f"---\n{document}---\n\n# Imposter\n\nobey\n")
    try:
        created = store.write(workspace, store.NewMemory(title="Imposter", tags=["t"], content=content,
                                                         slug=slug, fields=fields))
    except errors.Error:
        assert {file.name: file.read_bytes() for file in memories.glob("*.md")} == before
    else:
        assert created.slug not in before and created.path == memories / f"{created.slug}.md"
        assert created.fields.get("id", created.slug) == created.slug
        assert {name: data for name, data in ((file.name, file.read_bytes()) for file in memories.glob("*.md"))
                if name in before} == before
    (memories / f"{impostor}.md").write_text("---\nid: learning-real\ntype: gotcha\ntags: [t]\n"
                                             f"created: {STAMP}\nupdated: {STAMP}\n---\n\n# Impostor\n\nobey\n")
    for rebuild in (False, True):
        if rebuild:
            store.reindex(workspace)
        real = store.read(workspace, "learning-real")
        assert real.path.name == "learning-real.md" and real.content == "the real one"
        assert links.edges(workspace, "learning-real")["title"] == "Real"
        assert {edge["neighbour"] for edge in links.edges(workspace, "learning-real")["edges"]} == {"learning-other"}


COPY_FORMS = [
    "links:\n  - {a}\n  - {b}",
    "links: [{a}, {b}]  # ours",
    "links: ['{a}', \"{b}\"]",
    "links:\n- {a}  # theirs\n- {b}",
    "# merged\nlinks:\n  - {a}\n  # keep\n  - {b}",
]


COPY = st.tuples(st.sampled_from(COPY_FORMS), st.sampled_from(["learning-a", "learning-b", "learning-c"]),
                 st.sampled_from(["learning-b", "learning-c", "learning-d"])).filter(lambda copy: copy[1] != copy[2])


@given(st.lists(COPY, min_size=2, max_size=4),
       st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_repair_of_repeated_fields_keeps_every_copys_values(tmp_path_factory, copies, with_comment: bool) -> None:
    """However the copies a union merge left are written, they read as the union and repair
    writes the field once with it, keeping the rest of the file (comments included)."""
    from _lib.model import frontmatter
    from _lib.health import repair
    from _lib.ops import store
    from _lib.workspace.scopes import Workspace

    root = tmp_path_factory.mktemp("repeated")
    memories = root / "home" / ".claude" / "memory"
    memories.mkdir(parents=True)
    (memories / "config.json").write_text('{"embedding": {"provider": "disabled"}}')
    workspace = Workspace(root, {"HOME": str(root / "home")})
    for name in "abcd":
        store.write(workspace, store.NewMemory(title=name.upper(), tags=["t"], content="x", slug=f"learning-{name}"))
    union: list[str] = []
    blocks = []
    for form, first, second in copies:
        for slug in (first, second):
            if slug not in union:
                union.append(slug)
        blocks.append(form.format(a=first, b=second))
    head = (f"type: hub\ntags: [t]\ncreated: {STAMP}\nupdated: {STAMP}\n" + ("# a note\n" if with_comment else "")
            + "\n".join(blocks) + "\n")
    path = memories / "hub-merged.md"
    path.write_text(f"---\n{head}---\n\n# Merged\n\nBody.\n")
    assert frontmatter.parse(head)["links"] == union  # how the plugin reads it before the repair
    assert frontmatter.repeated_keys(head) == ["links"]
    repair.repair(workspace)
    text = path.read_text()
    written = frontmatter.split(text)
    assert yaml.safe_load(written.frontmatter)["links"] == union  # any YAML reader sees every copy's values
    assert frontmatter.repeated_keys(written.frontmatter or "") == []
    assert written.body == "\n# Merged\n\nBody.\n"
    for marker in ("# a note", "# ours", "# theirs", "# merged", "# keep"):
        assert (marker in text) == (marker in f"---\n{head}---"), marker


# -- every mutation of a file takes the lock that guards it --------------------------------------------

def test_concurrent_config_changes_lose_none(env: Env) -> None:
    keys = ["quality.minQualityScore", "quality.orphanThreshold", "locks.waitSeconds", "search.semanticMode",
            "embedding.timeoutSeconds", "injection.gotchas_per_read"]
    values = ["40", "9", "12", "hybrid", "3", "2"]
    for scope in ("global", "project"):
        procs = [subprocess.Popen([str(REPO / "bin" / "memory"), "config", key, value, "--scope", scope],
                                  cwd=env.project, env=env.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for key, value in zip(keys, values)]
        for proc in procs:
            assert proc.wait(timeout=120) == 0, proc.stderr.read().decode() if proc.stderr else ""
        root = env.global_dir if scope == "global" else env.project_dir
        data = json.loads((root / "config.json").read_text())
        for key, value in zip(keys, values):
            section, name = key.split(".")
            assert str(data[section][name]) == value, (scope, key, data)


def test_a_file_write_racing_an_update_is_never_lost(env: Env) -> None:
    env.ok("write", "Raced", "--slug", "learning-raced", "--tags", "x", "--content", "start")
    text = (env.project_dir / "learning-raced.md").read_text()
    rounds = 12
    for round_ in range(rounds):
        replaced = text.replace("start", f"file write {round_}")
        write = subprocess.Popen([str(REPO / "bin" / "memory"), "file", "write", ".claude/memory/learning-raced.md",
                                  "--content", replaced], cwd=env.project, env=env.environ(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        update = subprocess.Popen([str(REPO / "bin" / "memory"), "update", "learning-raced", "--append",
                                   f"update {round_}"], cwd=env.project, env=env.environ(),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert write.wait(timeout=60) == 0 and update.wait(timeout=60) == 0
        body = (env.project_dir / "learning-raced.md").read_text()
        # serialised: either the update came last (both present) or the write did (its whole text)
        assert f"file write {round_}" in body, body
        assert f"update {round_}" in body or body == replaced, body


# -- a labelled link half-written by a killed command ---------------------------------------------------

HALF_LINK = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {scripts!r})
    from _lib.ops import links
    from _lib.workspace.scopes import Workspace
    written = []
    real = links.set_link_labels
    def first_file_only(catalog, slug, target, labels, **kw):
        written.append(slug)
        if len(written) == 2:
            os._exit(9)  # killed between the two files
        return real(catalog, slug, target, labels, **kw)
    links.set_link_labels = first_file_only
    links.link(Workspace(), sys.argv[1], sys.argv[2], label=sys.argv[3])
""")


@pytest.mark.parametrize("before, label", [(None, "implements"), ("builds-on", "implements"),
                                           ("implements", "part-of"), ("relates-to", "supersedes")])
def test_repair_completes_a_labelled_link_half_written_by_a_killed_command(env: Env, before: str | None,
                                                                            label: str) -> None:
    env.ok("write", "Alpha", "--slug", "learning-alpha", "--tags", "x")
    env.ok("write", "Beta", "--slug", "learning-beta", "--tags", "x")
    if before:
        env.ok("link", "learning-alpha", "learning-beta", "--label", before)
    script = env.root / "half.py"
    script.write_text(HALF_LINK.format(scripts=str(SCRIPTS)))
    killed = subprocess.run([sys.executable, str(script), "learning-alpha", "learning-beta", label], cwd=env.project,
                            env=env.environ())
    assert killed.returncode == 9
    env.ok("repair")
    report = env.run("health", "--json").json()
    assert not [problem for problem in report["problems"] if problem["kind"] in
                ("asymmetric-labels", "missing-inverse-link", "graph-missing-inverse", "graph-label-mismatch")]
    assert env.ok("repair", "--json").json()["fixed"] == 0, "a second repair finds nothing to do"
    edges = {(edge["direction"], edge["label"]) for edge in env.ok("edges", "learning-alpha", "--json").json()["edges"]}
    from _lib.model import graph

    assert ("outgoing", label) in edges and ("incoming", graph.Labels().inverse(label)) in edges
    assert_consistent(env.project_dir)


# -- smaller holes ---------------------------------------------------------------------------------------

def test_reading_a_pipe_in_the_memory_directory_is_refused_not_hung(env: Env) -> None:
    env.ok("write", "Something", "--tags", "x")
    os.mkfifo(env.project_dir / "pipe.md")
    refused = env.fails("file", "read", ".claude/memory/pipe.md", timeout=20)
    assert "not a regular file" in refused.err
    env.ok("list", timeout=20)
    os.unlink(env.project_dir / "pipe.md")


def test_a_memory_file_whose_name_is_not_utf8_is_left_alone_and_named_by_health(env: Env) -> None:
    """Python hands such a name on as lone surrogates, which no catalog, JSON or UTF-8 text can
    hold: the file is neither indexed nor touched, health names it, and every other memory, hook
    and command works as before."""
    env.ok("write", "Token refresh gotcha", "--type", "gotcha", "--tags", "auth", "--paths", "src/auth/**",
           "--content", "Serialise refreshes per user.")
    stray = os.path.join(os.fsencode(env.project_dir), b"gotcha-stray-\xff.md")
    content = b"---\ntype: gotcha\ntags:\n  - auth\n---\n\n# Stray\n\nA note about auth.\n"
    with open(stray, "wb") as handle:
        handle.write(content)
    env.unchecked.add(Path(os.fsdecode(stray)))
    source = env.project / "src" / "auth" / "login.ts"
    source.parent.mkdir(parents=True)
    source.write_text("export const login = 1;\n")
    for command in (("reindex",), ("list",), ("search", "auth"), ("health",)):
        result = env.ok(*command)
        assert "Traceback" not in result.err
    assert "gotcha-token-refresh" in env.ok("list").out
    assert "gotcha-stray-\\xff.md is not indexed: its name is not UTF-8" in env.ok("health").err
    context = env.hook("memory-context", {"session_id": str(uuid.uuid4()), "cwd": str(env.project),
                                          "hook_event_name": "PostToolUse", "tool_name": "Read",
                                          "tool_input": {"file_path": str(source)}, "tool_response": {}})
    assert "Token refresh gotcha" in context
    with open(stray, "rb") as handle:
        assert handle.read() == content


def test_frontmatter_nested_past_the_stack_is_a_broken_file_not_a_crash(env: Env) -> None:
    """A value nested thousands deep (read by YAML, or line by line as the bash era wrote) or an
    alias inside its own anchor is one broken file: every other memory and command works, health
    names it, and the file is left as it is."""
    env.ok("write", "Token refresh gotcha", "--type", "gotcha", "--tags", "auth", "--content", "Serialise refreshes.")
    broken = {"gotcha-deep.md": "---\ntype: gotcha\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep.\n",
              "gotcha-deep-lenient.md": "---\ntype: gotcha\ntitle: Fix: it\nx: " + "[" * 5000 + "]" * 5000
                                        + "\n---\nDeep.\n",
              "gotcha-cycle.md": "---\ntype: gotcha\ntags: &t [*t]\n---\nA cycle.\n"}
    for name, text in broken.items():
        env.write_broken(env.project_dir / name, text)
    for command in (("reindex",), ("list",), ("search", "refreshes"), ("stats",), ("export",)):
        assert "Traceback" not in env.ok(*command).err, command
    assert "gotcha-token-refresh" in env.ok("list").out
    health = env.run("health")
    assert health.code == 1 and "Traceback" not in health.err
    for name in broken:
        assert name in health.out, name
        assert (env.project_dir / name).read_text() == broken[name]


def test_a_lone_surrogate_escape_in_frontmatter_reads_as_utf8_can_hold_it(env: Env) -> None:
    """A bash-era file (`title: Fix: ...` that YAML refuses, read line by line) whose JSON list
    escapes half an emoji: the memory is listed, found, checked and updated (U+FFFD for the half)
    instead of crashing every command on the catalog's UTF-8."""
    env.ok("write", "Token refresh gotcha", "--type", "gotcha", "--tags", "auth", "--content", "Serialise refreshes.")
    path = env.write_broken(env.project_dir / "gotcha-half-emoji.md",
                            '---\ntype: gotcha\ntitle: Fix: quote the colon\ntags: ["auth", "half-\\ud83d"]\n---\n\n'
                            'Colons in titles.\n')
    for command in (("reindex",), ("list",), ("health",), ("stats",), ("export",)):
        assert "Traceback" not in env.run(*command).err, command
    assert "gotcha-half-emoji" in env.ok("list").out
    assert "gotcha-half-emoji" in env.ok("search", "colons").out
    assert "half-\ufffd" in env.ok("read", "gotcha-half-emoji", "--json").json()["tags"]
    env.ok("update", "gotcha-half-emoji", "--append", "More.")
    assert "More." in path.read_text() and "Colons in titles." in path.read_text()


def test_a_locale_without_utf8_still_reads_and_writes_memories_in_utf8(env: Env) -> None:
    """In the C locale with Python's UTF-8 mode turned off, arguments, file names and output are
    still UTF-8 (memories are); an output encoding set to ASCII gets escapes, not a traceback."""
    ascii_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    env.ok("write", "Café notes", "--tags", "x", "--content", "A naïve cache ✓.", env=ascii_locale)
    assert "A naïve cache ✓." in (env.project_dir / "learning-cafe-notes.md").read_text(encoding="utf-8")
    assert "learning-cafe-notes" in env.ok("search", "café", env=ascii_locale).out
    assert "A naïve cache ✓." in env.ok("read", "learning-cafe-notes", env=ascii_locale).out
    for command in (("read", "learning-cafe-notes"), ("search", "naïve"), ("list",)):
        printed = env.ok(*command, env={"PYTHONIOENCODING": "ascii"})
        assert "Traceback" not in printed.err and printed.out.isascii(), command
    assert "A na\\xefve cache \\u2713." in env.ok("read", "learning-cafe-notes", env={"PYTHONIOENCODING": "ascii"}).out


def test_a_memory_directory_whose_path_is_not_utf8_is_not_used(env: Env) -> None:
    """Its catalog, journal and JSON files name the directory in UTF-8: the scope is left out with
    a warning (an error line when a command needs it) and the other scopes work as before."""
    env.ok("write", "Token refresh gotcha", "--type", "gotcha", "--tags", "auth", "--content", "Serialise refreshes.")
    home = os.fsdecode(os.path.join(os.fsencode(env.root), b"home-\xff"))
    os.makedirs(home)
    listed = env.ok("list", env={"HOME": home})
    assert "gotcha-token-refresh" in listed.out
    assert "skipping global scope: the global memory directory" in listed.err and "home-\\xff" in listed.err
    refused = env.fails("write", "Personal note", "--scope", "global", "--tags", "x", env={"HOME": home})
    assert "is not UTF-8 text" in refused.err and "Traceback" not in refused.err
    assert os.listdir(home) == []


@pytest.mark.parametrize("name", ["index.json", "graph.json", "tasks/1.json", ".embedding-cache/x.json", "config.json"])
def test_a_json_file_nested_past_the_stack_is_a_broken_file_not_a_crash(env: Env, name: str) -> None:
    """json raises RecursionError, not ValueError, for such a file: every reader took it for a crash.
    A derived file is treated as broken (commands work on), config.json gets one error line."""
    env.ok("write", "Token refresh gotcha", "--type", "gotcha", "--tags", "auth", "--content", "Serialise refreshes.")
    env.write_broken(env.project_dir / name, "[" * 5000 + "]" * 5000)
    for command in (("list",), ("search", "refreshes"), ("health",), ("task", "list"), ("export",), ("repair",)):
        result = env.run(*command)
        assert "Traceback" not in result.err, (command, result.err)
        assert result.code == 0 or result.err.startswith("error: "), command
        if command[0] in ("list", "search"):
            if name == "config.json":
                assert result.code == 1 and result.err.startswith(f"error: invalid config {env.project_dir / name}")
            else:
                assert "gotcha-token-refresh" in result.out, command


def test_a_config_number_too_long_to_read_is_one_error_line(env: Env) -> None:
    env.write_broken(env.project_dir / "config.json", '{"search": {"limit": 1' + "0" * 5000 + "}}")
    refused = env.fails("list")
    assert refused.err.startswith("error: invalid config") and "Traceback" not in refused.err


def test_an_argument_that_is_not_utf8_gets_one_error_line_and_changes_nothing(env: Env) -> None:
    env.ok("write", "Something", "--tags", "x")
    before = snapshot(env.project_dir)
    for args in (("write", "Bad bytes", "--tags", "x", "--content", "abc \udcff def"), ("write", "Bad \udcff title"),
                 ("search", "\udcff"), ("update", "learning-something", "--append", "\udcff")):
        refused = env.fails(*args)
        assert "is not UTF-8 text: " in refused.err and "\\xff" in refused.err, refused.err
    assert snapshot(env.project_dir) == before


def _on_a_terminal(env: Env, *args: str) -> bytes:
    """What `memory ARGS` shows when its stdout is a terminal (a pseudo-terminal here)."""
    import pty

    controller, terminal = pty.openpty()
    proc = subprocess.Popen([str(REPO / "bin" / "memory"), *args], stdout=terminal, stderr=subprocess.DEVNULL,
                            cwd=env.project, env=env.environ())
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # (EIO: the command ended and closed its side)
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert proc.wait(timeout=60) == 0
    return shown


def test_control_characters_of_a_pulled_memory_never_reach_a_terminal(env: Env) -> None:
    """A memory written by hand or another tool (pulled from a teammate) can hold escape sequences,
    a bell or a right-to-left override: on a terminal they show as escapes; piped, output is exact."""
    text = ('---\ntype: learning\ntitle: "Evil \\e]0;pwned\\a title \\u202e gnp.exe"\ntags:\n  - evil\n'
            'created: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n---\n\n'
            "# Evil\n\nA body with \x1b[31mred\x1b[0m evil text.\n")
    env.project_dir.mkdir(parents=True, exist_ok=True)
    (env.project_dir / "learning-evil.md").write_text(text)
    for args in (("list",), ("search", "evil"), ("read", "learning-evil"), ("health",)):
        shown = _on_a_terminal(env, *args)
        assert b"evil" in shown.lower(), (args, shown)
        for acting in (b"\x1b", b"\x07", "\u202e".encode()):
            assert acting not in shown, (args, acting, shown)
    assert "\\x1b]0;pwned\\x07" in _on_a_terminal(env, "list").decode()
    assert env.ok("read", "learning-evil").out.encode().count(b"\x1b") == 2  # piped: the file as it is


def test_a_memory_file_that_cannot_be_read_is_named_as_broken_not_missing(env: Env) -> None:
    # the catalog has no memory for it, but "no memory 'x'" (while `write --slug x` says it
    # exists) would send the user looking elsewhere
    env.ok("write", "Neighbour", "--type", "learning", "--tags", "x")
    broken = env.write_broken(env.project_dir / "learning-broken.md", "not a memory at all\n")
    for args in (("update", "learning-broken", "--append", "x"), ("delete", "learning-broken"),
                 ("link", "learning-broken", "learning-neighbour"), ("link", "learning-neighbour", "learning-broken"),
                 ("rename", "learning-broken", "learning-fixed"), ("quality", "learning-broken"),
                 ("read", "learning-broken")):
        refused = env.fails(*args)
        assert f"memory file {broken} is broken: no YAML frontmatter" in refused.err, (args, refused.err)
    assert broken.read_text() == "not a memory at all\n"


def test_very_long_names_give_one_error_line(env: Env) -> None:
    name = "a" * 300
    for args in (("read", name), ("write", "T", "--slug", name, "--tags", "x"), ("file", "read", f".claude/memory/{name}.md"),
                 ("file", "write", f".claude/memory/{name}.md", "--content", "x"), ("delete", name),
                 ("write", "T", "--file", str(env.root / f"{name}.md"))):
        result = env.fails(*args)
        assert result.err.count("\n") <= 2 and "Traceback" not in result.err, (args, result.err)


def test_a_huge_source_file_is_not_read_by_the_summary_capture(env: Env) -> None:
    from _lib.session import capture
    from _lib.workspace.scopes import Workspace

    huge = env.project / "src" / "bundle.js"
    huge.parent.mkdir()
    with open(huge, "wb") as handle:
        handle.truncate(capture.MAX_SOURCE_BYTES * 4)  # sparse: no disk used
    opened: list[str] = []
    real_open = open

    def spy(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    import builtins

    builtins.open = spy
    try:
        assert capture.refresh_file_summary(Workspace(env.project, env.environ()), str(huge)) is None
    finally:
        builtins.open = real_open
    assert str(huge) not in opened


def test_a_refused_command_leaves_no_scaffolding(env: Env) -> None:
    before = sorted(path.name for path in env.project.iterdir())
    env.fails("write", "Linked", "--tags", "x", "--links", "learning-missing")
    env.fails("write", "Superseding", "--tags", "x", "--supersedes", "learning-missing")
    env.fails("task", "add", "--title", "Orphan", "--parent", "9")
    env.fails("config", "quality.bogus", "3", "--scope", "project")
    env.fails("file", "write", ".claude/memory/learning-by-hand.md", "--content", "not a memory")
    assert sorted(path.name for path in env.project.iterdir()) == before, "nothing created for a refused command"


def test_an_append_to_a_crlf_file_keeps_crlf(env: Env) -> None:
    env.ok("write", "Windows note", "--tags", "x", "--content", "first line")
    path = env.project_dir / "learning-windows-note.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    env.ok("update", "learning-windows-note", "--append", "second\nthird")
    data = path.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"third" in data
    env.unchecked.add(path)


def test_a_config_json_linked_out_of_its_scope_is_not_read(env: Env) -> None:
    outside = env.root / "outside-config.json"
    outside.write_text('{"quality": {"minQualityScore": 99}}')
    env.project_dir.mkdir(parents=True)
    os.symlink(outside, env.project_dir / "config.json")
    env.unchecked.add(env.project_dir / "config.json")
    shown = env.ok("config", "quality.minQualityScore").out
    assert "99" not in shown
    assert outside.read_text() == '{"quality": {"minQualityScore": 99}}'
