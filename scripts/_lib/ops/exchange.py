"""`memory export` / `memory import`: one JSON document holding memories, edges and tasks.

The document (schemas/export.schema.json) keeps every memory file's exact text beside its
parsed fields, every edge with its label and what declares it (a memory file, or a
graph.json of the earlier plugin), and the project's task files. Importing it back into an
empty scope gives the same memories, fields and edges.

Besides such a document, `import` reads two other sources into the same shape: a store
directory (this plugin's, or one the earlier plugin wrote; read only, nothing written there)
and Claude Code's own auto memory (`MEMORY.md` and its topic files).

Merging: a memory whose slug is new is added; one whose slug exists is replaced when the
imported copy is newer (`updated`), else kept; identical copies are left alone, so a second
import of the same document changes nothing. Every imported text is redacted first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..catalog.catalog import Catalog
    from ..workspace.scopes import Workspace

from ..base import clock, errors, fsutil, jsontext, paths, redact, schema
from ..model import frontmatter, graph, memory, predecessor
from ..workspace import layout
from ..catalog.catalog import open_catalog
from ..catalog import queries

FORMAT = "claude-memory-export"
VERSION = 1
AUTO_MEMORY_TYPES = {"user": "learning", "feedback": "learning", "project": "decision", "reference": "artifact"}
AUTO_MEMORY_TAG = "claude-auto-memory"
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024


# -- export -----------------------------------------------------------------------------------

def export(workspace: Workspace, scope: str | None = None) -> dict[str, Any]:
    """The export document of every readable scope (or one)."""
    from ..catalog import readable

    scopes = []
    for target, catalog in readable.catalogs(workspace, scope):
        scopes.append({"scope": target.name, "layout": layout.PREDECESSOR if catalog.predecessor_layout
                       else layout.OURS, "memories": _memories(catalog), "edges": _edges(catalog),
                       "tasks": _tasks(workspace) if target.name == "project" else []})
    return {"format": FORMAT, "version": VERSION, "exportedAt": clock.now_iso(), "scopes": scopes}


def _memories(catalog: Catalog) -> list[dict[str, Any]]:
    found = []
    for entry in catalog.entries():
        try:
            text = entry.path.read_text(encoding="utf-8")
            item = memory.parse(text, entry.path, catalog.scope.name,
                                archived=entry.relpath.startswith(layout.ARCHIVE_DIR + "/"))
        except (OSError, UnicodeDecodeError, errors.Error):
            continue  # changed meanwhile or unreadable: `memory health` reports it
        found.append({"slug": entry.slug, "path": entry.relpath, "type": entry.type, "title": entry.title,
                      "tags": entry.tags, "created": entry.created, "updated": entry.updated,
                      "status": entry.status, "fields": item.fields, "content": item.content, "text": text})
    return found


def _edges(catalog: Catalog) -> list[dict[str, str]]:
    """Every edge as `memory edges` shows it, and which record declares it."""
    declared_by: dict[tuple[str, str, str], str] = {}
    for src, dst, label, origin in queries.declared_links(catalog):
        if origin == graph.ORIGIN_IMPORTED:  # what a graph.json holds must be carried over, even if a file says it too
            declared_by[(src, dst, label)] = "graph"
        else:
            declared_by.setdefault((src, dst, label or graph.DEFAULT_LABEL), "file")
    edges = []
    for slug in queries.linked_slugs(catalog):
        for edge in catalog.edges(slug):
            edges.append({"source": slug, "target": edge.target, "label": edge.label,
                          "declaredBy": declared_by.get((slug, edge.target, edge.label), "derived")})
    return edges


def _tasks(workspace: Workspace) -> list[dict[str, Any]]:
    from ..tasks.taskstore import TaskStore

    try:
        store = TaskStore(workspace)
    except errors.Error:
        return []
    return [entity for _, entity, problem in store.read_files() if problem is None and isinstance(entity, dict)]


# -- reading sources ----------------------------------------------------------------------------

def read_source(workspace: Workspace, source: str | None, *, auto_memory: bool = False) -> dict[str, Any]:
    """The export document held by a file (`-`: stdin), read from a store directory, or converted
    from Claude Code's auto memory (`auto_memory` without `source`: this project's)."""
    if auto_memory and source is None:
        directory = auto_memory_dir(workspace)
        if not directory.is_dir():
            raise errors.NotFound(f"no Claude Code auto memory for this project at {directory}",
                                  "give the directory holding MEMORY.md: memory import --auto-memory DIR")
        return from_auto_memory(directory)
    if source is None:
        raise errors.InvalidInput("nothing to import", "give an export file, a store directory, or --auto-memory")
    if source != "-" and os.path.isdir(source):
        path = Path(source)
        if auto_memory or (path / "MEMORY.md").is_file():
            return from_auto_memory(path)
        return from_directory(path)
    return _load_document(source)


def _load_document(source: str) -> dict[str, Any]:
    import sys

    try:
        if source == "-":
            raw = sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        raise errors.NotFound(f"{source} does not exist", "give the file `memory export --output` wrote") from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read {source}: {exc.strerror}") from None
    try:
        return jsontext.utf8_values(jsontext.loads(raw))  # import_document checks it against the schema
    except (ValueError, UnicodeDecodeError):
        raise errors.InvalidInput(f"{source} is not a JSON document",
                                  "give a file written by `memory export`") from None


def check_document(document: Any, source: str = "the document") -> None:
    """Refuse a document that does not follow schemas/export.schema.json (nothing is imported)."""
    violations = schema.validate(document, schema.load("export"))
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise errors.InvalidInput(f"{source} is not a valid memory export: {first}{more}",
                                  "give a file written by `memory export`; nothing was imported")


def from_directory(root: Path) -> dict[str, Any]:
    """A store directory read as an export document, without writing anything into it."""
    from ..catalog.catalog import scan

    memories, names = [], set()
    for relpath in sorted(scan(root)):
        path = root / relpath
        if os.path.islink(path):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            item = memory.parse(text, path, "import", archived=relpath.startswith(layout.ARCHIVE_DIR + "/"))
        except (OSError, UnicodeDecodeError, errors.Error):
            continue
        if item.slug in names:
            continue
        names.add(item.slug)
        memories.append({"slug": item.slug, "path": relpath, "type": item.type, "title": item.title,
                         "tags": item.tags, "created": item.created or clock.from_epoch(path.stat().st_mtime),
                         "updated": item.updated or item.created or clock.from_epoch(path.stat().st_mtime),
                         "status": item.status, "fields": item.fields, "content": item.content, "text": text})
    edges = []
    try:
        data = json.loads((root / "graph.json").read_bytes())
    except (OSError, ValueError):
        data = None
    if layout.graph_format(data) == layout.FORMAT_PREDECESSOR:
        edges = [{"source": source, "target": target, "label": label, "declaredBy": "graph"}
                 for source, target, label in predecessor.graph_edges(data)]
    return {"format": FORMAT, "version": VERSION, "exportedAt": clock.now_iso(),
            "scopes": [{"scope": "import", "layout": layout.detect(root).name, "memories": memories,
                        "edges": edges, "tasks": []}]}


def auto_memory_dir(workspace: Workspace) -> Path:
    """Where Claude Code keeps this project's auto memory: <config>/projects/<project path, sanitised>/memory."""
    project = re.sub(r"[^A-Za-z0-9-]", "-", str(workspace.project_dir))
    return paths.claude_dir(workspace.env) / "projects" / project / "memory"


