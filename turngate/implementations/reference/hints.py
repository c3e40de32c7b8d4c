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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple

import yaml

from turngate.base.bounded_yaml import YamlTooLarge, load_bounded, short_repr
from turngate.engines.readers import _bounded_json
from turngate.engines.readers._stream import clean_text

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
# A hint is a question for a person. A hint whose source (a block's or fence's body, a
# whole flow mapping or envelope) is longer than this is malformed and not parsed: the
# YAML parser is pure Python, and this bounds what one reply can cost it (about 0.1 s).
# A flow mapping or envelope whose closing bracket is not found within the bound runs,
# like an unclosed one, to the end of the text.
MAX_HINT_CHARS: Final = 16_384
_TOO_LARGE: Final = f"larger than {MAX_HINT_CHARS} characters (not parsed)"
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


@dataclass(frozen=True, slots=True)
class HintScan:
    """One pass over a reply: where its hints are, the one that counts (parsed), the text without them.

    The gate asks three questions of one reply (is there a hint, what is the output,
    what is the prompt); `scan_hints` answers them all in one pass, and
    `check_output` and `build_pending` take the scan instead of scanning again.
    """

    count: int  # how many hints (each span cut out of ``stripped``)
    last: HintReading | None
    stripped: str


def scan_hints(text: str) -> HintScan:
    """Find every hint, parse only the last (the one that counts), cut every span out."""
    found = _Scanner(text, segments=True).locate()
    return HintScan(found.count, found.reading(text, -1) if found.spans else None, found.cut(text))


def find_hints(text: str) -> tuple[HintReading, ...]:
    """Every hint in the text, in order, spans disjoint (a hint's inside is not searched again)."""
    found = _Scanner(text).locate()
    return tuple(found.reading(text, index) for index in range(len(found.spans)))


def read_hint(text: str) -> HintReading | None:
    """The hint that counts: the last one in the text, clean or not. Only that one is parsed."""
    found = _Scanner(text).locate()
    return found.reading(text, -1) if found.spans else None


def strip_hints(text: str) -> str:
    """The text with every hint span, clean or malformed, cut out. Nothing is parsed."""
    return _Scanner(text).locate().cut(text)


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
        fields["prompt"] = clean_text(prompt)

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
            fields[name] = clean_text(value)
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
            fields["required_fields"] = [clean_text(item) for item in required]
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
            checked.append({"label": clean_text(label), "value": _clean(value)})
    return checked, problems


def _is_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)  # bool is an int


def _clean(value: Any) -> Any:
    """A string with lone surrogates (from a ``\\ud800`` escape) replaced, so it can always be encoded."""
    return clean_text(value) if isinstance(value, str) else value


