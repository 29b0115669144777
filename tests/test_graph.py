"""US3: labelled bidirectional links, edges, Mermaid graphs, link suggestions, graph.json repair."""

from __future__ import annotations

import json
import random

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import Env, snapshot

EXAMPLE_GRAPH = {
    "decision-oauth2": [
        {"target": "learning-token-refresh", "label": "implements", "timestamp": "2026-01-10T10:00:00Z"},
        {"target": "hub-authentication", "label": "part-of", "timestamp": "2026-01-10T10:05:00Z"}],
    "learning-token-refresh": [
        {"target": "decision-oauth2", "label": "implemented-by", "timestamp": "2026-01-10T10:00:00Z"}],
    "hub-authentication": [
        {"target": "decision-oauth2", "label": "contains", "timestamp": "2026-01-10T10:05:00Z"}],
}


def fields(path) -> dict:
    return yaml.safe_load(path.read_text().split("---\n")[1])


def make(env: Env, *specs: tuple[str, str]) -> None:
    for title, memory_type in specs:
        env.ok("write", title, "--type", memory_type, "--tags", "auth", "--content", f"About {title}.")


def test_us3_1_link_creates_bidirectional_labelled_edge(env: Env) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"))
    result = env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    assert "implements" in result.out and "implemented-by" in result.out
    graph = env.graph(env.project_dir)
    assert [(e["target"], e["label"]) for e in graph["decision-oauth2"]] == [("learning-token-refresh", "implements")]
    assert [(e["target"], e["label"]) for e in graph["learning-token-refresh"]] == [("decision-oauth2", "implemented-by")]
    assert fields(env.project_dir / "decision-oauth2.md")["links"] == ["learning-token-refresh"]
    assert fields(env.project_dir / "learning-token-refresh.md")["links"] == ["decision-oauth2"]
    before = snapshot(env.project_dir)
    again = env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    assert "nothing changed" in again.out
    assert snapshot(env.project_dir) == before


def test_us3_2_edges_lists_neighbours_with_labels(env: Env) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"), ("Authentication", "hub"))
    env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    env.ok("link", "decision-oauth2", "hub-authentication", "--label", "part-of")
    out = env.ok("edges", "decision-oauth2").out
    for text in ("implements", "learning-token-refresh", "part-of", "hub-authentication", "Token refresh"):
        assert text in out
    report = env.ok("edges", "decision-oauth2", "--json").json()
    found = {(edge["direction"], edge["label"], edge["neighbour"]) for edge in report["edges"]}
    assert found == {("outgoing", "implements", "learning-token-refresh"),
                     ("incoming", "implemented-by", "learning-token-refresh"),
                     ("outgoing", "part-of", "hub-authentication"),
                     ("incoming", "contains", "hub-authentication")}
    assert all(edge["scope"] == "project" and edge["type"] for edge in report["edges"])


def test_us3_3_graph_of_hub_is_a_valid_mermaid_diagram(env: Env, mermaid_checker) -> None:
    make(env, ("Auth hub", "hub"), ("OAuth2", "decision"), ("Token refresh", "learning"), ("Cookie gotcha", "gotcha"),
         ("Unrelated", "learning"))
    for slug in ("decision-oauth2", "learning-token-refresh", "gotcha-cookie"):
        env.ok("link", slug, "hub-auth", "--label", "part-of")
    diagram = env.ok("graph", "hub-auth").out
    assert diagram.startswith("flowchart")
    for title in ("Auth hub", "OAuth2", "Token refresh", "Cookie gotcha"):
        assert title in diagram
    assert "Unrelated" not in diagram
    assert diagram.count("contains") == 3
    details = mermaid_checker.check_detailed(diagram, labels=True)
    assert details.ok, details.error
    data = env.ok("graph", "hub-auth", "--format", "json").json()
    assert {node["slug"] for node in data["nodes"]} == {"hub-auth", "decision-oauth2", "learning-token-refresh",
                                                       "gotcha-cookie"}
    dot = env.ok("graph", "hub-auth", "--format", "dot").out
    assert dot.startswith("digraph") and '"hub-auth" -> ' in dot


