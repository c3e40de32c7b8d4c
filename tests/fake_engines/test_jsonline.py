"""The engines' import-free JSON writer against the standard library's."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from turngate.engines.fake.jsonline import dumps

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(documents)
def test_compact_matches_json_dumps(document: object) -> None:
    assert dumps(document) == json.dumps(document, ensure_ascii=False, separators=(",", ":"))


@given(documents)
def test_pretty_matches_json_dumps_indent_2(document: object) -> None:
    assert dumps(document, indent=2) == json.dumps(document, ensure_ascii=False, indent=2)
