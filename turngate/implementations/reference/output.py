"""The output check: the business JSON of a turn, marker stripped, validated against the skill's schema.

Where the JSON comes from is reported as ``repair``: ``none`` (the reply is the
object), ``fenced`` (a fenced code block held it) or ``embedded`` (an object in
prose). A repaired output carries the ``OUTPUT_REPAIRED_GENERIC`` warning. A
lone surrogate in business text is kept as its ``\\udXXX`` escape, with the
``OUTPUT_TEXT_ESCAPED`` warning naming where. Ask-user hints are cut out first
and an ask-user envelope is never taken for business output (Decision 4), so a
malformed hint can only ever make the output "not found", never valid. The
marker key is removed before validation in every mode (Decision 3): it is
control, not business data.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

import jsonschema
import jsonschema.validators

from turngate.base.hostile_text import escaped_strings
from turngate.base.patterns import linear_time
from turngate.engines.readers import _bounded_json
from turngate.engines.readers._object_search import iter_objects
from turngate.implementations.reference.hints import HintScan, is_ask_user_envelope, strip_hints
from turngate.implementations.reference.marker import MARKER_KEY

Repair = Literal["none", "fenced", "embedded"]

OUTPUT_REPAIRED_GENERIC: Final = "OUTPUT_REPAIRED_GENERIC"
# A warning: business text held what UTF-8 cannot carry (a lone surrogate), kept as its ``\\udXXX``
# escape; the warning names each place, as ``OUTPUT_TEXT_ESCAPED: greeting, items[2]``.
OUTPUT_TEXT_ESCAPED: Final = "OUTPUT_TEXT_ESCAPED"
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
    # Text that cannot be carried as it is (a lone surrogate: an emoji cut in two) is escaped before
    # anything else, so the output checked is the output kept and sent on, and the run says where.
    data, escaped_at = escaped_strings({key: item for key, item in value.items() if key != MARKER_KEY})
    warnings = ((OUTPUT_REPAIRED_GENERIC,) if repair != "none" else ()) + (
        (f"{OUTPUT_TEXT_ESCAPED}: {', '.join(escaped_at)}",) if escaped_at else ()
    )
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
    holds nothing we can trust as a block. The scan is linear and looks only at
    backticks: the next opening line is found from the end of the last fence, its
    closing line from the end of the opening line, with no list of every line and no
    rescan (a reply of a million opening lines and no closing one costs one search).
    """
    fences: list[tuple[str, str]] = []
    cut: list[tuple[int, int]] = []  # (start, end) of the foreign fences, in order
    position = 0
    while (opening := _next_fence_line(text, position)) is not None:
        start, end, stripped = opening
        close = _next_closing_line(text, end + 1)
        if close is None:
            break  # no closing line after this one: no later fence closes either
        language = stripped[len(FENCE) :].strip().lower()
        fences.append((language, text[end + 1 : close[0] - 1]))
        if language not in _JSON_LANGUAGES:
            cut.append((start, close[1]))
        position = close[1] + 1
    return fences, _without(text, cut)


_JSON_LANGUAGES: Final = ("", "json", "jsonc")
FENCE: Final = "```"
# Three backticks and nothing but whitespace after them on their line: a closing line's end.
_CLOSING_TAIL: Final = re.compile(r"```[^\S\n]*(?:\n|\Z)")


def _line_start(text: str, position: int, at: int) -> int:
    """The start of the line holding ``at``; lines begin at ``position`` or later."""
    return text.rfind("\n", position, at) + 1 or position


def _next_fence_line(text: str, position: int) -> tuple[int, int, str] | None:
    """(start, end, stripped text) of the next line from ``position`` (a line start) opening a fence."""
    while (at := text.find(FENCE, position)) >= 0:
        start = _line_start(text, position, at)
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        before = text[start:at]
        if not before or before.isspace():
            return start, end, text[start:end].strip()
        position = end + 1  # only a line's first backticks can open anything
    return None


def _next_closing_line(text: str, position: int) -> tuple[int, int] | None:
    """(start, end) of the next line from ``position`` (a line start) that is only three backticks."""
    while (tail := _CLOSING_TAIL.search(text, position)) is not None:
        at = tail.start()
        start = _line_start(text, position, at)
        before = text[start:at]
        if not before or before.isspace():
            return start, tail.end() - 1 if tail.group().endswith("\n") else tail.end()
        position = tail.end()  # not a closing line; the next line starts after it
    return None


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
    validator = linear_time(jsonschema.validators.validator_for(schema))(schema)
    try:
        errors = sorted(validator.iter_errors(data), key=lambda error: list(error.absolute_path))
    except RecursionError:  # a recursive schema walking an output nested near the decoding bound
        return f"(root): nested too deeply to validate (the bound is {_bounded_json.MAX_JSON_DEPTH} levels)"
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"
