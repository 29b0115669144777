"""Memory operations across scopes: write, read, update, delete, list, search, reindex.

Each mutation takes the scope's lock, brings the catalog up to date with the files,
changes the files atomically, then records the change in the catalog and rewrites
index.json and graph.json.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt
    from typing import Any, Iterable

    from . import search

from ..base import clock, errors, redact
from ..model import anchors, frontmatter, memory
from ..workspace import layout
from . import links
from . import lookup
from .lookup import check_slug_argument, locate, not_found
from ..catalog import readable, rollback
from ..catalog.queries import DATABASE_ERRORS
from ..catalog.catalog import NOT_MEMORIES, Catalog, Entry, Problem, open_catalog
from ..workspace.scopes import Scope, Workspace

SORT_KEYS = ("updated", "created", "title", "slug", "type", "scope")
RESERVED_FIELDS = ("type", "tags", "created", "updated", "links", memory.LABELS_FIELD, "title")


def _read(path: Path, scope: Scope, slug: str) -> memory.Memory:
    try:
        item = memory.read_file(path, scope.name, root=scope.root)
    except errors.NotFound:
        raise errors.NotFound(f"no memory {slug!r} in {scope.name} scope") from None
    except errors.InvalidInput as exc:
        raise errors.InvalidInput(f"memory file {path} is broken: {exc.message}",
                                  exc.hint or "fix the file, then run `memory health`") from None
    return item


# -- write ----------------------------------------------------------------------------------

class NewMemory:
    """The inputs of `memory write`, before validation."""

    def __init__(self, title: str, type: str | None = None, tags: list[str] | str | None = None, content: str = "",
                 slug: str | None = None, links: list[str] | None = None, created: str | None = None,
                 updated: str | None = None, fields: dict[str, Any] | None = None) -> None:
        self.title, self.type, self.tags, self.content, self.slug = title, type, tags, content, slug
        self.links = links or []
        self.created, self.updated = created, updated
        self.fields = fields or {}  # extra frontmatter (status, supersedes, paths, ...)


def from_document(text: str) -> tuple[dict[str, Any], str, str | None]:
    """Split a markdown document given to `write --file` into (frontmatter fields, content, title)."""
    document = frontmatter.split(text)
    fields = frontmatter.parse(document.frontmatter) if document.frontmatter is not None else {}
    title = fields.pop("title", None)
    body = document.body
    if not isinstance(title, str) or not title.strip():
        heading = memory._HEADING.search(body)
        if heading and not body[: heading.start()].strip():
            title = heading.group(1).strip()
            body = memory._content_after_heading(body)
        else:
            title = None
    return fields, body, title


def validate_new(new: NewMemory) -> NewMemory:
    """Check every field of a new memory; returns it normalised. Raises InvalidInput."""
    title = memory.check_title(new.title)
    memory_type = memory.check_type(new.type or memory.DEFAULT_TYPE)
    tags = memory.parse_tags(new.tags) if new.tags is not None else memory.tags_from_title(title, memory_type)
    if not tags:
        raise errors.InvalidInput("empty tags", "give at least one tag, e.g. --tags auth,api")
    content = memory.check_content(new.content)
    requested = requested_slug(new)
    slug = memory.check_slug(requested) if requested is not None else None
    if slug is not None and f"{slug}.md" in NOT_MEMORIES:
        raise errors.InvalidInput(f"slug {slug!r} is reserved: {slug}.md is not read as a memory",
                                  "choose another --slug, e.g. learning-" + slug)
    now = clock.now_iso()
    created, updated = memory.check_timestamps(new.created or new.updated or now, new.updated or new.created or now)
    if new.created and not new.updated:
        updated = max(updated, created)
    link_targets = [check_slug_argument(target) for target in dict.fromkeys(new.links) if target]
    status = new.fields.get("status")
    if status is not None:
        memory.check_status(status)
    fields = {key: value for key, value in new.fields.items() if key not in RESERVED_FIELDS}
    return NewMemory(title, memory_type, tags, content, slug, link_targets, created, updated, fields)


def requested_slug(new: NewMemory) -> str | None:
    """The slug a new memory asks for: --slug, or the `id` field of a file given to `write --file`.

    A memory is named by its file, so an `id` can only ask for the name the memory is written
    under (refused like --slug when taken) and is kept only as that name: it never lets a new
    memory claim an existing one's slug, links and injection."""
    requested = new.slug.strip() if new.slug is not None else None
    if "id" not in new.fields:
        return requested
    declared = new.fields["id"]
    if not isinstance(declared, str) or not memory.SLUG_RE.fullmatch(declared):
        raise errors.InvalidInput(f"invalid id {declared!r} in the file: a memory's id is its slug",
                                  "remove the `id:` line (the slug then comes from the title) or use a slug like "
                                  "decision-use-oauth2")
    if requested is not None and requested != declared:
        raise errors.InvalidInput(f"the file's `id: {declared}` and --slug {requested} differ",
                                  "remove the `id:` line from the file, or give the same --slug")
    return declared