def from_auto_memory(directory: Path) -> dict[str, Any]:
    """Claude Code's auto memory as an export document: each topic file (frontmatter `name`,
    `description`, `type`: user, feedback, project or reference) becomes a memory; notes written
    directly in MEMORY.md (not its `- [Title](file.md)` pointers) become one more."""
    memories = []
    taken: set[str] = set()
    for path in sorted(directory.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        stamp = clock.from_epoch(path.stat().st_mtime)
        if path.name == "MEMORY.md":
            notes = "\n".join(line for line in text.splitlines()
                              if not re.match(r"\s*[-*]\s*\[[^\]]*\]\([^)]*\.md\)", line)).strip()
            if notes and notes.strip("# \n") not in ("Memory", "Memory Index"):
                memories.append(_converted("Claude Code auto memory notes", "learning", [AUTO_MEMORY_TAG], notes,
                                           stamp, taken))
            continue
        document = frontmatter.split(text)
        try:
            fields = frontmatter.parse(document.frontmatter) if document.frontmatter is not None else {}
        except errors.Error:
            fields = {}
        kind = str(fields.get("type") or "").strip().lower()
        title = str(fields.get("name") or path.stem.replace("_", " ").replace("-", " ")).strip()[:memory.MAX_TITLE]
        description = str(fields.get("description") or "").strip()
        content = f"{description}\n\n{document.body.strip()}".strip() if description else document.body.strip()
        tags = [AUTO_MEMORY_TAG] + ([kind] if kind in AUTO_MEMORY_TYPES else [])
        memories.append(_converted(title or path.stem, AUTO_MEMORY_TYPES.get(kind, "learning"), tags, content, stamp,
                                   taken))
    return {"format": FORMAT, "version": VERSION, "exportedAt": clock.now_iso(),
            "scopes": [{"scope": "import", "layout": "claude-auto-memory", "memories": memories, "edges": [],
                        "tasks": []}]}


def _converted(title: str, memory_type: str, tags: list[str], content: str, stamp: str,
               taken: set[str]) -> dict[str, Any]:
    slug = memory.unique_slug(memory.base_slug(title, memory_type), taken.__contains__)
    taken.add(slug)
    fields = {"type": memory_type, "tags": tags, "created": stamp, "updated": stamp}
    return {"slug": slug, "path": f"{slug}.md", "type": memory_type, "title": title, "tags": tags,
            "created": stamp, "updated": stamp, "status": "active", "fields": fields, "content": content}


# -- import -------------------------------------------------------------------------------------

class Outcome:
    """What an import did (or, with dry_run, would do) in one scope."""

    def __init__(self, scope: str, dry_run: bool) -> None:
        self.scope, self.dry_run = scope, dry_run
        self.added: list[str] = []
        self.replaced: list[str] = []     # the imported copy was newer
        self.kept: list[str] = []         # ours was newer or as new but different: kept
        self.unchanged: list[str] = []
        self.refused: list[str] = []      # "slug: reason"
        self.edges_added: list[str] = []
        self.tasks_added: list[str] = []
        self.tasks_replaced: list[str] = []

    def as_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "dryRun": self.dry_run, "added": self.added, "replaced": self.replaced,
                "kept": self.kept, "unchanged": self.unchanged, "refused": self.refused,
                "edgesAdded": self.edges_added, "tasksAdded": self.tasks_added,
                "tasksReplaced": self.tasks_replaced}


