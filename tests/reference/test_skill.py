"""Skill packages (HTTP_API.md "Skills") and runner.json's ``max_attempt`` (Decision 6)."""

from __future__ import annotations

import contextlib
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from turngate.implementations.reference.skill import (
    ENGINES,
    RUNNER_SCHEMA_PATH,
    SKILL_ENGINE_UNSUPPORTED,
    SKILL_EXECUTION_MODE_UNSUPPORTED,
    SKILL_MANIFEST_INVALID,
    SKILL_PACKAGE_INVALID,
    Skill,
    SkillPackageError,
    load_skill,
    parse_manifest,
    supports,
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
}
INPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"case": {"type": "string"}}}
RUNNER_FILE = Path("/pkg/greet/assets/runner.json")


def runner(**fields: Any) -> dict[str, Any]:
    return {"id": "greet", "execution_modes": ["auto", "interactive"], **fields}


def package(
    root: Path,
    runner_document: dict[str, Any] | str | None = None,
    *,
    name: str = "greet",
    skill_md: str | None = None,
    files: dict[str, Any] | None = None,
) -> Path:
    """A package folder; ``files`` maps relative paths to JSON documents (or raw text)."""
    folder = root / name
    (folder / "assets").mkdir(parents=True)
    text = skill_md if skill_md is not None else f"---\nname: {name}\ndescription: Greets.\n---\n\n# Greet\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    document = runner_document if runner_document is not None else runner(id=name)
    manifest = document if isinstance(document, str) else json.dumps(document, indent=2)
    (folder / "assets" / "runner.json").write_text(manifest, encoding="utf-8")
    for relative, content in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return folder


def refusal(folder: Path) -> SkillPackageError:
    with pytest.raises(SkillPackageError) as raised:
        load_skill(folder)
    return raised.value


def manifest_refusal(document: dict[str, Any] | str) -> SkillPackageError:
    text = document if isinstance(document, str) else json.dumps(document)
    with pytest.raises(SkillPackageError) as raised:
        parse_manifest(text, RUNNER_FILE)
    return raised.value


# A valid package ---------------------------------------------------------------------------


def test_a_full_package_loads_with_every_field(tmp_path: Path) -> None:
    document = runner(
        engines=["codex", "gemini"],
        unsupported_engines=["iflow"],
        schemas={
            "input": "assets/input.schema.json",
            "parameter": "assets/parameter.schema.json",
            "output": "assets/output.schema.json",
        },
        artifacts=["report.md", "data/table.csv"],
        max_attempt=3,
        description="fields turngate does not know are ignored",
    )
    files = {
        "assets/input.schema.json": INPUT_SCHEMA,
        "assets/parameter.schema.json": {"type": "object"},
        "assets/output.schema.json": OUTPUT_SCHEMA,
    }
    folder = package(tmp_path, document, files=files)
    skill = load_skill(folder)
    assert skill == Skill(
        name="greet",
        folder=folder,
        skill_md=(folder / "SKILL.md").read_text(encoding="utf-8"),
        execution_modes=("auto", "interactive"),
        engines=("codex", "gemini"),
        unsupported_engines=("iflow",),
        max_attempt=3,
        artifacts=("report.md", "data/table.csv"),
        output_schema=OUTPUT_SCHEMA,
        input_schema=INPUT_SCHEMA,
        parameter_schema={"type": "object"},
    )


def test_a_minimal_package_has_no_schemas_artifacts_or_attempt_bound(tmp_path: Path) -> None:
    skill = load_skill(package(tmp_path, {"id": "greet", "execution_modes": ["interactive"]}))
    assert skill.execution_modes == ("interactive",)
    assert skill.engines is None
    assert skill.unsupported_engines == ()
    assert skill.artifacts == ()
    assert (skill.output_schema, skill.input_schema, skill.parameter_schema) == (None, None, None)
    assert skill.max_attempt is None  # Decision 6: absent means unbounded


def test_skill_is_frozen(tmp_path: Path) -> None:
    skill = load_skill(package(tmp_path))
    with pytest.raises(AttributeError):
        skill.max_attempt = 5  # type: ignore[misc]


