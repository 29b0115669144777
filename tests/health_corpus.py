"""A generated memory store with a known, planted set of problems (SC-004).

`build()` writes a clean corpus (every memory linked to a hub and a peer, good quality, no
duplicates, quoted timestamps, valid embedding caches), plants one or more instances of every
problem kind `memory health` knows, runs `reindex` (a callback) to export index.json and
graph.json, then tampers with those exports and makes the post-index changes. It returns the
problems health must report, each with whether `memory repair` may fix it.

A problem's key is (kind, scope, slug or file name, target or field or "").
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Callable

from _lib.base import clock
from _lib.model import memory

Key = tuple[str, str, str, str]
MODEL = "embeddinggemma"
INVERSE = {"part-of": "contains", "contains": "part-of", "implements": "implemented-by",
           "implemented-by": "implements", "builds-on": "foundation-for", "foundation-for": "builds-on"}
TYPES = ("decision", "learning", "gotcha", "artifact", "breadcrumb")


def problem_key(problem: dict[str, Any]) -> Key:
    """The identity of a problem in health's JSON output."""
    who = problem["slug"] or Path(problem["path"]).name
    return (problem["kind"], problem["scope"], who, problem["target"] or problem["field"] or "")


class Spec:
    """One memory file to write."""

    def __init__(self, slug: str, type_: str, title: str, tags: list[str], body: str, days_old: int) -> None:
        self.slug, self.type, self.title, self.tags, self.body = slug, type_, title, tags, body
        moment = clock.to_iso(clock.now() - _days(days_old))
        self.created = self.updated = f'"{moment}"'
        self.links: dict[str, str | None] = {}  # target -> explicit label (None: unlabelled)
        self.extra_links: list[str] = []         # appended to `links` as is (duplicates, broken targets)
        self.extra: list[str] = []               # raw frontmatter lines
        self.tag_text: str | None = None         # raw `tags` value replacing the list
        self.omit: set[str] = set()

    def text(self) -> str:
        lines = ["---", f"type: {self.type}"]
        if self.tag_text is not None:
            lines.append(f"tags: {self.tag_text}")
        else:
            lines += ["tags:"] + [f"  - {tag}" for tag in self.tags]
        for key in ("created", "updated"):
            if key not in self.omit:
                lines.append(f"{key}: {getattr(self, key)}")
        targets = list(self.links) + self.extra_links
        if targets:
            lines += ["links:"] + [f"  - {target}" for target in targets]
        labelled = {target: label for target, label in self.links.items() if label}
        if labelled:
            lines += ["link-labels:"] + [f"  {target}: {label}" for target, label in labelled.items()]
        lines += self.extra + ["---", "", f"# {self.title}", "", self.body, ""]
        return "\n".join(lines)


def _days(count: int) -> Any:
    import datetime

    return datetime.timedelta(days=count, hours=1)