def render_new(new: NewMemory, *, slug: str | None = None, scope: str | None = None) -> tuple[str, dict[str, Any]]:
    """The file text of a new memory and its frontmatter fields: in the data model's format, or
    with `slug` and `scope`, in the earlier plugin's (the `id` and `title` fields its readers need,
    the title not repeated as a heading)."""
    fields: dict[str, Any] = {"id": slug, "title": new.title} if slug is not None else {}
    fields["type"] = new.type
    if scope is not None:
        fields["scope"] = scope
    fields.update(tags=new.tags, created=new.created, updated=new.updated)
    if new.links:
        fields["links"] = new.links
    fields.update(new.fields)
    head = frontmatter.render(fields, quoted=memory.TIMESTAMP_FIELDS)
    if slug is not None:
        return f"---\n{head}---\n\n{new.content}", fields
    return f"---\n{head}---\n\n# {new.title}\n\n{new.content}", fields


def new_memory_path(catalog: Catalog, slug: str, memory_type: str) -> Path:
    """Where a new memory goes: beside the others, in the folder a store of the earlier plugin
    keeps its kind in (breadcrumbs in temporary/, the rest in permanent/)."""
    root = catalog.scope.root
    if catalog.predecessor_layout:
        folders = layout.memory_subdirs(root)
        for folder in (["temporary"] if memory_type == "breadcrumb" else []) + ["permanent"]:
            if folder in folders:
                return root / folder / f"{slug}.md"
    return root / f"{slug}.md"


def write(workspace: Workspace, new: NewMemory, scope: str | None = None) -> memory.Memory:
    """Create a memory (validated, secrets redacted, slug made unique); links in `new.links` are made in both directions."""
    new = validate_new(_redacted(workspace, new))
    _refuse_secret_names(new.tags, new.slug)  # type: ignore[arg-type]  # validate_new made them a list
    target_scope = workspace.scope(scope)
    if new.links and not target_scope.exists():  # refuse before creating the scope's directory
        links.refuse_missing(workspace, target_scope.name, new.links[0])
    superseded = new.fields.get("supersedes")
    with open_catalog(workspace, target_scope, create=True, refresh=False) as catalog:
        assert catalog is not None
        with catalog.locked(touching=[*new.links, *([str(superseded)] if superseded is not None else [])]), \
                rollback.all_or_nothing(catalog):
            def taken(candidate: str) -> bool:
                return catalog.has_slug(candidate) or (target_scope.root / f"{candidate}.md").exists() \
                    or new_memory_path(catalog, candidate, new.type or memory.DEFAULT_TYPE).exists()

            if new.slug:
                if taken(new.slug):
                    raise errors.Conflict(f"a memory {new.slug!r} already exists in {target_scope.name} scope",
                                          "choose another --slug, or change it with `memory update`")
                slug = new.slug
            else:
                slug = memory.unique_slug(memory.base_slug(new.title, new.type or memory.DEFAULT_TYPE), taken)
            for target in new.links:
                links.require_same_scope(workspace, catalog, target)
            if slug in new.links:
                raise errors.InvalidInput("a memory cannot link to itself", "remove its own slug from --links")
            if superseded is not None:
                links.require_same_scope(workspace, catalog, check_slug_argument(str(superseded)))
            adopted = catalog.predecessor_layout
            path = new_memory_path(catalog, slug, new.type or memory.DEFAULT_TYPE)
            new.fields = with_anchors(workspace, target_scope.name, new.fields, new.content)
            text, fields = render_new(new, slug=slug if adopted else None, scope=target_scope.name if adopted else None)
            rollback.write(path, text)
            created = memory.parse(text, path, target_scope.name, fields=fields)
            catalog.record(created)
            for target in new.links:
                if catalog.edges_in_graph_file:
                    links.record_in_graph_file(catalog, slug, target, links.DEFAULT_LABEL)
                else:
                    links.add_back_link(catalog, target, slug, graph_label=links.DEFAULT_LABEL)
            if superseded is not None:
                created = _supersede(catalog, created, str(superseded))
            catalog.export()
        _embed_after_change(workspace, catalog, slug)
    refresh_entrypoint(workspace, target_scope.name, {created.type, "decision" if superseded else ""})
    return created