def test_the_runner_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(RUNNER_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


# max_attempt (Decision 6; 002 "runner.json.max_attempt (integer, >=1)") ---------------------


@pytest.mark.spec("design/decision-6/max-attempt-interactive-only")
@given(st.integers(min_value=1))
def test_any_integer_from_one_up_is_a_max_attempt(value: int) -> None:
    assert parse_manifest(json.dumps(runner(max_attempt=value)), RUNNER_FILE)["max_attempt"] == value


NOT_A_MAX_ATTEMPT = st.one_of(
    st.integers(max_value=0),
    st.floats(allow_nan=False, allow_infinity=False),  # 2.0 included: written as a float, so refused
    st.booleans(),
    st.none(),
    st.text(),
    st.integers(min_value=1).map(str),  # "3"
    st.lists(st.integers(min_value=1), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@pytest.mark.spec("design/decision-6/max-attempt-interactive-only")
@given(NOT_A_MAX_ATTEMPT)
def test_anything_else_is_refused_naming_max_attempt(value: object) -> None:
    error = manifest_refusal(runner(max_attempt=value))
    assert error.code == SKILL_MANIFEST_INVALID
    assert error.file == RUNNER_FILE
    assert error.field == "max_attempt"
    assert error.value is not None
    assert error.value.startswith(repr(value)[:20])
    assert error.message == "must be an integer >= 1"


@pytest.mark.spec("design/decision-6/max-attempt-interactive-only")
@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("0", "0"),
        ("-1", "-1"),
        ("2.0", "2.0"),
        ("1.5", "1.5"),
        ("1e2", "100.0"),
        ('"3"', "'3'"),
        ("true", "True"),
    ],
)
def test_max_attempt_refusal_is_one_line_naming_file_field_and_value(
    tmp_path: Path, written: str, shown: str
) -> None:
    text = '{"id": "greet", "execution_modes": ["interactive"], "max_attempt": ' + written + "}"
    folder = package(tmp_path, text)
    error = refusal(folder)
    runner_path = folder / "assets" / "runner.json"
    assert (
        str(error) == f"SKILL_MANIFEST_INVALID: {runner_path}: max_attempt: {shown}: must be an integer >= 1"
    )
    assert "\n" not in str(error)


@pytest.mark.parametrize("written", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_are_refused(written: str) -> None:
    error = manifest_refusal('{"id": "greet", "execution_modes": ["auto"], "max_attempt": ' + written + "}")
    assert error.code == SKILL_MANIFEST_INVALID
    assert f"{written} is not JSON" in error.message


def test_a_repeated_key_cannot_hide_an_invalid_value() -> None:
    error = manifest_refusal(
        '{"id": "greet", "execution_modes": ["auto"], "max_attempt": 0, "max_attempt": 3}'
    )
    assert "duplicate key 'max_attempt'" in error.message


# Other manifest problems: the first in document order, with a JSON path -------------------


@pytest.mark.parametrize(
    ("document", "field", "value", "message"),
    [
        ({"execution_modes": ["auto"]}, "id", None, "is required"),
        (runner(id=7), "id", "7", "must be a string"),
        (runner(id="a b"), "id", "'a b'", "must be a skill name"),
        (runner(execution_modes=[]), "execution_modes", "[]", "must not be empty"),
        (runner(execution_modes="auto"), "execution_modes", "'auto'", "must be a list"),
        (runner(execution_modes=["auto", "batch"]), "execution_modes[1]", "'batch'", "must be one of 'auto'"),
        (
            runner(execution_modes=["auto", "auto"]),
            "execution_modes",
            "['auto', 'auto']",
            "the same value twice",
        ),
        (runner(engines=["codex", "aider"]), "engines[1]", "'aider'", "must be one of 'codex'"),
        (runner(engines=[]), "engines", "[]", "must not be empty"),
        (runner(unsupported_engines=["gpt"]), "unsupported_engines[0]", "'gpt'", "must be one of"),
        (runner(schemas={"ouput": "a.json"}), "schemas.ouput", None, "is not a known field"),
        (runner(schemas={"output": 3}), "schemas.output", "3", "must be a string"),
        (
            runner(schemas={"output": "/etc/schema.json"}),
            "schemas.output",
            "'/etc/schema.json'",
            "relative path",
        ),
        (
            runner(schemas={"output": "a/../../x.json"}),
            "schemas.output",
            "'a/../../x.json'",
            "no '..' segment",
        ),
        (runner(artifacts="report.md"), "artifacts", "'report.md'", "must be a list"),
        (runner(artifacts=["ok.md", "../out.md"]), "artifacts[1]", "'../out.md'", "no '..' segment"),
        (runner(artifacts=["a\\b.md"]), "artifacts[0]", "'a\\\\b.md'", "no backslash"),
    ],
)
def test_manifest_problems_name_the_field_and_value(
    document: dict[str, Any], field: str, value: str | None, message: str
) -> None:
    error = manifest_refusal(document)
    assert (error.code, error.field, error.value) == (SKILL_MANIFEST_INVALID, field, value)
    assert message in error.message


def test_a_manifest_that_is_not_an_object_is_refused() -> None:
    error = manifest_refusal("[]")
    assert (error.code, error.field, error.message) == (SKILL_MANIFEST_INVALID, None, "must be a JSON object")
    assert str(error) == f"SKILL_MANIFEST_INVALID: {RUNNER_FILE}: []: must be a JSON object"


def test_the_first_problem_in_document_order_is_reported() -> None:
    first = '{"max_attempt": 0, "execution_modes": ["batch"], "id": "greet"}'
    second = '{"execution_modes": ["batch"], "max_attempt": 0, "id": "greet"}'
    assert manifest_refusal(first).field == "max_attempt"
    assert manifest_refusal(second).field == "execution_modes[0]"
    nested = runner(execution_modes=["auto", "batch", "nope"], engines=["x"])
    assert manifest_refusal(nested).field == "execution_modes[1]"


def test_an_engine_both_allowed_and_refused_is_a_contradiction() -> None:
    error = manifest_refusal(runner(engines=["codex", "gemini"], unsupported_engines=["iflow", "gemini"]))
    assert (error.code, error.field, error.value) == (
        SKILL_MANIFEST_INVALID,
        "unsupported_engines[1]",
        "'gemini'",
    )


def test_refusing_every_engine_leaves_nothing_to_run_on() -> None:
    error = manifest_refusal(runner(unsupported_engines=list(ENGINES)))
    assert (error.code, error.field) == (SKILL_MANIFEST_INVALID, "unsupported_engines")


def test_runner_json_that_is_not_json_is_refused(tmp_path: Path) -> None:
    error = refusal(package(tmp_path, '{"id": "greet",'))
    assert error.code == SKILL_MANIFEST_INVALID
    assert error.message.startswith("is not valid JSON")


# Package problems --------------------------------------------------------------------------


def test_skill_md_name_must_equal_the_folder_name(tmp_path: Path) -> None:
    folder = package(tmp_path, skill_md="---\nname: hello\n---\n")
    error = refusal(folder)
    assert (error.code, error.file, error.field, error.value) == (
        SKILL_PACKAGE_INVALID,
        folder / "SKILL.md",
        "name",
        "'hello'",
    )


@pytest.mark.parametrize(
    ("skill_md", "field", "message"),
    [
        ("# Greet\n", None, "must start with YAML front matter"),
        ("---\nname: greet\n", None, "front matter has no closing '---' line"),
        ("---\nname: [greet\n---\n", None, "front matter is not YAML"),
        ("---\n- greet\n---\n", None, "front matter must be a mapping"),
        ("---\ndescription: x\n---\n", "name", "is required in the front matter"),
        ("---\nname: 42\n---\n", "name", "must be a non-empty string"),
    ],
)
def test_skill_md_front_matter_problems(
    tmp_path: Path, skill_md: str, field: str | None, message: str
) -> None:
    error = refusal(package(tmp_path, skill_md=skill_md))
    assert (error.code, error.field) == (SKILL_PACKAGE_INVALID, field)
    assert error.message.startswith(message)


def test_front_matter_may_use_crlf_and_a_bom(tmp_path: Path) -> None:
    assert (
        load_skill(package(tmp_path, skill_md="\ufeff---\r\nname: greet\r\n...\r\nBody\r\n")).name == "greet"
    )


def test_runner_id_must_equal_the_skill_name(tmp_path: Path) -> None:
    folder = package(tmp_path, runner(id="other"))
    error = refusal(folder)
    assert (error.code, error.file, error.field, error.value) == (
        SKILL_PACKAGE_INVALID,
        folder / "assets" / "runner.json",
        "id",
        "'other'",
    )


@pytest.mark.parametrize("missing", ["SKILL.md", "assets/runner.json"])
def test_a_missing_file_is_named(tmp_path: Path, missing: str) -> None:
    folder = package(tmp_path)
    (folder / missing).unlink()
    error = refusal(folder)
    assert (error.code, error.file, error.message) == (SKILL_PACKAGE_INVALID, folder / missing, "is missing")


def test_a_package_must_be_a_folder(tmp_path: Path) -> None:
    assert refusal(tmp_path / "nowhere").message == "is not a folder"


def test_a_schema_file_that_does_not_exist(tmp_path: Path) -> None:
    folder = package(tmp_path, runner(schemas={"output": "assets/output.schema.json"}))
    error = refusal(folder)
    assert (error.code, error.file, error.field, error.value) == (
        SKILL_PACKAGE_INVALID,
        folder / "assets" / "runner.json",
        "schemas.output",
        "'assets/output.schema.json'",
    )


def test_a_schema_symlink_out_of_the_package_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(OUTPUT_SCHEMA), encoding="utf-8")
    folder = package(tmp_path / "skills", runner(schemas={"output": "assets/output.schema.json"}))
    (folder / "assets" / "output.schema.json").symlink_to(outside)
    error = refusal(folder)
    assert (error.field, error.message) == ("schemas.output", "must stay inside the package")


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        ("{not json", None, "is not valid JSON"),
        ([], None, "must be a JSON Schema object"),
        ({"type": "strin"}, "type", "is not a valid JSON Schema"),
        ({"properties": {"a": {"minimum": "1"}}}, "properties.a.minimum", "is not a valid JSON Schema"),
        ({"$schema": "https://example.invalid/dialect"}, "$schema", "is not a JSON Schema dialect"),
        ({"$schema": 7}, "$schema", "is not a JSON Schema dialect"),
    ],
)
@pytest.mark.parametrize("key", ["input", "parameter", "output"])
def test_a_schema_file_must_be_a_json_schema(
    tmp_path: Path, key: str, content: Any, field: str | None, message: str
) -> None:
    relative = f"assets/{key}.schema.json"
    folder = package(tmp_path, runner(schemas={key: relative}), files={relative: content})
    error = refusal(folder)
    assert (error.code, error.file, error.field) == (SKILL_PACKAGE_INVALID, folder / relative, field)
    assert error.message.startswith(message)


