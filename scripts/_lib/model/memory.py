"""The Memory entity: parsing a file, validation rules, slugs and tags."""

from __future__ import annotations

import os
import re
from pathlib import Path

TYPE_CHECKING = False  # typing costs milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

    from . import frontmatter

from ..base import clock, digests, errors
from ..base.text import LazyPattern, decode
from ..workspace.layout import ARCHIVE_DIR

CANONICAL_TYPES = ("decision", "learning", "artifact", "gotcha", "breadcrumb", "hub")
GRAPH_TYPES = ("file-summary", "discovery", "session", "task", "error")  # memory-graph node kinds
TYPES = CANONICAL_TYPES + GRAPH_TYPES
DEFAULT_TYPE = "learning"
STATUSES = ("active", "archived", "superseded")
SEVERITIES = ("low", "medium", "high", "critical")
# The bash-era memory.sh wrote `type: permanent|temporary` and put the category word in the tags.
LEGACY_TYPES = {"permanent": DEFAULT_TYPE, "temporary": "breadcrumb"}
_CATEGORY_TAGS = {**{name: name for name in CANONICAL_TYPES}, "tip": "learning", "lesson": "learning",
                  "pitfall": "gotcha", "warning": "gotcha", "adr": "decision", "reference": "artifact",
                  "snippet": "artifact", "template": "artifact"}
DELIBERATION_TAG = "deliberation"
_THINK_FILE = LazyPattern(r"^(thought|think)-\d{8}-\d{6,9}$")

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SLUG_RE = LazyPattern(SLUG_PATTERN)
MAX_SLUG = 120
MAX_TITLE = 200
MAX_BODY = 50_000
MAX_TAG = 50
TIMESTAMP_FIELDS = ("created", "updated")
LABELS_FIELD = "link-labels"  # per-link labels, so graph.json can be rebuilt from the files alone

_HEADING = LazyPattern(r"^#[ \t]+(.+?)[ \t]*\r?$", re.M)
_WORD = LazyPattern(r"[a-z0-9]+")
_TITLE_STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to was were "
    "will with use uses used using we our not no do does how why what when".split())


class Memory:
    """One memory as read from disk."""

    def __init__(self, *, slug: str, scope: str, path: Path, type: str, title: str, tags: list[str], created: str,
                 updated: str, links: list[str], content: str, body: str, fields: dict[str, Any],
                 document: frontmatter.Document, title_in_field: bool = False, archived: bool = False,
                 lenient: str | None = None) -> None:
        self.slug, self.scope, self.path, self.type, self.title = slug, scope, path, type, title
        self.tags, self.created, self.updated, self.links = tags, created, updated, links
        self.content = content            # the body without its title heading
        self.body = body                  # everything after the frontmatter
        self.fields = fields              # the parsed frontmatter, unknown keys included
        self.document = document
        self.title_in_field = title_in_field  # the title came from a `title:` field, not a heading
        self.archived = archived          # it lies in an archive/ folder
        self.lenient = lenient            # why YAML refused the frontmatter (then read line by line)

    def __repr__(self) -> str:
        return f"Memory({self.scope}:{self.slug})"

    @property
    def status(self) -> str:
        """active, archived or superseded: an archive/ folder means archived whatever the file says;
        a deliberation's `concluded` (the earlier plugin's think documents) is active knowledge."""
        if self.archived:
            return "archived"
        value = self.fields.get("status")
        return value if isinstance(value, str) and value in STATUSES else "active"

    @property
    def severity(self) -> str | None:
        """low, medium, high or critical (gotchas and learnings of the earlier plugin rank by it)."""
        value = self.fields.get("severity")
        if isinstance(value, str) and value.strip().lower() in SEVERITIES:
            return value.strip().lower()
        return next((tag.lower() for tag in self.tags if tag.lower() in SEVERITIES), None)

    @property
    def link_labels(self) -> dict[str, list[str]]:
        """Labels per linked slug from the `link-labels` field (relates-to when absent)."""
        raw = self.fields.get(LABELS_FIELD)
        labels: dict[str, list[str]] = {}
        if isinstance(raw, dict):
            for target, value in raw.items():
                values = value if isinstance(value, list) else [value]
                labels[str(target)] = [str(item) for item in values if isinstance(item, str) and item]
        return labels

    @property
    def references(self) -> list[str]:
        """Slugs this memory points at through `related:` or wiki links in its body."""
        from . import frontmatter  # here: hooks import this module without parsing any memory

        found: dict[str, None] = {}
        related = self.fields.get("related")
        for item in related if isinstance(related, list) else [related] if isinstance(related, str) else []:
            if isinstance(item, list):  # `related: [[x]]` read as plain YAML is a nested list
                item = item[0] if item else None
            if isinstance(item, str):
                for target in frontmatter.wiki_targets(item) or [item.strip()]:
                    found.setdefault(target, None)
        for target in frontmatter.wiki_targets(self.body):
            found.setdefault(target, None)
        return [slug for slug in found if slug != self.slug]

    def as_json(self, *, with_content: bool = True) -> dict[str, Any]:
        """The stable JSON shape of --json outputs."""
        data: dict[str, Any] = {
            "slug": self.slug, "scope": self.scope, "path": str(self.path), "title": self.title, "type": self.type,
            "tags": self.tags, "created": self.created, "updated": self.updated, "status": self.status,
            "links": self.links}
        if with_content:
            data["content"] = self.content
            data["frontmatter"] = self.fields
        return data

    def content_hash(self) -> str:
        """SHA-256 of the text that is indexed and embedded (title and content)."""
        return sha256_hex(embedding_text(self.title, self.content))