class Words:
    """Random words from a large vocabulary, so no two generated memories look alike."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        letters = "bcdfghjklmnpqrstvwxz"
        vowels = "aeiou"
        found: set[str] = set()
        while len(found) < 20000:
            found.add("".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4))))
        self.vocabulary = sorted(found)

    def some(self, count: int) -> list[str]:
        return self.rng.sample(self.vocabulary, count)

    def sentence(self, count: int) -> str:
        return " ".join(self.some(count))


def body_for(type_: str, words: Words) -> str:
    """A body that earns full completeness marks for its type, with 60+ distinct random words."""
    s = words.sentence
    if type_ == "decision":
        return (f"## Context\n\n{s(20)}.\n\n## Rationale\n\nWe chose it because {s(20)}.\n\n"
                f"## Trade-offs\n\n- {s(8)}\n- the alternatives {s(8)}")
    if type_ == "gotcha":
        return (f"## Trigger\n\nWhen {s(20)} it fails.\n\n## Fix\n\nThe workaround: {s(20)}.\n\n- {s(8)}\n- {s(8)}")
    if type_ == "learning":
        return (f"## Insight\n\nIt works this way because {s(24)}.\n\n## Example\n\nFor example `{s(2)}` "
                f"{s(20)}.\n\n- {s(8)}")
    if type_ == "artifact":
        return (f"## Snippet\n\n```\n{s(10)}\n```\n\n## Usage\n\nRun it to {s(24)}.\n\n- {s(10)} {s(8)}")
    if type_ == "breadcrumb":
        return (f"## Where\n\nSee `src/{words.some(1)[0]}/{words.some(1)[0]}.py` for {s(24)}.\n\n"
                f"## Why\n\n{s(20)}.\n\n- {s(8)}")
    return (f"## Overview\n\nThis hub gathers {s(24)}.\n\n## Members\n\n- {s(10)}\n- {s(10)}\n- {s(10)}")


class Builder:
    def __init__(self, project: Path, global_dir: Path, seed: int) -> None:
        self.project, self.global_dir = project, global_dir
        self.rng = random.Random(seed)
        self.words = Words(self.rng)
        self.specs: dict[str, dict[str, Spec]] = {"project": {}, "global": {}}
        self.expected: dict[Key, bool] = {}
        self.broken: set[Path] = set()
        self.counter = 0

    # -- making memories ----------------------------------------------------------------------

    def new(self, scope: str, type_: str, name: str | None = None, days_old: int | None = None,
            tags: list[str] | None = None) -> Spec:
        self.counter += 1
        title_words = self.words.some(self.rng.randint(4, 6))
        title = " ".join(title_words).capitalize()
        slug = f"{type_}-{name or '-'.join(title_words[:3])}-{self.counter}"
        spec = Spec(slug, type_, title, tags or sorted(self.rng.sample(TAG_POOL, 2)), body_for(type_, self.words),
                    self.rng.randint(1, 20) if days_old is None else days_old)
        self.specs[scope][slug] = spec
        return spec

    def link(self, scope: str, a: Spec, b: Spec, label: str | None = None) -> None:
        """A link declared in both files (the inverse label on b's side)."""
        a.links[b.slug] = label
        b.links[a.slug] = INVERSE.get(label) if label else None

    def member(self, scope: str, hub: Spec, item: Spec) -> None:
        self.link(scope, item, hub, "part-of")

    def expect(self, kind: str, who: str, target: str = "", *, fixable: bool, scope: str = "project") -> None:
        self.expected[(kind, scope, who, target)] = fixable

    def write_all(self) -> None:
        for scope, directory in (("project", self.project), ("global", self.global_dir)):
            directory.mkdir(parents=True, exist_ok=True)
            for slug, spec in self.specs[scope].items():
                (directory / f"{slug}.md").write_text(spec.text(), encoding="utf-8")

    def cache(self, scope_dir: Path, slug: str, *, model: str = MODEL, content_hash: str | None = None,
              raw: str | None = None) -> Path:
        path = scope_dir / ".embedding-cache" / f"{slug}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is None:
            if content_hash is None:
                content_hash = memory.read_file(scope_dir / f"{slug}.md", "project").content_hash()
            raw = json.dumps({"slug": slug, "model": model, "vector": [self.rng.uniform(-1, 1) for _ in range(8)],
                              "contentHash": content_hash, "timestamp": clock.now_iso()})
        path.write_text(raw, encoding="utf-8")
        return path


TAG_POOL = ["auth", "api", "cache", "db", "ci", "deploy", "testing", "logging", "perf", "security", "ui", "build"]


def build(project: Path, global_dir: Path, count: int, reindex: Callable[[], Any], *, seed: int = 11) -> "Corpus":
    """Write the corpus (about `count` memories in the project scope), plant every problem, reindex, tamper."""
    b = Builder(project, global_dir, seed)
    P = "project"

    # -- the clean base: hubs of ~40 members, peers linked in pairs ------------------------------
    hubs = [b.new(P, "hub", tags=[tag]) for tag in TAG_POOL for _ in range(max(1, count // 600))]
    base: list[Spec] = []
    for index in range(count - len(hubs) - 60):
        item = b.new(P, TYPES[index % len(TYPES)])
        hub = hubs[index % len(hubs)]
        item.tags = sorted({hub.tags[0], b.rng.choice(TAG_POOL)})
        b.member(P, hub, item)
        if index % 2:
            b.link(P, base[-1], item)
        base.append(item)
    pool = iter(base[100:])  # peers for the planted memories; base[:100] is tampered with below

    def fresh(type_: str = "learning", name: str | None = None, days_old: int | None = None) -> Spec:
        """A clean memory linked to a hub and a peer, to plant a problem in."""
        item = b.new(P, type_, name, days_old)
        b.member(P, hubs[b.counter % len(hubs)], item)
        b.link(P, item, next(pool))
        return item

    global_hub = b.new("global", "hub", tags=["auth"])
    global_thing = b.new("global", "learning", "global-thing")
    b.member("global", global_hub, global_thing)
    for _ in range(4):
        b.member("global", global_hub, b.new("global", "gotcha"))

    # -- organisation -----------------------------------------------------------------------------
    orphan = b.new(P, "learning", "orphan")
    b.link(P, orphan, next(pool))
    b.expect("orphan", orphan.slug, fixable=False)
    isolated = b.new(P, "learning", "isolated", days_old=60)
    b.expect("orphan", isolated.slug, fixable=False)
    b.expect("isolated", isolated.slug, fixable=False)
    empty_hub = b.new(P, "hub", "empty")
    b.expect("empty-hub", empty_hub.slug, fixable=False)
    low = fresh("learning", "low")
    low.title, low.tags, low.body = "Misc", ["misc"], "tbd"
    b.expect("low-quality", low.slug, fixable=False)
    dup_a, dup_b = fresh("learning", "dup-a"), fresh("learning", "dup-b")
    dup_b.title, dup_b.body = dup_a.title, dup_a.body
    b.expect("exact-duplicate", max(dup_a.slug, dup_b.slug), min(dup_a.slug, dup_b.slug), fixable=False)
    near_a, near_b = fresh("learning", "near-a"), fresh("learning", "near-b")
    near_b.title = near_a.title + " again"
    near_b.body = near_a.body.replace("because", "because indeed", 1)
    b.expect("near-duplicate", min(near_a.slug, near_b.slug), max(near_a.slug, near_b.slug), fixable=False)

    # -- links ------------------------------------------------------------------------------------
    broken = fresh("decision", "broken")
    broken.extra_links.append("learning-never-existed")
    b.expect("broken-link", broken.slug, "learning-never-existed", fixable=True)
    renamed = fresh("decision", "renamed")
    renamed.extra.append("previous-slugs:\n  - decision-old-name")
    pointing = fresh("learning", "pointing")
    pointing.extra_links.append("decision-old-name")
    b.expect("broken-link", pointing.slug, "decision-old-name", fixable=True)
    wiki = fresh("learning", "wiki")
    wiki.body += "\n\nSee [[gotcha-missing-thing]] too."
    b.expect("broken-reference", wiki.slug, "gotcha-missing-thing", fixable=False)
    wiki_renamed = fresh("learning", "wiki-new")
    wiki_renamed.extra.append("previous-slugs: [learning-old-wiki]")
    wiki_old = fresh("learning", "wiki-old")
    wiki_old.body += "\n\nFollows [[learning-old-wiki|the old note]]."
    b.expect("broken-reference", wiki_old.slug, "learning-old-wiki", fixable=True)
    cross = fresh("learning", "cross")
    cross.extra_links.append(global_thing.slug)
    b.expect("cross-scope-link", cross.slug, global_thing.slug, fixable=False)
    one_sided, other_side = fresh("learning", "one-sided"), next(pool)
    one_sided.links[other_side.slug] = "builds-on"
    b.expect("missing-inverse-link", other_side.slug, one_sided.slug, fixable=True)
    asym_a, asym_b = fresh("decision", "asym-a"), fresh("learning", "asym-b")
    asym_a.links[asym_b.slug], asym_b.links[asym_a.slug] = "implements", "part-of"
    b.expect("asymmetric-labels", min(asym_a.slug, asym_b.slug), max(asym_a.slug, asym_b.slug), fixable=True)
    selfish = fresh("learning", "selfish")
    selfish.extra_links.append(selfish.slug)
    b.expect("self-link", selfish.slug, selfish.slug, fixable=True)
    repeated = fresh("learning", "repeated")
    repeated.extra_links.append(next(iter(repeated.links)))
    b.expect("duplicate-link", repeated.slug, next(iter(repeated.links)), fixable=True)

    # -- frontmatter ------------------------------------------------------------------------------
    cased = fresh("learning", "cased")
    cased.tag_text = "[Auth, API_Design]"
    b.expect("invalid-frontmatter", cased.slug, "tags[0]", fixable=True)
    b.expect("invalid-frontmatter", cased.slug, "tags[1]", fixable=True)
    no_updated = fresh("learning", "no-updated")
    no_updated.omit.add("updated")
    b.expect("invalid-frontmatter", no_updated.slug, "updated", fixable=True)
    bad_created = fresh("learning", "bad-created")
    bad_created.created = '"next tuesday"'
    b.expect("invalid-frontmatter", bad_created.slug, "created", fixable=False)
    backwards = fresh("learning", "backwards")
    backwards.updated = '"2020-01-01T00:00:00Z"'
    b.expect("invalid-frontmatter", backwards.slug, "updated", fixable=False)
    bad_status = fresh("learning", "bad-status")
    bad_status.extra.append('status: "Active!"')
    b.expect("invalid-frontmatter", bad_status.slug, "status", fixable=False)
    too_long = fresh("learning", "too-long")
    too_long.body += "\n\n" + "padding " * 6300  # over the 50,000-character content limit
    b.expect("invalid-memory", too_long.slug, "content", fixable=False)
    unquoted = fresh("learning", "unquoted")
    unquoted.created = unquoted.updated = unquoted.created.strip('"')
    b.expect("timestamp-format", unquoted.slug, "created", fixable=True)
    b.expect("timestamp-format", unquoted.slug, "updated", fixable=True)

    twice = fresh("learning", "twice")  # as a union merge of two clones' changes leaves it
    twice.extra.append(f"links:\n  - {next(iter(twice.links))}")
    b.expect("repeated-field", twice.slug, "links", fixable=True)
    leaky = fresh("learning", "leaky")  # written by hand, so never redacted
    leaky.body += "\n\nThe deploy used ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 back then."
    b.expect("secret", leaky.slug, fixable=False)

    code = project.parent.parent / "src" / "corpus"  # the repository the project scope belongs to
    code.mkdir(parents=True, exist_ok=True)
    (code / "pool.py").write_text("def acquire():\n    return None\n", encoding="utf-8")
    drifted = fresh("gotcha", "drifted")  # anchored to a file whose content differs since
    drifted.extra.append("anchors:\n  - src/corpus/pool.py 000000000000 -")
    b.expect("drifted-memory", drifted.slug, "src/corpus/pool.py", fixable=False)
    obsolete = fresh("gotcha", "obsolete")  # anchored to a symbol no longer in its file
    obsolete.extra.append('anchors:\n  - "src/corpus/pool.py#release 000000000000 -"')
    b.expect("obsolete-memory", obsolete.slug, "src/corpus/pool.py#release", fixable=False)

    stale, wrong_model, bad_json, bad_shape = (fresh("learning", name) for name in
                                               ("stale", "wrong-model", "bad-json", "bad-shape"))
    b.write_all()

    def broken_file(name: str, data: bytes) -> None:
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        b.broken.add(path)
        b.expect("unreadable-file", Path(name).name, fixable=False)

    broken_file("learning-no-frontmatter.md", b"# Just a heading\n\nNo frontmatter here.\n")
    broken_file("learning-bad-yaml.md", b"---\ntype: learning\ntags: [a, b\n---\n\n# Bad YAML\n")
    broken_file("learning-latin1.md", "---\ntype: learning\n---\n\n# Caf\xe9\n".encode("latin-1"))
    odd_type = project / "learning-odd-type.md"  # a type no tool knows: readable, with a warning
    odd_type.write_bytes(b'---\ntype: recipe\ntags: [x]\ncreated: "2026-01-01T00:00:00Z"\n'
                         b'updated: "2026-01-01T00:00:00Z"\n---\n\n# A recipe\n')
    b.broken.add(odd_type)
    b.expect("unknown-type", "learning-odd-type", "type", fixable=False)
    b.expect("isolated", "learning-odd-type", fixable=False)
    b.expect("low-quality", "learning-odd-type", fixable=False)
    bash_era = project / "learning-bash-era.md"  # invalid YAML the earlier plugin wrote: read line by line
    bash_era.write_bytes(b'---\ntype: learning\ntitle: Fix: quote the colon\ntags: [x]\n'
                         b'created: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T00:00:00Z"\n---\n\n'
                         b'Colons in an unquoted title are how the bash-era writer left them.\n')
    b.broken.add(bash_era)
    b.expect("lenient-frontmatter", "learning-bash-era", "frontmatter", fixable=False)
    b.expect("orphan", "learning-bash-era", fixable=False)
    b.expect("isolated", "learning-bash-era", fixable=False)
    b.expect("low-quality", "learning-bash-era", fixable=False)
    broken_file("nodes/learning/dup.md", f"---\nid: {base[3].slug}\ntype: learning\ntags: [x]\n---\n\n# Dup\n"
                .encode())
    for spec in (cased, no_updated, bad_created, backwards, bad_status):
        b.broken.add(project / f"{spec.slug}.md")

    # -- embedding caches (before the index, so hasEmbedding is right) ----------------------------
    for item in base[::4]:
        b.cache(project, item.slug)
    b.cache(project, stale.slug, content_hash="0" * 64)
    b.expect("cache-stale", stale.slug, f"{stale.slug}.json", fixable=True)
    b.cache(project, wrong_model.slug, model="text-embedding-3-small")
    b.expect("cache-wrong-model", wrong_model.slug, f"{wrong_model.slug}.json", fixable=True)
    b.broken.add(b.cache(project, bad_json.slug, raw="{not json"))
    b.expect("cache-invalid", bad_json.slug, f"{bad_json.slug}.json", fixable=True)
    b.broken.add(b.cache(project, bad_shape.slug, raw=json.dumps({"slug": bad_shape.slug, "model": MODEL})))
    b.expect("cache-invalid", bad_shape.slug, f"{bad_shape.slug}.json", fixable=True)
    b.cache(project, "learning-deleted-long-ago", content_hash="1" * 64)
    b.expect("cache-orphaned", "learning-deleted-long-ago.json", "learning-deleted-long-ago.json", fixable=True)

    reindex()

    # -- after the index: tamper with the exports, change files behind the catalog's back ---------
    index_path = project / "index.json"
    index = json.loads(index_path.read_text())
    missing, outdated = base[20].slug, base[21].slug
    del index["memories"][missing]
    index["memories"][outdated]["title"] = "An old title"
    phantom = dict(index["memories"][base[22].slug], slug="learning-phantom", title="Phantom")
    index["memories"]["learning-phantom"] = phantom
    index_path.write_text(json.dumps(index))
    for slug in (missing, outdated, "learning-phantom"):
        b.expect("index-drift", slug, fixable=True)

    behind = base[23]  # same size, same mtime, same inode: the catalog cannot notice
    path = project / f"{behind.slug}.md"
    before = path.stat()
    text = path.read_text()
    heading = f"# {behind.title}"
    swapped = behind.title[1] + behind.title[0] + behind.title[2:]
    path.write_text(text.replace(heading, f"# {swapped}"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    b.expect("index-drift", behind.slug, fixable=True)
    late = base[25]
    b.cache(project, late.slug)  # written after the index: hasEmbedding is out of step
    b.expect("index-drift", late.slug, fixable=True)

    graph_path = project / "graph.json"
    graph = json.loads(graph_path.read_text())
    p, q = base[30], base[31]  # peers (unlabelled, relates-to)
    assert any(edge["target"] == q.slug for edge in graph[p.slug])
    graph[q.slug] = [edge for edge in graph[q.slug] if edge["target"] != p.slug]
    b.expect("graph-missing-inverse", q.slug, p.slug, fixable=True)
    stamp = clock.now_iso()
    graph[base[32].slug].append({"target": base[32].slug, "label": "relates-to", "timestamp": stamp})
    b.expect("graph-self-edge", base[32].slug, base[32].slug, fixable=True)
    graph[base[33].slug].append(dict(graph[base[33].slug][0]))
    b.expect("graph-duplicate-edge", base[33].slug, graph[base[33].slug][0]["target"], fixable=True)
    graph[base[34].slug].append({"target": "learning-ghost-edge", "label": "relates-to", "timestamp": stamp})
    b.expect("graph-broken-edge", base[34].slug, "learning-ghost-edge", fixable=True)
    graph[base[35].slug].append({"target": global_thing.slug, "label": "relates-to", "timestamp": stamp})
    b.expect("graph-cross-scope-edge", base[35].slug, global_thing.slug, fixable=True)
    member, its_hub = base[36], next(target for target, label in base[36].links.items() if label == "part-of")
    for edge in graph[its_hub]:
        if edge["target"] == member.slug:
            edge["label"] = "relates-to"
    b.expect("graph-label-mismatch", min(member.slug, its_hub), max(member.slug, its_hub), fixable=True)
    u, v = base[40], base[47]
    assert v.slug not in u.links
    graph[u.slug].append({"target": v.slug, "label": "builds-on", "timestamp": stamp})
    graph[v.slug].append({"target": u.slug, "label": "foundation-for", "timestamp": stamp})
    b.expect("graph-unbacked-edge", min(u.slug, v.slug), max(u.slug, v.slug), fixable=True)
    graph_path.write_text(json.dumps(graph))

    g1, g2 = base[50], base[57]  # linked in the files after graph.json was written
    assert g2.slug not in g1.links
    b.link(P, g1, g2)
    for spec in (g1, g2):
        (project / f"{spec.slug}.md").write_text(spec.text(), encoding="utf-8")
    b.expect("graph-drift", min(g1.slug, g2.slug), max(g1.slug, g2.slug), fixable=True)
    plant_task_problems(b, project, global_dir)
    return Corpus(b.expected, b.broken, sum(len(specs) for specs in b.specs.values()) + 2)  # + the odd type and the bash-era file


def plant_task_problems(b: Builder, project: Path, global_dir: Path) -> None:
    """A child its parent does not list (what a killed add left before the journal), an
    unreadable task file, and a task-index.json written by the tools then edited by hand."""
    from _lib.tasks import taskstore as tasks
    from _lib.workspace.scopes import Workspace

    tasks_dir = project / "tasks"
    tasks_dir.mkdir()
    for task_id, parent in (("1", None), ("1.1", "1")):
        entity = {"id": task_id, "type": tasks.type_of(task_id), "title": f"Task {task_id}", "status": "pending",
                  "parent": parent, "children": [], "dependencies": []}
        (tasks_dir / f"{task_id}.json").write_text(json.dumps(entity), encoding="utf-8")
    b.expect("task-structure", "1.1.json", fixable=True)
    (tasks_dir / "2.json").write_text("{not json", encoding="utf-8")
    b.broken.add(tasks_dir / "2.json")
    b.expect("task-invalid", "2.json", fixable=False)
    tasks.TaskStore(Workspace(project.parent.parent, {"HOME": str(global_dir.parent.parent)})).rebuild()
    index_path = project / tasks.INDEX_NAME
    index = json.loads(index_path.read_text())
    index["tasks"][0]["status"] = "done"
    index_path.write_text(json.dumps(index), encoding="utf-8")
    b.expect("task-index-drift", tasks.INDEX_NAME, fixable=True)


class Corpus:
    """What was planted: every expected problem key and whether repair may fix it."""

    def __init__(self, expected: dict[Key, bool], broken: set[Path], memories: int) -> None:
        self.expected, self.broken, self.memories = expected, broken, memories

    @property
    def unfixable(self) -> set[Key]:
        return {key for key, fixable in self.expected.items() if not fixable}
