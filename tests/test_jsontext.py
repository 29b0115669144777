"""The hooks' JSON (base/jsontext on CPython's C scanner and encoder) reads and writes as json does."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import REPO
from _lib.base import jsontext

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@given(VALUES)
@settings(max_examples=400)
def test_values_round_trip_as_json_writes_and_reads_them(value: object) -> None:
    text = jsontext.dumps(value)
    assert text == json.dumps(value, ensure_ascii=False)
    assert jsontext.loads(text) == json.loads(text) == value
    assert jsontext.loads(f" \n\t{text}\r\n ") == value
    assert jsontext.loads(text.encode("utf-8")) == value


@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasNIy \\\n', max_size=24))
@settings(max_examples=1500)
def test_any_text_is_read_as_json_reads_it_or_refused_as_json_refuses_it(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsontext.loads(text)
        return
    found = jsontext.loads(text)
    assert found == expected or (isinstance(found, float) and math.isnan(found) and math.isnan(expected))


@pytest.mark.parametrize("data", ['{"a": "\u00e9"}'.encode("utf-8-sig"), '{"a": "\u00e9"}'.encode("utf-16"),
                                  '{"a": "\u00e9"}'.encode("utf-16-le"), '{"a": "\u00e9"}'.encode("utf-32"),
                                  '["\ud83d"]'.encode("utf-8", "surrogatepass"), b"[1]"],
                         ids=["utf-8-bom", "utf-16", "utf-16-le", "utf-32", "surrogate", "utf-8"])
def test_bytes_are_read_in_the_encoding_json_finds_in_them(data: bytes) -> None:
    # json.loads takes bytes in UTF-8 (a BOM allowed, a surrogate passed), UTF-16 or UTF-32
    assert jsontext.loads(data) == json.loads(data)


ANY_TEXT = st.text(st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=8)  # halves


@given(st.dictionaries(ANY_TEXT, st.lists(ANY_TEXT, max_size=3), max_size=3))
@settings(max_examples=300)
def test_encoded_values_are_utf_8_that_reads_back_the_same_even_with_lone_surrogates(value: object) -> None:
    data = jsontext.encoded(value)
    # as json's ASCII escapes read back: a lone surrogate comes back, a high then a low one as one character
    assert json.loads(data.decode("utf-8")) == json.loads(json.dumps(value))
    assert jsontext.loads(data) == json.loads(json.dumps(value))


def test_what_json_cannot_write_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError):
        jsontext.dumps({"a": object()})
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError):
        jsontext.dumps(cycle)


def test_reading_and_writing_a_payload_imports_neither_json_nor_re() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from _lib.base import jsontext; "
            "jsontext.dumps(jsontext.loads('{\"a\": [1, 2.5, \"x\", null, true]}')); "
            "print(' '.join(sorted(m for m in ('json', 're', 'enum') if m in sys.modules)))")
    run = subprocess.run([sys.executable, "-S", "-c", code, str(REPO / "scripts")], capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == ""


@pytest.mark.parametrize("text", ['{"session_id": "abc", "tool_input": {', "[1] x", '{"a": tru}', "", "\ufeff{}"])
def test_a_broken_document_is_refused_with_a_value_error_before_json_is_loaded(text: str) -> None:
    # (the C scanner reports its errors through json.decoder: loaded or not, a ValueError comes out)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from _lib.base import jsontext\n"
            "try:\n    jsontext.loads(sys.argv[2])\nexcept ValueError as exc:\n    print(type(exc).__name__)")
    run = subprocess.run([sys.executable, "-S", "-c", code, str(REPO / "scripts"), text], capture_output=True,
                         text=True)
    assert run.returncode == 0 and run.stdout.strip() == "JSONDecodeError", run.stderr


def test_json_nested_past_the_stack_is_a_value_error() -> None:
    # json.loads raises RecursionError there, which no reader of a file (all catch ValueError) expects
    for text in ("[" * 100_000 + "]" * 100_000, '{"a":' * 5000 + "1" + "}" * 5000):
        with pytest.raises(ValueError, match="nested deeper"):
            jsontext.loads(text)
        with pytest.raises(ValueError, match="nested deeper"):
            jsontext.loads(text.encode())
