"""config.json: defaults, project over global deep merge, provenance, validation errors."""

from __future__ import annotations

import json

from helpers import Env, schema_errors


def write_config(path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_defaults_match_the_data_model(env: Env) -> None:
    data = env.ok("config", "--json").json()
    values = data["config"]
    assert values["embedding"] == {**values["embedding"], "provider": "auto", "endpoint": "http://localhost:11434",
                                   "model": "embeddinggemma", "fallbackModels": ["nomic-embed-text", "all-minilm"],
                                   "embeddedModel": "minishlab/potion-retrieval-32M",
                                   "cacheDirectory": ".embedding-cache"}
    assert values["scopes"] == {"default": "auto", "enterprise": {"enabled": False}}
    assert values["quality"] == {"orphanThreshold": 30, "minQualityScore": 50}
    assert set(data["sources"].values()) == {"default"}
    assert schema_errors(values, "config") == []


def test_project_deep_merges_over_global_with_sources(env: Env) -> None:
    global_file = env.global_dir / "config.json"
    project_file = env.project_dir / "config.json"
    write_config(global_file, {"embedding": {"model": "nomic-embed-text", "endpoint": "http://gpu:11434"}})
    write_config(project_file, {"embedding": {"model": "all-minilm"}, "quality": {"minQualityScore": 70}})
    data = env.ok("config", "--json").json()
    assert data["config"]["embedding"]["model"] == "all-minilm"
    assert data["config"]["embedding"]["endpoint"] == "http://gpu:11434"
    assert data["config"]["embedding"]["provider"] == "auto"
    assert data["sources"]["embedding.model"] == str(project_file)
    assert data["sources"]["embedding.endpoint"] == str(global_file)
    assert data["sources"]["embedding.provider"] == "default"
    text = env.ok("config").out
    assert "embedding.model" in text and str(project_file) in text
    one = env.ok("config", "embedding.endpoint").out
    assert "http://gpu:11434" in one and str(global_file) in one


def test_invalid_config_names_file_key_and_expected_value(env: Env) -> None:
    path = env.global_dir / "config.json"
    env.unchecked.add(path)
    write_config(path, {"scopes": {"default": "everywhere"}})
    result = env.fails("list")
    assert str(path) in result.err and "scopes.default" in result.err
    assert '"auto", "global", "project", "local"' in result.err
    write_config(path, {"quality": {"minQualityScore": 150}})
    assert "quality.minQualityScore" in env.fails("write", "x").err
    write_config(path, {"embedding": {"endpoint": "not a url"}})
    assert "http" in env.fails("list").err
    write_config(path, {"embedding": {"provider": "static"}})
    assert '"auto", "embedded", "ollama", "openai", "disabled"' in env.fails("list").err
    write_config(path, {"embedding": {"embeddedModel": "potion"}})
    result = env.fails("list")
    assert "embedding.embeddedModel" in result.err and "model directory path" in result.err
    write_config(path, "{broken json")
    result = env.fails("list")
    assert "not valid JSON" in result.err and "line 1" in result.err
    write_config(path, {"unknown": {"x": 1}})
    assert "unknown: is not an allowed key" in env.fails("config").err


def test_config_set_and_unset_validate_before_writing(env: Env) -> None:
    env.ok("config", "embedding.model", "nomic-embed-text")
    path = env.global_dir / "config.json"
    assert json.loads(path.read_text()) == {"embedding": {"model": "nomic-embed-text"}}
    env.ok("config", "scopes.enterprise.enabled", "true")
    assert json.loads(path.read_text())["scopes"]["enterprise"]["enabled"] is True
    before = path.read_text()
    env.fails("config", "scopes.default", "nowhere")
    env.fails("config", "nosuch.key", "1")
    assert path.read_text() == before
    env.ok("config", "--unset", "embedding.model")
    assert "model" not in json.loads(path.read_text())["embedding"]
    env.ok("config", "quality.minQualityScore", "60", "--scope", "project")
    assert json.loads((env.project_dir / "config.json").read_text()) == {"quality": {"minQualityScore": 60}}
