"""The output check: the business JSON of a turn, marker stripped, validated against the skill's schema.

Where the JSON comes from is reported as ``repair``: ``none`` (the reply is the
object), ``fenced`` (a fenced code block held it) or ``embedded`` (an object in
prose). A repaired output carries the ``OUTPUT_REPAIRED_GENERIC`` warning.
Ask-user hints are cut out first and an ask-user envelope is never taken for
business output (Decision 4), so a malformed hint can only ever make the output
"not found", never valid. The marker key is removed before validation in every
mode (Decision 3): it is control, not business data.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

import jsonschema
import jsonschema.validators

from harness.reference.hints import is_ask_user_envelope, strip_hints
from harness.reference.marker import MARKER_KEY

Repair = Literal["none", "fenced", "embedded"]

OUTPUT_REPAIRED_GENERIC: Final = "OUTPUT_REPAIRED_GENERIC"
# turngate's codes for why an output is not valid (the spec names none).
OUTPUT_NOT_FOUND: Final = "OUTPUT_NOT_FOUND"
OUTPUT_SCHEMA_INVALID: Final = "OUTPUT_SCHEMA_INVALID"
ARTIFACT_MISSING: Final = "ARTIFACT_MISSING"

# Embedded search gives up after this many "{" that start no JSON value: a reply is
# bounded, and this bounds the worst case on hostile text.
_MAX_EMBEDDED_ATTEMPTS: Final = 256


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """The verdict on one turn's output. ``problem`` is set exactly when not ``valid``."""

    valid: bool
    problem: str | None
    detail: str
    repair: Repair | None  # None: no JSON object was found
    data: Mapping[str, Any] | None  # the business output, marker stripped
    warnings: tuple[str, ...] = ()


def check_output(
    final_message: str | None,
    *,
    output_schema: Mapping[str, Any] | None,
    required_artifacts: Sequence[str] = (),
    present_artifacts: Collection[str] = (),
) -> OutputCheck:
    """Extract, strip, validate. Pure: the caller says which artifact files exist."""
    found = extract_output(final_message or "")
    if found is None:
        return OutputCheck(
            False, OUTPUT_NOT_FOUND, "no JSON object in the final assistant message", None, None
        )
    repair, value = found
    data = {key: item for key, item in value.items() if key != MARKER_KEY}
    warnings = (OUTPUT_REPAIRED_GENERIC,) if repair != "none" else ()
    frozen = MappingProxyType(data)
    if output_schema is not None:
        error = _first_schema_error(output_schema, data)
        if error is not None:
            return OutputCheck(False, OUTPUT_SCHEMA_INVALID, error, repair, frozen, warnings)
    missing = [path for path in required_artifacts if path not in present_artifacts]
    if missing:
        return OutputCheck(
            False, ARTIFACT_MISSING, f"missing artifacts: {', '.join(missing)}", repair, frozen, warnings
        )
    return OutputCheck(True, None, "", repair, frozen, warnings)


def extract_output(text: str) -> tuple[Repair, dict[str, Any]] | None:
    """The business object in a reply and how it was found, or None."""
    text = strip_hints(text)
    whole = _decode_object(text.strip())
    if whole is not None:
        return "none", whole
    for block in reversed(_fenced_blocks(text)):
        value = _decode_object(block.strip())
        if value is not None:
            return "fenced", value
    embedded = _last_embedded_object(_outside_foreign_fences(text))
    if embedded is not None:
        return "embedded", embedded
    return None


def _decode_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and not is_ask_user_envelope(value):
        return value
    return None


def _fenced_blocks(text: str) -> list[str]:
    """Bodies of ``` fences whose info string is empty or json; other languages are not output."""
    return [body for language, body in _fences(text)[0] if language in ("", "json", "jsonc")]


def _outside_foreign_fences(text: str) -> str:
    """The text without fences of other languages: code the reply shows is not its output."""
    return _fences(text)[1]


def _fences(text: str) -> tuple[list[tuple[str, str]], str]:
    """(language, body) of every closed fence, and the text with the non-JSON ones cut out."""
    fences: list[tuple[str, str]] = []
    kept: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        close = None
        if line.startswith("```"):
            close = next((end for end in range(index + 1, len(lines)) if lines[end].strip() == "```"), None)
        if close is None:
            kept.append(lines[index])  # an unclosed fence holds nothing we can trust as a block
            index += 1
            continue
        language = line[3:].strip().lower()
        body = "\n".join(lines[index + 1 : close])
        fences.append((language, body))
        if language in ("", "json", "jsonc"):
            kept.extend(lines[index : close + 1])
        index = close + 1
    return fences, "\n".join(kept)


def _last_embedded_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object in prose: decode forward, jump past each success."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    position = text.find("{")
    failures = 0
    while position >= 0 and failures < _MAX_EMBEDDED_ATTEMPTS:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            failures += 1
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and not is_ask_user_envelope(value):
            found = value
        position = text.find("{", end)
    return found


def _first_schema_error(schema: Mapping[str, Any], data: Mapping[str, Any]) -> str | None:
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    errors = sorted(validator.iter_errors(data), key=lambda error: list(error.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"