def test_us3_3_graph_of_hub_named_type_last(env: Env, mermaid_checker) -> None:
    """`memory graph auth-hub` as the spec writes it, for the hub "Auth Hub" (slug hub-auth, Decision 7)."""
    make(env, ("Auth Hub", "hub"), ("OAuth2", "decision"), ("Token refresh", "learning"))
    for slug in ("decision-oauth2", "learning-token-refresh"):
        env.ok("link", slug, "auth-hub", "--label", "part-of")
    assert {(e["target"], e["label"]) for e in env.graph(env.project_dir)["hub-auth"]} == {
        ("decision-oauth2", "contains"), ("learning-token-refresh", "contains")}
    result = env.ok("graph", "auth-hub")
    assert result.out.startswith("flowchart") and "hub-auth" in result.err
    for title in ("Auth Hub", "OAuth2", "Token refresh"):
        assert title in result.out
    details = mermaid_checker.check_detailed(result.out, labels=True)
    assert details.ok, details.error
    data = env.ok("graph", "auth-hub", "--json").json()  # --json like every other command
    assert data["root"] == "hub-auth" and len(data["nodes"]) == 3
    assert {(e["direction"], e["neighbour"]) for e in env.ok("edges", "auth-hub", "--json").json()["edges"]} == {
        (direction, slug) for direction in ("outgoing", "incoming") for slug in ("decision-oauth2",
                                                                               "learning-token-refresh")}
    make(env, ("Auth", "decision"))  # now "auth" could be hub-auth or decision-auth: refused, both named
    assert "decision-auth, hub-auth" in env.fails("graph", "auth").err
    env.ok("write", "Literal", "--type", "hub", "--tags", "auth", "--slug", "auth-hub")
    assert env.ok("graph", "auth-hub", "--json").json()["root"] == "auth-hub"  # an exact slug always wins


HOSTILE_TITLES = ['He said "hi" & left', "[brackets] (parens) {braces}", "pipe | and # hash; C#",
                  "emoji 🎉 and RTL שלום and 中文", "backslash \\n not a newline", "%%{init: {}}%% directive",
                  "style classDef end graph", "<script>alert(1)</script>", "$$x^2$$ and `code`", "\ufb02\xb0 and \xb6\xdf placeholders"]


def test_graph_titles_never_break_the_diagram(env: Env, mermaid_checker) -> None:
    from mermaid_check import normalize_text

    env.ok("write", "Centre", "--type", "hub", "--tags", "t")
    for index, title in enumerate(HOSTILE_TITLES):
        env.ok("write", title, "--tags", "t", "--slug", f"learning-hostile-{index}", "--links", "hub-centre")
    diagram = env.ok("graph", "hub-centre").out
    details = mermaid_checker.check_detailed(diagram, labels=True)
    assert details.ok, details.error
    shown = " ".join(details.labels["nodes"].values()).replace("\u200b", "")  # placeholder pairs get a ZWSP
    for title in HOSTILE_TITLES:
        assert normalize_text(title) in normalize_text(shown), title


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_titles_render(mermaid_checker, titles: list[str]) -> None:
    """Titles from hand-written `title:` fields can hold anything, newlines included."""
    from mermaid_check import normalize_text

    from _lib.ops import diagram
    from _lib.model import graph
    from _lib.catalog.catalog import Entry

    root = Path("/m")
    nodes = [Entry(f"learning-t{index}", "project", root, f"learning-t{index}.md", "learning", title, ["t"], "", "",
                   "active", "[]", "{}") for index, title in enumerate(titles)]
    edges = [graph.Edge(nodes[0].slug, node.slug, "relates-to", "2026-01-01T00:00:00Z") for node in nodes[1:]]
    text = diagram.to_mermaid(diagram.Subgraph(nodes[0].slug, 1, nodes, edges, []), graph.Labels())
    result = mermaid_checker.check_detailed(text, labels=True)
    assert result.ok, (titles, result.error)
    for index, title in enumerate(titles):
        if not title.strip() or not all(char.isprintable() or char in "\r\n" for char in title):
            continue  # controls are escaped; browsers show C1 codes as Windows-1252 characters
        shown = result.labels["nodes"][f"n{index}"].replace("\u200b", "")
        expected = title.strip("\r\n").replace("\r\n", "\n").replace("\r", "\n")  # Mermaid has one kind of line break
        assert normalize_text(expected + "\n" + nodes[index].slug) == normalize_text(shown)


def test_us3_4_delete_removes_edges_both_directions(env: Env) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"), ("Authentication", "hub"))
    env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    env.ok("link", "decision-oauth2", "hub-authentication", "--label", "part-of")
    env.ok("delete", "decision-oauth2")
    graph = env.graph(env.project_dir)
    assert "decision-oauth2" not in json.dumps(graph)
    for slug in ("learning-token-refresh", "hub-authentication"):
        assert "decision-oauth2" not in fields(env.project_dir / f"{slug}.md").get("links", [])
        assert "decision-oauth2" not in json.dumps(fields(env.project_dir / f"{slug}.md").get("link-labels", {}))


