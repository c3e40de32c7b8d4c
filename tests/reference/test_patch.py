"""The runtime SKILL.md patch: module order, mode exclusivity, and what each mode's patch may say."""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from turngate.implementations.reference.patch import build_patch, patch_skill_md
from turngate.protocol.skill_patch import (
    ARTIFACT_REDIRECTION,
    AUTO_MODE,
    INTERACTIVE_MODE,
    MODULE_ORDER,
    OUTPUT_FORMAT_CONTRACT,
    OUTPUT_SCHEMA,
    PATCH_BANNER,
    RUNTIME_ENFORCEMENT,
    patch_sections,
)

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}
SKILL_MD = "---\nname: greet\n---\n\n# Greet\n\nGreet the user.\n"
# Short names for the order table.
ENFORCE, ARTIFACTS, CONTRACT, OUT_SCHEMA = (
    RUNTIME_ENFORCEMENT,
    ARTIFACT_REDIRECTION,
    OUTPUT_FORMAT_CONTRACT,
    OUTPUT_SCHEMA,
)
# 004 "auto 模式保持自动执行语义": no interactive question-payload field constraints.
QUESTION_FIELDS = re.compile(r"\b(kind|prompt|options|ui_hints)\b|ask_user", re.IGNORECASE)


def module(patch: str, name: str) -> str:
    """The text of one module, from its marker up to the next marker."""
    start = patch.index(f"<!-- turngate:patch:{name} -->")
    following = patch.find("<!-- turngate:patch:", start + 1)
    return patch[start : following if following >= 0 else len(patch)]


# 003 "运行时 skill patch 注入 MUST 模块化且顺序固定" -------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed")
@pytest.mark.parametrize(
    ("mode", "artifacts", "schema", "order"),
    [
        ("auto", ["report.md"], SCHEMA, (ENFORCE, ARTIFACTS, CONTRACT, OUT_SCHEMA, AUTO_MODE)),
        ("interactive", ["report.md"], SCHEMA, (ENFORCE, ARTIFACTS, CONTRACT, OUT_SCHEMA, INTERACTIVE_MODE)),
        ("auto", [], SCHEMA, (ENFORCE, CONTRACT, OUT_SCHEMA, AUTO_MODE)),
        ("interactive", ["a.txt"], None, (ENFORCE, ARTIFACTS, CONTRACT, INTERACTIVE_MODE)),
        ("interactive", [], None, (ENFORCE, CONTRACT, INTERACTIVE_MODE)),
    ],
)
def test_patch_modules_come_in_the_fixed_order(
    mode: str, artifacts: list[str], schema: dict[str, Any] | None, order: tuple[str, ...]
) -> None:
    patch = build_patch(mode, artifacts=artifacts, output_schema=schema)
    assert patch_sections(patch) == order
    assert patch_sections(patch_skill_md(SKILL_MD, patch)) == order
    # The marker lines are what the order is read from; each is followed by its heading.
    for name in order:
        assert re.search(rf"^<!-- turngate:patch:{name} -->\n## \S", patch, re.MULTILINE)


@pytest.mark.spec("interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed")
@given(
    mode=st.sampled_from(["auto", "interactive"]),
    artifacts=st.lists(
        st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}\.[a-z]{2,4}", fullmatch=True), unique=True
    ),
    with_schema=st.booleans(),
)
def test_patch_order_is_the_spec_order_for_any_skill(
    mode: str, artifacts: list[str], with_schema: bool
) -> None:
    sections = patch_sections(
        build_patch(mode, artifacts=artifacts, output_schema=SCHEMA if with_schema else None)
    )
    expected = [RUNTIME_ENFORCEMENT]
    expected += [ARTIFACT_REDIRECTION] if artifacts else []
    expected += [OUTPUT_FORMAT_CONTRACT]
    expected += [OUTPUT_SCHEMA] if with_schema else []
    expected += [AUTO_MODE if mode == "auto" else INTERACTIVE_MODE]
    assert sections == tuple(expected)
    assert list(sections) == sorted(sections, key=MODULE_ORDER.index)


@pytest.mark.spec("interactive-engine-turn-protocol/skill-patch-order/mode-exclusive")
def test_interactive_run_gets_only_the_interactive_mode_patch() -> None:
    patch = build_patch("interactive", artifacts=["report.md"], output_schema=SCHEMA)
    assert INTERACTIVE_MODE in patch_sections(patch)
    assert AUTO_MODE not in patch_sections(patch)
    assert "Execution mode: auto" not in patch
    assert "do not ask the user" not in patch.lower()


