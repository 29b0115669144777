"""Stores the earlier plugin wrote are adopted in place: found, read, searched, linked, injected and
health-checked where they lie, with nothing lost and nothing rewritten that should not be.

The stores are built by tests/predecessor_store.py in that plugin's on-disk format
(shared/reference/predecessor-store.md), inside real git repositories; commands and hooks run
as processes, the way users and Claude Code run them.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest

import predecessor_store
from helpers import Env

STORE_SIZE = 200
EDGE_COUNT = 260


@pytest.fixture
def adopted(env: Env) -> predecessor_store.Store:
    """A project store of the earlier plugin, committed to git as its users have it."""
    store = predecessor_store.build(env.project_dir, memories=STORE_SIZE, edges=EDGE_COUNT)
    subprocess.run(["git", "-C", str(env.project), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(env.project), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                    "memories of the earlier plugin"], check=True)
    env.unchecked.update(env.project_dir.rglob("*.md"))   # that plugin's frontmatter, not our schema's
    env.unchecked.update(env.project_dir.rglob("*.json"))
    return store


def hook_payloads(env: Env, store: predecessor_store.Store) -> list[tuple[str, dict]]:
    session = str(uuid.uuid4())
    common = {"session_id": session, "cwd": str(env.project), "transcript_path": str(env.root / "t.jsonl")}
    source = env.project / "src" / "auth.ts"
    source.parent.mkdir(exist_ok=True)
    source.write_text("export function login() { return token; }\n")
    return [
        ("start-memory-index", {**common, "hook_event_name": "SessionStart", "source": "startup"}),
        ("maintenance", {**common, "hook_event_name": "SessionStart", "source": "startup"}),
        ("memory-prompt-context", {**common, "hook_event_name": "UserPromptSubmit", "prompt_id": "p",
                                   "prompt": "how do the hook and the session cache work with ollama?"}),
        ("memory-context", {**common, "hook_event_name": "PostToolUse", "tool_name": "Read",
                            "tool_input": {"file_path": str(source)}, "tool_response": {}}),
        ("memory-context-bash", {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                 "tool_input": {"command": "bun test"},
                                 "tool_response": {"stdout": "", "stderr": "timeout in hook"}}),
        ("pre-compact-memory", {**common, "hook_event_name": "PreCompact", "trigger": "auto",
                                "custom_instructions": ""}),
        ("start-memory-index", {**common, "hook_event_name": "SessionStart", "source": "compact"}),
    ]


def listed(env: Env, *args: str) -> dict[str, dict]:
    return {item["slug"]: item for item in env.ok("list", "--json", *args).json()["memories"]}


def graph_edges(env: Env) -> set[tuple[str, str, str]]:
    return {(edge["source"], edge["target"], edge["label"]) for edge in env.ok("graph", "--all", "--json").json()["edges"]}


def labels_of(store: predecessor_store.Store) -> dict[str, str]:
    return {"part-of": "contains", "contains": "part-of", "implements": "implemented-by", "supersedes": "superseded-by"}


def expected_edges(store: predecessor_store.Store, present: set[str]) -> set[tuple[str, str, str]]:
    """Every edge of the earlier plugin's graph.json between existing memories, as written, and
    its inverse where graph.json has no edge of its own the other way."""
    inverse = labels_of(store)
    stored = {(source, target) for source, target, _ in store.edges}
    found = set()
    for source, target, label in store.edges:
        if source in present and target in present:
            found.add((source, target, label))
            if (target, source) not in stored:
                found.add((target, source, inverse.get(label, label)))
    return found


# -- reading in place ---------------------------------------------------------------------------

def test_every_memory_is_found_and_read_where_it_lies(env: Env, adopted: predecessor_store.Store) -> None:
    before = adopted.snapshot()
    memories = listed(env)
    assert set(memories) == set(adopted.memories)
    for slug, relpath in adopted.memories.items():
        assert memories[slug]["filePath"] == str(env.project_dir / relpath)
        assert memories[slug]["status"] == ("archived" if slug in adopted.archived else "active"), slug
        assert memories[slug]["type"] == adopted.types[slug], slug
    odd = [slug for slug in adopted.memories if "---" in slug or slug.startswith("retro-") or len(slug) > 100]
    assert len(odd) >= 3
    for slug in odd + sorted(adopted.think)[:2]:
        shown = env.ok("read", slug, "--json").json()
        assert shown["slug"] == slug and shown["content"]
    think = listed(env, "--tag", "deliberation")
    assert set(think) == adopted.think, "think documents read as deliberations"
    assert set(listed(env, "--status", "archived")) == adopted.archived
    assert set(listed(env, "--tag", "v1.1.0")) and set(listed(env, "--tag", "UX"))  # tags as written
    hits = env.ok("search", "hoists mocks", "--json").json()
    assert hits["count"] > 0
    env.ok("query", "--search", "ollama embedding")
    assert adopted.snapshot() == before, "reading changed the store"


def test_every_edge_keeps_its_endpoints_direction_and_label(env: Env, adopted: predecessor_store.Store) -> None:
    before = adopted.snapshot()
    found = graph_edges(env)
    assert expected_edges(adopted, set(adopted.memories)) <= found
    source, target, label = next(edge for edge in adopted.edges if edge[2] == "part-of")
    shown = env.ok("edges", source, "--json").json()["edges"]
    assert {"direction": "outgoing", "label": "part-of", "neighbour": target}.items() <= next(
        row for row in shown if row["neighbour"] == target and row["direction"] == "outgoing").items()
    back = env.ok("edges", target, "--json").json()["edges"]
    assert any(row["neighbour"] == source and row["label"] == "contains" for row in back)
    relation = [edge for index, edge in enumerate(adopted.edges) if index % 10 == 9][0]  # written as `relation`
    assert relation in found
    assert adopted.snapshot() == before


def test_hooks_leave_the_store_byte_for_byte(env: Env, adopted: predecessor_store.Store) -> None:
    before = adopted.snapshot()
    for name, payload in hook_payloads(env, adopted):
        env.hook(name, payload)
    assert adopted.snapshot() == before
    # a teammate's pull brings a memory file: hooks still rewrite neither index.json nor graph.json
    (env.project_dir / "permanent" / "learning-pulled-from-a-teammate.md").write_text(
        "---\nid: learning-pulled-from-a-teammate\ntitle: Pulled from a teammate\ntype: learning\n"
        "tags:\n  - ollama\n---\n\nOllama needs the embedding model pulled first.\n")
    for name, payload in hook_payloads(env, adopted):
        env.hook(name, payload)
    after = adopted.snapshot()
    for name in ("index.json", "graph.json"):
        assert after[name] == before[name], f"a hook rewrote {name}"
    context = env.hook("memory-prompt-context", {**hook_payloads(env, adopted)[2][1],
                                                      "prompt": "pulled embedding model for ollama"})
    assert "learning-pulled-from-a-teammate" in context


def test_gotchas_of_an_adopted_store_are_injected_by_severity(env: Env, adopted: predecessor_store.Store) -> None:
    permanent = env.project_dir / "permanent"
    for severity in ("low", "critical", "medium"):
        (permanent / f"gotcha-billing-{severity}.md").write_text(
            f"---\nid: gotcha-billing-{severity}\ntitle: Billing pitfall {severity}\ntype: gotcha\nscope: project\n"
            f"created: '2026-01-13T18:49:49.832Z'\ntags:\n  - billing\nseverity: {severity}\n---\n\n"
            f"Invoices round half up ({severity}).\n")
    source = env.project / "src" / "billing" / "invoice.ts"
    source.parent.mkdir(parents=True)
    source.write_text("export const total = 1;\n")
    env.ok("list", "--limit", "1")  # builds the catalog: a hook facing 400 unindexed files answers partially
    session = str(uuid.uuid4())
    context = env.hook("memory-context", {"session_id": session, "cwd": str(env.project),
                                               "hook_event_name": "PostToolUse", "tool_name": "Read",
                                               "tool_input": {"file_path": str(source)}, "tool_response": {}})
    text = json.loads(context)["hookSpecificOutput"]["additionalContext"]
    order = [text.index(f"gotcha-billing-{severity}") for severity in ("critical", "medium", "low")]
    assert order == sorted(order), text


def test_health_reports_only_what_is_broken(env: Env, adopted: predecessor_store.Store) -> None:
    before = adopted.snapshot()
    report = env.run("health", "--json").json()
    errors = {problem["kind"] for problem in report["problems"] if problem["severity"] == "error"}
    assert errors <= {"broken-link"}, errors  # only the links naming deleted memories
    kinds = report["byKind"]
    for unusual in ("invalid-frontmatter", "timestamp-format", "unreadable-file", "missing-inverse-link",
                    "graph-unbacked-edge", "index-drift", "graph-drift", "unknown-type"):
        assert unusual not in kinds, (unusual, kinds)
    hubs = adopted.hubs
    joined = {slug for source, target, _ in adopted.edges for slug, other in ((source, target), (target, source))
              if other in hubs}
    orphans = {problem["slug"] for problem in report["problems"] if problem["kind"] == "orphan"}
    assert not orphans & joined, "memories linked to a hub in graph.json are no orphans"
    assert {problem["target"] for problem in report["problems"] if problem["kind"] == "graph-broken-edge"} == \
        {target for _, target, _ in adopted.dangling}
    assert adopted.snapshot() == before


def test_flattened_store_with_its_graph_has_no_false_errors(env: Env) -> None:
    store = predecessor_store.build(env.project_dir, memories=120, edges=150, flat=True)
    env.unchecked.update(env.project_dir.rglob("*"))
    report = env.run("health", "--json").json()
    assert {problem["kind"] for problem in report["problems"] if problem["severity"] == "error"} <= {"broken-link"}
    assert report["summary"]["memories"] == len(store.memories)
    hub_linked = {slug for source, target, _ in store.edges for slug in (source, target)
                  if store.hubs & {source, target}}
    orphans = {problem["slug"] for problem in report["problems"] if problem["kind"] == "orphan"}
    assert not orphans & hub_linked


# -- writing into an adopted store ---------------------------------------------------------------

def test_writes_keep_the_earlier_plugins_files_valid_and_whole(env: Env, adopted: predecessor_store.Store) -> None:
    graph_before = json.loads((env.project_dir / "graph.json").read_text())
    written = env.ok("write", "Adopted stores keep their format", "--type", "decision", "--tags", "compat",
                     "--content", "New memories go where the store keeps them.", "--json").json()
    slug = written["slug"]
    path = env.project_dir / "permanent" / f"{slug}.md"
    assert written["path"] == str(path)
    head = path.read_text().split("---\n")[1]
    assert f"id: {slug}\n" in head and "title: Adopted stores keep their format\n" in head
    crumb = env.ok("write", "Where we stopped", "--type", "breadcrumb", "--tags", "wip", "--json").json()
    assert crumb["path"] == str(env.project_dir / "temporary" / f"{crumb['slug']}.md")
    index = json.loads((env.project_dir / "index.json").read_text())
    assert index["version"] == "1.0.0" and isinstance(index["memories"], list)
    entry = next(item for item in index["memories"] if item["id"] == slug)
    assert entry["relativePath"] == f"permanent/{slug}.md" and entry["type"] == "decision"
    hub = sorted(adopted.hubs)[0]
    env.ok("link", slug, hub, "--label", "part-of")
    graph = json.loads((env.project_dir / "graph.json").read_text())
    assert {"source": slug, "target": hub, "label": "part-of"} in graph["edges"]
    assert all(edge in graph["edges"] for edge in graph_before["edges"]), "an earlier edge was lost"
    assert {node["id"] for node in graph["nodes"]} >= {node["id"] for node in graph_before["nodes"]} | {slug}
    assert (slug, hub, "part-of") in graph_edges(env) and (hub, slug, "contains") in graph_edges(env)
    env.ok("unlink", slug, hub)
    graph = json.loads((env.project_dir / "graph.json").read_text())
    assert graph["edges"] == graph_before["edges"]
    victim = next(source for source, _, _ in adopted.edges if source not in adopted.archived)
    env.ok("delete", victim)
    graph = json.loads((env.project_dir / "graph.json").read_text())
    assert graph["edges"] == [edge for edge in graph_before["edges"] if victim not in (edge["source"], edge["target"])]
    assert victim not in {node["id"] for node in graph["nodes"]}
    assert victim not in {item["id"] for item in json.loads((env.project_dir / "index.json").read_text())["memories"]}
    for name in ("index.json", "graph.json"):
        assert not (env.project_dir / name).with_suffix(".json.orig").exists()
    assert not list(env.project_dir.glob("*.orig"))
    present = set(listed(env))
    assert expected_edges(adopted, present) <= graph_edges(env)


def test_old_index_format_keeps_its_shape(env: Env) -> None:
    predecessor_store.build(env.project_dir, memories=40, edges=40, old_index=True)
    env.unchecked.update(env.project_dir.rglob("*"))
    slug = env.ok("write", "Old index shape", "--tags", "x", "--json").json()["slug"]
    index = json.loads((env.project_dir / "index.json").read_text())
    assert "version" not in index
    entry = next(item for item in index["memories"] if item["id"] == slug)
    assert entry["file"] == str(env.project_dir / "permanent" / f"{slug}.md") and "relativePath" not in entry


def test_local_scope_of_the_earlier_plugin_is_adopted(env: Env) -> None:
    store = predecessor_store.build(env.local_dir, memories=30, edges=30, extras=False)
    env.unchecked.update(env.local_dir.rglob("*"))
    memories = listed(env, "--scope", "local")
    assert set(memories) == set(store.memories)
    assert expected_edges(store, set(store.memories)) <= {
        (edge["source"], edge["target"], edge["label"])
        for edge in env.ok("graph", "--all", "--scope", "local", "--json").json()["edges"]}


# -- derived files nobody here knows ---------------------------------------------------------------

@pytest.mark.parametrize("content", ['{"layout": "something else", "version": 3}', '{"decision-a": [{"tar'])
def test_a_graph_json_in_an_unknown_format_is_kept_beside_before_it_is_replaced(env: Env, content: str) -> None:
    env.ok("write", "Alpha", "--tags", "a")
    env.ok("write", "Beta", "--tags", "b")
    env.ok("link", "learning-alpha", "learning-beta", "--label", "builds-on")
    path = env.project_dir / "graph.json"
    path.write_text(content)
    env.unchecked.add(path)
    session = {"session_id": str(uuid.uuid4()), "cwd": str(env.project)}
    env.hook("start-memory-index", {**session, "hook_event_name": "SessionStart", "source": "startup"})
    env.hook("memory-prompt-context", {**session, "hook_event_name": "UserPromptSubmit", "prompt": "alpha"})
    assert path.read_text() == content, "a hook replaced a file it did not write"
    result = env.ok("list")
    kept = list(env.project_dir.glob("graph.json.*.orig"))
    assert len(kept) == 1 and kept[0].read_text() == content
    assert kept[0].name in result.err
    assert {"target": "learning-beta", "label": "builds-on"}.items() <= env.graph(env.project_dir)[
        "learning-alpha"][0].items()
    env.ok("list")
    assert len(list(env.project_dir.glob("graph.json.*.orig"))) == 1, "kept once"


def test_changes_to_the_earlier_plugins_files_keep_their_look_line_for_line(
        env: Env, adopted: predecessor_store.Store) -> None:
    """A write, an update and a link splice their entries into index.json and graph.json where a
    whole re-encoding would put them: the files stay exactly as JSON.stringify(data, null, 2) writes
    them (so a diff shows the change only), also when the file is not in that form to begin with."""
    from _lib.model import predecessor

    def as_the_earlier_plugin_writes(name: str) -> bool:
        text = (env.project_dir / name).read_text(encoding="utf-8")
        return predecessor._dump(json.loads(text)) == text

    assert as_the_earlier_plugin_writes("index.json") and as_the_earlier_plugin_writes("graph.json")
    slug = env.ok("write", "Spliced not rewritten", "--tags", "compat", "--json").json()["slug"]
    env.ok("update", slug, "--append", "One more line.")
    env.ok("link", slug, sorted(adopted.hubs)[0], "--label", "part-of")
    assert as_the_earlier_plugin_writes("index.json") and as_the_earlier_plugin_writes("graph.json")
    index = json.loads((env.project_dir / "index.json").read_text())
    assert [item["id"] for item in index["memories"]].count(slug) == 1
    compact = env.project_dir / "index.json"  # another writer's compact form: rewritten whole, still right
    compact.write_text(json.dumps(index), encoding="utf-8")
    other = env.ok("write", "After a compact index", "--tags", "compat", "--json").json()["slug"]
    ids = [item["id"] for item in json.loads(compact.read_text())["memories"]]
    assert ids[:len(index["memories"])] == [item["id"] for item in index["memories"]] and ids[-1] == other