def _embed_after_change(workspace: Workspace, catalog: Catalog, slug: str) -> None:
    """Embed a memory just written, outside the lock: a model never holds up writers."""
    from ..vectors import backfill  # only after a write: the capture hooks import this module

    backfill.after_change(workspace, catalog, [slug])


def _redacted(workspace: Workspace, new: NewMemory) -> NewMemory:
    """`new` with secrets out of its title, content and fields (keys holding one are refused),
    before anything is derived from them: tags and the slug come from the title."""
    title = redact.clean(workspace, new.title, "title") if isinstance(new.title, str) else new.title
    content = redact.clean(workspace, new.content) if isinstance(new.content, str) else new.content
    return NewMemory(title, new.type, new.tags, content, new.slug, new.links, new.created, new.updated,
                     redact.clean_values(workspace, new.fields))


def _refuse_secret_names(tags: Iterable[str], slug: str | None = None) -> None:
    """A tag or slug is a name: one holding a secret is refused, as a redaction marker would be an odd name."""
    for tag in tags:
        redact.require_clean(tag, "tag", "tags name topics: remove the credential from --tags")
    if slug:
        redact.require_clean(slug, "slug", "give a --slug without the credential")


def _supersede(catalog: Catalog, newer: memory.Memory, older_slug: str) -> memory.Memory:
    """Mark `older_slug` superseded by `newer` and link them (newer -supersedes-> older)."""
    entry = catalog.get(older_slug)
    assert entry is not None
    older = _read(entry.path, catalog.scope, older_slug)
    _write_existing(catalog, older, {"status": "superseded", "superseded-by": newer.slug}, older.body)
    if catalog.edges_in_graph_file:
        links.record_in_graph_file(catalog, newer.slug, older_slug, "supersedes")
        return _read(catalog.get(newer.slug).path, catalog.scope, newer.slug)  # type: ignore[union-attr]
    links.set_link_labels(catalog, older_slug, newer.slug, ["superseded-by"])
    return links.set_link_labels(catalog, newer.slug, older_slug, ["supersedes"])


def refresh_entrypoint(workspace: Workspace, scope_name: str, types: set[str]) -> None:
    """Regenerate the project's index.md when a change touches what it shows."""
    from . import entrypoint

    if scope_name in ("project", "local") and types & entrypoint.SHOWN_TYPES:
        try:
            entrypoint.refresh(workspace)
        except (errors.Error, OSError) as exc:
            workspace.warn(f"index.md not refreshed: {getattr(exc, 'message', exc)}")


# -- read -----------------------------------------------------------------------------------

