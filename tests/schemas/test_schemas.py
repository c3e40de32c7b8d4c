"""Every JSON Schema turngate ships: valid draft 2020-12, in the wheel, documented with checked examples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from tests.schemas.schemas import FILE_SCHEMAS, ROOT, load, problems

SHIPPED = sorted((ROOT / "turngate").rglob("*.schema.json"))
DOC = ROOT / "docs" / "file-formats.md"


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_file_schemas_are_among_the_shipped_ones() -> None:
    assert set(FILE_SCHEMAS) <= set(SHIPPED)


@pytest.mark.parametrize("schema", SHIPPED, ids=_name)
def test_every_schema_is_a_valid_draft_2020_12_schema(schema: Path) -> None:
    contents = load(schema)
    assert contents["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(contents)
    assert contents["$id"].startswith("https://turngate.invalid/")


def test_every_schema_has_its_own_id() -> None:
    ids = [load(schema)["$id"] for schema in SHIPPED]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("schema", FILE_SCHEMAS, ids=_name)
def test_a_file_schema_says_what_it_is_and_what_each_field_means(schema: Path) -> None:
    contents = load(schema)
    assert contents["title"] and contents["description"]
    undescribed = [path for path, field in _fields(contents) if not {"description", "$ref"} & set(field)]
    assert undescribed == []


def _fields(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every named field (a ``properties`` entry) anywhere in ``schema``, with its path; ``kind``
    consts and re-typings inside conditions (``if``/``then``/``else``) say nothing new, so they are
    left out."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("if", "then", "else", "allOf"):
                continue
            if key == "properties":
                found += [
                    (f"{path}.{name}", field)
                    for name, field in value.items()
                    if name != "kind" and isinstance(field, dict)
                ]
            found += _fields(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += _fields(value, f"{path}[{index}]")
    return found


def test_the_wheel_carries_every_schema() -> None:
    """The files hatchling puts in the wheel (the same selection `pip wheel` builds from)."""
    from hatchling.builders.wheel import WheelBuilder

    packaged = {included.distribution_path for included in WheelBuilder(str(ROOT)).recurse_included_files()}
    assert {_name(schema) for schema in SHIPPED} <= packaged


# docs/file-formats.md -----------------------------------------------------------------------------


def _examples() -> list[tuple[str, str, str]]:
    """(schema path with its pointer, the code block's language, its text) of every example the page
    marks with ``<!-- validates: PATH[#POINTER] -->`` right before it."""
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"<!-- validates: (\S+) -->\n```(\w+)\n(.*?)```", text, re.DOTALL)


def test_the_page_lists_every_file_schema_with_an_example() -> None:
    text = DOC.read_text(encoding="utf-8")
    examples = {target.split("#")[0] for target, _, _ in _examples()}
    for schema in FILE_SCHEMAS:
        assert f"`{_name(schema)}`" in text
        assert _name(schema) in examples


@pytest.mark.parametrize(("target", "language", "block"), _examples(), ids=[item[0] for item in _examples()])
def test_each_example_on_the_page_validates(target: str, language: str, block: str) -> None:
    path, _, pointer = target.partition("#")
    match language:
        case "jsonl":
            documents = [json.loads(line) for line in block.splitlines() if line.strip()]
        case "json":
            documents = [json.loads(block)]
        case "yaml":
            documents = [yaml.safe_load(block)]
        case _:
            raise AssertionError(f"{target}: an example in {language}")
    for document in documents:
        assert problems(ROOT / path, document, pointer) == []


def test_the_readme_links_the_page() -> None:
    assert "(docs/file-formats.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
