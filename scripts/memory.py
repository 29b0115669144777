#!/usr/bin/env python3
"""memory <operation> [args]: the command line of the memory plugin for Claude Code.

bin/memory runs this file. It first hands the command to the hook server when one listens
(scripts/_lib/session/hookclient.py: why, and its rules), which runs main() in a forked child
with this process's descriptors, directory and environment; else it runs it here. Until it
knows which, nothing but posix and sys is imported.
"""

import posix
import sys

HERE = (__file__ if __file__.startswith("/") else f"{posix.getcwd()}/{__file__}").rpartition("/")[0]
NOT_OPERATIONS = {"memory"}


def operations() -> dict[str, str]:
    """Operation name -> script path (`suggest-links` runs suggest_links.py)."""
    import os

    found = {}
    for name in sorted(os.listdir(HERE)):
        stem, ext = os.path.splitext(name)
        if ext == ".py" and not stem.startswith("_") and stem not in NOT_OPERATIONS:
            found[stem.replace("_", "-")] = os.path.join(HERE, name)
    return found


def summary(path: str) -> str:
    """The first line of a script's docstring, without importing it."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith('"""'):
                return line.strip('"').strip()
    return ""


def usage() -> str:
    ops = operations()
    width = max(len(name) for name in ops)
    lines = ["usage: memory <operation> [options]", "",
             "Persistent memory for Claude Code: decisions, learnings, gotchas and more, kept as",
             "markdown files in four scopes (enterprise, local, project, global).", "", "operations:"]
    lines += [f"  {name.ljust(width)}  {summary(path)}" for name, path in ops.items()]
    lines += ["", "Run `memory <operation> --help` for its options and examples."]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        if len(argv) > 1 and argv[0] == "help":
            return main([argv[1], "--help"])
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] in ("--version", "-V"):
        sys.path.insert(0, HERE)
        from _lib import __version__

        print(f"memory {__version__}")
        return 0
    ops = operations()
    name = argv[0]
    if name not in ops:
        import difflib

        close = difflib.get_close_matches(name, list(ops), n=3)
        sys.stderr.write(f"error: unknown operation {name!r}\n")
        sys.stderr.write(f"hint: did you mean {' or '.join(close)}?\n" if close else
                         "hint: run `memory --help` to list the operations\n")
        return 2
    sys.argv = [f"memory {name}", *argv[1:]]
    sys.path.insert(0, HERE)
    import importlib

    import _cli

    _cli.run(importlib.import_module(name.replace("-", "_")).main)  # a module import uses cached bytecode
    return 0


def run() -> None:
    """Console-script entry point (`pip install .` puts `memory` on PATH)."""
    sys.exit(main(sys.argv[1:]))


def served(argv: list[str]) -> "int | None":
    """The exit status of `memory ARGV` run by the hook server; None: run it here."""
    root = HERE.rpartition("/")[0]
    server = f"{root}/hooks/_server.py"
    try:
        posix.stat(server)  # (an installed package has none)
        from _lib.session import hookclient

        return hookclient.delegate("memory", root, server, argv, died=1)
    except Exception:  # noqa: BLE001 - the server is an accelerator: run it here instead
        return None


if __name__ == "__main__":
    code = served(sys.argv[1:])
    if code is not None:
        posix._exit(code)  # (this process printed nothing: the child did)
    run()
