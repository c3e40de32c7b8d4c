"""The output check: extraction and its repairs, marker stripping, schema validation, artifacts."""

from __future__ import annotations

import pytest

from tests.reference.conftest import DEFECTS, FORMS
from turngate.implementations.reference.output import check_output, extract_output

SCHEMA = {
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("text", "repair"),
    [
        ('{"greeting": "Hi"}', "none"),
        ('  {"greeting": "Hi"}\n', "none"),
        ('Here you go:\n```json\n{"greeting": "Hi"}\n```\n', "fenced"),
        ('Done.\n```\n{"greeting": "Hi"}\n```', "fenced"),
        ('The answer is {"greeting": "Hi"} as asked.', "embedded"),
        ('First {"greeting": 1} then {"greeting": "Hi"}.', "embedded"),
    ],
)
def test_extraction_says_which_repair_it_used(text: str, repair: str) -> None:
    assert extract_output(text) == (repair, {"greeting": "Hi"})


def test_nested_objects_in_prose_give_the_outer_object() -> None:
    assert extract_output('Result: {"greeting": "Hi", "meta": {"lang": "en"}} ok') == (
        "embedded",
        {"greeting": "Hi", "meta": {"lang": "en"}},
    )


def test_fences_of_other_languages_are_not_output() -> None:
    assert extract_output('```python\n{"greeting": "Hi"}\n```') is None


@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation")
@pytest.mark.spec("design/decision-3/marker-control-only")
def test_marker_is_stripped_before_validation() -> None:
    check = check_output('{"greeting": "Hi", "__SKILL_DONE__": true}', output_schema=SCHEMA)
    assert check.valid
    assert check.data == {"greeting": "Hi"}
    assert check.warnings == ()


@pytest.mark.spec("design/decision-3/marker-control-only")
def test_marker_alone_is_not_business_output() -> None:
    check = check_output('{"__SKILL_DONE__": true}', output_schema=SCHEMA)
    assert (check.valid, check.problem) == (False, "OUTPUT_SCHEMA_INVALID")
    assert "greeting" in check.detail


def test_repaired_output_warns() -> None:
    check = check_output('Sure! {"greeting": "Hi"}', output_schema=SCHEMA)
    assert check.valid
    assert check.repair == "embedded"
    assert check.warnings == ("OUTPUT_REPAIRED_GENERIC",)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "OUTPUT_NOT_FOUND"),
        ("Which style do you want?", "OUTPUT_NOT_FOUND"),
        ('["greeting"]', "OUTPUT_NOT_FOUND"),
        ('{"greeting": 5}', "OUTPUT_SCHEMA_INVALID"),
        ('{"greeting": "Hi", "extra": 1}', "OUTPUT_SCHEMA_INVALID"),
    ],
)
def test_invalid_outputs_name_their_problem(text: str | None, problem: str) -> None:
    check = check_output(text, output_schema=SCHEMA)
    assert (check.valid, check.problem) == (False, problem)


def test_without_a_schema_any_object_is_valid() -> None:
    assert check_output('{"anything": [1, 2]}', output_schema=None).valid
    assert not check_output("no json here", output_schema=None).valid


def test_required_artifacts_must_exist() -> None:
    text = '{"greeting": "Hi"}'
    missing = check_output(text, output_schema=SCHEMA, required_artifacts=("card.png",), present_artifacts=())
    assert (missing.valid, missing.problem) == (False, "ARTIFACT_MISSING")
    assert "card.png" in missing.detail
    present = check_output(
        text, output_schema=SCHEMA, required_artifacts=("card.png",), present_artifacts={"card.png"}
    )
    assert present.valid


@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/prefer-non-json-structure")
def test_ask_user_hints_are_never_business_output() -> None:
    permissive = {"type": "object"}
    legacy = '{"outcome": "ask_user", "interaction": {"interaction_id": 1, "prompt": "Which?"}}'
    assert not check_output(legacy, output_schema=permissive).valid
    yaml_block = "Which?\n<ASK_USER_YAML>\nask_user:\n  prompt: Which?\n  kind: open_text\n</ASK_USER_YAML>"
    assert not check_output(yaml_block, output_schema=permissive).valid


@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("form", FORMS)
def test_malformed_hints_are_never_business_output(form: str, defect: str) -> None:
    from turngate.engines.fake.hint_forms import render

    options = [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}]
    spec = {"form": form, "defect": defect, "prompt": "Which?", "kind": "choose_one", "options": options}
    text = render({**spec, "text": "Which greeting style?"})
    assert not check_output(text, output_schema={"type": "object"}).valid, text


# A skill's pattern meets model-written text: matched by RE2 (base/patterns.py), in time linear in the
# text whatever the pattern. Python's backtracking re takes 2^n steps on ^(a+)+$ against a...ab.
CATASTROPHIC = {
    "type": "object",
    "properties": {"greeting": {"type": "string", "pattern": "^(a+)+$"}},
    "patternProperties": {"^(b+)+$": {"type": "integer"}},
    "additionalProperties": False,
}


def test_a_catastrophic_pattern_is_matched_without_backtracking(monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonschema._keywords
    import jsonschema._utils

    def backtracking(*_args: object) -> None:
        raise AssertionError("a schema pattern was matched by Python's re")

    monkeypatch.setattr(jsonschema._keywords.re, "search", backtracking)
    monkeypatch.setattr(jsonschema._utils.re, "search", backtracking)
    refused = check_output('{"greeting": "' + "a" * 30 + 'b"}', output_schema=CATASTROPHIC)
    assert (refused.valid, refused.problem) == (False, "OUTPUT_SCHEMA_INVALID")
    assert "does not match '^(a+)+$'" in refused.detail
    assert check_output('{"greeting": "aaaa"}', output_schema=CATASTROPHIC).valid
    keyed = check_output('{"greeting": "aa", "' + "b" * 30 + 'c": 1}', output_schema=CATASTROPHIC)
    assert (keyed.valid, keyed.problem) == (False, "OUTPUT_SCHEMA_INVALID")
    assert check_output('{"greeting": "aa", "bbb": 1}', output_schema=CATASTROPHIC).valid
    wrong_type = check_output('{"greeting": "aa", "bbb": "one"}', output_schema=CATASTROPHIC)
    assert (wrong_type.valid, wrong_type.problem) == (False, "OUTPUT_SCHEMA_INVALID")
