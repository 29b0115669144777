"""The memory files themselves: readable, frontmatter by the schema and the data model's rules, timestamps."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .digest import FileDigest

from ..base import clock, redact, schema
from ..model import frontmatter, memory
from .facts import ERROR, WARNING, ScopeFacts, later, normal_tags

_TIMESTAMP_LINE = re.compile(r"^(created|updated)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M)
_CANONICAL_TIMESTAMP = re.compile(r"""(["'])\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\1""")
_FIELD_HEAD = re.compile(r"[.\[]")

UNREADABLE_FILE = "unreadable-file"
INVALID_FRONTMATTER = "invalid-frontmatter"
INVALID_MEMORY = "invalid-memory"
SECRET = "secret"
TIMESTAMP_FORMAT = "timestamp-format"
REPEATED_FIELD = "repeated-field"
UNKNOWN_TYPE = "unknown-type"
LENIENT_FRONTMATTER = "lenient-frontmatter"

KINDS: dict[str, str] = {  # what this family reports, with its severity
    UNREADABLE_FILE: ERROR,  # not UTF-8, no or broken frontmatter, unknown type, duplicate slug
    INVALID_FRONTMATTER: ERROR,  # breaks the frontmatter schema or a timestamp rule; the field is named
    INVALID_MEMORY: ERROR,  # title or content over the data model's limits
    SECRET: ERROR,  # a credential or key stored in a memory (written before redaction, or by hand)
    TIMESTAMP_FORMAT: WARNING,  # created/updated not written as a quoted UTC timestamp
    REPEATED_FIELD: ERROR,  # a field written twice (a union merge): other YAML readers keep the last
    UNKNOWN_TYPE: WARNING,  # a type no tool here knows: read as written
    LENIENT_FRONTMATTER: WARNING,  # not valid YAML, read line by line as its writer meant it
}


def check(facts: ScopeFacts) -> None:
    """Add the problems of this family to `facts`."""
    _files(facts)
    _frontmatter(facts)


def _files(facts: ScopeFacts) -> None:
    for problem in facts.catalog.problems():
        facts.add(UNREADABLE_FILE, None, problem.message, _unreadable_hint(problem.message), path=problem.path)


def _frontmatter(facts: ScopeFacts) -> None:
    for slug, item in facts.memories.items():
        for kind, message, hint, fixable, field in item.findings[0]:
            facts.add(kind, slug, message, hint, fixable=fixable, field=field)
        _timestamp_rules(facts, item)
        for kind, message, hint, fixable, field in item.findings[1]:
            facts.add(kind, slug, message, hint, fixable=fixable, field=field)


def _timestamp_rules(facts: ScopeFacts, item: FileDigest) -> None:
    """The rules on `created` and `updated` that depend on the time of the check (so run each time)."""
    if facts.adopted:
        return
    for key, (value, moment) in item.times.items():  # moment: normalised by memory.parse, "" when not a timestamp
        if moment and later(moment, facts.latest):
            facts.add(INVALID_FRONTMATTER, item.slug, f"`{key}` {value} is in the future",
                      "use the time the knowledge was gained or last changed", field=key)
    created, updated = item.times.get("created", ("", "")), item.times.get("updated", ("", ""))
    if created[1] and updated[1] and later(created[1], updated[1]):
        facts.add(INVALID_FRONTMATTER, item.slug, f"`updated` {updated[0]} is before `created` "
                  f"{created[0]}", "updated must be the same as or later than created; correct the "
                  "wrong one", field="updated")


# One problem of one file, as JSON: [kind, message, hint, fixable, field].
Finding = list


class FileRules:
    """The checks of one memory file on its own, as a scope reads it (a store the earlier plugin laid
    out keeps that plugin's conventions): what they find depends on the file alone, so health keeps
    it per file (digest.py)."""

    def __init__(self, adopted: bool) -> None:
        self.adopted = adopted
        self.rules = schema.load("frontmatter")
        self.quick = QuickSchema(self.rules)

    def findings(self, item: memory.Memory) -> tuple[list[Finding], list[Finding]]:
        """The problems found in `item`, in the order health reports them: those before the timestamp
        rules (`_timestamp_rules`, which read the clock) and those after."""
        before: list[Finding] = []
        found: list[Finding] = []
        if not self.quick.surely_valid(item.fields):
            for violation in schema.validate(item.fields, self.rules):
                self._violation(before, item, violation)
        self._timestamp_format(found, item)
        for key in frontmatter.repeated_keys(item.document.frontmatter or ""):
            found.append([REPEATED_FIELD, f"`{key}` is written more than once (as git's union merge leaves "
                          "a field two clones changed); other YAML readers see only the last copy",
                          "memory repair writes it once, with the values of every copy", True, key])
        if item.lenient:
            found.append([LENIENT_FRONTMATTER, f"the frontmatter is not valid YAML ({item.lenient}); it is "
                          "read line by line, as its writer meant it", "quote the values that hold `: ` or `#` "
                          "(e.g. title: \"Fix: quote it\"); until then other YAML readers cannot read it",
                          False, "frontmatter"])
        if not item.title_in_field and len(item.title) > memory.MAX_TITLE:
            found.append([INVALID_MEMORY, f"the title is {len(item.title)} characters; the limit is "
                          f"{memory.MAX_TITLE}", "shorten the `# ` heading and move details into the content",
                          False, "title"])
        if len(item.content) > memory.MAX_BODY:
            found.append([INVALID_MEMORY, f"the content is {len(item.content)} characters; the limit is "
                          f"{memory.MAX_BODY}", "split it into several memories and link them", False, "content"])
        kinds = redact.kinds_in(item.document.text())
        if kinds:
            found.append([SECRET, f"it holds what looks like a secret ({', '.join(kinds)})",
                          f"rotate the secret, then rewrite the memory without it (`memory update {item.slug} "
                          "--content ...`: new text is redacted) or wrap it in <private>...</private>", False, None])
        return before, found

    def _violation(self, found: list[Finding], item: memory.Memory, violation: schema.Violation) -> None:
        field = violation.path or "(frontmatter)"
        head = _FIELD_HEAD.split(field)[0]
        if head == "type" and isinstance(item.fields.get("type"), str):
            if item.fields["type"].strip() not in memory.LEGACY_TYPES:
                found.append([UNKNOWN_TYPE, f"type {item.fields['type']!r} is none of "
                              f"{', '.join(memory.TYPES)}; it is read as written",
                              f"set `type:` to one of them: memory update {item.slug} --type <type>", False, "type"])
            return
        if self.adopted:
            return  # the earlier plugin's conventions (see facts.ScopeFacts)
        fixable, hint = False, "edit the frontmatter by hand (schemas/frontmatter.schema.json describes it)"
        if head == "tags" and violation.message.startswith(("must be a lowercase", "must be of type")):
            fixable = normal_tags(item.fields.get("tags")) is not None
            if fixable:
                hint = "memory repair writes tags in lower case with hyphens"
        elif head in memory.TIMESTAMP_FIELDS and (violation.message == "is required"
                                                  or item.fields.get(head) in (None, "")):
            fixable, hint = True, "memory repair fills it in from the file's modification time"
        elif head in memory.TIMESTAMP_FIELDS:
            hint = 'write an ISO 8601 timestamp such as "2026-01-10T10:00:00Z"'
        found.append([INVALID_FRONTMATTER, f"`{field}` {violation.message}", hint, fixable, field])

    def _timestamp_format(self, found: list[Finding], item: memory.Memory) -> None:
        if self.adopted:
            return
        for match in _TIMESTAMP_LINE.finditer(item.document.frontmatter or ""):
            key, raw = match.group(1), match.group(2)
            if _CANONICAL_TIMESTAMP.fullmatch(raw):
                continue
            value = item.fields.get(key)
            normal = clock.normalise(value) if isinstance(value, str) else None
            if normal is None:
                continue  # not a timestamp at all: the schema check reports it
            found.append([TIMESTAMP_FORMAT, f"`{key}` is written {raw}, not as a quoted UTC timestamp "
                          f'("{normal}")', "memory repair rewrites it in the data model's form", True, key])


class QuickSchema:
    """A fast yes for frontmatter that certainly satisfies the schema (the common case).

    It knows the usual fields and takes their patterns from the schema itself; anything else
    (another field the schema describes, an unusual value) answers "not sure", and the full
    validator decides. So it never hides a violation, and 10,000 files cost milliseconds.
    """

    HANDLED = frozenset({"type", "tags", "created", "updated", "links", memory.LABELS_FIELD, "title", "status",
                         "id"})

    def __init__(self, rules: dict[str, Any]) -> None:
        props, defs = rules["properties"], rules["$defs"]
        self.required = tuple(rules.get("required", ()))
        self.described = frozenset(props)
        self.types = frozenset(props["type"]["enum"])
        self.slug = re.compile(defs["slug"]["pattern"])
        self.tag = re.compile(defs["tag"]["pattern"])
        self.label = re.compile(defs["label"]["pattern"])
        self.timestamp = re.compile(defs["timestamp"]["pattern"])
        self.status = re.compile(props["status"]["pattern"])
        self.limits = (defs["slug"]["maxLength"], defs["tag"]["maxLength"], defs["label"]["maxLength"],
                       props["title"]["maxLength"])

    def surely_valid(self, fields: dict[str, Any]) -> bool:
        if any(key not in fields for key in self.required):
            return False
        if any(key in self.described and key not in self.HANDLED for key in fields):
            return False
        slug_max, tag_max, label_max, title_max = self.limits
        tags = fields["tags"]
        if fields["type"] not in self.types or not isinstance(tags, list) or not tags:
            return False
        if not all(isinstance(tag, str) and len(tag) <= tag_max and self.tag.fullmatch(tag) for tag in tags):
            return False
        if not all(isinstance(fields[key], str) and self.timestamp.fullmatch(fields[key])
                   for key in ("created", "updated")):
            return False
        links = fields.get("links", [])
        if not isinstance(links, list) or not all(
                isinstance(link, str) and len(link) <= slug_max and self.slug.fullmatch(link) for link in links):
            return False
        labels = fields.get(memory.LABELS_FIELD, {})
        if not isinstance(labels, dict):
            return False
        for target, value in labels.items():
            values = value if isinstance(value, list) else [value]
            if not (len(target) <= slug_max and self.slug.fullmatch(target) and values and all(
                    isinstance(label, str) and len(label) <= label_max and self.label.fullmatch(label)
                    for label in values)):
                return False
        title, status, declared = fields.get("title", "x"), fields.get("status", "x"), fields.get("id", "x")
        return (isinstance(title, str) and 0 < len(title) <= title_max and isinstance(status, str)
                and self.status.fullmatch(status) is not None and isinstance(declared, str)
                and len(declared) <= slug_max and self.slug.fullmatch(declared) is not None)


def _unreadable_hint(message: str) -> str:
    if message.startswith("duplicate slug"):
        return "rename one of the two files (or change its `id:`) so each slug is used once"
    if message.startswith("unknown type"):
        return "set `type:` to one of: " + ", ".join(memory.TYPES)
    if "UTF-8" in message or "binary" in message:
        return "re-save the file as UTF-8 markdown text"
    if "frontmatter" in message or "YAML" in message:
        return "fix the YAML block between the --- lines (type, tags, created, updated)"
    return "fix the file by hand; `memory reindex` then reads it again"
