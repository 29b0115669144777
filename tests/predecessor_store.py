"""Stores in the earlier plugin's on-disk format, for tests and benchmarks.

Follows /work/shared/reference/predecessor-store.md (read from that plugin's source and a real
store): memories in permanent/, temporary/ and archive/ with `id` and `title` fields written by
js-yaml (single-quoted timestamps, free-form tags), think documents, its index.json (an array)
and graph.json (`nodes`/`edges`, `label` or the bash era's `relation`), embeddings.json,
thought.json, graph.md and the settings files beside the store. Every variation the reference
lists occurs at least once in a store of 60 memories or more; the generator is deterministic
for a seed.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

TYPES = ("decision", "learning", "artifact", "gotcha", "breadcrumb", "hub")
SEVERITIES = ("low", "medium", "high", "critical")
COMMON_LABELS = ["relates-to"] * 12 + ["documents", "auto-linked-by-similarity", "part-of", "related-to", "extends",
                                       "implements", "supersedes", "resolves"]
ODD_TAGS = ["v1.1.0", "node.js", "node_modules", "UX", "Bun", "v2.0.0-beta.1", "ci_cd"]
WORDS = ("auth token session cache latency schema migration hook plugin graph index embedding ollama bun "
         "typescript test vitest mock retry timeout deploy release config scope enterprise gotcha parser "
         "yaml frontmatter wiki link search semantic keyword health repair orphan hub curator").split()
SENTENCES = [
    "The hook reads the session state before every tool call.",
    "Bun's test runner hoists mocks differently from vitest.",
    "Ollama must be running with the embedding model pulled.",
    "Graph edges are stored once and read as undirected.",
    "Timestamps are written with milliseconds by the TypeScript port.",
    "The bash era kept the category in the tags instead of the type.",
    "A retry with exponential backoff avoids hammering the server.",
    "Config is merged from global then project settings.",
]


@dataclass
class Store:
    """What was written: ids with their file, edges as graph.json holds them, every file's bytes."""

    root: Path
    memories: dict[str, str] = field(default_factory=dict)       # id -> path relative to root
    types: dict[str, str] = field(default_factory=dict)          # id -> type as read (bash-era mapped)
    archived: set[str] = field(default_factory=set)
    think: set[str] = field(default_factory=set)                 # think documents
    hubs: set[str] = field(default_factory=set)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (source, target, label), file order
    dangling: list[tuple[str, str, str]] = field(default_factory=list)  # edges naming a missing id

    def snapshot(self) -> dict[str, bytes]:
        """Every file of the store (the plugin's own .cache excluded) with its bytes."""
        return {str(path.relative_to(self.root)): path.read_bytes() for path in sorted(self.root.rglob("*"))
                if path.is_file() and ".cache" not in path.relative_to(self.root).parts}


def _slug(text: str) -> str:
    text = text.lower().replace(".", "")  # dots dropped: v1.3.0 -> v130
    return "-".join(re.findall(r"[a-z0-9]+", text))


