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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

import jsonschema
import jsonschema.validators

from harness.readers import _bounded_json
from harness.readers._object_search import iter_objects
from harness.reference.hints import HintScan, is_ask_user_envelope, strip_hints
from harness.reference.marker import MARKER_KEY

Repair = Literal["none", "fenced", "embedded"]

OUTPUT_REPAIRED_GENERIC: Final = "OUTPUT_REPAIRED_GENERIC"
# turngate's codes for why an output is not valid (the spec names none).
OUTPUT_NOT_FOUND: Final = "OUTPUT_NOT_FOUND"
OUTPUT_SCHEMA_INVALID: Final = "OUTPUT_SCHEMA_INVALID"
ARTIFACT_MISSING: Final = "ARTIFACT_MISSING"


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
    hints: HintScan | None = None,
) -> OutputCheck:
    """Extract, strip, validate. Pure: the caller says which artifact files exist.

    ``hints`` is the caller's `scan_hints` of the same message, when it has one.
    """
    found = extract_output(final_message or "", hints=hints)
    if found is None:
        return OutputCheck(False, OUTPUT_NOT_FOUND, _not_found_detail(final_message or ""), None, None)
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


def _not_found_detail(text: str) -> str:
    """Why no output was found; names the nesting bound when the reply itself breaks it."""
    detail = "no JSON object in the final assistant message"
    stripped = text.strip()
    if stripped.startswith("{") and _bounded_json.too_deep(stripped):
        return f"{detail} (JSON nested deeper than {_bounded_json.MAX_JSON_DEPTH} levels is not read)"
    return detail


def extract_output(text: str, *, hints: HintScan | None = None) -> tuple[Repair, dict[str, Any]] | None:
    """The business object in a reply and how it was found, or None (``hints``: `scan_hints` of ``text``)."""
    text = strip_hints(text) if hints is None else hints.stripped
    whole = _decode_object(text.strip())
    if whole is not None:
        return "none", whole
    fences, outside = _fences(text)
    for language, body in reversed(fences):
        if language in _JSON_LANGUAGES:
            value = _decode_object(body.strip())
            if value is not None:
                return "fenced", value
    embedded = _last_embedded_object(outside)
    if embedded is not None:
        return "embedded", embedded
    return None


def _decode_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None  # only an object can be the output; saves decoding (and depth-checking) the rest
    try:
        value = _bounded_json.loads(text)
    except ValueError:  # not JSON, or nested deeper than the bound (NestingTooDeep)
        return None
    if isinstance(value, dict) and not is_ask_user_envelope(value):
        return value
    return None


def _fences(text: str) -> tuple[list[tuple[str, str]], str]:
    """(language, body) of every closed fence, and the text with the non-JSON ones cut out.

    A fence opens on a line whose stripped text starts with three backticks and closes
    at the next line that is exactly three backticks (stripped); an unclosed fence
    holds nothing we can trust as a block. Only lines holding backticks are looked at,
    and each closing line is found once for all (a list of them, walked with one cursor),
    so the scan is linear: no rescan from each opening line, no list of every line.
    """
    lines = _fence_lines(text)
    closes = [line for line in lines if line.stripped == FENCE]
    fences: list[tuple[str, str]] = []
    cut: list[tuple[int, int]] = []  # (start, end) of the foreign fences, in order
    next_close = 0
    after = -1  # the end of the last closed fence: lines before it are inside one
    for line in lines:
        if line.start <= after:
            continue
        while next_close < len(closes) and closes[next_close].start <= line.start:
            next_close += 1
        if next_close == len(closes):
            break  # no closing line after this one: no later fence closes either
        close = closes[next_close]
        language = line.stripped[len(FENCE) :].strip().lower()
        fences.append((language, text[line.end + 1 : close.start - 1]))
        if language not in _JSON_LANGUAGES:
            cut.append((line.start, close.end))
        after = close.end
    return fences, _without(text, cut)


_JSON_LANGUAGES: Final = ("", "json", "jsonc")
FENCE: Final = "```"


@dataclass(frozen=True, slots=True)
class _FenceLine:
    """A line whose stripped text starts with a fence: where it starts and ends (before its newline)."""

    start: int
    end: int
    stripped: str


def _fence_lines(text: str) -> list[_FenceLine]:
    """Every line that starts (after whitespace) with three backticks, in order, in one forward pass."""
    found: list[_FenceLine] = []
    position = 0
    while True:
        at = text.find(FENCE, position)
        if at < 0:
            return found
        start = text.rfind("\n", position, at) + 1 or position  # lines begin at ``position`` or later
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        before = text[start:at]
        if not before or before.isspace():
            found.append(_FenceLine(start, end, text[start:end].strip()))
        position = end + 1  # only a line's first fence can open or close anything


def _without(text: str, cut: list[tuple[int, int]]) -> str:
    """``text`` without the lines from each ``start`` to each ``end`` (a line end), as
    ``"\\n".join`` of the lines left would give it."""
    if not cut:
        return text
    pieces: list[str] = []
    position = 0
    for start, end in cut:
        pieces.append(text[position:start])
        position = end + 1  # the newline after the closing line goes with it
    pieces.append(text[position:])
    kept = "".join(pieces)
    if cut[-1][1] >= len(text):
        # the last line went: the newline that ended the line kept before it goes too
        kept = kept.removesuffix("\n")
    return kept


def _last_embedded_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object in prose: decode forward, jump past each success.

    `iter_objects` is linear on any text and never decodes a value nested deeper
    than `MAX_JSON_DEPTH`.
    """
    found: dict[str, Any] | None = None
    for candidate in iter_objects(text):
        if not is_ask_user_envelope(candidate.value):
            found = candidate.value
    return found


def _first_schema_error(schema: Mapping[str, Any], data: Mapping[str, Any]) -> str | None:
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    try:
        errors = sorted(validator.iter_errors(data), key=lambda error: list(error.absolute_path))
    except RecursionError:  # a recursive schema walking an output nested near the decoding bound
        return f"(root): nested too deeply to validate (the bound is {_bounded_json.MAX_JSON_DEPTH} levels)"
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"
