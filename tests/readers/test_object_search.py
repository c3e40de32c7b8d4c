"""The object search finds what Python's decoder finds, brace by brace, on any text.

The rule it implements is the naive one: try ``raw_decode`` at every brace, left to right, and skip
the inside of each object found. The search gets there another way (an RE2 grammar of shallow JSON,
the windowed decoder for deeper structures), so it is held to the rule on text built from the pieces
where the two could disagree: every scalar form the decoder takes or refuses, escapes, raw control
characters, non-ASCII text (byte and character offsets differ), mismatched closers, and structures
on both sides of the depth the grammar spells out.
"""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turngate.engines.readers import _json_grammar, _object_search

PIECES = [
    *["{", "}", "[", "]", '"', ":", ",", " ", "\n", "\t", "x", "\\", "\x01", "é", "😀", "\ud83d"],
    *["1", "-1", "0", "01", "1.5", "1.", "1e5", "1E+", "-", "١", "true", "tru", "null", "NaN", "Infinity"],
    *["-Infinity", '"a"', '"é"', '"\\u00e9"', '"\\u12"', '"\\x"', '"\\n"', '"a\nb"', "{}", "[]"],
    *['{"a":', '"a":', ',"b":', '[{"a":[', "]}", "}]", '{"k":1}', '{"k":{"l":[1,{"m":2}]}}'],
]


def naive_objects(text: str) -> list[tuple[int, int]]:
    decoder = json.JSONDecoder()
    found = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append((start, end))
            start = text.find("{", end)
        else:  # pragma: no cover - text from "{" decodes to an object or not at all
            start = text.find("{", start + 1)
    return found


def searched(text: str) -> list[tuple[int, int]]:
    # small windows, so that windows are cut and doubled even in short texts
    with patch.object(_object_search, "_FIRST_WINDOW", 32):
        return [(found.start, found.end) for found in _object_search.iter_objects(text)]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_every_object_the_decoder_finds_and_nothing_else(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert searched(text) == naive_objects(text)


def nested(depth: int, kind: str) -> str:
    """An object ``depth`` levels deep, the inner levels objects or arrays."""
    value = "1"
    for _ in range(depth - 1):
        value = f'{{"a":{value}}}' if kind == "object" else f"[{value}]"
    return f'{{"k":{value}}}'


@pytest.mark.parametrize("kind", ["object", "array"])
@pytest.mark.parametrize("depth", range(1, _json_grammar.SCANNED_DEPTH + 4))
@pytest.mark.parametrize("around", [("", ""), ("noise {", " tail"), ('{"a":1 x ', ' {"b":2}'), ("é ", " 😀")])
def test_objects_each_side_of_the_scanned_depth(kind: str, depth: int, around: tuple[str, str]) -> None:
    text = around[0] + nested(depth, kind) + around[1]
    assert searched(text) == naive_objects(text)
    assert (around[0] and around[0][0] == "{") or searched(text)[0][0] == len(around[0])


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)


@given(JSON_VALUES, st.text(max_size=8), st.text(max_size=8))
def test_any_object_json_writes_is_found_whole_in_any_text(value: object, before: str, after: str) -> None:
    document = json.dumps({"v": value})
    text = before + document + after
    assert searched(text) == naive_objects(text)


def test_the_grammar_is_exactly_the_decoders_on_its_own_depth() -> None:
    import re2

    whole = re2.compile(f"(?:{_json_grammar.OBJECT})")
    for text in ['{"a":[1,{"b":null}],"c":"é"}', '{"a":NaN,"b":-Infinity,"c":1e5}', "{ }", '{"a":"\\u00e9"}']:
        json.loads(text)
        assert whole.fullmatch(text), text
    for text in ['{"a":01}', '{"a":1.}', '{"a":[1,]}', '{"a":1,}', '{"a":"\\x"}', '{"a":"\n"}', '{"a":١}']:
        with pytest.raises(ValueError):
            json.loads(text)
        assert not whole.fullmatch(text), text


@pytest.mark.parametrize("level", ['{"é":', '{"a":[],"😀":', '[{"a":', '{"a":"\\u00e9 ]","b":'])
@pytest.mark.parametrize("tail", ['{"k":"é"}', ' x {"k":1} 😀 {"l":[2]}', "}" * 5])
def test_past_a_deep_run_with_text_that_is_not_ascii(level: str, tail: str) -> None:
    """Deep runs are measured on the text's UTF-8: the objects after one are found where the decoder
    finds them, in character indices."""
    for depth in (250, 600):
        text = "é " + level * depth + tail
        assert searched(text) == naive_objects(text)