def _json_copy(value: Mapping[Any, Any]) -> tuple[dict[str, Any], str]:
    """A plain JSON copy of a mapping, or ({}, why not). Bounded in size and depth."""
    budget = [_MAX_NODES]

    def copy(item: object, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise _NotJson(f"more than {_MAX_NODES} values")
        if depth > _MAX_DEPTH:
            raise _NotJson(f"nested deeper than {_MAX_DEPTH}")
        if isinstance(item, str):
            return clean_text(item)
        if item is None or isinstance(item, bool | int):
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
                result[clean_text(key)] = copy(inner, depth + 1)
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
    return short_repr(value, _REPR_LIMIT)  # never the whole value: it may stand for 10^9 others


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
    document, problem = _load_yaml(source)
    if problem is not None:
        return _malformed(form, span, problem)
    if document is None:
        return _malformed(form, span, "empty")
    if isinstance(document, Mapping) and "ask_user" in document:
        inner = document["ask_user"]
        if not isinstance(inner, Mapping):
            return _malformed(form, span, "ask_user: not a mapping")
        return _from_payload(form, span, inner)
    return _from_payload(form, span, document)


def _load_yaml(source: str) -> tuple[Any, str | None]:
    """A hint's YAML, or (None, why it is malformed). Bounded: an alias bomb or deep nesting is
    refused as it is read, before anything walks the value it stands for."""
    try:
        return load_bounded(source, max_values=_MAX_NODES, max_depth=_MAX_DEPTH), None
    except YamlTooLarge as error:
        return None, f"YAML too large ({error})"
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return None, f"broken YAML{where}"
    except Exception:  # ReaderError (control characters) and anything else PyYAML may raise
        return None, "broken YAML"


def _parse_flow(span: tuple[int, int], source: str) -> HintReading:
    document, problem = _load_yaml(source)
    if problem is not None:
        return _malformed("yaml_flow", span, problem)
    if not isinstance(document, Mapping) or not isinstance(document.get("ask_user"), Mapping):
        return _malformed("yaml_flow", span, "ask_user: not a mapping")
    return _from_payload("yaml_flow", span, document["ask_user"])


def _parse_legacy(span: tuple[int, int], source: str) -> HintReading:
    try:
        envelope = _bounded_json.loads(source)
    except _bounded_json.NestingTooDeep:
        return _malformed(
            "legacy_json", span, f"broken JSON (nested deeper than {_bounded_json.MAX_JSON_DEPTH} levels)"
        )
    except json.JSONDecodeError as error:
        return _malformed("legacy_json", span, f"broken JSON at line {error.lineno}")
    except ValueError:
        return _malformed("legacy_json", span, "broken JSON")
    if not isinstance(envelope, dict):  # cannot happen for a balanced {…}; kept for safety
        return _malformed("legacy_json", span, "not an object")
    interaction = envelope.get("interaction")
    if interaction is None:
        return _malformed("legacy_json", span, "interaction: missing")
    if not isinstance(interaction, Mapping):
        return _malformed("legacy_json", span, "interaction: not a mapping")
    return _from_payload("legacy_json", span, interaction)


class _Located(NamedTuple):
    """A hint found but not parsed yet: its span, where its source is, or why it cannot be read."""

    form: HintForm
    start: int
    end: int
    source_start: int
    source_end: int
    problem: str | None


@dataclass(slots=True)
class _Found:
    """Every hint's span, in order; the details of each hint but the simple flow mappings.

    A simple flow mapping (one line ``ask_user: {…}`` with no brackets or quotes) is
    its span alone: a reply may hold thousands, and only the last is ever parsed. In a
    scan (`scan_hints`), a run of them can be one *segment*: a span holding several
    hints, kept with its text already cut (``segments``: index -> (cut text, how many
    hints, the last one's span)).
    """

    spans: list[tuple[int, int]] = field(default_factory=list)
    details: dict[int, _Located] = field(default_factory=dict)
    segments: dict[int, tuple[str, int, tuple[int, int]]] = field(default_factory=dict)

    def add(self, hint: _Located) -> None:
        self.details[len(self.spans)] = hint
        self.spans.append((hint.start, hint.end))

    def add_segment(self, start: int, end: int, cut: str, count: int, last: tuple[int, int]) -> None:
        self.segments[len(self.spans)] = (cut, count, last)
        self.spans.append((start, end))

    @property
    def count(self) -> int:
        return len(self.spans) + sum(count - 1 for _, count, _ in self.segments.values())

    def reading(self, text: str, index: int) -> HintReading:
        index %= len(self.spans)
        hint = self.details.get(index)
        if hint is None:
            segment = self.segments.get(index)
            start, end = self.spans[index] if segment is None else segment[2]
            hint = _Located("yaml_flow", start, end, start, end, None)
        return _materialise(text, hint)

    def cut(self, text: str) -> str:
        """The text with every hint cut out."""
        if not self.spans:
            return text
        pieces: list[str] = []
        position = 0
        for index, (start, end) in enumerate(self.spans):
            pieces.append(text[position:start])
            segment = self.segments.get(index)
            if segment is not None:
                pieces.append(segment[0])
            position = end
        pieces.append(text[position:])
        return "".join(pieces)


def _materialise(text: str, hint: _Located) -> HintReading:
    """The reading of one located hint: parsed here, and only when its source is within the bound."""
    span = (hint.start, hint.end)
    if hint.problem is not None:
        return _malformed(hint.form, span, hint.problem)
    if hint.source_end - hint.source_start > MAX_HINT_CHARS:
        return _malformed(hint.form, span, _TOO_LARGE)
    source = text[hint.source_start : hint.source_end]
    match hint.form:
        case "yaml_block" | "yaml_fenced":
            return _parse_yaml_document(hint.form, span, source)
        case "yaml_flow":
            return _parse_flow(span, source)
        case "legacy_json":
            return _parse_legacy(span, source)


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


# What must follow each form's needle (a flow mapping with no brackets or quotes inside is
# matched whole, the common case, so most flow hints cost one match).
_FENCE_REST: Final = re.compile(r"[ \t\r\f\v]*(?:\n|\Z)")
_FLOW_REST: Final = re.compile(r"[ \t]*\{(?P<simple>[^{}\[\]'\"]*\})?")
_LEGACY_REST: Final = re.compile(r'[ \t\r\n]*:[ \t\r\n]*"ask_user"')
# A flow key and a simple mapping; and a flow key whose mapping is not simple (or not closed
# before the search's end). Both begin with the key, so the search runs at literal speed;
# whether the key is at a line start is checked per match.
_SIMPLE_FLOW: Final = re.compile(r"ask_user:[ \t]*\{[^{}\[\]'\"]*\}")
_FLOW_NOT_SIMPLE: Final = re.compile(r"ask_user:[ \t]*\{(?![^{}\[\]'\"]*\})")
# A simple flow mapping right after a newline (the newline is matched, so the search runs at
# literal speed), and a flow key after a newline and line space: where a segment does not apply.
_SIMPLE_FLOW_LINE: Final = re.compile(r"\nask_user:[ \t]*\{[^{}\[\]'\"]*\}")
_INDENTED_FLOW: Final = re.compile(r"\n[ \t\r\f\v]+ask_user:")
_FENCE_OPEN: Final = FENCE + FENCE_TAG
_FORMS: Final[tuple[HintForm, ...]] = ("yaml_block", "yaml_fenced", "yaml_flow", "legacy_json")
_JSON_SPACE: Final = " \t\r\n"
# A line that closes a fence: only spaces around three backticks.
_FENCE_CLOSE: Final = re.compile(r"^[ \t\r\f\v]*(```)[ \t\r\f\v]*(?:\n|\Z)", re.MULTILINE)
# JSON tokens that matter for finding where a value ends: whole strings (or one cut by the end), brackets.
_JSON_TOKEN: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[{}\[\]]', re.DOTALL)


def _run_start(text: str, index: int, chars: str) -> int:
    """Where the run of ``chars`` that ends at ``index`` begins, skipped at C speed in slices."""
    while index > 0 and text[index - 1] in chars:
        low = max(0, index - 4096)
        index = low + len(text[low:index].rstrip(chars))
    return index


def _at_line_start(text: str, index: int) -> bool:
    """Only spaces or tabs between the previous newline (or the start) and ``index``."""
    begin = _run_start(text, index, _LINE_SPACE)
    return begin == 0 or text[begin - 1] == "\n"


class _Start(NamedTuple):
    """Where the next hint of one form starts, and where the check of its opening ended.

    ``opened``: for a block, the end of its tag; for a fence, the start of its body; for
    a flow mapping, its opening brace, or its end when it is simple (``whole``); for an
    envelope, its brace. ``searched_from``: the position the search began at.
    """

    searched_from: int
    start: int
    opened: int
    whole: bool = False


_NONE_AFTER: Final = -1


class _Scanner:
    """One left-to-right pass over a text, locating hints with disjoint spans (nothing parsed).

    Each form's needle is found with ``str.find`` through a `_Finder` (monotonic, so
    linear overall) and checked where it stands. Whether an occurrence starts a hint
    does not depend on where the search began (except that an envelope's brace must
    not lie before it), so each form's next start is kept until the scan passes it.
    """

    def __init__(self, text: str, *, segments: bool = False) -> None:
        self.text = text
        self.segments = segments  # take runs of simple flow mappings as segments (a scan)
        self.block_open = _Finder(text, BLOCK_OPEN)
        self.block_close = _Finder(text, BLOCK_CLOSE)
        self.needles: dict[HintForm, _Finder] = {
            "yaml_block": self.block_open,
            "yaml_fenced": _Finder(text, _FENCE_OPEN),
            "yaml_flow": _Finder(text, FLOW_KEY),
            "legacy_json": _Finder(text, LEGACY_KEY),
        }
        self.next_start: dict[HintForm, _Start] = {}
        self.fence_close_cache = (len(text) + 1, -1)  # (searched from, found at or -1): nothing yet

    def locate(self) -> _Found:
        found = _Found()
        position = 0
        while True:
            best: tuple[int, HintForm, _Start] | None = None
            for form in _FORMS:
                start = self._start(form, position)
                if start.start >= 0 and (best is None or start.start < best[0]):
                    best = (start.start, form, start)
            if best is None:
                return found
            if best[2].whole:
                after = self._simple_flows(found, position, best[0], self._next_other(position))
                if after > position:
                    position = after
                    continue
            hint = self._read(best[1], best[2])
            found.add(hint)
            position = max(hint.end, hint.start + 1)

    def _next_other(self, position: int) -> int:
        """Where the next hint of a form other than a flow mapping starts (the length: none)."""
        starts = [self._start(form, position).start for form in _FORMS if form != "yaml_flow"]
        return min((start for start in starts if start >= 0), default=len(self.text))

    def _simple_flows(self, found: _Found, position: int, first: int, limit: int) -> int:
        """The simple flow mappings in a row from ``first``, before ``limit``, in two pattern passes.

        Returns where the scan goes on (``position`` itself: nothing taken). A reply can
        hold thousands of one-line hints. Up to the first flow key whose mapping is not
        simple (the one-at-a-time search decides that one), every key at a line start
        with a simple mapping is the hint that search would find next: the same rule as
        `_find_start`, applied at C speed.
        """
        text = self.text
        blocker = _FLOW_NOT_SIMPLE.search(text, position, limit)
        stop = limit if blocker is None else blocker.start()
        if self.segments and (after := self._segment(found, first, stop)) > position:
            return after
        spans = [
            (start, match.end())
            for match in _SIMPLE_FLOW.finditer(text, position, stop)
            if (start := match.start()) == 0 or text[start - 1] == "\n" or _at_line_start(text, start)
        ]
        if not spans or spans[0][0] != first:
            return position  # not the hint the search found (cannot happen; the slow path is right)
        found.spans.extend(spans)
        return spans[-1][1]

    def _segment(self, found: _Found, first: int, stop: int) -> int:
        """The simple flow mappings from ``first`` to ``stop`` as one segment, cut at C speed.

        Only where every key of the run sits right after a newline (or at the start):
        one substitution then cuts each of them, the same spans `_simple_flows` finds.
        Returns where the scan goes on, or 0 when this does not apply.
        """
        text = self.text
        if not (first == 0 or text[first - 1] == "\n") or _INDENTED_FLOW.search(text, first, stop):
            return 0
        region = "\n" + text[first:stop]
        cut, count = _SIMPLE_FLOW_LINE.subn("\n", region)
        if count == 0:
            return 0
        at = len(region)
        while True:  # the last hint of the run, found backwards (each look starts before the last)
            at = region.rfind("\nask_user:", 0, at)
            match = _SIMPLE_FLOW_LINE.match(region, at)
            if match is not None:
                last = (first + at, first + match.end() - 1)
                break
        found.add_segment(first, stop, cut[1:], count, last)
        return stop

    def _start(self, form: HintForm, position: int) -> _Start:
        cached = self.next_start.get(form)
        if (
            cached is not None
            and cached.searched_from <= position
            and (cached.start == _NONE_AFTER or cached.start >= position)
        ):
            return cached
        found = self._find_start(form, position)
        self.next_start[form] = found
        return found

    def _find_start(self, form: HintForm, position: int) -> _Start:
        """The next hint of ``form`` starting at or after ``position``."""
        text = self.text
        finder = self.needles[form]
        scan = position
        while (at := finder.next(scan)) >= 0:
            scan = at + 1
            match form:
                case "yaml_block":
                    return _Start(position, at, at + len(BLOCK_OPEN))
                case "yaml_fenced":
                    rest = _FENCE_REST.match(text, at + len(_FENCE_OPEN))
                    if rest is not None and _at_line_start(text, at):
                        return _Start(position, at, rest.end())
                case "yaml_flow":
                    flow = _FLOW_REST.match(text, at + len(FLOW_KEY))
                    if flow is not None and _at_line_start(text, at):
                        simple = flow.group("simple") is not None
                        return _Start(position, at, flow.end() if simple else flow.end() - 1, simple)
                case "legacy_json":
                    brace = _run_start(text, at, _JSON_SPACE) - 1
                    if (
                        brace >= position
                        and text[brace] == "{"
                        and _LEGACY_REST.match(text, at + len(LEGACY_KEY)) is not None
                    ):
                        return _Start(position, brace, brace)
        return _Start(position, _NONE_AFTER, _NONE_AFTER)

    def _read(self, form: HintForm, start: _Start) -> _Located:
        match form:
            case "yaml_block":
                return self._read_block(start.start)
            case "yaml_fenced":
                return self._read_fence(start.start, start.opened)
            case "yaml_flow" if start.whole:
                return _Located(form, start.start, start.opened, start.start, start.opened, None)
            case "yaml_flow":
                return self._read_bracketed(form, start.start, start.opened, _flow_end)
            case "legacy_json":
                return self._read_bracketed(form, start.start, start.opened, _json_end)
        raise AssertionError(form)  # every form is handled above

    def _read_block(self, start: int) -> _Located:
        body = start + len(BLOCK_OPEN)
        close = self.block_close.next(body)
        reopen = self.block_open.next(body)
        if close < 0 or 0 <= reopen < close:
            end = len(self.text) if reopen < 0 else reopen
            return _Located("yaml_block", start, end, body, end, f"unclosed {BLOCK_OPEN} block (stream cut?)")
        return _Located("yaml_block", start, close + len(BLOCK_CLOSE), body, close, None)

    def _read_fence(self, start: int, body: int) -> _Located:
        close = self._next_fence_close(body) if body < len(self.text) else -1
        if close < 0:
            end = len(self.text)
            return _Located("yaml_fenced", start, end, body, end, "unclosed fence (stream cut?)")
        return _Located("yaml_fenced", start, close + len(FENCE), body, close, None)

    def _next_fence_close(self, position: int) -> int:
        """The backticks of the next line that is only a closing fence, at or after ``position``.

        ``position`` is always a line start. Whether a line closes does not depend on
        where the search began, so the last answer stands for any later position up to it.
        """
        searched_from, found = self.fence_close_cache
        if searched_from <= position and (found == -1 or found >= position):
            return found
        match = _FENCE_CLOSE.search(self.text, position)
        at = -1 if match is None else match.start(1)
        self.fence_close_cache = (position, at)
        return at

    def _read_bracketed(
        self, form: HintForm, start: int, bracket: int, end_of: Callable[[str, int, int], int]
    ) -> _Located:
        """A flow mapping or an envelope: it ends at its closing bracket, looked for within the bound."""
        text = self.text
        limit = min(len(text), bracket + MAX_HINT_CHARS + 1)
        end = end_of(text, bracket, limit)
        if end >= 0:
            return _Located(form, start, end, start, end, None)
        if limit < len(text):
            return _Located(form, start, len(text), start, len(text), _TOO_LARGE)
        problem = (
            "unclosed flow mapping (cut or broken)"
            if form == "yaml_flow"
            else ("unclosed JSON envelope (cut or broken)")
        )
        return _Located(form, start, len(text), start, len(text), problem)


def _json_end(text: str, start: int, limit: int) -> int:
    """Just past the bracket closing the JSON value opened at ``start``, or -1 if not before ``limit``.

    A valid envelope is measured by the decoder (C speed, under the nesting bound);
    anything else by one pass over its strings and brackets.
    """
    try:
        _, end = _bounded_json.raw_decode(text[start:limit])
    except ValueError:
        pass
    else:
        return start + end
    depth = 0
    for token in _JSON_TOKEN.finditer(text, start, limit):
        match token.group()[0]:
            case "{" | "[":
                depth += 1
            case "}" | "]":
                depth -= 1
                if depth == 0:
                    return token.end()
    return -1


def _flow_end(text: str, start: int, limit: int) -> int:
    """Just past the brace closing the YAML flow mapping opened at ``start``, or -1 if not before ``limit``.

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
    length = limit
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
