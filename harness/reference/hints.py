"""Ask-user hints in an assistant reply: found, parsed, and trusted only when clean (Decision 4).

A hint is optional enrichment for the pending interaction, never a gate
(Decision 4.1's body) and never business output (Decision 4). The forms are
the documented ones (ENGINE_FORMATS.md, "Ask-user hints"):

``yaml_block``
    ``<ASK_USER_YAML>`` … ``</ASK_USER_YAML>`` around a YAML document
    ``ask_user: {prompt, kind, options, …}`` (the recommended transport).
``yaml_fenced``
    the same document in a code fence tagged ``ask_user_yaml``; the opening
    and closing fence lines hold nothing else.
``yaml_flow``
    a line starting with ``ask_user: {`` holding a YAML flow mapping (the
    mapping may continue over further lines; it ends at its closing brace).
``legacy_json``
    a JSON envelope opening with ``{"outcome": "ask_user"`` (any whitespace
    around the colon), the payload under ``interaction``. An envelope whose
    ``outcome`` key is not the first is not read as a hint; the output check
    still refuses it as business output through `is_ask_user_envelope`.

The text is assumed already decoded by the engine stream reader: a hint that
sat inside an escaped NDJSON string is plain text here.

A hint is *clean* only when it parses and every field it carries has the right
type (`read_payload`). Anything else makes the whole hint malformed: its
fields are dropped and its problems (``ASK_USER_HINT_MALFORMED: …``) are kept
for diagnostics (003 "ask_user 载荷不完整"). A block, fence, flow mapping or
envelope that is never closed (a cut stream) runs to the end of the text and
is malformed, so it can neither be ignored nor leak into the prompt or the
business output. ``null`` for an optional field counts as absent.

Scanning is linear: plain substring searches with monotonic cursors and
single-pass bracket scans, no backtracking patterns. Nothing here raises on
any input text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

import yaml

HintForm = Literal["yaml_block", "yaml_fenced", "yaml_flow", "legacy_json"]

ASK_USER_HINT_MALFORMED: Final = "ASK_USER_HINT_MALFORMED"

BLOCK_OPEN: Final = "<ASK_USER_YAML>"
BLOCK_CLOSE: Final = "</ASK_USER_YAML>"
FENCE: Final = "```"
FENCE_TAG: Final = "ask_user_yaml"
FLOW_KEY: Final = "ask_user:"
LEGACY_KEY: Final = '"outcome"'
LEGACY_VALUE: Final = '"ask_user"'

# Bounds on the free-form mappings (ui_hints, context): a hint is small, and the
# bounds keep alias bombs and absurd nesting from costing more than a glance.
_MAX_NODES: Final = 10_000
_MAX_DEPTH: Final = 32
_REPR_LIMIT: Final = 60

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
_LINE_SPACE: Final = " \t\r\f\v"


@dataclass(frozen=True, slots=True)
class HintReading:
    """One hint found in a text.

    ``span`` is ``(start, end)`` in the text. ``fields`` holds the clean
    enrichment fields (plain JSON values, copied out of the parse) and is empty
    whenever ``problems`` is not.
    """

    form: HintForm
    span: tuple[int, int]
    fields: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    problems: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.problems


def find_hints(text: str) -> tuple[HintReading, ...]:
    """Every hint in the text, in order, spans disjoint (a hint's inside is not searched again)."""
    return tuple(_Scanner(text).readings())


def read_hint(text: str) -> HintReading | None:
    """The hint that counts: the last one in the text, clean or not."""
    hints = find_hints(text)
    return hints[-1] if hints else None


def strip_hints(text: str) -> str:
    """The text with every hint span, clean or malformed, cut out."""
    pieces: list[str] = []
    position = 0
    for hint in find_hints(text):
        start, end = hint.span
        pieces.append(text[position:start])
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def is_ask_user_envelope(value: object) -> bool:
    """Whether a decoded JSON value is an ask-user envelope rather than business output (Decision 4).

    True for a mapping with ``outcome == "ask_user"``, a top-level ``ask_user``
    key, or an ``interaction`` mapping carrying a ``prompt``.
    """
    if not isinstance(value, Mapping):
        return False
    if value.get("outcome") == "ask_user" or "ask_user" in value:
        return True
    interaction = value.get("interaction")
    return isinstance(interaction, Mapping) and "prompt" in interaction


def read_payload(form: HintForm, payload: object) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """Check a hint payload field by field: (clean fields, ()) or (empty, problems)."""
    prefix = f"{ASK_USER_HINT_MALFORMED}: {form}: "
    if not isinstance(payload, Mapping):
        return _EMPTY, (f"{prefix}payload: not a mapping",)
    fields: dict[str, Any] = {}
    problems: list[str] = []

    prompt = payload.get("prompt")
    if prompt is None:
        problems.append("prompt: missing")
    elif not isinstance(prompt, str):
        problems.append(f"prompt: {_short(prompt)}: not a string")
    elif not prompt.strip():
        problems.append("prompt: empty")
    else:
        fields["prompt"] = prompt

    interaction_id = payload.get("interaction_id")
    if interaction_id is not None:
        if isinstance(interaction_id, int) and not isinstance(interaction_id, bool):
            fields["interaction_id"] = interaction_id
        else:
            problems.append(f"interaction_id: {_short(interaction_id)}: not an integer")

    for name in ("kind", "default_decision_policy"):
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            fields[name] = value
        else:
            problems.append(f"{name}: {_short(value)}: not a string")

    options = payload.get("options")
    if options is not None:
        checked, option_problems = _read_options(options)
        problems.extend(option_problems)
        if not option_problems:
            fields["options"] = checked

    for name in ("ui_hints", "context"):
        value = payload.get(name)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            problems.append(f"{name}: not a mapping")
            continue
        copied, why = _json_copy(value)
        if why:
            problems.append(f"{name}: {why}")
        else:
            fields[name] = copied

    required = payload.get("required_fields")
    if required is not None:
        if isinstance(required, list) and all(isinstance(item, str) for item in required):
            fields["required_fields"] = list(required)
        else:
            problems.append("required_fields: not a list of strings")

    if problems:
        return _EMPTY, tuple(prefix + problem for problem in problems)
    return MappingProxyType(fields), ()


def _read_options(options: object) -> tuple[list[dict[str, Any]], list[str]]:
    if not isinstance(options, list):
        return [], [f"options: {_short(options)}: not a list"]
    checked: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, option in enumerate(options):
        where = f"options[{index}]"
        if not isinstance(option, Mapping):
            problems.append(f"{where}: not a mapping")
            continue
        label = option.get("label")
        value = option.get("value")
        if not isinstance(label, str):
            problems.append(f"{where}.label: {'missing' if label is None else 'not a string'}")
        if value is None:
            problems.append(f"{where}.value: missing")
        elif not _is_scalar(value):
            problems.append(f"{where}.value: not a string, number or boolean")
        if isinstance(label, str) and value is not None and _is_scalar(value):
            checked.append({"label": label, "value": value})
    return checked, problems


def _is_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)  # bool is an int