def sha256_hex(text: str) -> str:
    """SHA-256 of UTF-8 text, hex."""
    return digests.sha256_hex(text.encode("utf-8"))


def embedding_text(title: str, content: str) -> str:
    """The text that stands for a memory in search and embeddings."""
    return f"{title}\n\n{content}".strip()


# -- parsing ------------------------------------------------------------------------------

def parse(text: str, path: Path, scope: str, *, slug: str | None = None,
          fields: dict[str, Any] | None = None, archived: bool = False) -> Memory:
    """Build a Memory from file text. Raises InvalidInput when the file is not a usable memory.

    `fields` are the already known frontmatter values of a file we just rendered, which
    spares parsing the YAML we wrote.
    """
    from . import frontmatter

    document = frontmatter.split(text)
    if document.frontmatter is None:
        raise errors.InvalidInput("no YAML frontmatter (the file must start with a --- line)",
                                  "add a frontmatter block with type, tags, created and updated")
    lenient = None
    if fields is None:
        try:
            fields = frontmatter.parse(document.frontmatter)
        except errors.InvalidInput as exc:  # e.g. `title: Fix: quote it` from the bash era: read as meant
            fields = frontmatter.parse_lenient(document.frontmatter)
            if fields is None or not isinstance(fields.get("type"), str):
                raise
            lenient = exc.message
    memory_type = fields.get("type")
    if not isinstance(memory_type, str) or not memory_type.strip():
        raise errors.InvalidInput("the frontmatter has no `type`", "add `type: " + DEFAULT_TYPE + "` (or another type)")
    if slug is None:
        slug = slug_of(path, fields.get("id"))
    title_field = fields.get("title")
    content: str | None = document.body
    if isinstance(title_field, str) and title_field.strip():
        title, in_field = title_field.strip(), True
    else:
        title, content, in_field = _title_from_body(document.body, slug), None, False
    if content is None:
        content = _content_after_heading(document.body)
    tags = fields.get("tags")
    tag_list = [str(tag) for tag in tags if tag is not None and str(tag).strip()] if isinstance(tags, list) \
        else [tag.strip() for tag in tags.split(",") if tag.strip()] if isinstance(tags, str) else []
    links = fields.get("links")
    link_list = [str(link) for link in links if isinstance(link, (str, int))] if isinstance(links, list) else []
    created = clock.normalise(fields.get("created")) or ""
    updated = clock.normalise(fields.get("updated")) or created
    memory_type = effective_type(memory_type.strip(), tag_list)
    if is_think_document(fields, title, path.stem) and DELIBERATION_TAG not in tag_list:
        tag_list.append(DELIBERATION_TAG)  # the earlier plugin's think documents are deliberations
    return Memory(slug=slug, scope=scope, path=path, type=memory_type, title=title, tags=tag_list,
                  created=created, updated=updated, links=link_list, content=content, body=document.body,
                  fields=fields, document=document, title_in_field=in_field, archived=archived, lenient=lenient)