@pytest.mark.spec("interactive-engine-turn-protocol/skill-patch-order/mode-exclusive")
def test_auto_run_gets_only_the_auto_mode_patch() -> None:
    patch = build_patch("auto", artifacts=["report.md"], output_schema=SCHEMA)
    assert AUTO_MODE in patch_sections(patch)
    assert INTERACTIVE_MODE not in patch_sections(patch)
    assert "Execution mode: interactive" not in patch
    assert "ASK_USER_YAML" not in patch


# 003 "运行时补丁 MUST 与执行模式一致" / 004 interactive patch ---------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/runtime-patch-mode/interactive-patch")
def test_interactive_patch_allows_asking_and_forbids_an_early_marker() -> None:
    patch = build_patch("interactive", artifacts=[], output_schema=SCHEMA)
    mode_text = " ".join(module(patch, INTERACTIVE_MODE).split())
    assert "you may ask the user for it" in mode_text
    assert (
        'Only when the task is really complete, include `"__SKILL_DONE__": true` in the final JSON object.'
        in (mode_text)
    )
    assert "Do not write `__SKILL_DONE__` before the task is really complete" in mode_text
    assert "never in a message that asks the user something" in mode_text


@pytest.mark.spec("interactive-engine-turn-protocol/runtime-patch-mode/interactive-patch")
@pytest.mark.spec("interactive-decision-policy/interactive-patch-ask-user-optional/no-forced-ask-user")
@pytest.mark.parametrize("artifacts", [[], ["report.md"]])
@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_interactive_patch_requires_no_ask_user_structure(
    artifacts: list[str], schema: dict[str, Any] | None
) -> None:
    patch = build_patch("interactive", artifacts=artifacts, output_schema=schema)
    mode_text = " ".join(module(patch, INTERACTIVE_MODE).split())
    assert "A question needs no special format; plain text is enough." in mode_text
    assert "Optionally" in mode_text
    assert "only a hint for display" in mode_text
    # No sentence that names the hint also makes it an obligation.
    for sentence in re.split(r"(?<=[.:;])\s", " ".join(patch.split())):
        if re.search(r"ask_user", sentence, re.IGNORECASE):
            assert not re.search(r"\b(must|required?|always|mandatory|need to)\b", sentence, re.IGNORECASE), (
                sentence
            )
    # Nor a JSON envelope to copy (the legacy {"outcome": "ask_user", ...} form).
    assert '"outcome"' not in patch
    assert '"interaction"' not in patch


@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/prefer-non-json-structure")
@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
def test_interactive_patch_suggests_the_yaml_block_not_json() -> None:
    patch = build_patch("interactive", artifacts=[], output_schema=None)
    found = re.search(r"<ASK_USER_YAML>\n(.*?)\n\s*</ASK_USER_YAML>", patch, re.DOTALL)
    assert found is not None
    body = textwrap.dedent(found.group(1))
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)  # not something the business-JSON reader could take for output
    hint = yaml.safe_load(body)
    assert set(hint) == {"ask_user"}
    assert isinstance(hint["ask_user"]["prompt"], str)
    assert isinstance(hint["ask_user"]["kind"], str)
    assert all({"label", "value"} <= set(option) for option in hint["ask_user"]["options"])
    assert "Do not write a question as a JSON object" in " ".join(patch.split())


# 004 "auto 模式 Skill patch MUST 不注入交互提问约束" ------------------------------------------


@pytest.mark.spec("interactive-decision-policy/auto-patch/keeps-auto-semantics")
@pytest.mark.parametrize("artifacts", [[], ["report.md"]])
@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_auto_patch_keeps_auto_execution_and_no_question_fields(
    artifacts: list[str], schema: dict[str, Any] | None
) -> None:
    patch = build_patch("auto", artifacts=artifacts, output_schema=schema)
    mode_text = " ".join(module(patch, AUTO_MODE).split())
    assert "do not ask the user anything and do not wait for a reply" in mode_text
    assert "Run the task to completion in this one turn" in mode_text
    assert "finish with the final JSON object" in mode_text
    assert QUESTION_FIELDS.search(patch) is None, QUESTION_FIELDS.search(patch)
    assert "option" not in patch.lower()  # not even "optional": nothing that reads like a question field


@pytest.mark.spec("interactive-decision-policy/auto-patch/keeps-auto-semantics")
@given(
    words=st.lists(st.sampled_from(["kind", "prompt", "options", "ui_hints", "ask_user", "x"]), max_size=5)
)
def test_auto_mode_module_never_mentions_question_fields_whatever_the_schema(words: list[str]) -> None:
    # A business schema may well have a property called "options"; that is the skill's
    # business, shown in the schema module. The auto-mode rules themselves stay clear.
    schema = {"type": "object", "properties": {word: {"type": "string"} for word in words}}
    patch = build_patch("auto", artifacts=[f"{word}.txt" for word in words], output_schema=schema)
    assert QUESTION_FIELDS.search(module(patch, AUTO_MODE)) is None
    assert QUESTION_FIELDS.search(module(patch, OUTPUT_FORMAT_CONTRACT)) is None
    assert QUESTION_FIELDS.search(module(patch, RUNTIME_ENFORCEMENT)) is None