def read(workspace: Workspace, slug: str, scope: str | None = None) -> memory.Memory:
    """The memory `slug` from the most specific scope holding it (or the one renamed away from it)."""
    try:
        found_scope, path = locate(workspace, slug, scope)
    except errors.NotFound:
        renamed = _renamed_from(workspace, slug, scope)
        if renamed is None:
            raise
        workspace.warn(f"{slug!r} was renamed to {renamed!r}")
        return read(workspace, renamed, scope)
    return _read_found(workspace, found_scope, path, slug, scope)


def _read_found(workspace: Workspace, found_scope: Scope, path: Path, slug: str, scope: str | None) -> memory.Memory:
    """The memory `slug` from the file `locate` found for it."""
    _repair_index_on_read(workspace, found_scope, path)
    item = _read(path, found_scope, slug)
    if item.slug != slug:  # the flat file's id says otherwise: look it up by id
        with open_catalog(workspace, found_scope) as catalog:
            entry = catalog.get(slug) if catalog else None
        if entry is None:
            raise not_found(workspace, slug, workspace.readable_scopes(scope))
        item = _read(entry.path, found_scope, slug)
    return item


def find(workspace: Workspace, slug: str, scope: str | None = None) -> memory.Memory | None:
    """The memory `slug`, or None when no scope holds it: for callers to whom both are normal
    (capture creates or refreshes), so no close slugs are looked for to suggest."""
    found = lookup.find(workspace, slug, scope)
    if found is None:
        return None
    try:
        return _read_found(workspace, *found, slug, scope)
    except errors.NotFound:
        return None


def _renamed_from(workspace: Workspace, old: str, scope: str | None) -> str | None:
    """The slug of the one memory that lists `old` in its `previous-slugs` (memory rename), if any."""
    from ..catalog import maintenance

    found = set()
    for candidate in workspace.readable_scopes(scope):
        with open_catalog(workspace, candidate, refresh=False) as catalog:
            if catalog is not None:
                found.update(maintenance.renamed_from(catalog, old))
    return found.pop() if len(found) == 1 else None


def _repair_index_on_read(workspace: Workspace, scope: Scope, path: Path) -> None:
    """Bring the scope's catalog, index.json and graph.json up to date when a read finds them
    stale (a hand-added, hand-edited or hand-deleted file, a damaged export): reading a memory repairs its
    index entry. Never stops the read itself."""
    try:
        relpath = path.relative_to(scope.root).as_posix()
    except ValueError:
        return
    with contextlib.suppress(OSError, *DATABASE_ERRORS, errors.Error):
        with open_catalog(workspace, scope, refresh=False) as catalog:
            if catalog is not None:
                catalog.refresh_if_stale(relpath)


# -- update ---------------------------------------------------------------------------------

class Changes:
    """The inputs of `memory update`."""

    def __init__(self, title: str | None = None, content: str | None = None, append: str | None = None,
                 tags: list[str] | str | None = None, add_tags: list[str] | str | None = None,
                 remove_tags: list[str] | str | None = None, type: str | None = None,
                 fields: dict[str, Any] | None = None, reanchor: bool = False) -> None:
        self.title, self.content, self.append, self.type = title, content, append, type
        self.tags, self.add_tags, self.remove_tags = tags, add_tags, remove_tags
        self.fields = fields or {}  # extra frontmatter to set (None removes a field)
        self.reanchor = reanchor  # accept the current code: record every anchor afresh

    def empty(self) -> bool:
        return all(value is None for value in (self.title, self.content, self.append, self.tags, self.add_tags,
                                               self.remove_tags, self.type)) and not self.fields and not self.reanchor


