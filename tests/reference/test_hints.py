"""Ask-user hints: the four documented forms, the fake engines' defects, strict typing, linear scanning."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference.conftest import DEFECTS, FORMS
from tests.work import calls_made
from turngate.base.bounded_yaml import load_bounded
from turngate.engines.fake.hint_forms import render
from turngate.implementations.reference.hints import (
    ASK_USER_HINT_MALFORMED,
    find_hints,
    is_ask_user_envelope,
    read_hint,
    read_payload,
    strip_hints,
)

PROSE = "I need to know the greeting style first."
OPTIONS = [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}]
FULL: dict[str, Any] = {
    "prompt": "Which greeting style do you want?",
    "kind": "choose_one",
    "options": OPTIONS,
    "ui_hints": {"widget": "radio", "hint": "选一个"},
    "context": {"step": 2, "tags": ["style"], "nested": {"ok": True}},
    "required_fields": ["style"],
    "default_decision_policy": "first_option",
    "interaction_id": 42,
}

# What each defect must be reported as, whatever the form (None: depends on the form, see below).
DEFECT_PROBLEM = {
    "missing_prompt": "prompt: missing",
    "non_numeric_interaction_id": "interaction_id: 'next-question': not an integer",
    "truncated": "unclosed",
}
BROKEN_SYNTAX_PROBLEM = {
    "yaml_block": "broken YAML at line 3",  # the over-indented line
    "yaml_fenced": "broken YAML at line 3",
    "yaml_flow": "unclosed flow mapping",  # closing brace lost, a quote never closed
    "legacy_json": "unclosed JSON envelope",  # dangling comma, closing braces lost
}


def _rendered(form: str, defect: str | None = None, **overrides: Any) -> str:
    spec: dict[str, Any] = {"form": form, "text": PROSE, **FULL, **overrides}
    if defect is not None:
        spec["defect"] = defect
    return render(spec)


# -- the documented forms, clean -------------------------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/ask-user-optional-enrichment")
@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.parametrize("form", FORMS)
def test_every_form_parses_clean_with_all_enrichment_fields(form: str) -> None:
    text = _rendered(form)
    (hint,) = find_hints(text)
    assert (hint.form, hint.clean, hint.problems) == (form, True, ())
    expected = dict(FULL)
    assert dict(hint.fields) == expected
    start, end = hint.span
    assert text[:start] == PROSE + "\n\n"
    assert end == len(text)  # the span is exactly the hint
    assert strip_hints(text) == PROSE + "\n\n"
    assert read_hint(text) == hint


def test_the_documented_yaml_block_example_parses() -> None:
    text = (
        "<ASK_USER_YAML>\n"
        "ask_user:\n"
        "  prompt: Which greeting style do you want?\n"
        "  kind: choose_one\n"
        "  options:\n"
        "    - {label: Formal, value: formal}\n"
        "    - {label: Casual, value: casual}\n"
        "</ASK_USER_YAML>"
    )
    hint = read_hint(text)
    assert hint is not None
    assert hint.clean
    assert dict(hint.fields) == {
        "prompt": "Which greeting style do you want?",
        "kind": "choose_one",
        "options": OPTIONS,
    }


@pytest.mark.parametrize(
    ("text", "form", "prompt"),
    [
        (
            '{"outcome":"ask_user","interaction":{"interaction_id":1,"prompt":"Which?"}}',
            "legacy_json",
            "Which?",
        ),
        ('{ "outcome" :\n  "ask_user",\n  "interaction": {"prompt": "Which?"}\n}', "legacy_json", "Which?"),
        ('Text {"outcome": "ask_user", "interaction": {"prompt": "a } b"}} more', "legacy_json", "a } b"),
        ("ask_user: {prompt: Don't stop, kind: confirm}", "yaml_flow", "Don't stop"),
        ("ask_user: {prompt: 'It''s } fine', kind: confirm}", "yaml_flow", "It's } fine"),
        ('  ask_user:   {prompt: "say \\"}\\""}', "yaml_flow", 'say "}"'),
        ("ask_user: {prompt: 'Which?',\n  kind: confirm}", "yaml_flow", "Which?"),
        ("<ASK_USER_YAML>ask_user: {prompt: inline}</ASK_USER_YAML>", "yaml_block", "inline"),
        ("<ASK_USER_YAML>\nprompt: bare payload\n</ASK_USER_YAML>", "yaml_block", "bare payload"),
        ("x\r\n```ask_user_yaml\r\nask_user:\r\n  prompt: crlf\r\n```\r\n", "yaml_fenced", "crlf"),
        ("  ```ask_user_yaml  \n  ask_user:\n    prompt: indented\n  ```", "yaml_fenced", "indented"),
    ],
)
def test_form_variants(text: str, form: str, prompt: str) -> None:
    hint = read_hint(text)
    assert hint is not None, hint
    assert hint.form == form, hint
    assert hint.clean, hint
    assert hint.fields["prompt"] == prompt


def test_pyyaml_refuses_a_question_mark_ending_a_plain_flow_scalar() -> None:
    # PyYAML stops plain scalars at "?" inside flow collections (YAML 1.2 would not): such a hint is
    # malformed and the pending interaction keeps its baseline. Pinned so a change here is deliberate.
    hint = read_hint("ask_user: {prompt: Which style?, kind: choose_one}")
    assert hint is not None
    assert not hint.clean
    assert hint.problems == (f"{ASK_USER_HINT_MALFORMED}: yaml_flow: broken YAML at line 1",)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Just asking: which style do you want?",
        "We use ask_user: {prompt: x} inline in prose, not at a line start",
        "```yaml\nask_user\n```",
        "```ask_user_yaml_extra\nask_user:\n  prompt: x\n```",
        "text ```ask_user_yaml\nask_user:\n  prompt: x\n```",
        '{"interaction": {"prompt": "Which?"}, "outcome": "ask_user"}',  # outcome not first: not a hint
        '{"outcome": "done", "interaction": {"prompt": "Which?"}}',
        "<ask_user_yaml>\nask_user:\n  prompt: x\n</ask_user_yaml>",
        "ask_user:\n  prompt: a bare YAML mapping outside any block",
    ],
)
def test_text_without_a_documented_hint(text: str) -> None:
    assert find_hints(text) == ()
    assert strip_hints(text) == text


# -- the fake engines' defects ---------------------------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/ask-user-validation/incomplete-payload")
@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("form", FORMS)
def test_every_defect_of_every_form_is_a_malformed_hint(form: str, defect: str) -> None:
    text = _rendered(form, defect)
    hint = read_hint(text)
    assert hint is not None, text
    assert hint.form == form
    assert not hint.clean
    assert dict(hint.fields) == {}
    assert hint.problems
    assert all(problem.startswith(f"{ASK_USER_HINT_MALFORMED}: {form}: ") for problem in hint.problems)
    expected = BROKEN_SYNTAX_PROBLEM[form] if defect == "broken_syntax" else DEFECT_PROBLEM.get(defect)
    if defect == "wrong_types":
        assert [problem.split(": ", 2)[2] for problem in hint.problems] == [
            "kind: 7: not a string",
            "options: 'formal or casual': not a list",
        ]
    else:
        assert expected is not None, hint.problems
        assert any(expected in problem for problem in hint.problems), hint.problems
    # Cut or broken, the hint runs to its end and never leaks into the remaining text.
    assert strip_hints(text) == PROSE + "\n\n"


@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("form", FORMS)
def test_defects_with_the_minimal_payload_are_still_malformed(form: str, defect: str) -> None:
    text = render({"form": form, "defect": defect, "prompt": "Which?"})
    hint = read_hint(text)
    assert hint is not None
    assert not hint.clean
    assert hint.fields == {}
    assert strip_hints(text) == ""


def test_an_unclosed_block_before_a_closed_one_ends_where_the_next_begins() -> None:
    lost = "<ASK_USER_YAML>\nask_user:\n  prompt: lost\n"
    text = lost + "<ASK_USER_YAML>\nask_user:\n  prompt: kept\n</ASK_USER_YAML>"
    first, second = find_hints(text)
    assert not first.clean
    assert "unclosed" in first.problems[0]
    assert first.span == (0, text.index("<ASK_USER_YAML>", 1))
    assert second.span[0] == first.span[1]
    assert second.clean
    assert second.fields["prompt"] == "kept"


# -- typing: a hint is clean only when every field has the right type ------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/ask-user-validation/incomplete-payload")
@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({}, "prompt: missing"),
        ({"prompt": None}, "prompt: missing"),
        ({"prompt": "   "}, "prompt: empty"),
        ({"prompt": 5}, "prompt: 5: not a string"),
        ({"prompt": "p", "interaction_id": True}, "interaction_id: True: not an integer"),
        ({"prompt": "p", "interaction_id": "1"}, "interaction_id: '1': not an integer"),
        ({"prompt": "p", "interaction_id": 1.0}, "interaction_id: 1.0: not an integer"),
        ({"prompt": "p", "kind": ["choose_one"]}, "kind: ['choose_one']: not a string"),
        ({"prompt": "p", "options": {"label": "a", "value": "a"}}, "not a list"),
        ({"prompt": "p", "options": ["a"]}, "options[0]: not a mapping"),
        ({"prompt": "p", "options": [{"value": "a"}]}, "options[0].label: missing"),
        ({"prompt": "p", "options": [{"label": 1, "value": "a"}]}, "options[0].label: not a string"),
        ({"prompt": "p", "options": [{"label": "a"}]}, "options[0].value: missing"),
        ({"prompt": "p", "options": [{"label": "a", "value": [1]}]}, "options[0].value: not a string"),
        ({"prompt": "p", "ui_hints": ["radio"]}, "ui_hints: not a mapping"),
        ({"prompt": "p", "context": "step 2"}, "context: not a mapping"),
        ({"prompt": "p", "context": {1: "a"}}, "context: not JSON-compatible"),
        ({"prompt": "p", "ui_hints": {"x": float("nan")}}, "ui_hints: not JSON-compatible"),
        ({"prompt": "p", "context": {"when": {1, 2}}}, "context: not JSON-compatible"),
        ({"prompt": "p", "required_fields": "style"}, "required_fields: not a list of strings"),
        ({"prompt": "p", "required_fields": ["a", 2]}, "required_fields: not a list of strings"),
        ({"prompt": "p", "default_decision_policy": 1}, "default_decision_policy: 1: not a string"),
        (["prompt", "p"], "payload: not a mapping"),
    ],
)
def test_type_mismatches_make_the_whole_hint_malformed(payload: Any, problem: str) -> None:
    fields, problems = read_payload("yaml_block", payload)
    assert fields == {}
    assert any(
        line == f"{ASK_USER_HINT_MALFORMED}: yaml_block: {problem}" or problem in line for line in problems
    )


def test_a_bad_field_drops_the_good_ones_too() -> None:
    fields, problems = read_payload("yaml_flow", {**FULL, "ui_hints": "radio"})
    assert fields == {}
    assert problems == (f"{ASK_USER_HINT_MALFORMED}: yaml_flow: ui_hints: not a mapping",)


def test_nulls_are_absent_and_unknown_keys_are_ignored() -> None:
    fields, problems = read_payload(
        "yaml_block", {"prompt": "p", "kind": None, "options": None, "interaction_id": None, "note": 1}
    )
    assert (dict(fields), problems) == ({"prompt": "p"}, ())


def test_option_extras_are_dropped_and_scalars_kept() -> None:
    options = [{"label": "Yes", "value": True, "description": "go"}, {"label": "Two", "value": 2}]
    fields, problems = read_payload("yaml_block", {"prompt": "p", "options": options})
    assert problems == ()
    assert fields["options"] == [{"label": "Yes", "value": True}, {"label": "Two", "value": 2}]


def test_yaml_document_shapes() -> None:
    for body, problem in [
        ("", "empty"),
        ("ask_user: just a string", "ask_user: not a mapping"),
        ("- a list", "payload: not a mapping"),
        ("ask_user:\n  prompt: [unclosed", "broken YAML at line 3"),  # where the stream ended
        ("ask_user:\n  prompt: a\n  when: 2024-01-01\n  context: {at: 2024-01-01}", "context: not JSON"),
        # refused as read, before anything walks the value it stands for (base/bounded_yaml.py)
        ("ask_user: {prompt: p, context: &c {self: *c}}", "YAML too large (an alias that contains itself)"),
    ]:
        hint = read_hint(f"<ASK_USER_YAML>\n{body}\n</ASK_USER_YAML>")
        assert hint is not None
        assert not hint.clean
        assert any(problem in line for line in hint.problems), (body, hint.problems)


def test_alias_bombs_are_bounded() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    text = (
        "<ASK_USER_YAML>\n"
        + "\n".join(lines)
        + "\nask_user: {prompt: p, context: {bomb: *a8}}\n</ASK_USER_YAML>"
    )
    hint = read_hint(text)
    assert hint is not None
    assert not hint.clean
    # refused as read, in time linear in the text: nothing walks the 10^9 values it stands for
    assert "YAML too large (more than 10000 values once its aliases are expanded)" in hint.problems[0]


@pytest.mark.parametrize("opener", ["{a: ", "- "])  # "[": the scanner reads ahead as much either way
def test_deep_nesting_is_refused_as_it_is_composed_not_at_the_recursion_limit(opener: str) -> None:
    """The loader stops at its depth bound as it composes; PyYAML's own composer recurses until the
    interpreter's limit stops it (0.8 s per SKILL.md front matter 5,000 deep, before). The work is
    bounded either way (the scanner reads a bounded way ahead): what is measured is how much."""

    def bounded(text: str) -> object:
        try:
            return load_bounded(text)
        except yaml.YAMLError as error:
            return str(error)

    def recursing(text: str) -> object:
        try:
            return yaml.safe_load(text)
        except (RecursionError, yaml.YAMLError) as error:
            return type(error).__name__

    deep = opener * 1_200
    assert bounded(deep) == "nested deeper than 32"
    assert calls_made(bounded, deep) * 2 < calls_made(recursing, deep)


# -- which hint counts, and spans ------------------------------------------------------------------


def test_the_last_hint_counts_even_when_malformed() -> None:
    clean = _rendered("yaml_block")
    broken = render({"form": "yaml_flow", "defect": "truncated", "prompt": "Which?"})
    text = f"{clean}\n{broken}"
    hints = find_hints(text)
    assert [hint.form for hint in hints] == ["yaml_block", "yaml_flow"]
    last = read_hint(text)
    assert last is not None
    assert last == hints[-1]
    assert not last.clean


def test_a_hint_inside_another_is_not_read_twice() -> None:
    text = (
        "<ASK_USER_YAML>\n"
        "ask_user:\n"
        "  prompt: outer\n"
        "  context:\n"
        '    quoted: \'{"outcome": "ask_user", "interaction": {"prompt": "inner"}}\'\n'
        "</ASK_USER_YAML>\n"
        "ask_user: {prompt: after}"
    )
    hints = find_hints(text)
    assert [(hint.form, hint.fields["prompt"]) for hint in hints] == [
        ("yaml_block", "outer"),
        ("yaml_flow", "after"),
    ]
    assert strip_hints(text) == "\n"


# -- never business output (Decision 4) ------------------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/prefer-non-json-structure")
@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.parametrize(
    ("value", "envelope"),
    [
        ({"outcome": "ask_user", "interaction": {"prompt": "Which?"}}, True),
        ({"outcome": "ask_user"}, True),
        ({"ask_user": {"prompt": "Which?"}}, True),
        ({"interaction": {"interaction_id": 1, "prompt": "Which?"}}, True),
        ({"greeting": "Hi"}, False),
        ({"outcome": "done", "greeting": "Hi"}, False),
        ({"interaction": "chat"}, False),
        ({"interaction": {"id": 1}}, False),
        (["ask_user"], False),
        ("ask_user", False),
        (None, False),
    ],
)
def test_ask_user_envelopes_are_recognised(value: object, envelope: bool) -> None:
    assert is_ask_user_envelope(value) is envelope


@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/prefer-non-json-structure")
@pytest.mark.parametrize("form", FORMS)
def test_business_json_next_to_a_hint_survives_stripping(form: str) -> None:
    business = '{"greeting": "Good day"}'
    text = f"{business}\n\n{_rendered(form, text=None)}"
    assert json.loads(strip_hints(text)) == {"greeting": "Good day"}
    legacy = read_hint(text)
    assert legacy is not None
    assert legacy.form == form


# -- robustness ------------------------------------------------------------------------------------

FRAGMENTS = [
    "<ASK_USER_YAML>",
    "</ASK_USER_YAML>",
    "```ask_user_yaml\n",
    "```\n",
    "```",
    "ask_user: {",
    "ask_user:",
    '{"outcome": "ask_user"',
    '{"outcome":"ask_user","interaction":{"prompt":"p"}}',
    "prompt: p\n",
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    "\\",
    ",",
    ":",
    "\n",
    "\r\n",
    "  ",
    "\t",
    "\x00",
    "&a ",
    "*a",
    "- ",
    "é",
    "\ud800",
]


@given(st.text())
@settings(deadline=None)
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_invariants(text)


@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join))
@settings(deadline=None, max_examples=500)
def test_hostile_fragments_never_raise(text: str) -> None:
    _check_invariants(text)


def _check_invariants(text: str) -> None:
    hints = find_hints(text)
    position = 0
    for hint in hints:
        start, end = hint.span
        assert position <= start < end <= len(text)
        position = end
        assert hint.clean == (not hint.problems)
        assert hint.clean == bool(hint.fields)  # a clean hint has at least its prompt
    stripped = strip_hints(text)
    assert len(stripped) == len(text) - sum(end - start for start, end in (hint.span for hint in hints))
    assert read_hint(text) == (hints[-1] if hints else None)


@pytest.mark.parametrize(
    "unit",
    [
        "ask_user: {a: b}\n",
        "ask_user: x ",
        '{"outcome": "ask_user", "interaction": {"prompt": "p"}}',
        '"outcome" ',
        "```ask_user_yaml ``` ",
        "``` ",
        "<ASK_USER_YAML></ASK_USER_YAML>",
        "</ASK_USER_YAML>",
        "<ASK_USER_YAML>",
        "\n```ask_user_yaml\n",
        '{"outcome": "ask_user", {{{{',
    ],
)
def test_scanning_is_linear_on_repetitive_input(unit: str) -> None:
    # Work is counted in Python and C calls, not seconds: doubling the input must about
    # double the calls (a rescan from every position would quadruple them). Load cannot
    # change a call count; the time itself is measured in `nox -s bench`.
    def scan(text: str) -> None:
        find_hints(text)
        strip_hints(text)

    small, large = calls_made(scan, unit * 1_000), calls_made(scan, unit * 2_000)
    assert large <= 2.5 * small + 100, f"quadratic scanning: {small} calls, then {large} for twice the input"