# Output format contract and schema --------------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation")
@pytest.mark.spec("design/decision-3/marker-control-only")
@pytest.mark.parametrize("mode", ["auto", "interactive"])
def test_output_contract_says_the_marker_is_removed_before_validation(mode: str) -> None:
    contract = " ".join(
        module(build_patch(mode, artifacts=[], output_schema=SCHEMA), OUTPUT_FORMAT_CONTRACT).split()
    )
    assert "your final message is one JSON object" in contract
    assert "`__SKILL_DONE__` is a control field, not part of the result" in contract
    assert "removes it before it validates the object" in contract


@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/auto-marker-optional")
def test_auto_contract_does_not_require_the_marker() -> None:
    contract = " ".join(
        module(build_patch("auto", artifacts=[], output_schema=None), OUTPUT_FORMAT_CONTRACT).split()
    )
    assert (
        'You may include `"__SKILL_DONE__": true` in that object; this run does not require it.' in contract
    )
    assert "to say the task is complete" not in contract


def test_interactive_contract_makes_the_marker_the_completion_signal() -> None:
    patch = build_patch("interactive", artifacts=[], output_schema=None)
    contract = " ".join(module(patch, OUTPUT_FORMAT_CONTRACT).split())
    assert 'Put `"__SKILL_DONE__": true` in that object to say the task is complete' in contract
    assert "does not require it" not in contract


@pytest.mark.parametrize("mode", ["auto", "interactive"])
def test_output_schema_is_embedded_as_pretty_json(mode: str) -> None:
    text = module(build_patch(mode, artifacts=[], output_schema=SCHEMA), OUTPUT_SCHEMA)
    found = re.search(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert found is not None
    assert found.group(1) == json.dumps(SCHEMA, indent=2, ensure_ascii=False)
    assert json.loads(found.group(1)) == SCHEMA


def test_a_schema_quoting_code_cannot_close_the_fence_early() -> None:
    schema = {"type": "object", "description": 'Like ```json {"a": 1}``` or ````four````.'}
    text = module(build_patch("auto", artifacts=[], output_schema=schema), OUTPUT_SCHEMA)
    found = re.search(r"^(`{3,})json\n(.*?)\n\1$", text, re.DOTALL | re.MULTILINE)
    assert found is not None
    assert len(found.group(1)) == 5
    assert json.loads(found.group(2)) == schema


def test_artifact_redirection_lists_every_artifact_under_the_artifacts_folder() -> None:
    text = module(
        build_patch("auto", artifacts=["report.md", "out/data.csv"], output_schema=None), ARTIFACT_REDIRECTION
    )
    assert re.findall(r"^- `(.*)`$", text, re.MULTILINE) == ["artifacts/report.md", "artifacts/out/data.csv"]


# Applying the patch -----------------------------------------------------------------------


def test_patched_skill_md_keeps_the_original_then_the_banner_then_the_patch() -> None:
    patch = build_patch("interactive", artifacts=[], output_schema=SCHEMA)
    patched = patch_skill_md(SKILL_MD, patch)
    assert patched == SKILL_MD.rstrip() + "\n\n" + PATCH_BANNER + "\n\n" + patch
    assert patched.startswith(SKILL_MD.rstrip() + "\n")
    assert patched.count(PATCH_BANNER) == 1


def test_a_patched_skill_md_is_not_patched_again() -> None:
    patched = patch_skill_md(SKILL_MD, build_patch("auto", artifacts=[], output_schema=None))
    with pytest.raises(ValueError, match="already"):
        patch_skill_md(patched, build_patch("auto", artifacts=[], output_schema=None))


def test_marker_like_lines_in_the_skill_itself_are_not_patch_modules() -> None:
    original = SKILL_MD + "\n<!-- turngate:patch:auto-mode -->\n"
    patched = patch_skill_md(original, build_patch("interactive", artifacts=[], output_schema=None))
    assert patch_sections(patched) == (RUNTIME_ENFORCEMENT, OUTPUT_FORMAT_CONTRACT, INTERACTIVE_MODE)
    assert "turngate:patch:begin" not in patched  # the banner is not a module marker


def test_unknown_mode_and_a_bare_string_of_artifacts_are_refused() -> None:
    with pytest.raises(ValueError, match="'batch'"):
        build_patch("batch", artifacts=[], output_schema=None)
    with pytest.raises(TypeError, match=r"report\.md"):
        build_patch("auto", artifacts="report.md", output_schema=None)