def test_a_draft_7_schema_is_checked_as_draft_7(tmp_path: Path) -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    files = {"assets/output.schema.json": schema}
    folder = package(tmp_path, runner(schemas={"output": "assets/output.schema.json"}), files=files)
    assert load_skill(folder).output_schema == schema


# supports() --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "engine", "mode", "code"),
    [
        ({}, "codex", "auto", None),
        ({}, "opencode", "interactive", None),
        ({"engines": ["gemini"]}, "codex", "auto", SKILL_ENGINE_UNSUPPORTED),
        ({"unsupported_engines": ["iflow"]}, "iflow", "auto", SKILL_ENGINE_UNSUPPORTED),
        ({}, "aider", "auto", SKILL_ENGINE_UNSUPPORTED),
        ({"execution_modes": ["auto"]}, "codex", "interactive", SKILL_EXECUTION_MODE_UNSUPPORTED),
        ({"execution_modes": ["interactive"]}, "codex", "auto", SKILL_EXECUTION_MODE_UNSUPPORTED),
        ({}, "codex", "batch", SKILL_EXECUTION_MODE_UNSUPPORTED),
        (
            {"engines": ["gemini"], "execution_modes": ["auto"]},
            "codex",
            "interactive",
            SKILL_ENGINE_UNSUPPORTED,
        ),
    ],
)
def test_supports_names_the_stable_refusal_code(
    tmp_path: Path, fields: dict[str, Any], engine: str, mode: str, code: str | None
) -> None:
    skill = load_skill(package(tmp_path, runner(**fields)))
    assert supports(skill, engine, mode) == code


# The error itself --------------------------------------------------------------------------


def test_the_error_is_read_only_and_survives_pickling_and_context_managers() -> None:
    error = SkillPackageError(SKILL_PACKAGE_INVALID, Path("/p/SKILL.md"), "name", "'x'", "must equal 'greet'")
    with pytest.raises(AttributeError):
        error.code = "OTHER"  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.file, copy.field, copy.value, copy.message) == (
        error.code,
        error.file,
        error.field,
        error.value,
        error.message,
    )
    assert str(copy) == "SKILL_PACKAGE_INVALID: /p/SKILL.md: name: 'x': must equal 'greet'"

    @contextlib.contextmanager
    def scope() -> Iterator[None]:
        yield  # contextlib sets __traceback__ on what passes through

    with pytest.raises(SkillPackageError), scope():
        raise error


def test_long_values_are_shortened_in_the_message() -> None:
    error = manifest_refusal(runner(max_attempt="x" * 500))
    assert error.value is not None
    assert len(error.value) <= 60
    assert error.value.endswith("...")
    assert len(str(error)) < 200
