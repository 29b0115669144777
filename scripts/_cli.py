"""Porcelain shared by the operation scripts: argument parsing, reading input, output, errors.

Every script is `main(argv) -> int` wrapped by `run`, which turns an expected
failure (`_lib.errors.Error`) into one `error:` line plus a `hint:` line on stderr
and its exit code, so no traceback reaches a user for an expected error.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds to import; every command pays for _cli
    from typing import Any, Callable, NoReturn

from _lib.base import errors
from _lib.model import memory

# argparse has gettext translate each of its own strings ("options", "usage: "...): with LANG set
# every call looks for message catalogs on disk, and the first imports `locale`, some 2 ms a
# command. The commands speak English only, so argparse's strings are taken as they are.
argparse._ = lambda message: message  # type: ignore[attr-defined]
argparse.ngettext = lambda singular, plural, count: singular if count == 1 else plural  # type: ignore[attr-defined]

EXIT_USAGE = 2
STDIN_WAIT_SECONDS = 0.25  # implicit stdin: only data that is already on its way


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the project's error format (exit 2, `error:` then `hint:`)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message}\nhint: run `{self.prog} --help` for usage\n")
        sys.exit(EXIT_USAGE)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples' layout; sizes itself without importing shutil (argparse's default does)."""

    def __init__(self, prog: str) -> None:
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):
            width = int(os.environ.get("COLUMNS", "0") or 0) or 100
        super().__init__(prog, width=max(width - 2, 40))


def parser(op: str, description: str, epilog: str | None = None) -> ArgumentParser:
    """A parser for `memory <op>` whose help shows the description and examples."""
    return ArgumentParser(prog=f"memory {op}", description=description, epilog=epilog,
                          formatter_class=HelpFormatter)