def update(workspace: Workspace, slug: str, changes: Changes, scope: str | None = None) -> memory.Memory:
    """Change a memory's title, content, tags or type; bumps `updated`, keeps `created`."""
    if changes.empty():
        raise errors.InvalidInput("nothing to update",
                                  "give --title, --content, --append, --file, --tags, --add-tags, --remove-tags or --type")
    if changes.content is not None and changes.append is not None:
        raise errors.InvalidInput("--content and --append cannot be combined", "use one of them")
    for name, what in (("title", "title"), ("content", "content"), ("append", "appended text")):
        if getattr(changes, name) is not None:
            setattr(changes, name, redact.clean(workspace, getattr(changes, name), what))
    changes.fields = redact.clean_values(workspace, changes.fields)
    _refuse_secret_names(memory.parse_tags(changes.tags) + memory.parse_tags(changes.add_tags))
    found_scope, _ = locate(workspace, slug, scope)
    with open_catalog(workspace, found_scope, refresh=False) as catalog:
        assert catalog is not None
        with catalog.locked(touching=[slug]), rollback.all_or_nothing(catalog):
            entry = catalog.get(slug)
            if entry is None:
                raise not_found(workspace, slug, [found_scope])
            current = _read(entry.path, found_scope, slug)
            fields, body = _apply_changes(current, changes)
            fields = _reanchored(workspace, found_scope.name, current, fields, body, changes.reanchor)
            links.drop_embedding(catalog, slug)
            rewritten = _write_existing(catalog, current, fields, body)
            catalog.export()
        _embed_after_change(workspace, catalog, slug)
    refresh_entrypoint(workspace, found_scope.name, {current.type, rewritten.type})
    return rewritten


def _apply_changes(current: memory.Memory, changes: Changes) -> tuple[dict[str, Any], str]:
    """(frontmatter changes, new body) for an update."""
    fields: dict[str, Any] = {}
    title = memory.check_title(changes.title) if changes.title is not None else current.title
    if changes.type is not None:
        fields["type"] = memory.check_type(changes.type)
    tags = list(current.tags)
    if changes.tags is not None:
        tags = memory.parse_tags(changes.tags)
    for tag in memory.parse_tags(changes.add_tags) if changes.add_tags else []:
        if tag not in tags:
            tags.append(tag)
    for tag in memory.parse_tags(changes.remove_tags) if changes.remove_tags else []:
        if tag in tags:
            tags.remove(tag)
    if changes.tags is not None or changes.add_tags or changes.remove_tags:
        if not tags:
            raise errors.InvalidInput("a memory needs at least one tag", "keep one tag, or add another with --add-tags")
        if tags != current.tags:
            fields["tags"] = tags
    status = changes.fields.get("status")
    if status is not None:
        memory.check_status(status)
    for key, value in changes.fields.items():
        if key in RESERVED_FIELDS:
            raise errors.InvalidInput(f"field {key!r} cannot be set this way", "use the matching option")
        fields[key] = frontmatter.DELETE if value is None else value
    content = current.content
    if changes.content is not None:
        content = memory.check_content(changes.content)
    elif changes.append is not None:
        base = current.content.rstrip("\r\n")
        content = memory.check_content(f"{base}\n\n{changes.append}" if base else changes.append)
    body = current.body
    if current.title_in_field:
        if title != current.title:
            fields["title"] = title
        if content != current.content:
            body = content
    elif title != current.title or content != current.content:
        body = _body_with(current.body, title, content)
    if current.document.newline == "\r\n" and body != current.body:  # a CRLF file stays CRLF throughout
        body = body.replace("\r\n", "\n").replace("\n", "\r\n")
    return fields, body


def with_anchors(workspace: Workspace, scope_name: str, fields: dict[str, Any], content: str,
                 keep: Iterable[anchors.Anchor] = ()) -> dict[str, Any]:
    """`fields` with the memory's code anchors recorded (see model/anchors.py) as the last field;
    without them when it names no project file. Only project and local memories are anchored."""
    fields = {key: value for key, value in fields.items() if key != anchors.FIELD}
    if scope_name in ("project", "local") and not workspace.project_is_global:
        lines = anchors.record(workspace.project_dir, fields, content, keep=keep)
        if lines:
            fields[anchors.FIELD] = lines
    return fields


