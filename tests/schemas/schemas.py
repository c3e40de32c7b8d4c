"""The JSON Schemas of the files turngate writes and reads, and small helpers to check files against them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

ROOT: Final = Path(__file__).resolve().parents[2]
REPORT: Final = ROOT / "turngate" / "judge" / "report.schema.json"
TARGET: Final = ROOT / "turngate" / "judge" / "connectors" / "target.schema.json"
CALL_LOG: Final = ROOT / "turngate" / "engines" / "fake" / "calllog.schema.json"
FILE_SCHEMAS: Final = (REPORT, TARGET, CALL_LOG)


def load(schema: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema.read_text(encoding="utf-8"))
    return loaded


@cache
def validator(schema: Path, pointer: str = "") -> Draft202012Validator:
    """A validator for ``schema``, or for the part of it at ``pointer`` (``/$defs/difference``)."""
    contents = load(schema)
    if not pointer:
        return Draft202012Validator(contents)
    registry: Registry[Any] = Registry().with_resource(contents["$id"], Resource.from_contents(contents))
    return Draft202012Validator({"$ref": f"{contents['$id']}#{pointer}"}, registry=registry)


def problems(schema: Path, instance: Any, pointer: str = "") -> list[str]:
    """Every error, as ``field.path: message``; empty when ``instance`` validates."""
    found = validator(schema, pointer).iter_errors(instance)
    return sorted(f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}" for error in found)


def line_problems(schema: Path, text: str) -> list[str]:
    """Each line of a JSON Lines text against ``schema``, errors prefixed with the line number."""
    # Lines end at "\n" alone, as turngate reads its reports: str.splitlines would also cut a line at
    # a U+2028 inside a JSON string (a hostile output a report quotes, as written).
    return [
        f"line {number}: {problem}"
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip()
        for problem in problems(schema, json.loads(line))
    ]