def test_us3_5_suggest_links_by_content_similarity(env: Env) -> None:
    env.ok("write", "Refresh token rotation", "--tags", "auth", "--content", "Refresh tokens rotate; reuse is detected.")
    env.ok("write", "Detecting refresh token reuse", "--tags", "security",
           "--content", "Token reuse after rotation revokes the whole refresh token family.")
    env.ok("write", "Database pool sizing", "--tags", "db", "--content", "Twenty connections per worker.")
    result = env.ok("suggest-links", "--json").json()
    pairs = [{item["source"], item["target"]} for item in result["suggestions"]]
    assert {"learning-refresh-token-rotation", "learning-detecting-refresh-token-reuse"} in pairs
    top = result["suggestions"][0]
    assert top["reason"] and top["command"].startswith("memory link ")
    assert all("learning-database-pool-sizing" not in pair for pair in pairs[:1])
    env.ok(*top["command"].split()[1:])  # the printed command is exactly runnable
    after = env.ok("suggest-links", "--json").json()["suggestions"]
    assert {top["source"], top["target"]} not in [{item["source"], item["target"]} for item in after]


def test_suggest_links_uses_cached_embeddings(env: Env) -> None:
    """With embeddings, similar meaning alone proposes a link (no shared tag or word)."""
    import sys
    sys.path.insert(0, str(Path(__file__).parent / "servers"))
    from embedding_stub import AUTH_SYNONYMS, EmbeddingStub

    with EmbeddingStub(synonyms=AUTH_SYNONYMS) as stub:
        env.project_dir.mkdir(parents=True, exist_ok=True)
        (env.project_dir / "config.json").write_text(json.dumps({"embedding": {"endpoint": stub.url}}))
        for title, tag, content in [("Login fails on Safari", "safari", "Users could not login when cookies are blocked."),
                                    ("Rotate SSO credentials", "ops", "Rotate the oauth client credentials monthly."),
                                    ("Postgres vacuum tuning", "db", "Autovacuum thresholds for large tables."),
                                    ("CSS grid layout tips", "css", "Use grid template areas for page layout.")]:
            env.ok("write", title, "--tags", tag, "--content", content)
        result = env.ok("suggest-links", "--json").json()
    assert result["mode"] == "embeddings"
    pairs = {frozenset((item["source"], item["target"])): item for item in result["suggestions"]}
    found = pairs[frozenset(("learning-login-fails-on-safari", "learning-rotate-sso-credentials"))]
    assert "similar meaning" in found["reason"]


def test_link_refusals(env: Env) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"))
    env.ok("write", "Elsewhere", "--scope", "global", "--tags", "x")
    before = snapshot(env.project_dir)
    assert "itself" in env.fails("link", "decision-oauth2", "decision-oauth2").err
    assert "no memory" in env.fails("link", "decision-oauth2", "learning-missing").err
    assert "across scopes" in env.fails("link", "decision-oauth2", "learning-elsewhere").err
    assert "label" in env.fails("link", "decision-oauth2", "learning-token-refresh", "--label", "Not Valid").err
    env.fails("link", "decision-oauth2", "learning-token-refresh", "--label", "x" * 51)
    assert snapshot(env.project_dir) == before


def test_custom_labels_and_inverses(env: Env) -> None:
    make(env, ("A", "decision"), ("B", "decision"), ("C", "decision"))
    env.ok("link", "decision-a", "decision-b", "--label", "blocks", "--inverse", "blocked-by")
    graph = env.graph(env.project_dir)
    assert [(e["target"], e["label"]) for e in graph["decision-a"]] == [("decision-b", "blocks")]
    assert [(e["target"], e["label"]) for e in graph["decision-b"]] == [("decision-a", "blocked-by")]
    env.ok("config", "graph.inverseLabels", '{"mentors": "mentored-by"}', "--scope", "project")
    env.ok("link", "decision-a", "decision-c", "--label", "mentors")
    assert ("decision-a", "mentored-by") in [(e["target"], e["label"]) for e in env.graph(env.project_dir)["decision-c"]]
    env.ok("link", "decision-b", "decision-c", "--label", "cites")  # no inverse known: the label itself
    assert ("decision-b", "cites") in [(e["target"], e["label"]) for e in env.graph(env.project_dir)["decision-c"]]