def import_document(workspace: Workspace, document: dict[str, Any], scope: str | None = None, *,
                    dry_run: bool = False, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Merge a document's memories, edges and tasks into one scope (the default scope if None)."""

    check_document(document)
    target = workspace.scope(scope)
    outcome = Outcome(target.name, dry_run)
    items = [item for part in document["scopes"] for item in part["memories"]]
    edges = [edge for part in document["scopes"] for edge in part["edges"] if edge.get("declaredBy") == "graph"]
    tasks = [task for part in document["scopes"] for task in part.get("tasks", [])]
    if dry_run and not target.exists():
        outcome.added = [item["slug"] for item in items if _check_slug(item, outcome)]
        return outcome
    with open_catalog(workspace, target, create=not dry_run) as catalog:
        assert catalog is not None
        with catalog.locked():
            # Into an empty scope, a store of the earlier plugin keeps its layout: its folders, and
            # its edges in its graph.json, so that nothing in the files has to change.
            layouts = {part.get("layout") for part in document["scopes"]}
            keep_paths = layouts == {layout.PREDECESSOR} and not catalog.slugs()
            seen: set[str] = set()
            writes: list[tuple[Path, str]] = []
            for number, item in enumerate(items, 1):
                slug = _check_slug(item, outcome)
                if slug is None or slug in seen:
                    continue
                seen.add(slug)
                existing = catalog.get(slug)
                if existing is not None:
                    path = existing.path
                elif keep_paths and _kept_path(target.root, item) is not None:
                    path = _kept_path(target.root, item)  # type: ignore[assignment]  # not None: checked
                else:
                    path = _new_path(catalog, item)
                text = _text_of(workspace, item, archived_by_folder=path.parent.name == layout.ARCHIVE_DIR
                                and path.parent.parent == target.root)
                if existing is None:
                    outcome.added.append(slug)
                elif _read_bytes(existing.path) == text.encode("utf-8"):
                    outcome.unchanged.append(slug)
                    continue
                elif (clock.normalise(item.get("updated")) or "") > existing.updated:
                    outcome.replaced.append(slug)
                else:
                    outcome.kept.append(slug)
                    continue
                _check_text(text, path, item)
                writes.append((path, text))
                if progress:
                    progress(number, len(items))
            if not dry_run and writes:
                fsutil.write_many(writes)  # type: ignore[arg-type]  # str is one of its kinds
                catalog.rescan()
            _import_edges(catalog, edges, outcome, dry_run)
            if not dry_run:
                catalog.export()
    if tasks and target.name == "project":
        _import_tasks(workspace, tasks, outcome, dry_run)
    return outcome


def _import_edges(catalog: Catalog, edges: list[dict[str, Any]], outcome: Outcome, dry_run: bool) -> None:
    """Edges only a graph.json declared: into this store's graph.json of the earlier plugin, else
    into the source memory's `links` and `link-labels` (without bumping its `updated`)."""
    from . import links

    in_graph_file = catalog.edges_in_graph_file
    missing: dict[tuple[str, str, str], None] = {}
    for edge in edges:
        key = source, target, label = edge["source"], edge["target"], edge["label"]
        if source != target and key not in missing and catalog.has_slug(source) and catalog.has_slug(target) \
                and not catalog.declares(source, target, label, by_graph_file=in_graph_file):
            missing[key] = None
    outcome.edges_added = [f"{source} -{label}-> {target}" for source, target, label in missing]
    if dry_run or not missing:
        return
    if in_graph_file:
        edits = predecessor.GraphEdits()
        for source, target, label in missing:
            edits.add_edge(source, target, label)
        catalog.patch_graph_file(edits)
        return
    for source, target, label in missing:
        kept = [existing for existing in links.current_labels(catalog, source, target) if existing != graph.DEFAULT_LABEL]
        links.set_link_labels(catalog, source, target, kept + [label], touch=False)


def _kept_path(root: Path, item: dict[str, Any]) -> Path | None:
    """The memory's place in the store it came from, when it is a plain one (a file of the
    scope directory or of one of the earlier plugin's folders)."""
    folder, _, name = str(item.get("path") or "").rpartition("/")
    if name != f"{item['slug']}.md" or folder not in ("", *layout.PREDECESSOR_DIRS):
        return None
    return root / folder / name if folder else root / name


def _check_slug(item: dict[str, Any], outcome: Outcome) -> str | None:
    slug = item.get("slug")
    try:
        memory.check_lookup_slug(slug)  # type: ignore[arg-type]  # it refuses what is not a str
    except errors.InvalidInput as exc:
        outcome.refused.append(f"{slug!r}: {exc.message}")
        return None
    if f"{slug}.md".lower() in ("index.md", "readme.md"):
        outcome.refused.append(f"{slug}: reserved name")
        return None
    return slug


def _new_path(catalog: Catalog, item: dict[str, Any]) -> Path:
    """Where a new memory goes; an archived one into the store's archive/ folder if it has one."""
    from .store import new_memory_path

    path = new_memory_path(catalog, item["slug"], item["type"])
    if item.get("status") == "archived" and layout.ARCHIVE_DIR in layout.memory_subdirs(catalog.scope.root):
        return catalog.scope.root / layout.ARCHIVE_DIR / path.name
    return path


def _text_of(workspace: Workspace, item: dict[str, Any], *, archived_by_folder: bool) -> str:
    """The file text to write: the exported text as it was when it holds no secret, else (or when
    the source gave none) one rendered from the redacted fields and content."""
    text = item.get("text")
    if isinstance(text, str):
        cleaned, found = redact.scrub(text)
        if not found:
            return text if archived_by_folder else _with_status(text, item)
    fields = redact.clean_values(workspace, dict(item.get("fields") or {}))
    fields.setdefault("type", item["type"])
    fields.setdefault("tags", item.get("tags") or [item["type"]])
    fields.setdefault("created", item.get("created") or clock.now_iso())
    fields.setdefault("updated", item.get("updated") or fields["created"])
    fields.pop("title", None)
    head = frontmatter.render(fields, quoted=memory.TIMESTAMP_FIELDS)
    title = redact.clean(workspace, str(item.get("title") or item["slug"]), "title")
    content = redact.clean(workspace, str(item.get("content") or ""))
    text = f"---\n{head}---\n\n# {title}\n\n{content}"
    return text if archived_by_folder else _with_status(text, item)


def _with_status(text: str, item: dict[str, Any]) -> str:
    """An archived memory stays archived where no archive/ folder says so: its `status` field does."""
    if item.get("status") != "archived":
        return text
    document = frontmatter.split(text)
    if document.frontmatter is None or frontmatter.parse(document.frontmatter).get("status") == "archived":
        return text
    return frontmatter.Document(document.prefix, frontmatter.replace_fields(
        document.frontmatter, {"status": "archived"}, newline=document.newline), document.body,
        document.newline).text()


def _check_text(text: str, path: Path, item: dict[str, Any]) -> None:
    """Refuse (before anything is written) a memory that would not read back as itself."""
    try:
        parsed = memory.parse(text, path, "import")
    except errors.Error as exc:
        raise errors.InvalidInput(f"the imported memory {item['slug']} is not a valid memory file: {exc.message}",
                                  "fix it in the export file; nothing was imported") from None
    if parsed.slug != item["slug"] and parsed.slug != path.stem:
        raise errors.InvalidInput(f"the imported memory {item['slug']} declares id {parsed.slug!r}",
                                  "make `id` match the slug in the export file; nothing was imported")


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _import_tasks(workspace: Workspace, tasks: list[dict[str, Any]], outcome: Outcome, dry_run: bool) -> None:
    """Task files: new ids added, an existing id replaced when the imported one is newer; all of
    them in one journalled step of the task store (a killed import completes or leaves none)."""
    from ..tasks import taskstore as task_module

    store = task_module.TaskStore(workspace)
    with contextlib.nullcontext(store) if dry_run else store.mutation():  # a dry run creates nothing
        present = {task_id: store.task(task_id) for task_id in store.entries}
        unreadable = set(store.files.stems()) - set(present)  # files of no task the store knows (broken)
        for task in tasks:
            task_id = task.get("id")
            if not isinstance(task_id, str) or not task_module.ID_RE.match(task_id):
                continue
            if task_id in unreadable:  # a file the plugin did not write: never replaced unread
                outcome.refused.append(f"task {task_id}: tasks/{task_id}.json is there but cannot be read; "
                                       "fix or remove it, then import again")
                continue
            current = present.get(task_id)
            if current is not None and str(task.get("updatedAt") or "") <= str(current.get("updatedAt") or ""):
                continue
            (outcome.tasks_replaced if current is not None else outcome.tasks_added).append(task_id)
            if not dry_run:
                store.put(redact.clean_values(workspace, task, "task"))