def _json_copy(value: Mapping[Any, Any]) -> tuple[dict[str, Any], str]:
    """A plain JSON copy of a mapping, or ({}, why not). Bounded in size and depth."""
    budget = [_MAX_NODES]

    def copy(item: object, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise _NotJson(f"more than {_MAX_NODES} values")
        if depth > _MAX_DEPTH:
            raise _NotJson(f"nested deeper than {_MAX_DEPTH}")
        if item is None or isinstance(item, str | bool | int):
            return item
        if isinstance(item, float):
            if not math.isfinite(item):
                raise _NotJson(f"{item!r} is not a JSON number")
            return item
        if isinstance(item, Mapping):
            result: dict[str, Any] = {}
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise _NotJson(f"key {_short(key)} is not a string")
                result[key] = copy(inner, depth + 1)
            return result
        if isinstance(item, list):
            return [copy(inner, depth + 1) for inner in item]
        raise _NotJson(f"{type(item).__name__} value is not JSON")

    try:
        copied = copy(value, 0)
    except _NotJson as error:
        return {}, f"not JSON-compatible ({error})"
    return copied, ""


class _NotJson(Exception):
    pass


def _short(value: object) -> str:
    try:
        shown = repr(value)
    except Exception:  # a repr may fail on exotic values; a diagnostic must not
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= _REPR_LIMIT else shown[: _REPR_LIMIT - 1] + "…"


def _malformed(form: HintForm, span: tuple[int, int], problem: str) -> HintReading:
    return HintReading(form, span, _EMPTY, (f"{ASK_USER_HINT_MALFORMED}: {form}: {problem}",))


def _from_payload(form: HintForm, span: tuple[int, int], payload: object) -> HintReading:
    fields, problems = read_payload(form, payload)
    return HintReading(form, span, fields, problems)


def _parse_yaml_document(form: HintForm, span: tuple[int, int], source: str) -> HintReading:
    """A YAML block or fence body: ``ask_user: {…}``, or the payload mapping itself."""
    if source.startswith("\r\n"):
        source = source[2:]
    elif source.startswith("\n"):
        source = source[1:]
    try:
        document = yaml.safe_load(source)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return _malformed(form, span, f"broken YAML{where}")
    except RecursionError:
        return _malformed(form, span, "broken YAML (nested too deeply)")
    except Exception:  # ReaderError (control characters) and anything else PyYAML may raise
        return _malformed(form, span, "broken YAML")
    if document is None:
        return _malformed(form, span, "empty")
    if isinstance(document, Mapping) and "ask_user" in document:
        inner = document["ask_user"]
        if not isinstance(inner, Mapping):
            return _malformed(form, span, "ask_user: not a mapping")
        return _from_payload(form, span, inner)
    return _from_payload(form, span, document)


def _parse_flow(span: tuple[int, int], source: str) -> HintReading:
    try:
        document = yaml.safe_load(source)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return _malformed("yaml_flow", span, f"broken YAML{where}")
    except RecursionError:
        return _malformed("yaml_flow", span, "broken YAML (nested too deeply)")
    except Exception:
        return _malformed("yaml_flow", span, "broken YAML")
    if not isinstance(document, Mapping) or not isinstance(document.get("ask_user"), Mapping):
        return _malformed("yaml_flow", span, "ask_user: not a mapping")
    return _from_payload("yaml_flow", span, document["ask_user"])


def _parse_legacy(span: tuple[int, int], source: str) -> HintReading:
    try:
        envelope = json.loads(source)
    except json.JSONDecodeError as error:
        return _malformed("legacy_json", span, f"broken JSON at line {error.lineno}")
    except (ValueError, RecursionError):
        return _malformed("legacy_json", span, "broken JSON")
    if not isinstance(envelope, dict):  # cannot happen for a balanced {…}; kept for safety
        return _malformed("legacy_json", span, "not an object")
    interaction = envelope.get("interaction")
    if interaction is None:
        return _malformed("legacy_json", span, "interaction: missing")
    if not isinstance(interaction, Mapping):
        return _malformed("legacy_json", span, "interaction: not a mapping")
    return _from_payload("legacy_json", span, interaction)


class _Finder:
    """Next occurrence of a needle at or after a position, for non-decreasing positions: linear overall."""

    __slots__ = ("_at", "_from", "_needle", "_text")

    def __init__(self, text: str, needle: str) -> None:
        self._text = text
        self._needle = needle
        self._from = 0
        self._at = -2  # not searched yet

    def next(self, position: int) -> int:
        if self._at == -2 or position > self._at >= 0 or position < self._from:
            self._from = position
            self._at = self._text.find(self._needle, position)
        elif self._at == -1 and position >= self._from:
            return -1
        return self._at


class _Scanner:
    """One left-to-right pass over a text, yielding hints with disjoint spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.block_open = _Finder(text, BLOCK_OPEN)
        self.block_close = _Finder(text, BLOCK_CLOSE)
        self.fence = _Finder(text, FENCE)
        self.flow = _Finder(text, FLOW_KEY)
        self.legacy = _Finder(text, LEGACY_KEY)
        self.fence_close = _Finder(text, FENCE)
        self.fence_close_cache = (len(text) + 1, -1)  # (searched from, found at or -1): nothing yet

    def readings(self) -> list[HintReading]:
        found: list[HintReading] = []
        position = 0
        while position <= len(self.text):
            start, form = self._next_start(position)
            if form is None:
                break
            reading = self._read(form, start)
            found.append(reading)
            position = max(reading.span[1], start + 1)
        return found

    # -- where the next hint starts ------------------------------------------------------------

    def _next_start(self, position: int) -> tuple[int, HintForm | None]:
        candidates: list[tuple[int, HintForm]] = []
        block = self.block_open.next(position)
        if block >= 0:
            candidates.append((block, "yaml_block"))
        fence = self._next_fence_open(position)
        if fence >= 0:
            candidates.append((fence, "yaml_fenced"))
        flow = self._next_flow(position)
        if flow >= 0:
            candidates.append((flow, "yaml_flow"))
        legacy = self._next_legacy(position)
        if legacy >= 0:
            candidates.append((legacy, "legacy_json"))
        if not candidates:
            return -1, None
        return min(candidates, key=lambda candidate: candidate[0])

    def _at_line_start(self, index: int) -> bool:
        """Only spaces or tabs between the previous newline (or the start) and ``index``."""
        text = self.text
        while index > 0 and text[index - 1] in _LINE_SPACE:
            index -= 1
        return index == 0 or text[index - 1] == "\n"

    def _rest_of_line_blank(self, index: int) -> int:
        """The index just past the line ending, when only spaces follow ``index`` on its line, else -1."""
        text = self.text
        while index < len(text) and text[index] in _LINE_SPACE:
            index += 1
        if index == len(text):
            return index
        return index + 1 if text[index] == "\n" else -1

    def _next_fence_open(self, position: int) -> int:
        while True:
            at = self.fence.next(position)
            if at < 0:
                return -1
            tag_end = at + len(FENCE) + len(FENCE_TAG)
            if (
                self.text.startswith(FENCE_TAG, at + len(FENCE))
                and self._at_line_start(at)
                and self._rest_of_line_blank(tag_end) >= 0
            ):
                return at
            position = at + 1

    def _next_fence_close(self, position: int) -> int:
        """The start of the next line that is only a closing fence, at or after ``position``.

        Whether an occurrence closes does not depend on where the search began,
        so the last answer stands for any later position up to it.
        """
        searched_from, found = self.fence_close_cache
        if searched_from <= position and (found == -1 or found >= position):
            return found
        scan = position
        while True:
            at = self.fence_close.next(scan)
            if at < 0 or (self._at_line_start(at) and self._rest_of_line_blank(at + len(FENCE)) >= 0):
                break
            scan = at + 1
        self.fence_close_cache = (position, at)
        return at

    def _next_flow(self, position: int) -> int:
        text = self.text
        while True:
            at = self.flow.next(position)
            if at < 0:
                return -1
            index = at + len(FLOW_KEY)
            while index < len(text) and text[index] in " \t":
                index += 1
            if index < len(text) and text[index] == "{" and self._at_line_start(at):
                return at
            position = at + 1

    def _next_legacy(self, position: int) -> int:
        """The ``{`` of an envelope opening ``{"outcome": "ask_user"``, at or after ``position``."""
        text = self.text
        while True:
            at = self.legacy.next(position)
            if at < 0:
                return -1
            brace = at
            while brace > 0 and text[brace - 1] in " \t\r\n":
                brace -= 1
            index = at + len(LEGACY_KEY)
            while index < len(text) and text[index] in " \t\r\n":
                index += 1
            if index < len(text) and text[index] == ":":
                index += 1
                while index < len(text) and text[index] in " \t\r\n":
                    index += 1
                opens = brace > 0 and text[brace - 1] == "{" and brace - 1 >= position
                if opens and text.startswith(LEGACY_VALUE, index):
                    return brace - 1
            position = at + 1

    # -- reading one hint ----------------------------------------------------------------------

    def _read(self, form: HintForm, start: int) -> HintReading:
        if form == "yaml_block":
            return self._read_block(start)
        if form == "yaml_fenced":
            return self._read_fence(start)
        if form == "yaml_flow":
            return self._read_flow(start)
        return self._read_legacy(start)

    def _read_block(self, start: int) -> HintReading:
        body = start + len(BLOCK_OPEN)
        close = self.block_close.next(body)
        reopen = self.block_open.next(body)
        if close < 0 or 0 <= reopen < close:
            end = len(self.text) if reopen < 0 else reopen
            return _malformed("yaml_block", (start, end), f"unclosed {BLOCK_OPEN} block (stream cut?)")
        span = (start, close + len(BLOCK_CLOSE))
        return _parse_yaml_document("yaml_block", span, self.text[body:close])

    def _read_fence(self, start: int) -> HintReading:
        body = self._rest_of_line_blank(start + len(FENCE) + len(FENCE_TAG))
        if body >= len(self.text):
            return _malformed("yaml_fenced", (start, len(self.text)), "unclosed fence (stream cut?)")
        close = self._next_fence_close(body)
        if close < 0:
            return _malformed("yaml_fenced", (start, len(self.text)), "unclosed fence (stream cut?)")
        end = close + len(FENCE)
        return _parse_yaml_document("yaml_fenced", (start, end), self.text[body:close])

    def _read_flow(self, start: int) -> HintReading:
        brace = self.text.find("{", start + len(FLOW_KEY))
        end = _flow_end(self.text, brace)
        if end < 0:
            return _malformed("yaml_flow", (start, len(self.text)), "unclosed flow mapping (cut or broken)")
        return _parse_flow((start, end), self.text[start:end])

    def _read_legacy(self, start: int) -> HintReading:
        end = _json_end(self.text, start)
        if end < 0:
            return _malformed(
                "legacy_json", (start, len(self.text)), "unclosed JSON envelope (cut or broken)"
            )
        return _parse_legacy((start, end), self.text[start:end])


def _json_end(text: str, start: int) -> int:
    """Just past the bracket closing the JSON value opened at ``start``, or -1. One pass, strings aware."""
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def _flow_end(text: str, start: int) -> int:
    """Just past the brace closing the YAML flow mapping opened at ``start``, or -1.

    Quotes open a quoted scalar only where a scalar may begin (after ``{[,:``
    and blanks), so an apostrophe inside a plain scalar (``Don't``) is text.
    Single-quoted scalars escape a quote by doubling it, double-quoted ones
    with a backslash.
    """
    depth = 0
    quote = ""
    escaped = False
    previous = ""  # the last non-blank character outside quotes
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if quote == '"':
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quote = ""
                previous = char
        elif quote == "'":
            if char == "'":
                if index + 1 < length and text[index + 1] == "'":
                    index += 1
                else:
                    quote = ""
                    previous = char
        elif char in "'\"" and previous in "{[,:":
            quote = char
        elif char in "{[":
            depth += 1
            previous = char
        elif char in "}]":
            depth -= 1
            previous = char
            if depth == 0:
                return index + 1
        elif char not in " \t\r\n":
            previous = char
        index += 1
    return -1