def effective_type(declared: str, tags: list[str]) -> str:
    """The type a memory is read as: its own, or for the bash era's `permanent`/`temporary` the
    category word among its tags (`permanent` with tag `tip` is a learning). Unknown types stay
    as written: such a memory is still readable (health warns)."""
    if declared in LEGACY_TYPES:
        if declared == "permanent":
            for tag in tags:
                category = _CATEGORY_TAGS.get(tag.lower())
                if category:
                    return category
        return LEGACY_TYPES[declared]
    return declared


def is_think_document(fields: dict[str, Any], title: str, stem: str) -> bool:
    """The earlier plugin's `think` deliberations: a breadcrumb with a `topic`, titled "Think: ..."."""
    if fields.get("type") != "breadcrumb":
        return False
    return "topic" in fields or title.startswith("Think:") or bool(_THINK_FILE.match(stem))


def slug_of(path: Path, declared_id: Any) -> str:
    """The slug of the memory in `path`: its file name, or the `id` field that names it otherwise
    (memory-graph nodes: `nodes/files/src-auth-ts.md` is `file-src-auth-ts`).

    An `id` never takes a slug from the file named after it: a file whose `id` names a file beside
    it is refused (InvalidInput), whichever of the two is read first, so the memory that owns the
    name keeps its links in every clone and health reports the other file."""
    if not isinstance(declared_id, str) or declared_id == path.stem or not SLUG_RE.fullmatch(declared_id):
        return path.stem
    conflict = id_conflict(path, declared_id)
    if conflict is not None:
        raise conflict
    return declared_id


def id_conflict(path: Path, declared_id: str) -> errors.InvalidInput | None:
    """The error for a file whose `id` names another memory file beside it (None: no such file)."""
    owner = path.with_name(f"{declared_id}.md")
    if not owner.is_file():
        return None
    return errors.InvalidInput(f"its `id: {declared_id}` names another memory, whose file is {owner.name}",
                               f"a memory is named by its file: remove the `id` line or set it to {path.stem}")


def _title_from_body(body: str, fallback: str) -> str:
    match = _HEADING.search(body)
    return match.group(1).strip() if match else fallback


def content_of(body: str) -> str:
    """The content of a body whose title is its first heading (no YAML parsing needed)."""
    return _content_after_heading(body)


def summary_of_file(path: Path, width: int = 280) -> str:
    """The first sentences of a memory file's content, on one line (no YAML parsing); "" when unreadable."""
    from . import frontmatter  # only when there is something to show

    try:
        body = frontmatter.split(path.read_text(encoding="utf-8")).body
    except (OSError, UnicodeDecodeError, errors.Error):
        return ""
    lines = [line.strip(" -*>\t") for line in content_of(body).splitlines()]
    flat = " ".join(line for line in lines if line and not line.startswith("#"))
    return flat if len(flat) <= width else flat[: width - 3].rsplit(" ", 1)[0] + "..."


def _content_after_heading(body: str) -> str:
    """The body without its first `# ` heading and the blank line after it."""
    match = _HEADING.search(body)
    if not match or body[: match.start()].strip():
        return body.lstrip("\r\n") if not match else body
    rest = body[match.end():]
    if rest.startswith("\n"):  # the heading's own line ending (its \r, if any, was matched)
        rest = rest[1:]
    for blank in ("\r\n", "\n"):  # one blank line between heading and content
        if rest.startswith(blank):
            return rest[len(blank):]
    return rest