def test_unlink_removes_both_directions(env: Env) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"))
    env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "builds-on")
    env.ok("unlink", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    graph = env.graph(env.project_dir)
    assert [(e["target"], e["label"]) for e in graph["decision-oauth2"]] == [("learning-token-refresh", "builds-on")]
    assert [(e["target"], e["label"]) for e in graph["learning-token-refresh"]] == [("decision-oauth2", "foundation-for")]
    env.ok("unlink", "decision-oauth2", "learning-token-refresh")
    assert env.graph(env.project_dir) == {}
    assert "links" not in fields(env.project_dir / "decision-oauth2.md") or \
        fields(env.project_dir / "decision-oauth2.md")["links"] == []
    assert "link-labels" not in fields(env.project_dir / "decision-oauth2.md")
    assert "no" in env.fails("unlink", "decision-oauth2", "learning-token-refresh").err


def test_wiki_links_and_related_lists_count_as_links(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    head = '---\ntype: learning\ntags: [x]\ncreated: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n'
    (env.project_dir / "learning-a.md").write_text(head + "---\n\n# A\n\nSee [[learning-b|the B note]] and "
                                                   "[[learning-c#details]].\n")
    (env.project_dir / "learning-b.md").write_text(head + "related: [[learning-c]]\n---\n\n# B\n")
    (env.project_dir / "learning-c.md").write_text(head + "---\n\n# C\n")
    edges = env.ok("edges", "learning-a", "--json").json()["edges"]
    assert {(edge["neighbour"], edge["label"]) for edge in edges} == {("learning-b", "relates-to"),
                                                                     ("learning-c", "relates-to")}
    env.ok("reindex")
    graph = env.graph(env.project_dir)
    assert {e["target"] for e in graph["learning-c"]} == {"learning-a", "learning-b"}


def test_data_model_graph_json_read_as_is(env: Env) -> None:
    env.project_dir.mkdir(parents=True)
    for slug, memory_type, links in [("decision-oauth2", "decision", ["learning-token-refresh", "hub-authentication"]),
                                     ("learning-token-refresh", "learning", []),
                                     ("hub-authentication", "hub", [])]:
        links_text = "links:\n" + "".join(f"  - {link}\n" for link in links) if links else ""
        (env.project_dir / f"{slug}.md").write_text(
            f'---\ntype: {memory_type}\ntags:\n  - auth\ncreated: "2026-01-10T10:00:00Z"\n'
            f'updated: "2026-01-10T10:30:00Z"\n{links_text}---\n\n# {slug}\n')
    (env.project_dir / "graph.json").write_text(json.dumps(EXAMPLE_GRAPH, indent=2))
    report = env.ok("edges", "decision-oauth2", "--json").json()
    assert {(e["direction"], e["label"], e["neighbour"]) for e in report["edges"]} >= {
        ("outgoing", "implements", "learning-token-refresh"), ("outgoing", "part-of", "hub-authentication")}
    graph = env.graph(env.project_dir)
    normalised = {slug: sorted((e["target"], e["label"], e["timestamp"]) for e in edges) for slug, edges in graph.items()}
    expected = {slug: sorted((e["target"], e["label"], e["timestamp"]) for e in edges)
                for slug, edges in EXAMPLE_GRAPH.items()}
    assert normalised == expected


@pytest.mark.parametrize("damage", ["missing", "truncated", "asymmetric", "dangling"])
def test_damaged_graph_json_is_repaired_keeping_labels(env: Env, damage: str) -> None:
    make(env, ("OAuth2", "decision"), ("Token refresh", "learning"))
    env.ok("link", "decision-oauth2", "learning-token-refresh", "--label", "implements")
    path = env.project_dir / "graph.json"
    good = env.graph(env.project_dir)
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_text(path.read_text()[:30])
    elif damage == "asymmetric":
        path.write_text(json.dumps({"decision-oauth2": good["decision-oauth2"]}))
    else:
        path.write_text(json.dumps({**good, "learning-gone": [{"target": "decision-oauth2", "label": "relates-to",
                                                               "timestamp": "2026-01-01T00:00:00Z"}]}))
    env.ok("list")
    assert env.graph(env.project_dir) == good


def test_random_link_sequences_keep_the_graph_consistent(tmp_path) -> None:
    """Property: after any sequence of link/unlink/delete/update/write the invariants hold."""
    import subprocess
    import sys

    from _lib.ops import links as links_mod
    from _lib.ops import store
    from _lib.base.errors import Error
    from _lib.workspace.scopes import Workspace

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    environ = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    rng = random.Random(20261122)
    labels = ["relates-to", "implements", "part-of", "builds-on", "similar-to", "blocks"]
    names = [f"learning-n{i}" for i in range(8)]

    def workspace() -> Workspace:
        return Workspace(project, environ)

    for name in names:
        store.write(workspace(), store.NewMemory(title=name, slug=name, tags=["p"]))
    for step in range(250):
        action = rng.choice(["link", "link", "link", "unlink", "delete", "update", "write"])
        a, b = rng.sample(names, 2)
        try:
            if action == "link":
                links_mod.link(workspace(), a, b, label=rng.choice(labels))
            elif action == "unlink":
                links_mod.unlink(workspace(), a, b, label=rng.choice([None, *labels]))
            elif action == "delete":
                store.delete(workspace(), a)
            elif action == "update":
                store.update(workspace(), a, store.Changes(append=f"step {step}"))
            else:
                store.write(workspace(), store.NewMemory(title=a, slug=a, tags=["p"]))
        except Error:
            pass  # refused operations (missing memory, nothing to unlink) are part of the sequence
        if step % 25 == 24:
            _check_invariants(project / ".claude" / "memory")
    _check_invariants(project / ".claude" / "memory")
    assert sys.modules  # keep linters quiet about the import of sys


def _check_invariants(directory) -> None:
    from _lib.model import graph as graph_mod

    graph = json.loads((directory / "graph.json").read_text())
    existing = {path.stem for path in directory.glob("*.md") if path.name != "index.md"}
    inverse = graph_mod.Labels({"blocks": "blocks"}).inverse
    for source, edges in graph.items():
        assert source in existing
        seen = set()
        for edge in edges:
            assert edge["target"] != source, "self edge"
            assert edge["target"] in existing, "edge to a missing memory"
            key = (edge["target"], edge["label"])
            assert key not in seen, "duplicate edge"
            seen.add(key)
            back = graph.get(edge["target"], [])
            assert any(item["target"] == source and item["label"] == inverse(edge["label"]) for item in back), \
                f"{source} -{edge['label']}-> {edge['target']} has no inverse"
    for slug in existing:
        declared = set(yaml.safe_load((directory / f"{slug}.md").read_text().split("---\n")[1]).get("links") or [])
        neighbours = {edge["target"] for edge in graph.get(slug, [])}
        assert declared == neighbours, f"{slug}: frontmatter links {declared} != graph neighbours {neighbours}"


def test_a_graph_json_is_adopted_alike_read_a_line_at_a_time_whole_or_in_batches(env: Env,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph.json we did not write lends its labels and timestamps and keeps the edges no file
    explains. In the one-line-per-node shape it is read a line at a time and adopted a batch of
    nodes at a time (bounded memory at 100,000 memories): the result must not depend on that."""
    from _lib.catalog import edges
    from _lib.catalog.catalog import open_catalog
    from _lib.workspace.scopes import Workspace

    make(env, *[(f"Note {number}", "learning") for number in range(12)])
    for number in range(11):
        env.ok("link", f"learning-note-{number}", f"learning-note-{number + 1}")
    hand = env.graph(env.project_dir)
    for slug, found in hand.items():
        for edge in found:
            edge["timestamp"] = f"2026-01-0{1 + len(slug) % 9}T00:00:00Z"
            if edge["target"] == "learning-note-3" and slug == "learning-note-2":
                edge["label"] = "builds-on"
    hand["learning-note-0"].append({"target": "learning-note-9", "label": "supersedes",  # no file explains it
                                    "timestamp": "2026-01-01T00:00:00Z"})
    hand["learning-note-9"].append({"target": "learning-note-0", "label": "superseded-by",
                                    "timestamp": "2026-01-01T00:00:00Z"})
    one_per_line = "{\n" + ",\n".join(f"{json.dumps(slug)}: {json.dumps(found)}" for slug, found in hand.items()) + "\n}\n"
    results = []
    for text, batch in [(one_per_line, 1), (one_per_line, 5), (one_per_line, 10**6), (json.dumps(hand, indent=2), 3)]:
        (env.project_dir / "graph.json").write_text(text)
        monkeypatch.setattr(edges, "IMPORT_BATCH", batch)
        workspace = Workspace(env.project, env.environ())
        with open_catalog(workspace, workspace.scope("project"), refresh=False) as catalog:
            catalog.rebuild()
        results.append(env.graph(env.project_dir))
    assert all(result == results[0] for result in results[1:])
    adopted = {(slug, edge["target"]): (edge["label"], edge["timestamp"]) for slug, found in results[0].items()
               for edge in found}
    assert adopted[("learning-note-2", "learning-note-3")][0] == "builds-on"
    assert adopted[("learning-note-0", "learning-note-9")] == ("supersedes", "2026-01-01T00:00:00Z")
    assert adopted[("learning-note-5", "learning-note-6")][1] == hand["learning-note-5"][-1]["timestamp"]
