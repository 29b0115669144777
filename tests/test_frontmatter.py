"""Frontmatter I/O: scalars round-trip through YAML, rewrites touch only changed keys."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from _lib.base import clock
from _lib.model import frontmatter, memory

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@given(TEXT)
@settings(max_examples=400)
def test_any_string_scalar_round_trips(value: str) -> None:
    emitted = frontmatter.emit_field("key", value)
    assert yaml.load(emitted, Loader=yaml.CSafeLoader) == {"key": value}
    assert frontmatter.parse(emitted) == {"key": value}


@given(st.lists(TEXT, max_size=5), st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
                                                 st.one_of(TEXT, st.lists(TEXT, max_size=3)), max_size=4))
@settings(max_examples=200)
def test_lists_and_mappings_round_trip(items: list[str], mapping: dict) -> None:
    emitted = frontmatter.render({"items": items, "mapping": mapping})
    assert yaml.safe_load(emitted) == {"items": items, "mapping": mapping}


@given(TEXT, TEXT)
def test_replace_keeps_other_keys_byte_for_byte(before: str, after: str) -> None:
    original = ("type: learning\n# comment\ncustom:  {a: 1}   # trailing\n" + frontmatter.emit_field("title", before)
                + "list:\n- x\n- y\n")
    rewritten = frontmatter.replace_fields(original, {"title": after})
    assert rewritten.startswith("type: learning\n# comment\ncustom:  {a: 1}   # trailing\n")
    assert rewritten.endswith("list:\n- x\n- y\n")
    assert frontmatter.parse(rewritten)["title"] == after


def test_titles_round_trip_through_files() -> None:
    for title in ["C# & F#", "Quotes \"double\" and 'single'", "[brackets] {braces} | pipes", "emoji 🎉 and RTL שלום",
                  "yes", "123", "- dash", "# not a comment", "key: value"]:
        text = f"---\n{frontmatter.render({'type': 'learning', 'tags': ['a']})}---\n\n# {title}\n\nbody"
        parsed = memory.parse(text, __import__("pathlib").Path("x.md"), "project")
        assert parsed.title == title
        assert parsed.content == "body"


def test_timestamps_unquoted_and_quoted_are_normalised() -> None:
    fields = frontmatter.parse('a: 2025-12-08T11:00:00Z\nb: "2026-01-10T10:00:00+02:00"\nc: 2026-01-10\n')
    assert fields["a"] == "2025-12-08T11:00:00Z"
    assert clock.normalise(fields["b"]) == "2026-01-10T08:00:00Z"
    assert fields["c"] == "2026-01-10T00:00:00Z"


def test_memory_graph_related_lists_and_wiki_links() -> None:
    fields = frontmatter.parse("related: [[file-src-config-ts]], [[discovery-jwt-pattern]]\nother: [[x]]\n")
    assert fields["related"] == ["file-src-config-ts", "discovery-jwt-pattern"]
    assert fields["other"] == ["x"]
    assert frontmatter.wiki_targets("see [[a]], [[b|B text]] and [[c#section]]; [[a]] again") == ["a", "b", "c"]


def test_alias_bombs_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8))
    try:
        frontmatter.parse(bomb)
    except Exception as exc:  # noqa: BLE001 - the type is what matters
        assert type(exc).__name__ == "InvalidInput"
    else:
        raise AssertionError("an alias bomb must be refused")


def test_a_lone_surrogate_escape_is_read_as_utf8_can_hold_it(monkeypatch) -> None:
    # JSON's "\uD83D" escape (read by the lenient reading) and YAML's (read by PyYAML without
    # libyaml) write half of a pair, which no UTF-8 text, catalog or JSON file can hold: it reads as
    # U+FFFD, and two halves escaped one by one as the character they make
    assert frontmatter.parse_lenient('title: Fix: it\ntags: ["\\ud83d\\ude00", "\\ud800"]\n') == \
        {"title": "Fix: it", "tags": ["\U0001f600", "\ufffd"]}
    yaml = frontmatter.yaml_module()
    monkeypatch.setattr(frontmatter, "_loader_class", lambda module: yaml.SafeLoader)
    fields = frontmatter.parse('title: "Half \\uD83D emoji"\ntags: ["\\ud83d\\ude00"]\n"k\\udfff": {"\\udfff": 1}\n')
    assert fields == {"title": "Half \ufffd emoji", "tags": ["\U0001f600"], "k\ufffd": {"\ufffd": 1}}


def test_deep_or_self_referencing_frontmatter_is_refused() -> None:
    # a value nested past any memory's needs, or an alias inside its own anchor (a cycle that never
    # ends), is refused as invalid input instead of exhausting Python's stack
    for text in ("x: " + "[" * 900 + "]" * 900, "title: &b [*b]", "owner: &m {name: *m}"):
        try:
            frontmatter.parse(text)
        except Exception as exc:  # noqa: BLE001 - the type is what matters
            assert type(exc).__name__ == "InvalidInput", text
        else:
            raise AssertionError(f"must be refused: {text}")
    # nor read the lenient way, line by line, as the bash era's files are
    for depth in (900, 5000):
        assert frontmatter.parse_lenient("title: Fix: it\nx: " + "[" * depth + "]" * depth) is None


SCALARS = st.one_of(TEXT, st.integers(-10**6, 10**6), st.booleans(), st.none())


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True),
                       st.one_of(SCALARS, st.lists(SCALARS, max_size=4),
                                 st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
                                                 st.one_of(TEXT, st.lists(TEXT, min_size=1, max_size=3)),
                                                 max_size=3)),
                       max_size=6))
@settings(max_examples=500)
def test_fast_parser_agrees_with_yaml_on_what_we_write(fields: dict) -> None:
    emitted = frontmatter.render(fields)
    expected = yaml.load(emitted, Loader=yaml.CSafeLoader) or {}
    fast = frontmatter.parse_simple(emitted)
    assert fast is not None, emitted
    assert fast == expected


@given(st.text(st.sampled_from(list("ab:- \n\"'#[]{}\\0x7*/"))), )
@settings(max_examples=1000)
def test_fast_parser_never_disagrees_with_yaml(text: str) -> None:
    fast = frontmatter.parse_simple(text)
    if fast is None:
        return
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        raise AssertionError(f"fast parser accepted what YAML rejects: {text!r} -> {fast!r}") from exc
    assert fast == (expected or {}), text


def test_fast_parser_handles_the_data_model_example() -> None:
    from helpers import OAUTH_EXAMPLE

    text = OAUTH_EXAMPLE.split("---\n")[1]
    assert frontmatter.parse_simple(text) == yaml.safe_load(text)
    globs = "paths:\n  - src/auth/**\n  - docs/*.md\n"  # as written by hand, unquoted
    assert frontmatter.parse_simple(globs) == yaml.safe_load(globs) == {"paths": ["src/auth/**", "docs/*.md"]}
    assert frontmatter.parse_simple("links:\n- a\n- b\nlabels:\n  a: implements\n  b:\n    - x\n    - z\n") == {
        "links": ["a", "b"], "labels": {"a": "implements", "b": ["x", "z"]}}
    for not_simple in ("tags: [a, b]\n", "created: 2026-01-01\n", "a: yes\n", "a: b # c\n", "# c\na: b\n",
                       "a: |\n  text\n", "a: &x b\n", "a: 1.5\n"):
        assert frontmatter.parse_simple(not_simple) is None, not_simple


# -- timestamps: the canonical form is taken as is, without datetime; anything else is parsed --------

def _parsed(value: str) -> str | None:
    moment = clock.parse(value)
    return clock.to_iso(moment) if moment else None


@given(st.tuples(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
                 st.integers(0, 61), st.integers(0, 61)))
@settings(max_examples=1500)
def test_a_canonical_timestamp_normalises_as_parsing_it_would(fields: tuple[int, ...]) -> None:
    value = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z".format(*fields)
    assert clock.normalise(value) == _parsed(value)


@given(st.text(alphabet="0123456789-T:Z .+", max_size=22))
@settings(max_examples=1500)
def test_any_near_timestamp_normalises_as_parsing_it_would(value: str) -> None:
    assert clock.normalise(value) == _parsed(value)


def test_times_from_the_clock_and_from_epoch_are_canonical() -> None:
    assert clock.is_canonical(clock.now_iso())
    assert clock.from_epoch(0) == "1970-01-01T00:00:00Z"
    assert clock.from_epoch(1_700_000_000.9) == "2023-11-14T22:13:20Z"
    assert clock.from_epoch(300_000_000_000) == "9999-12-31T23:59:59Z" == clock.normalise("9999-12-31T23:59:59Z")
    assert clock.from_epoch(-70_000_000_000) == "0001-01-01T00:00:00Z"
    assert clock.normalise("2024-02-29T10:00:00Z") == "2024-02-29T10:00:00Z"  # past the 28th: parsed
    assert clock.normalise("2023-02-29T10:00:00Z") is None