def read_file(path: Path, scope: str, *, slug: str | None = None, root: Path | None = None) -> Memory:
    """Read and parse a memory file; InvalidInput when it is not UTF-8 or not a memory.

    With `root` (the scope directory), a symlink leading outside that directory is refused
    rather than followed, and a file in its archive/ folder is read as archived.
    """
    if root is not None and os.path.islink(path):
        target, base = os.path.realpath(path), os.path.realpath(root)
        if not target.startswith(base.rstrip(os.sep) + os.sep):
            raise errors.InvalidInput(f"{path.name} is a symlink to {target}, outside the memory directory; not read",
                                      "replace the link with the file itself, or remove it")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise errors.NotFound(f"memory file {path} does not exist") from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    text = decode(raw, "the file", hint="memories are UTF-8 markdown text")
    archived = root is not None and path.parent.name == ARCHIVE_DIR and path.parent.parent == root
    return parse(text, path, scope, slug=slug, archived=archived)


# -- validation ---------------------------------------------------------------------------

def check_slug(slug: str) -> str:
    """Return `slug` if it is a valid memory slug, else raise InvalidInput."""
    if not isinstance(slug, str) or not slug:
        raise errors.InvalidInput("empty slug", "slugs look like decision-use-oauth2")
    if "/" in slug or "\\" in slug or ".." in slug or slug.startswith("."):
        raise errors.InvalidInput(f"invalid slug {slug!r}: slugs cannot contain paths (/, \\ or ..)",
                                  "slugs are lowercase letters and digits joined by single hyphens")
    if not SLUG_RE.fullmatch(slug) or len(slug) > MAX_SLUG:
        raise errors.InvalidInput(
            f"invalid slug {slug!r}: must match {SLUG_PATTERN} and be at most {MAX_SLUG} characters",
            "use lowercase letters and digits joined by single hyphens, e.g. decision-use-oauth2")
    return slug


LOOKUP_RE = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def check_lookup_slug(slug: str) -> str:
    """Return `slug` if it can name an existing memory, else raise InvalidInput.

    New slugs must follow SLUG_PATTERN; files written by hand or by older tools may be
    named more loosely (e.g. `adr-0038-mongo_replacement`) and must stay reachable.
    """
    if not isinstance(slug, str) or not slug:
        raise errors.InvalidInput("empty slug", "slugs look like decision-use-oauth2")
    if "/" in slug or "\\" in slug or ".." in slug or not LOOKUP_RE.fullmatch(slug):
        return check_slug(slug)  # raises with the precise reason
    return slug


def check_type(memory_type: str) -> str:
    if memory_type not in TYPES:
        raise errors.InvalidInput(f"unknown type {memory_type!r}", "use one of: " + ", ".join(TYPES))
    return memory_type


def check_status(status: object) -> str:
    """One of STATUSES; raises InvalidInput otherwise."""
    if status not in STATUSES:
        raise errors.InvalidInput(f"unknown status {status!r}", "use one of: " + ", ".join(STATUSES))
    return str(status)


def check_title(title: str) -> str:
    title = title.strip() if isinstance(title, str) else ""
    if not title:
        raise errors.InvalidInput("empty title", "give the memory a short title, e.g. \"API uses OAuth2\"")
    if len(title) > MAX_TITLE:
        raise errors.InvalidInput(f"title is {len(title)} characters; the limit is {MAX_TITLE}",
                                  "shorten the title and put details in the content")
    if "\x00" in title:
        raise errors.InvalidInput("title contains binary data (NUL bytes)", "use plain text")
    import unicodedata  # here: only titles being written need it

    if any(unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in title):
        raise errors.InvalidInput("title must be a single line of text (no line breaks or control characters)",
                                  "put longer text in the content")
    return title


def check_content(content: str) -> str:
    if "\x00" in content:
        raise errors.InvalidInput("content contains binary data (NUL bytes)", "memories hold UTF-8 markdown text")
    if len(content) > MAX_BODY:
        raise errors.InvalidInput(f"content is {len(content)} characters; the limit is {MAX_BODY}",
                                  "split it into several memories and link them")
    return content