def add_scope(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    parser.add_argument("--scope", choices=("global", "project", "local", "enterprise"),
                        help=help_text or "limit to one scope (default: every readable scope)")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def add_filters(parser: argparse.ArgumentParser, *, scope_help: str | None = None) -> None:
    """--type, --tag, --scope, --since and --status, shared by list, search and semantic."""
    parser.add_argument("--type", action="append", metavar="TYPE",
                        help="only memories of this type (repeatable): " + ", ".join(memory.TYPES))
    parser.add_argument("--tag", help="only memories carrying this tag")
    add_scope(parser, scope_help)
    parser.add_argument("--since", metavar="WHEN",
                        help="only memories updated since WHEN: an ISO date/time or an age like 7d, 12h, 2w")
    parser.add_argument("--status", choices=memory.STATUSES, help="only memories with this status")


def filters_from(args: argparse.Namespace) -> Any:
    from _lib.base import clock
    from _lib.ops import store

    since = None
    if getattr(args, "since", None):
        since = clock.parse_since(args.since)
        if since is None:
            raise errors.InvalidInput(f"--since {args.since!r} is not a date or an age",
                                      "use e.g. 2026-01-31, 2026-01-31T09:00:00Z, 7d, 12h or 2w")
    return store.Filters(types=args.type, tag=args.tag, scope=args.scope, since=since,
                         status=getattr(args, "status", None))


def run(main: Callable[[list[str]], int]) -> NoReturn:
    """Run a script's main with the project's error handling and exit with its code."""
    from _lib.workspace.scopes import Workspace

    Workspace.progress = staticmethod(_progress)  # type: ignore[assignment]
    _escape_what_output_cannot_hold()
    if _is_terminal(sys.stdout):
        sys.stdout = _TerminalText(sys.stdout)  # type: ignore[assignment]
    try:
        _require_utf8(sys.argv[1:])
        code = main(sys.argv[1:])
    except errors.Error as exc:
        print_error(exc)
        code = exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        code = 130
    except BrokenPipeError:  # e.g. `memory list | head`: the reader went away
        try:
            sys.stdout = open(os.devnull, "w")
        finally:
            code = 0
    except Exception as exc:  # noqa: BLE001 - the storage refused: one line, never a traceback
        if not isinstance(exc, OSError) and type(exc).__name__ != "OperationalError":
            raise
        where = getattr(exc, "filename", None) or "the memory directory"
        problem = errors.storage_error(exc, where) or errors.Error(
            f"the system refused an operation on {where}: {getattr(exc, 'strerror', None) or exc}",
            "check the disk and the directory, then retry; nothing was changed that a rerun cannot finish")
        print_error(problem)
        code = problem.exit_code
    _flush_warnings()
    sys.exit(code)


def _escape_what_output_cannot_hold() -> None:
    """Print a character the output's encoding cannot hold (PYTHONIOENCODING=ascii) as an escape
    (`\\xe9`) instead of failing on it: bin/memory runs in UTF-8 mode, which that setting overrides."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


# Characters that act on a terminal instead of showing: C0 and C1 controls (escape sequences,
# a bell, a carriage return that writes over a line) and bidirectional overrides (text shown
# in another order than it reads). A memory pulled from a teammate can hold any of them.
_TERMINAL_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if code not in (9, 10)}
_TERMINAL_CONTROLS.update({code: f"\\u{code:04x}" for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


class _TerminalText:
    """stdout on a terminal: what a command prints shows control characters as escapes (`\\x1b`);
    piped or redirected output stays exact (`memory read` copies a file byte for byte)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(text.translate(_TERMINAL_CONTROLS))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _require_utf8(arguments: list[str]) -> None:
    """Refuse an argument that is not UTF-8 text (bytes a memory, its catalog or JSON cannot hold)."""
    from _lib.base import fsutil

    for position, argument in enumerate(arguments, 1):
        if not fsutil.from_utf8(argument):
            raise errors.InvalidInput(f"argument {position} is not UTF-8 text: {fsutil.printable(argument)}",
                                      "memories hold UTF-8 text: check the encoding of the terminal or script")


def _progress(line: str) -> None:
    sys.stderr.write(f"note: {line}\n")
    sys.stderr.flush()


def print_error(exc: errors.Error) -> None:
    sys.stderr.write(f"error: {exc.message}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {exc.hint}\n")


_WARNINGS: list[str] = []  # printed when the command ends: after its error, if it fails (stderr starts `error:`)


def print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        if warning not in _WARNINGS:
            _WARNINGS.append(warning)


def _flush_warnings() -> None:
    for warning in _WARNINGS:
        sys.stderr.write(f"warning: {warning}\n")
    _WARNINGS.clear()


def print_hits(hits: list[Any], query: str, measure: Callable[[Any], str]) -> None:
    """Search results as numbered entries: slug, type, scope and `measure(hit)`, title, snippet."""
    if not hits:
        print(f"No memories match {query!r}.")
        return
    for rank, hit in enumerate(hits, 1):
        entry = hit.entry
        print(f"{rank}. {entry.slug}  [{entry.type}, {entry.scope}]  {measure(hit)}")
        print(f"   {entry.title}")
        if hit.snippet:
            print(f"   {hit.snippet}")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def read_text_file(path: str) -> str:
    """A UTF-8 text file (or stdin for `-`), refused when binary, not UTF-8 or over the body limit."""
    limit = memory.MAX_BODY * 4 + 4096  # UTF-8 needs at most 4 bytes per character (+ frontmatter)
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise errors.NotFound(f"file {path} does not exist", "check the path given to --file") from None
    except IsADirectoryError:
        raise errors.InvalidInput(f"{path} is a directory", "give a text file to --file") from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > limit:
        raise errors.InvalidInput(f"{'stdin' if path == '-' else path} is larger than the {memory.MAX_BODY}-character "
                                  "content limit", "split it into several memories and link them")
    from _lib.base import text

    return text.decode(raw, "stdin" if path == "-" else path, hint="memories hold UTF-8 markdown text")


def piped_stdin() -> str | None:
    """Text piped to stdin, if any is on its way; None for a terminal or an idle inherited pipe."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if stat.S_ISREG(mode):
        return read_text_file("-")
    if not stat.S_ISFIFO(mode) and not stat.S_ISSOCK(mode):
        return None
    try:
        ready, _, _ = select.select([sys.stdin], [], [], STDIN_WAIT_SECONDS)
    except (OSError, ValueError):
        return None
    return read_text_file("-") if ready else None


def body_from(args: argparse.Namespace) -> str | None:
    """The body given by --content, --file (`-` for stdin) or piped stdin; None when none was given."""
    given = [name for name in ("content", "file") if getattr(args, name, None) is not None]
    if len(given) > 1:
        raise errors.InvalidInput("give the body once: --content or --file, not both")
    if getattr(args, "content", None) is not None:
        return args.content
    if getattr(args, "file", None) is not None:
        return read_text_file(args.file)
    return piped_stdin()


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns; the last column is not padded."""
    widths = [max(len(str(row[column])) for row in [headers, *rows]) for column in range(len(headers) - 1)]
    lines = []
    for row in [headers, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths)] + [str(row[-1])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


class StatusLine:
    """One line of progress on stderr, rewritten in place; only when stderr is a terminal."""

    INTERVAL = 0.1  # seconds between redraws

    def __init__(self) -> None:
        self.active = sys.stderr.isatty()
        self.shown = False
        self._drawn = 0.0

    def show(self, text: str, *, force: bool = False) -> None:
        import time

        now = time.monotonic()
        if not self.active or (not force and now - self._drawn < self.INTERVAL):
            return
        self._drawn = now
        sys.stderr.write("\r" + text + "\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False



# -- bulk forms of the maintenance verbs (move, tag, untag, link, archive, delete by filter) ------

BULK_FILTERS = ("tag", "type", "since", "status")


def add_bulk(parser: argparse.ArgumentParser, verb: str) -> None:
    """The filters that select many memories instead of one SLUG, with --dry-run and --yes."""
    add_filters(parser, scope_help=f"the scope to {verb} from (with SLUG: the one holding it)")
    parser.add_argument("--dry-run", action="store_true", help="show what would change (a diff); change nothing")
    parser.add_argument("--yes", "-y", action="store_true",
                        help="with filters: go ahead without asking to confirm the count")


def refuse_filters_with_slug(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    given = [f"--{name}" for name in BULK_FILTERS if getattr(args, name, None)]
    if given:
        parser.error(f"give a SLUG or filters ({', '.join(given)}), not both")


def bulk_filters(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The filters of a bulk form; at least one is required (no silent `everything`)."""
    if not any(getattr(args, name, None) for name in (*BULK_FILTERS, "scope")):
        parser.error("give a SLUG, or select memories with --tag, --type, --since, --status or --scope")
    return filters_from(args)


def confirm(args: argparse.Namespace, count: int, what: str) -> bool:
    """Whether a bulk change of `count` memories may go ahead: --yes, or a yes typed at a
    terminal. Without either, the caller shows what would change and refuses (`unconfirmed`)."""
    if count == 0 or args.yes:
        return True
    if not sys.stdin.isatty() or not sys.stderr.isatty():
        return False
    sys.stderr.write(f"{what}: {count} memor{'y' if count == 1 else 'ies'}. Go ahead? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def unconfirmed(count: int, what: str) -> errors.Error:
    return errors.Error(f"{count} memor{'y' if count == 1 else 'ies'} would {what}; not confirmed, nothing was changed",
                        "review the list above, then rerun with --yes (or --dry-run for the full diff)")


def selection_from(parser: argparse.ArgumentParser, args: argparse.Namespace, workspace: Any) -> Any:
    """{scope: [slugs]}: the SLUG given, or what the filters select."""
    from _lib.ops import bulk, curate

    if args.slug is not None:
        refuse_filters_with_slug(parser, args)
        return curate.one(workspace, args.slug, args.scope)
    return curate.grouped(bulk.select(workspace, bulk_filters(parser, args)))


def curate_command(parser: argparse.ArgumentParser, args: argparse.Namespace, action: str,
                   run_it: Callable[[Any, Any, bool], Any]) -> int:
    """Run archive / tag / untag on the selection: a dry run first when filters select several
    (the count is confirmed), then the change; print what changed."""
    from _lib.workspace.scopes import Workspace

    workspace = Workspace()
    selection = selection_from(parser, args, workspace)
    if args.slug is None and not args.dry_run and not args.yes:
        preview = run_it(workspace, selection, True)
        if not confirm(args, len(preview.changed), action):
            print_curated(args, preview)
            raise unconfirmed(len(preview.changed), "be " + CURATED[action])
    result = run_it(workspace, selection, args.dry_run)
    print_warnings(workspace.warnings)
    print_curated(args, result)
    return 0


CURATED = {"archive": "archived", "unarchive": "made active", "tag": "tagged", "untag": "untagged"}


def print_curated(args: argparse.Namespace, result: Any) -> None:
    if args.json:
        document = result.as_json()
        if result.dry_run:
            document["diff"] = result.diff()
        emit_json(document)
        return
    if result.dry_run:
        print(result.diff(), end="")
    verb = CURATED[result.action]
    _print_changes(result, verb, f" {'would be ' if result.dry_run else ''}{verb}")


def tag_command(argv: list[str], op: str, description: str, examples: str, *, remove: bool, curate: Any) -> int:
    """`memory tag` and `memory untag`: SLUG TAGS, or filters then TAGS."""
    parser_ = parser(op, description, examples)
    parser_.add_argument("words", nargs="+", metavar="SLUG TAGS",
                         help="the memory and comma-separated tags; with filters, only the tags")
    add_bulk(parser_, op)
    add_json(parser_)
    args = parser_.parse_args(argv)
    filtered = any(getattr(args, name, None) for name in BULK_FILTERS)
    if len(args.words) == 2 and not filtered:
        args.slug, tags = args.words
    elif len(args.words) == 1 and (filtered or args.scope):
        args.slug, tags = None, args.words[0]
    else:
        parser_.error(f"give SLUG and TAGS (e.g. memory {op} decision-x auth,api), or filters and TAGS")
    return curate_command(parser_, args, op, lambda workspace, selection, dry_run: curate.tag(
        workspace, selection, tags, remove=remove, dry_run=dry_run))


def print_outcome(args: argparse.Namespace, workspace: Any, result: Any, verb: str) -> None:
    """What a bulk link or delete did (bulk.Outcome)."""
    print_warnings(workspace.warnings)
    if args.json:
        emit_json(result.as_json())
        return
    _print_changes(result, verb, "")


def _print_changes(result: Any, verb: str, total_verb: str) -> None:
    """Each memory a bulk command changed (or would), those already as asked, and the total."""
    for scope, slug in result.changed:
        print(f"{slug} ({scope} scope): {'would be ' if result.dry_run else ''}{verb}")
    if result.unchanged:
        print(f"Already as asked ({len(result.unchanged)}): " + ", ".join(slug for _, slug in result.unchanged))
    count = len(result.changed)
    print(f"{'Dry run: ' if result.dry_run else ''}{count} memor{'y' if count == 1 else 'ies'}{total_verb}"
          + ("; nothing was changed" if result.dry_run else ""))
