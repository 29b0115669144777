"""Automatic capture: file summaries, subagent findings and session memories.

Each kind is switchable in config (`capture.*`) and lands in `capture.scope` (local by
default: captured notes are personal working memory, not team knowledge). Files
matching `capture.exclude` globs (.env, keys, secrets) are never summarised.
"""

from __future__ import annotations

import os
import re
import stat

from ..base import clock, errors, redact
from ..model import memory
from ..ops import store
from .gotchas import glob_match, relative_path
from ..workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LANGUAGE_BY_EXTENSION = {
    "py": "python", "ts": "typescript", "tsx": "typescript", "js": "javascript", "jsx": "javascript",
    "mjs": "javascript", "cjs": "javascript", "go": "go", "rs": "rust", "rb": "ruby", "java": "java",
    "kt": "kotlin", "swift": "swift", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp", "cs": "csharp",
    "php": "php", "sh": "shell", "scala": "scala", "ex": "elixir", "dart": "dart", "lua": "lua", "sql": "sql",
}
MAX_LISTED = 25
DISCOVERY_MIN_CHARS = 200


def capture_scope(workspace: Workspace) -> str:
    chosen = workspace.config.get("capture.scope", "local")
    if chosen in ("local", "project") and (workspace.project_is_global or not workspace.in_git_repo):
        return "global"
    return chosen


# -- file summaries -----------------------------------------------------------------------------