def _reanchored(workspace: Workspace, scope_name: str, current: memory.Memory, changes: dict[str, Any], body: str,
                reanchor: bool) -> dict[str, Any]:
    """The frontmatter changes of an update with the anchors brought up to date: anchors the
    memory had keep their recorded ids unless `reanchor` (accepting the code as it is now)."""
    merged = {key: value for key, value in {**current.fields, **changes}.items() if value is not frontmatter.DELETE}
    kept = [] if reanchor else anchors.parse(current.fields.get(anchors.FIELD))
    recorded = with_anchors(workspace, scope_name, merged, body, kept).get(anchors.FIELD)
    if recorded and recorded != current.fields.get(anchors.FIELD):
        return {**changes, anchors.FIELD: recorded}
    if not recorded and anchors.FIELD in current.fields:
        return {**changes, anchors.FIELD: frontmatter.DELETE}
    return changes


def _body_with(body: str, title: str, content: str) -> str:
    """Replace the title heading and the content of a body, keeping anything before the heading."""
    heading = memory._HEADING.search(body)
    if heading and not body[: heading.start()].strip():
        return f"{body[: heading.start()]}# {title}\n\n{content}"
    return f"\n# {title}\n\n{content}"


def _write_existing(catalog: Catalog, current: memory.Memory, fields: dict[str, Any], body: str) -> memory.Memory:
    """Rewrite a memory file with changed fields and body, bumping `updated`."""
    now = clock.now_iso()
    if current.created and (clock.parse(current.created) or clock.now()) > clock.now():
        now = current.created  # never let updated fall before a (skewed) created
    return rollback.rewrite(catalog, current, {**fields, "updated": now}, body=body)


# -- delete ---------------------------------------------------------------------------------

class Deletion:
    """What `memory delete` removed."""

    def __init__(self, slug: str, scope: str, path: Path, unlinked: list[str]) -> None:
        self.slug, self.scope, self.path = slug, scope, path
        self.unlinked = unlinked  # memories whose `links` no longer name the deleted one


def delete(workspace: Workspace, slug: str, scope: str | None = None) -> Deletion:
    """Remove a memory, its index entry, every edge to or from it, and its embedding cache."""
    found_scope, _ = locate(workspace, slug, scope)
    with open_catalog(workspace, found_scope, refresh=False) as catalog:
        assert catalog is not None
        # the memories linking to it are re-read from their files when their links are rewritten
        with catalog.locked(touching=[slug]), rollback.all_or_nothing(catalog):
            entry = catalog.get(slug)
            if entry is None:
                raise not_found(workspace, slug, [found_scope])
            try:
                unlinked = links.remove_all_links_to(catalog, slug)
            except errors.NoSpace as exc:  # deleting is how a full disk gets room: do it, say what is left
                unlinked = []
                workspace.warn(f"{exc.message}: the links other memories have to {slug} stay until "
                               "`memory repair` runs with room to spare")
            rollback.remove(entry.path)
            catalog.forget(slug)
            links.drop_embedding(catalog, slug)
            catalog.export()
    refresh_entrypoint(workspace, found_scope.name, {entry.type})
    return Deletion(slug, found_scope.name, entry.path, unlinked)


# -- list and search ------------------------------------------------------------------------

class Filters:
    """Filters shared by list, search and semantic."""

    def __init__(self, types: list[str] | None = None, tag: str | None = None, scope: str | None = None,
                 since: _dt.datetime | None = None, status: str | None = None) -> None:
        self.types, self.tag, self.scope, self.since, self.status = types, tag, scope, since, status

    def accepts(self, entry: Entry) -> bool:
        if self.types and entry.type not in self.types:
            return False
        if self.tag and self.tag not in entry.tags:
            return False
        if self.status and entry.status != self.status:
            return False
        if self.since:
            moment = clock.parse(entry.updated) or clock.parse(entry.created)
            if moment is None or moment < self.since:
                return False
        return True


