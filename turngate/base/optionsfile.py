"""Small YAML files of typed options (target options, capture metadata): read, and check field types.

Errors name the file, the field and the value, through the caller's own
exception class, so each command keeps its one-line message.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from turngate.base.data_yaml import load_data

FieldTypes = Mapping[str, type | tuple[type, ...]]


def read_mapping(path: Path, problem: type[Exception]) -> dict[str, Any]:
    try:
        document = load_data(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise problem(f"{path}: cannot read: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise problem(f"{path}: not YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(document, dict):
        raise problem(f"{path}: must be a mapping of fields, got {type(document).__name__}")
    return document


def check_types(where: str, raw: Mapping[str, Any], fields: FieldTypes, problem: type[Exception]) -> None:
    """Every field known and of its type (a bool is not an int here)."""
    for name, value in raw.items():
        expected = fields.get(name)
        if expected is None:
            raise problem(f"{where}: {name}: unknown field (known: {', '.join(sorted(fields))})")
        wants_int = expected is int or (isinstance(expected, tuple) and int in expected)
        if not isinstance(value, expected) or (wants_int and isinstance(value, bool)):
            raise problem(f"{where}: {name}: {value!r} has the wrong type")