def check_tag(tag: str) -> str:
    if not isinstance(tag, str) or not tag:
        raise errors.InvalidInput("empty tag", "tags are lowercase words joined by hyphens, e.g. auth,api-design")
    if len(tag) > MAX_TAG or not SLUG_RE.fullmatch(tag):
        suggestion = slugify(tag)[:MAX_TAG].strip("-")
        hint = f'write it as "{suggestion}"' if suggestion else "use lowercase letters, digits and hyphens"
        raise errors.InvalidInput(f"invalid tag {tag!r}: tags are lowercase, hyphenated, 1-{MAX_TAG} characters", hint)
    return tag


def parse_tags(raw: str | Iterable[str] | None) -> list[str]:
    """Split `a,b` (or a list of such strings) into validated, de-duplicated tags."""
    if raw is None:
        return []
    pieces = [raw] if isinstance(raw, str) else list(raw)
    tags: dict[str, None] = {}
    for piece in pieces:
        parts = piece.split(",")
        if all(not part.strip() for part in parts):
            raise errors.InvalidInput("empty tags", "give at least one tag, e.g. --tags auth,api")
        for part in parts:
            tags.setdefault(check_tag(part.strip()), None)
    return list(tags)


def check_timestamps(created: str, updated: str) -> tuple[str, str]:
    """Validate a created/updated pair: ISO 8601, not in the future, updated >= created."""
    parsed_created, parsed_updated = clock.parse(created), clock.parse(updated)
    if parsed_created is None:
        raise errors.InvalidInput(f"created {created!r} is not an ISO 8601 timestamp", "e.g. 2026-01-10T10:00:00Z")
    if parsed_updated is None:
        raise errors.InvalidInput(f"updated {updated!r} is not an ISO 8601 timestamp", "e.g. 2026-01-10T10:00:00Z")
    now = clock.now()
    slack = 120  # seconds of clock skew between machines sharing a project
    if (parsed_created - now).total_seconds() > slack:
        raise errors.InvalidInput(f"created {created} is in the future", "use the time the knowledge was gained")
    if (parsed_updated - now).total_seconds() > slack:
        raise errors.InvalidInput(f"updated {updated} is in the future", "omit it to use the current time")
    if parsed_updated < parsed_created:
        raise errors.InvalidInput(f"updated {updated} is before created {created}",
                                  "updated must be the same as or later than created")
    return clock.to_iso(parsed_created), clock.to_iso(parsed_updated)


# -- slugs and tags from titles -----------------------------------------------------------

def slugify(text: str) -> str:
    """Lowercase ASCII words joined by hyphens (accents folded)."""
    import unicodedata

    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return "-".join(_WORD.findall(folded))


def base_slug(title: str, memory_type: str) -> str:
    """`<type>-<slugified title>`, dropping the type word from the title ("OAuth2 Decision" -> decision-oauth2)."""
    words = slugify(title).split("-") if slugify(title) else []
    type_words = set(memory_type.split("-"))
    kept = [word for word in words if word not in type_words] or words
    stem = "-".join(kept)
    if not stem:  # a title with no ASCII letters or digits at all
        stem = sha256_hex(title)[:8]
    limit = MAX_SLUG - len(memory_type) - 5  # room for the type prefix and a -N suffix
    if len(stem) > limit:
        stem = stem[:limit].rsplit("-", 1)[0] if "-" in stem[:limit] else stem[:limit]
    return f"{memory_type}-{stem}"


def unique_slug(base: str, taken: Callable[[str], bool]) -> str:
    """`base`, or `base-1`, `base-2`, ... : the first that `taken` says is free (a slug in use
    is never overwritten: the new memory gets a numbered one)."""
    if not taken(base):
        return base
    counter = 1
    while taken(f"{base}-{counter}"):
        counter += 1
    return f"{base}-{counter}"


def tags_from_title(title: str, memory_type: str, limit: int = 4) -> list[str]:
    """Tags derived from the title's significant words; never empty."""
    words = [word for word in slugify(title).split("-") if word]
    tags: dict[str, None] = {}
    for word in words:
        if word in _TITLE_STOP_WORDS or word == memory_type or len(word) > MAX_TAG:
            continue
        tags.setdefault(word, None)
        if len(tags) == limit:
            break
    return list(tags) or [memory_type]
