"""Business output: the JSON object of the final assistant message, marker stripped, validated.

The done marker is control only (Decision 3): it is removed before schema validation in both
modes. ask_user envelopes are never taken for output (Decision 4). No output schema means any
JSON object is valid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

import jsonschema

from .ask_user_hints import is_envelope
from .bugs import bug
from .done_marker import MARKER_KEY

FENCE: Final = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.S)
# The opening of a legacy ask_user envelope: when it does not parse, what follows is its broken
# payload, and an object nested in it (an option) is no business output either (Decision 4).
ENVELOPE_OPENING: Final = re.compile(r'\{\s*"outcome"\s*:\s*"ask_user"')
MAX_CANDIDATES: Final = 500
MAX_TEXT: Final = 1024 * 1024


@dataclass(frozen=True)
class OutputCheck:
    found: bool
    valid: bool
    data: dict[str, Any] | None
    error: str | None


def _objects(text: str) -> list[dict[str, Any]]:
    """Top-level JSON objects in the text, in order (bounded)."""
    whole = text.strip()
    try:
        doc = json.loads(whole)
        if isinstance(doc, dict):
            return [doc]
    except (ValueError, RecursionError):  # RecursionError: hostile nesting
        pass
    found: list[dict[str, Any]] = []
    for block in FENCE.findall(text):
        try:
            doc = json.loads(block)
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            continue
        if isinstance(doc, dict):
            found.append(doc)
    if found:
        return found
    decoder = json.JSONDecoder()
    pos = text.find("{")
    tries = 0
    while pos != -1 and tries < MAX_CANDIDATES:
        tries += 1
        try:
            doc, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            if ENVELOPE_OPENING.match(text, pos):
                break
            pos = text.find("{", pos + 1)
            continue
        if isinstance(doc, dict):
            found.append(doc)
        pos = text.find("{", end)
    return found


def pick(text: str) -> dict[str, Any] | None:
    """The business object: the last one carrying more than the marker; ask_user envelopes skipped."""
    if len(text) > MAX_TEXT:
        return None
    objects = _objects(text)
    if not bug("hint_envelope_as_output"):
        objects = [doc for doc in objects if not is_envelope(doc)]
    business = [doc for doc in objects if set(doc) - {MARKER_KEY}]
    chosen = business or objects
    return chosen[-1] if chosen else None


def check(text: str, schema: dict[str, Any] | None, mode: str) -> OutputCheck:
    doc = pick(text)
    if doc is None:
        return OutputCheck(False, False, None, "OUTPUT_NOT_FOUND")
    strip = not bug("marker_not_stripped")
    if bug("strip_marker_interactive_only") and mode != "interactive":
        strip = False
    data = {k: v for k, v in doc.items() if k != MARKER_KEY} if strip else dict(doc)
    if schema is not None:
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as error:
            return OutputCheck(True, False, data, f"OUTPUT_SCHEMA_INVALID: {error.message}")
        except jsonschema.SchemaError as error:
            return OutputCheck(True, False, data, f"OUTPUT_SCHEMA_BROKEN: {error.message}")
    return OutputCheck(True, True, data, None)