def _yaml_string(value: str) -> str:
    """A string as js-yaml dumps it: plain when safe, else single-quoted."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9 ._/()-]*", value) and value.lower() not in ("yes", "no", "true",
                                                                                      "false", "null", "on", "off"):
        return value
    return "'" + value.replace("'", "''") + "'"


def _timestamp(rng: random.Random, day: int, style: str) -> str | None:
    hour, minute, second, milli = rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(1000)
    base = f"2026-01-{day:02d}"
    if style == "ms":
        return f"{base}T{hour:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"
    if style == "plain":
        return f"{base}T{hour:02d}:{minute:02d}:{second:02d}Z"
    if style == "date":
        return base
    return None


def _bash_era_frontmatter(fields: list[tuple[str, object]]) -> str:
    """As memory.sh wrote it: unquoted values (a title with `: ` is then not valid YAML), JSON lists,
    a multi-line JSON `links`, an `embedding` hash."""
    lines = ["---"]
    for key, value in fields:
        if value is None:
            continue
        if key == "links" and isinstance(value, list):
            lines.append("links: [" + "".join(f"\n  {json.dumps(item)}," for item in value).rstrip(",") + "\n]")
        elif isinstance(value, list):
            lines.append(f"{key}: {json.dumps(value, separators=(',', ':'))}")
        elif isinstance(value, dict):
            continue
        else:
            lines.append(f"{key}: {value}")
    lines.append('embedding: "f631d345357f12369cf4ee7bf24f470b"')
    lines.append("---")
    return "\n".join(lines) + "\n"


def _frontmatter(fields: list[tuple[str, object]]) -> str:
    lines = ["---"]
    for key, value in fields:
        if value is None:
            continue
        if isinstance(value, list):
            if not value:
                lines.append(f"{key}: []")
                continue
            lines.append(f"{key}:")
            lines += [f"  - {_yaml_string(str(item))}" for item in value]
        elif isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {sub}: {_yaml_string(str(item))}" for sub, item in value.items()]
        else:
            lines.append(f"{key}: {_yaml_string(str(value))}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def build(root: Path, *, memories: int = 400, edges: int = 480, seed: int = 2026, flat: bool = False,
          old_index: bool = False, extras: bool = True) -> Store:
    """Write a store of the earlier plugin under `root` (a scope directory).

    `flat`: every memory directly in `root` (the "flattened" store); `old_index`: the oldest
    index.json form (absolute `file` paths, no version)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    store = Store(root)
    folders = {"permanent": root if flat else root / "permanent", "temporary": root if flat else root / "temporary",
               "archive": root if flat else root / "archive"}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    index_entries = []
    nodes = []
    links_of: dict[str, list[str]] = {}
    written: dict[str, tuple[list[tuple[str, object]], str, Path]] = {}
    think_count = max(2, memories // 40)
    for number in range(memories - think_count):
        kind = "hub" if number % 15 == 0 else TYPES[number % 5]
        topic = " ".join(rng.sample(WORDS, 3))
        title = f"{topic.capitalize()} {number}"
        if number % 23 == 5:
            title = f"Release v1.{number % 7}.0 {topic}"  # dots dropped from the id
        declared = kind
        tags = rng.sample(WORDS, 2)
        if number % 11 == 3:  # bash era: the category word and a severity word in the tags
            declared = "permanent"
            tags = [rng.choice(["learning", "tip", "gotcha", "decision"]), rng.choice(SEVERITIES)] + tags
            title = f"Bash era: {title}"  # an unquoted `: ` there is not valid YAML
        elif number % 17 == 4:
            declared, kind = "temporary", "breadcrumb"
        if number % 7 == 2:
            tags.append(ODD_TAGS[(number // 7) % len(ODD_TAGS)])
        ident = f"{kind}-{_slug(title)}"
        if number % 29 == 6:
            ident = f"retro-{_slug(title)}"  # bash-era id without a type prefix
        if number == 13:
            ident = f"learning-{_slug(title)}---follow-up"
        if number == 14:
            ident = ("learning-" + "-".join(["a-very-long-title-about"] + [_slug(title)] * 8))[:128].rstrip("-")
        read_type = kind if declared != "permanent" else {"tip": "learning"}.get(tags[0], tags[0])
        styles = ["ms"] * 6 + ["plain"] * 2 + ["date", None]
        created = _timestamp(rng, 1 + number % 27, styles[number % len(styles)])
        updated = created if created is None or number % 3 else _timestamp(rng, 28, "ms")
        severity = rng.choice(SEVERITIES) if kind in ("gotcha", "learning") and number % 2 else None
        folder = "temporary" if kind == "breadcrumb" else "permanent"
        if number % 19 == 7:
            folder = "archive"
            store.archived.add(ident)
        fields: list[tuple[str, object]] = [
            ("id", ident), ("title", title), ("type", declared), ("scope", "local" if number % 13 == 1 else "project"),
            ("project", "acme-app"), ("created", created), ("updated", updated), ("tags", tags),
            ("severity", severity), ("links", None),
            ("source", "hook:session-end" if number % 5 == 0 else None),
            ("meta", {"confidence": "high", "origin": "curator"} if number % 8 == 0 else None)]
        body = _body(rng, title, number)
        path = folders[folder] / f"{ident}.md"
        written[ident] = (fields, body, path)
        store.memories[ident] = str(path.relative_to(root))
        store.types[ident] = read_type
        if read_type == "hub":
            store.hubs.add(ident)
        nodes.append({"id": ident, "type": declared, "title": title})
        index_entries.append(_index_entry(ident, declared, title, tags, created, updated, path, root, severity,
                                          old_index))
    for number in range(think_count):
        ident = f"thought-202601{10 + number:02d}-1{number % 10}4949{832 + number}"
        if number == 0:
            ident = "think-20260110-101010"  # the older name
        concluded = number % 2 == 1
        topic = f"Should we {rng.choice(['cache', 'retry', 'split', 'index'])} the {rng.choice(WORDS)} layer"
        fields = [("type", "breadcrumb"), ("title", f"Think: {topic}"), ("topic", topic),
                  ("status", "concluded" if concluded else "active"),
                  ("created", _timestamp(rng, 10 + number, "ms")), ("updated", _timestamp(rng, 28, "ms")),
                  ("tags", ["think", "concluded" if concluded else "active"]),
                  ("conclusion", "Yes, with a bounded cache." if concluded else None),
                  ("promotedTo", "decision-bounded-cache" if concluded and number % 4 == 1 else None)]
        stamp = "2026-01-12T10:00:00.000Z"
        body = (f"# {topic}\n\n### {stamp} - Thought\nIt would cut latency.\n\n"
                f"### {stamp} - Counter-argument (by claude)\nInvalidation is hard.\n\n"
                f"### {stamp} - Alternative\nPrecompute at write time.\n")
        if concluded:
            body += f"\n### {stamp} - Conclusion\nYes, with a bounded cache.\n"
        folder = "archive" if concluded and number % 3 == 0 else "temporary"
        path = folders[folder] / f"{ident}.md"
        written[ident] = (fields, body, path)
        store.memories[ident] = str(path.relative_to(root))
        store.types[ident] = "breadcrumb"
        store.think.add(ident)
        if folder == "archive":
            store.archived.add(ident)
    ids = [ident for ident in store.memories if ident not in store.think]
    hubs = sorted(store.hubs)
    graph_edges = []
    pairs: set[tuple[str, str]] = set()
    while len(graph_edges) < edges and len(ids) > 1:
        if hubs and rng.random() < 0.45:  # hub membership: most memories hang off a hub
            hub, member = rng.choice(hubs), rng.choice(ids)
            source, target, label = (hub, member, "contains") if rng.random() < 0.3 else (member, hub, "part-of")
        else:
            source, target = rng.sample(ids, 2)
            label = rng.choice(COMMON_LABELS) if rng.random() < 0.85 else f"inspired-{rng.choice(WORDS)}"
        if source == target or (source, target) in pairs:
            continue
        pairs.add((source, target))
        edge = {"source": source, "target": target}
        edge["relation" if len(graph_edges) % 10 == 9 else "label"] = label  # the bash era wrote `relation`
        graph_edges.append(edge)
        store.edges.append((source, target, label))
        if len(graph_edges) % 4 == 0:  # frontmatter `links`: a partial copy of graph.json
            links_of.setdefault(source, []).append(target)
    for missing in ("learning-deleted-long-ago", "decision-renamed-since"):
        source = ids[len(store.dangling) * 7 % len(ids)]
        graph_edges.append({"source": source, "target": missing, "label": "relates-to"})
        store.dangling.append((source, missing, "relates-to"))
        links_of.setdefault(source, []).append(missing)
    for ident, (fields, body, path) in written.items():
        fields = [(key, links_of.get(ident) if key == "links" else value) for key, value in fields]
        bash_era = dict(fields).get("type") == "permanent"
        path.write_text((_bash_era_frontmatter if bash_era else _frontmatter)(fields) + "\n" + body, encoding="utf-8")
    graph = {"version": 1, "nodes": nodes, "edges": graph_edges}
    (root / "graph.json").write_text(json.dumps(graph, indent=2) + "\n", encoding="utf-8")
    index = ({"memories": index_entries, "lastUpdated": "2026-01-28T09:00:00.000Z"} if old_index else
             {"version": "1.0.0", "lastUpdated": "2026-01-28T09:00:00.000Z", "memories": index_entries})
    (root / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    if extras:
        vectors = {ident: {"embedding": [round(rng.uniform(-0.1, 0.1), 6) for _ in range(16)],
                           "hash": f"{rng.getrandbits(64):016x}", "timestamp": "2026-01-20T10:00:00.000Z"}
                   for ident in ids[:20]}
        (root / "embeddings.json").write_text(json.dumps({"version": 1, "memories": vectors}, indent=2) + "\n")
        (root / "thought.json").write_text(json.dumps({"currentDocumentId": "thought-20260111-114949833",
                                                       "currentScope": "project",
                                                       "lastUpdated": "2026-01-28T09:00:00.000Z"}, indent=2))
        (root / "graph.md").write_text("# Memory graph\n\n```mermaid\ngraph TD\n  a --> b\n```\n")
        settings = root.parent if root.name == "memory" else root
        (settings / "memory.local.md").write_text("---\nollama_host: http://localhost:11434\n"
                                                  "embedding_model: embeddinggemma\ninjection:\n  enabled: true\n---\n")
        (settings / "memory.example.md").write_text("---\nollama_host: http://localhost:11434\n---\n\n# Settings\n")
    for folder in set(folders.values()):
        if folder != root and not any(folder.iterdir()):
            folder.rmdir()
    return store


def _body(rng: random.Random, title: str, number: int) -> str:
    text = " ".join(rng.sample(SENTENCES, 3))
    if number % 4 == 0:
        return f"# {title}\n\n{text}\n"
    if number % 4 == 1:
        return f"## Context\n\n{text}\n\n## Fix\n\nUse `bun test --preload`.\n"
    return f"{text}\n"


def _index_entry(ident: str, declared: str, title: str, tags: list[str], created: str | None, updated: str | None,
                 path: Path, root: Path, severity: str | None, old: bool) -> dict[str, object]:
    entry: dict[str, object] = {"id": ident, "type": declared, "title": title, "tags": tags,
                                "created": created or "", "updated": updated or created or "", "scope": "project"}
    if old:
        entry["file"] = str(path)
    else:
        entry["relativePath"] = str(path.relative_to(root))
    if severity:
        entry["severity"] = severity
    return entry
