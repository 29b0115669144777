"""What `memory health` reads of each memory file, kept per file by its stamp.

Reading, parsing, scanning for secrets and scoring 10,000 files is most of what a check costs,
and none of it depends on another file. A FileDigest holds what the checks need of one file:
the fields the cross-file checks compare (links, labels, references, content hash), the problems
of the file on its own (files.FileRules) and the parts of its quality score that read only its
text. A digest is the same whether it was just made from the file or taken from the cache, and
the checks see every memory's digest, so a check with the cache finds exactly what one without
it finds.

The cache (`health-files.json` in the scope's cache directory: derived and disposable) keys each
digest by the file's stamp, and the whole cache by the stamps of the code that makes digests and
by the scope's conventions: a file edited in place, replaced, added or removed, or an upgrade of
the plugin, is read again. A cache file that cannot be read or has the wrong shape is ignored
and rewritten; a file changed within the last seconds is not kept (a second change within the
same clock tick would keep its stamp).
"""

from __future__ import annotations

import contextlib
import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..catalog.catalog import Catalog, Entry

from ..base import clock, errors, fsutil, redact, schema, stamps
from ..model import frontmatter, graph, memory
from . import files, quality
from .facts import ALIASES_FIELD

CACHE_NAME = "health-files.json"
CACHE_VERSION = 1
RACY_NS = 3_000_000_000  # a file changed this recently is read again next time


class FileDigest:
    """One memory file as the health checks see it (the attributes they read of a Memory, and more)."""

    __slots__ = ("slug", "scope", "path", "type", "title", "tags", "created", "updated", "status", "links",
                 "link_labels", "references", "aliases", "editable", "hash", "declarations", "times", "findings",
                 "quality")

    def __init__(self, data: list[Any], scope: str, path: Path) -> None:
        if not isinstance(data, list):
            raise TypeError("a digest is a list")
        self.scope, self.path = scope, path
        (self.slug, self.type, self.title, self.tags, self.created, self.updated, self.status, self.links,
         self.link_labels, self.references, self.aliases, self.editable, self.hash, declarations, self.times,
         self.findings, self.quality) = data
        self.declarations = [tuple(declaration) for declaration in declarations]


def digest_data(item: memory.Memory, rules: files.FileRules) -> list[Any]:
    """A FileDigest's fields as JSON (the order of FileDigest.__init__)."""
    fields = item.fields
    links, labels, aliases = fields.get("links"), fields.get(memory.LABELS_FIELD), fields.get(ALIASES_FIELD)
    editable = (links is None or isinstance(links, list)) and (labels is None or isinstance(labels, dict))
    old_slugs = [old for old in ([aliases] if isinstance(aliases, str) else aliases if isinstance(aliases, list)
                                 else []) if isinstance(old, str) and old and old != item.slug]
    times = {key: [fields[key], item.created if key == "created" else item.updated]
             for key in memory.TIMESTAMP_FIELDS if isinstance(fields.get(key), str)}
    return [item.slug, item.type, item.title, item.tags, item.created, item.updated, item.status, item.links,
            item.link_labels, item.references, old_slugs, editable, item.content_hash(),
            [list(declaration) for declaration in graph.declarations(item)], times, list(rules.findings(item)),
            quality.intrinsic(item)]


def read_scope(catalog: Catalog, entries: dict[str, Entry], *, adopted: bool) -> dict[str, FileDigest]:
    """slug -> digest of every memory file in `entries` that can be read (the others are skipped: the
    catalog reports what it cannot read, and one removed meanwhile is seen by the next check)."""
    scope = catalog.scope
    cache = DigestCache(scope.cache_dir / CACHE_NAME, adopted)
    rules: files.FileRules | None = None
    found: dict[str, FileDigest] = {}
    scanned = catalog.scanned  # every file's stamp, taken by the catalog's full refresh just before
    for slug, entry in entries.items():
        path = entry.path
        # before reading: a change while reading shows next time
        stamp = scanned.get(entry.relpath) if scanned is not None else stamps.file_stamp(path)
        digest = cache.get(entry.relpath, stamp, scope.name, path)
        if digest is None:
            try:
                item = memory.read_file(path, scope.name, root=scope.root)
            except errors.Error:
                continue
            rules = rules or files.FileRules(adopted)
            # through JSON, as a cached digest comes back: the same values whether cached or not
            data = json.loads(json.dumps(digest_data(item, rules)))
            if stamp is not None and not stamps.racy(stamp, RACY_NS):
                cache.put(entry.relpath, stamp, data)
            digest = FileDigest(data, scope.name, path)
        found[slug] = digest
    cache.save()
    return found


def code_stamp() -> str:
    """The stamps of the code and schema that make a digest: a digest made by other code is not used."""
    sources = [str(module.__file__) for module in (files, quality, memory, frontmatter, graph, clock, redact, schema)]
    sources += [__file__, str(schema.schema_dir() / "frontmatter.schema.json")]
    return stamps.fingerprint({str(source): stamps.file_stamp(source) or "" for source in sources})


class DigestCache:
    """relpath -> [stamp, digest data] of one scope, read once and written back when it changed."""

    def __init__(self, path: Path, adopted: bool) -> None:
        self.path, self.changed = path, False
        self.header = {"version": CACHE_VERSION, "code": code_stamp(), "adopted": adopted}
        self.files: dict[str, Any] = {}
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("files"), dict) and \
                all(data.get(key) == value for key, value in self.header.items()):
            self.files = data["files"]
        self.seen: set[str] = set()

    def get(self, relpath: str, stamp: str | None, scope: str, path: Path) -> FileDigest | None:
        """The digest kept for the file at `relpath` if it has this stamp (None: read the file)."""
        self.seen.add(relpath)
        known = self.files.get(relpath)
        if stamp is None or not isinstance(known, list) or len(known) != 2 or known[0] != stamp:
            return None
        try:
            return FileDigest(known[1], scope, path)
        except (TypeError, ValueError):  # not the shape this code writes: read the file again
            return None

    def put(self, relpath: str, stamp: str, data: list[Any]) -> None:
        self.files[relpath] = [stamp, data]
        self.changed = True

    def save(self) -> None:
        gone = set(self.files) - self.seen
        for relpath in gone:
            del self.files[relpath]
        if self.changed or gone:
            with contextlib.suppress(OSError, errors.Error):  # a cache that cannot be written (read-only, full): none
                fsutil.write_atomically(self.path, json.dumps({**self.header, "files": self.files},
                                                              separators=(",", ":")), durable=False)