def check_filters(filters: Filters, workspace: Workspace | None = None) -> Filters:
    """Refuse filters that cannot match. A tag may be written as another tool wrote it (`v1.1.0`,
    `UX`); a type must be one of ours, or one a memory of a readable scope actually has."""
    for memory_type in filters.types or []:
        if memory_type not in memory.TYPES and memory_type not in memory.LEGACY_TYPES \
                and not (workspace is not None and _type_in_use(workspace, memory_type, filters.scope)):
            memory.check_type(memory_type)  # raises with the list of types
    if filters.tag is not None and not memory.LOOKUP_RE.fullmatch(filters.tag):
        memory.check_tag(filters.tag)
    if filters.status is not None:
        memory.check_status(filters.status)
    return filters


def _type_in_use(workspace: Workspace, memory_type: str, scope: str | None) -> bool:
    return any(catalog.has_type(memory_type) for _, catalog in readable.catalogs(workspace, scope, refresh=False))


def visible_entries(workspace: Workspace, filters: Filters, *, order: str = "slug", descending: bool = False,
                    limit: int | None = None) -> list[Entry]:
    """Memories of every readable scope (or one), each tagged with its scope.

    A slug held by two scopes is listed once per scope; `read` resolves it to the
    most specific one (enterprise, local, project, global).
    """
    found: list[Entry] = []
    since = clock.to_iso(filters.since) if filters.since else None
    for _, catalog in readable.catalogs(workspace, filters.scope, report=True):
        found += catalog.entries(types=filters.types, tag=filters.tag, status=filters.status, since=since,
                                 order=order, descending=descending, limit=limit)
    return found


def list_memories(workspace: Workspace, filters: Filters, *, sort: str = "updated",
                  limit: int | None = None) -> list[Entry]:
    """Memories matching `filters`, newest first by default."""
    check_filters(filters, workspace)
    if sort not in SORT_KEYS:
        raise errors.InvalidInput(f"unknown sort key {sort!r}", "use one of: " + ", ".join(SORT_KEYS))
    descending = sort in ("updated", "created")
    order = "slug" if sort == "scope" else sort
    entries = visible_entries(workspace, filters, order=order, descending=descending, limit=limit)
    entries.sort(key=lambda entry: (getattr(entry, sort).lower() if sort == "title" else getattr(entry, sort),
                                    entry.slug, entry.scope), reverse=descending)
    return entries[:limit] if limit is not None else entries


def search_memories(workspace: Workspace, query: str, filters: Filters, *, limit: int = 10) -> list[search.Hit]:
    """Keyword search (BM25) over title, tags and body of every readable scope."""
    from . import search
    check_filters(filters, workspace)
    if not query.strip():
        raise errors.InvalidInput("empty search query", 'give some words to look for, e.g. memory search "oauth token"')
    hits: list[search.Hit] = []
    for _, catalog in readable.catalogs(workspace, filters.scope, report=True):
        kept = 0
        filtered = filters.types or filters.tag or filters.since or filters.status
        for slug, score in search.rank(catalog, query, limit=None if filtered else limit):
            entry = catalog.get(slug)
            if entry is None or not filters.accepts(entry):
                continue
            hits.append(search.Hit(entry, score))
            kept += 1
            if kept >= limit:
                break
    ranked = sorted(hits, key=lambda hit: -hit.score)[:limit]
    for hit in ranked:
        with contextlib.suppress(OSError, UnicodeDecodeError, errors.Error):
            body = frontmatter.split(hit.entry.path.read_text(encoding="utf-8")).body
            hit.snippet = search.snippet(memory.content_of(body), query)
    return ranked


# -- reindex --------------------------------------------------------------------------------

class Reindexed:
    """What `memory reindex` found in one scope."""

    def __init__(self, scope: str, memories: int, problems: list[Problem]) -> None:
        self.scope, self.memories, self.problems = scope, memories, problems


def reindex(workspace: Workspace, scope: str | None = None) -> list[Reindexed]:
    """Rebuild the catalog, index.json and graph.json of each scope from its files."""
    results = []
    for target, catalog in readable.catalogs(workspace, scope, refresh=False):
        catalog.rebuild()
        results.append(Reindexed(target.name, len(catalog.slugs()), catalog.problems()))
    return results
