"""config.json: defaults, deep merge of global then project files, validation, provenance."""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..base import errors, jsontext

CONFIG_NAME = "config.json"

DEFAULTS: dict[str, Any] = {
    "embedding": {
        "provider": "auto",
        "endpoint": "http://localhost:11434",
        "model": "embeddinggemma",
        "embeddedModel": "minishlab/potion-retrieval-32M",
        "fallbackModels": ["nomic-embed-text", "all-minilm"],
        "cacheDirectory": ".embedding-cache",
        "apiKeyEnv": "OPENAI_API_KEY",
        "timeoutSeconds": 2.0,
    },
    "scopes": {"default": "auto", "enterprise": {"enabled": False}},
    "quality": {"orphanThreshold": 30, "minQualityScore": 50},
    "locks": {"waitSeconds": 30},
    "journal": {"maxMegabytes": 200},
    "graph": {"inverseLabels": {}},
    "search": {"semanticMode": "hybrid"},
    "capture": {
        "auto_summarize_threshold_kb": 50,
        "auto_summarize_languages": ["typescript", "javascript", "python", "go"],
        "capture_file_summaries": True,
        "capture_todos": True,
        "capture_subagent_results": True,
        "capture_sessions": True,
        "scope": "local",
        "exclude": [".env", ".env.*", "*.pem", "*.key", "*secret*", "*credential*", "id_rsa*", "*.p12"],
    },
    "injection": {
        "session_start_max_tokens": 500,
        "prompt_max_tokens": 1000,
        "max_nodes_per_query": 5,
        "gotchas_per_read": 3,
    },
    "retention": {"max_nodes": 500, "session_archive_days": 7, "prune_strategy": "least_connected_oldest"},
    "redaction": {"mode": "redact"},
}


class Config:
    """The effective configuration and, per leaf key, the file that set it."""

    def __init__(self, values: dict[str, Any], sources: dict[str, str] | None = None,
                 files: list[Path] | None = None) -> None:
        self.values = values
        self.sources = sources or {}  # dotted key -> file path or "default"
        self.files = files or []      # the config files that exist, in merge order

    def get(self, dotted: str, default: Any = None) -> Any:
        """Look up a dotted key such as `embedding.model`."""
        node: Any = self.values
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def section(self, name: str) -> dict[str, Any]:
        """A top-level section (a dict; empty when absent)."""
        value = self.values.get(name)
        return value if isinstance(value, dict) else {}


def read_file(path: Path) -> dict[str, Any] | None:
    """Parse one config file; None when it does not exist. Raises ConfigError when broken."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.ConfigError(f"cannot read config {path}: {exc}",
                                 "fix the file's permissions or encoding (UTF-8 JSON)") from None
    if not text.strip():
        return {}
    try:
        data = jsontext.loads(text)
    except ValueError as exc:  # (also a number too long to convert, or nesting past the stack)
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise errors.ConfigError(
            f"invalid config {path}: not valid JSON ({getattr(exc, 'msg', exc)}{where})",
            "fix the JSON syntax, or delete the file to use the defaults") from None
    if not isinstance(data, dict):
        raise errors.ConfigError(f"invalid config {path}: the top level must be a JSON object",
                                 'write it as {"section": {"key": value}}')
    check(data, path)
    return data


def check(data: dict[str, Any], path: Path | str) -> None:
    """Raise ConfigError naming the file, the key and the expected value when `data` is invalid."""
    from ..base import schema  # here: most runs have no config file to check

    problems = schema.validate(data, schema.load("config"))
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise errors.ConfigError(f"invalid config {path}: {first}{more}",
                                 "fix that key, or run `memory config` to see the effective settings")


SECRET_HINT = ("keep credentials out of config.json: put the key in an environment variable and name the variable, "
               "e.g. `memory config embedding.apiKeyEnv OPENAI_API_KEY --scope project`")


def refuse_secrets(value: Any, where: Path | str, dotted: str = "") -> None:
    """Raise InvalidInput when a setting in `value` looks like a credential: the project's
    config.json is committed with the project, so a secret there would be shared with everyone."""
    from ..base import redact

    if isinstance(value, dict):
        for key, item in value.items():
            refuse_secrets(item, where, f"{dotted}.{key}" if dotted else str(key))
    elif isinstance(value, list):
        for item in value:
            refuse_secrets(item, where, dotted)
    elif isinstance(value, str):
        _, kinds = redact.scrub_labelled(value, dotted.rsplit(".", 1)[-1])
        if kinds:
            raise errors.InvalidInput(f"{dotted or 'a setting'} in {where} looks like a secret ({', '.join(kinds)}); "
                                      "that file is committed with the project, so nothing was written", SECRET_HINT)


def _copied(value: Any) -> Any:
    """A deep copy of a JSON value (what config holds), without the `copy` module's cost at start-up."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


def merge(base: dict[str, Any], override: dict[str, Any], origin: str, sources: dict[str, str],
          prefix: str = "") -> dict[str, Any]:
    """Deep-merge `override` into a copy of `base`, recording the origin of every leaf."""
    result = _copied(base)
    for key, value in override.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(result.get(key), dict) and value:
            result[key] = merge(result[key], value, origin, sources, dotted + ".")
        else:
            result[key] = _copied(value)
            for known in [k for k in sources if k == dotted or k.startswith(dotted + ".")]:
                del sources[known]
            _record(value, dotted, origin, sources)
    return result


def _record(value: Any, dotted: str, origin: str, sources: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _record(item, f"{dotted}.{key}", origin, sources)
    else:
        sources[dotted] = origin


def load(paths: list[Path]) -> Config:
    """The defaults, then each existing file in order (later files win)."""
    sources: dict[str, str] = {}
    _record(DEFAULTS, "", "default", sources)
    sources = {key.lstrip("."): origin for key, origin in sources.items()}
    values = _copied(DEFAULTS)
    used: list[Path] = []
    for path in paths:
        data = read_file(path)
        if data is None:
            continue
        used.append(path)
        values = merge(values, data, str(path), sources)
    return Config(values, sources, used)


def parse_value(text: str) -> Any:
    """A value typed on the command line: JSON when it parses (true, 3, ["a"]), else a string."""
    try:
        return jsontext.loads(text)
    except ValueError:
        return text


def set_key(path: Path, dotted: str, value: Any, *, shared: bool = False) -> dict[str, Any]:
    """Set one dotted key in the config file at `path` (validated before it is written).
    `shared`: the file is committed with the project, and a secret-looking value is refused."""
    from ..base import fsutil

    if shared:
        refuse_secrets(value, path, dotted)
    data = read_file(path) or {}
    node = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value
    check(data, path)
    fsutil.write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return data


def unset_key(path: Path, dotted: str) -> bool:
    """Remove one dotted key from the config file at `path`; False when it was not set."""
    from ..base import fsutil

    data = read_file(path)
    if not data:
        return False
    node: Any = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return False
    if not isinstance(node, dict) or parts[-1] not in node:
        return False
    del node[parts[-1]]
    fsutil.write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True