def _symbols(language: str, source: str) -> tuple[str, list[str], list[str]]:
    """(purpose, exported symbols, imports) found with per-language patterns."""
    purpose = ""
    if language == "python":
        match = re.match(r'\s*(?:#[^\n]*\n\s*)*[rRuU]?("""|\'\'\')(.*?)\1', source, re.S)
        purpose = match.group(2).strip().split("\n\n")[0] if match else ""
        symbols = re.findall(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", source, re.M)
        symbols = [name for name in symbols if not name.startswith("_")]
        imports = re.findall(r"^(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", source, re.M)
        import_names = [left or right for left, right in imports]
    else:
        match = re.match(r"\s*(?:/\*\*?(.*?)\*/|((?:\s*//[^\n]*\n)+)|((?:\s*#[^\n]*\n)+))", source, re.S)
        if match:
            raw = next(group for group in match.groups() if group)
            purpose = " ".join(line.strip(" */#!") for line in raw.splitlines()).strip()
        patterns = {
            "typescript": r"^export\s+(?:default\s+)?(?:async\s+)?(?:function|class|const|let|interface|type|enum)\s+([A-Za-z_$][\w$]*)",
            "javascript": r"^(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function|class)\s+([A-Za-z_$][\w$]*)",
            "go": r"^(?:func(?:\s+\([^)]*\))?|type)\s+([A-Z]\w*)",
            "rust": r"^\s*pub\s+(?:async\s+)?(?:fn|struct|enum|trait|mod|type)\s+([A-Za-z_]\w*)",
            "java": r"^\s*public\s+(?:static\s+)?(?:final\s+)?(?:class|interface|enum|record|[\w<>\[\]]+)\s+([A-Za-z_]\w*)\s*[({<]",
        }
        symbols = re.findall(patterns.get(language, r"^(?:export\s+)?(?:function|class|def|fn|func)\s+([A-Za-z_]\w*)"),
                             source, re.M)
        import_names = re.findall(r"""^\s*(?:import\s.*?from\s+['"]([^'"]+)['"]|import\s+['"]([^'"]+)['"]|"""
                                  r"""(?:const|let|var)\s+.*?=\s*require\(['"]([^'"]+)['"]\)|use\s+([\w:]+)|"""
                                  r"""#include\s+[<"]([^>"]+)[>"])""", source, re.M)
        import_names = [next((part for part in group if part), "") for group in import_names]
    purpose = " ".join(purpose.split())[:400]
    return purpose, list(dict.fromkeys(symbols)), list(dict.fromkeys(filter(None, import_names)))[:MAX_LISTED]


_CLASSES = {
    "python": r"^class\s+([A-Za-z_]\w*)",
    "go": r"^type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b",
}
_FUNCTIONS = {
    "python": r"^(?:async\s+)?def\s+([A-Za-z_]\w*)",
    "go": r"^func(?:\s+\([^)]*\))?\s+([A-Za-z_]\w*)",
}
_CLASS_DEFAULT = (r"^\s*(?:export\s+)?(?:default\s+)?(?:(?:public|pub|abstract|final|static|sealed|data)\s+)*"
                  r"(?:class|struct|interface|trait|enum|record)\s+([A-Za-z_$][\w$]*)")
_FUNCTION_DEFAULT = (r"^\s*(?:export\s+)?(?:default\s+)?(?:pub\s+)?(?:async\s+)?(?:function\*?|def|fn|fun)\s+"
                     r"([A-Za-z_$][\w$]*)")


def _definitions(language: str, source: str) -> tuple[list[str], list[str]]:
    """(classes, functions) defined in a source file, private ones (leading _) left out."""
    found = []
    for table, default in ((_CLASSES, _CLASS_DEFAULT), (_FUNCTIONS, _FUNCTION_DEFAULT)):
        names = re.findall(table.get(language, default), source, re.M)
        found.append([name for name in dict.fromkeys(names) if not name.startswith("_")])
    return found[0], found[1]


def summarise_file(path: str, relpath: str, source: str) -> tuple[str, dict[str, Any]]:
    """A deterministic markdown summary of a source file and its frontmatter facts."""
    extension = path.rsplit(".", 1)[-1].lower() if "." in os.path.basename(path) else ""
    language = LANGUAGE_BY_EXTENSION.get(extension, extension or "text")
    purpose, symbols, imports = _symbols(language, source)
    classes, functions = _definitions(language, source)
    if language == "python":  # an explicit __all__ is the module's exports
        declared = re.search(r"^__all__\s*=\s*[\[(]([^\])]*)[\])]", source, re.M)
        if declared:
            symbols = re.findall(r"['\"]([A-Za-z_]\w*)['\"]", declared.group(1)) or symbols
    symbols = sorted(symbols, key=lambda name: name not in classes)[:MAX_LISTED]  # classes first
    lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    size = len(source.encode("utf-8"))
    parts = [f"Automatic summary of `{relpath}` ({language}, {lines} lines, {size // 1024} KB).", ""]
    parts += ["## Purpose", purpose or "(no module docstring or header comment)", ""]
    if symbols:
        parts += ["## Key exports", *[f"- `{name}`" for name in symbols], ""]
    for heading, names in (("Classes", classes), ("Functions", functions)):
        if names:
            parts += [f"## {heading}", *[f"- `{name}`" for name in names[:MAX_LISTED]]]
            if len(names) > MAX_LISTED:
                parts.append(f"- ... and {len(names) - MAX_LISTED} more")
            parts.append("")
    if imports:
        parts += ["## Imports", *[f"- `{name}`" for name in imports], ""]
    facts = {"path": relpath, "language": language, "file_size": size, "line_count": lines,
             "source_hash": memory.sha256_hex(source)}
    return "\n".join(parts), facts


def file_summary_slug(relpath: str) -> str:
    stem = memory.slugify(relpath)[: memory.MAX_SLUG - 5] or memory.sha256_hex(relpath)[:12]
    return f"file-{stem}"


# Larger files are generated, minified or data: a summary of them says nothing, and reading one
# whole on a Read hook would stall Claude (a 250 MB file took 16 s and 1.5 GB).
MAX_SOURCE_BYTES = 2 * 1024 * 1024


def wants_summary(workspace: Workspace, path: str, size: int) -> bool:
    capture = workspace.config.section("capture")
    if not capture.get("capture_file_summaries", True):
        return False
    if size < float(capture.get("auto_summarize_threshold_kb", 50)) * 1024 or size > MAX_SOURCE_BYTES:
        return False
    relpath = relative_path(path, str(workspace.project_dir))
    if any(glob_match(pattern, relpath) for pattern in capture.get("exclude", [])):
        return False
    extension = path.rsplit(".", 1)[-1].lower() if "." in os.path.basename(path) else ""
    return LANGUAGE_BY_EXTENSION.get(extension) in set(capture.get("auto_summarize_languages", []))


def refresh_file_summary(workspace: Workspace, path: str) -> str | None:
    """Create or refresh the file-summary memory of a large source file; its slug, or None.

    Nothing is written when the file is excluded, too small, or unchanged since its summary.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte, which no file's path holds
        return None
    if not stat.S_ISREG(info.st_mode) or not wants_summary(workspace, path, info.st_size):  # not a pipe or device
        return None
    try:
        with open(path, "rb") as handle:  # bounded: the file may have grown since its size was taken
            source = handle.read(MAX_SOURCE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if len(source) > MAX_SOURCE_BYTES:
        return None
    relpath = relative_path(path, str(workspace.project_dir))
    content, facts = summarise_file(path, relpath, source)
    slug = file_summary_slug(relpath)
    scope = capture_scope(workspace)
    title = f"File summary: {relpath}"[: memory.MAX_TITLE]
    existing = store.find(workspace, slug, scope=scope)
    if existing is not None:
        if existing.fields.get("source_hash") == facts["source_hash"]:
            return None
        store.update(workspace, slug, store.Changes(title=title, content=content, fields=facts), scope=scope)
        return slug
    tags = [facts["language"]] + [part for part in memory.slugify(os.path.dirname(relpath)).split("-") if part][:3]
    new = store.NewMemory(title=title, type="file-summary", tags=list(dict.fromkeys(memory.slugify(tag) for tag in tags
                                                                                     if memory.slugify(tag))),
                          content=content, slug=slug, fields={**facts, "status": "active", "source": "capture"})
    store.write(workspace, new, scope=scope)
    return slug


# -- subagent findings --------------------------------------------------------------------------

def record_discovery(workspace: Workspace, agent: str, message: str, session_id: str | None = None) -> str | None:
    """Keep a subagent's final report as a discovery memory; its slug, or None when too short."""
    if not workspace.config.get("capture.capture_subagent_results", True):
        return None
    message = message.strip()
    if len(message) < DISCOVERY_MIN_CHARS:
        return None
    first = next((line.strip("#*- ").strip() for line in message.splitlines() if line.strip("#*- ").strip()), "")
    title = f"Findings of {agent}: {first}"[: memory.MAX_TITLE].strip()
    agent_tag = memory.slugify(agent.split(":")[-1]) or "subagent"
    fields: dict[str, Any] = {"status": "active", "source": "capture", "agent": agent}
    if session_id:
        fields["session_id"] = session_id
    new = store.NewMemory(title=title, type="discovery", tags=["subagent", agent_tag][: 2],
                          content=message[: memory.MAX_BODY], fields=fields)
    return store.write(workspace, new, scope=capture_scope(workspace)).slug


# -- session memories ---------------------------------------------------------------------------

def session_slug(session_id: str, started: str) -> str:
    return f"session-{started[:10]}-{memory.slugify(session_id)[:8] or 'unknown'}"


STATE_LIMIT = 500  # entries per list kept in the session state


def note_todos(state: dict[str, Any], todos: Any) -> None:
    """Keep Claude's latest todo list (TodoWrite) in the session state for the session memory,
    secrets redacted: the state file is on disk, and its notes come back after compaction."""
    if isinstance(todos, list):
        state["todos"] = [{"content": redact.scrub(str(item["content"]))[0], "status": str(item.get("status") or "")}
                          for item in todos[:STATE_LIMIT] if isinstance(item, dict) and item.get("content")]


def compact_notes(state: dict[str, Any], slug: str | None) -> str:
    """What SessionStart puts back after compaction: the session's notes, secrets redacted
    (they are kept in the session state file until then)."""
    summary = "\n".join(session_notes(state)[:30])
    if slug:
        summary += f"\nFull notes: `memory read {slug}`."
    return redact.scrub(summary)[0]


def note_written(state: dict[str, Any], slug: str | None) -> None:
    """Count a memory captured during the session among its memories written."""
    written = state.setdefault("memories_written", [])
    if slug and slug not in written and len(written) < STATE_LIMIT:
        written.append(slug)


def session_notes(state: dict[str, Any]) -> list[str]:
    """Markdown lines of what a session did, from the hooks' session state."""
    lines: list[str] = []
    files = state.get("files_changed") or []
    written = state.get("memories_written") or []
    todos = state.get("todos") or []
    done = [item for item in todos if item.get("status") == "completed"]
    open_items = [item for item in todos if item.get("status") != "completed"]
    if files:
        lines += ["## Files changed", *[f"- `{path}`" for path in files[:MAX_LISTED]]]
        if len(files) > MAX_LISTED:
            lines.append(f"- ... and {len(files) - MAX_LISTED} more")
    if written:
        lines += ["## Memories written", *[f"- [[{slug}]]" for slug in written[:MAX_LISTED]]]
    if done:
        lines += ["## Tasks done", *[f"- [x] {item.get('content', '')}" for item in done[:MAX_LISTED]]]
    if open_items:
        lines += ["## Open threads", *[f"- [ ] {item.get('content', '')}" for item in open_items[:MAX_LISTED]]]
    return lines


def write_session_memory(workspace: Workspace, session_id: str, state: dict[str, Any]) -> str | None:
    """Create or refresh the session memory; its slug, or None when the session did nothing to record."""
    if not workspace.config.get("capture.capture_sessions", True):
        return None
    root = str(workspace.project_dir).rstrip(os.sep) + os.sep
    files = [path[len(root):] if isinstance(path, str) and path.startswith(root) else path
             for path in state.get("files_changed") or []]
    notes = session_notes({**state, "files_changed": files})
    if not notes:
        return None
    started = str(state.get("started") or clock.now_iso())
    slug = session_slug(session_id, started)
    prompts = int(state.get("prompts") or 0)
    content = "\n".join([f"Session {session_id} from {started} to {clock.now_iso()}, {prompts} prompt(s).", "",
                         *notes, ""])
    scope = capture_scope(workspace)
    try:  # most sessions are written once: creating first spares a lookup
        store.write(workspace, store.NewMemory(
            title=f"Session {started[:10]} {session_id[:8]}", type="session", tags=["session"], content=content,
            slug=slug, fields={"status": "active", "source": "capture", "session_id": session_id}), scope=scope)
    except errors.Conflict:  # written before (at compaction): refreshed
        store.update(workspace, slug, store.Changes(content=content), scope=scope)
    return slug
