#!/usr/bin/env python3
"""Show the effective configuration and where each value comes from, or change one setting."""

from __future__ import annotations

import json

import _cli
from _lib.workspace import config, scopes
from _lib.base import errors
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory config                                   # every setting, with the file that set it
  memory config embedding.model                   # one setting
  memory config embedding.model nomic-embed-text  # set it in the global config.json
  memory config scopes.default project --scope project
  memory config --unset embedding.model

Values are parsed as JSON when they can be (true, 30, ["a","b"]), else taken as text.
The project file (.claude/memory/config.json) deep-merges over the global one
(~/.claude/memory/config.json); both are checked against schemas/config.schema.json.
The project file is committed, so a value that looks like a credential is refused there:
keep keys in the environment (embedding.apiKeyEnv names the variable holding the API key).
"""


def main(argv: list[str]) -> int:
    parser = _cli.parser("config", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("key", nargs="?", help="a dotted setting such as embedding.model")
    parser.add_argument("value", nargs="?", help="new value to store")
    parser.add_argument("--unset", action="store_true", help="remove KEY from the config file")
    parser.add_argument("--scope", choices=("global", "project"), default="global",
                        help="which config.json to change (default: global)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()

    if args.unset:
        if not args.key or args.value is not None:
            parser.error("--unset takes exactly one KEY")
        target, removed = scopes.change_config(workspace, args.scope, args.key, unset=True)
        print(f"{'Removed' if removed else 'Not set:'} {args.key} in {target}")
        return 0
    if args.value is not None:
        value = config.parse_value(args.value)
        target, _ = scopes.change_config(workspace, args.scope, args.key, value)
        print(f"Set {args.key} = {json.dumps(value, ensure_ascii=False)} in {target}")
        return 0

    effective = workspace.config
    if args.key:
        value = effective.get(args.key, _MISSING)
        if value is _MISSING:
            raise errors.NotFound(f"no setting {args.key!r}", "run `memory config` to list every setting")
        source = _source_of(effective, args.key)
        if args.json:
            _cli.emit_json({"key": args.key, "value": value, "source": source})
        else:
            print(f"{args.key} = {json.dumps(value, ensure_ascii=False)}  ({source})")
        return 0
    if args.json:
        _cli.emit_json({"config": effective.values, "sources": effective.sources,
                        "files": [str(path) for path in effective.files]})
        return 0
    rows = [[key, json.dumps(effective.get(key), ensure_ascii=False), source]
            for key, source in sorted(effective.sources.items())]
    print(_cli.table(["KEY", "VALUE", "SOURCE"], rows))
    return 0


_MISSING = object()


def _source_of(effective: config.Config, key: str) -> str:
    sources = {origin for dotted, origin in effective.sources.items() if dotted == key or dotted.startswith(key + ".")}
    return ", ".join(sorted(sources)) or "default"


if __name__ == "__main__":
    _cli.run(main)
