"""Plumbing shared by the readers: lines with byte offsets, JSON objects, typed field access.

Nothing here raises on any input: a line that is not a JSON object is ``None``
to the caller, a field of the wrong type is ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

from turngate.base.hostile_text import surrogates_escaped
from turngate.engines.readers import _bounded_json
from turngate.engines.readers.events import Event, JsonValue, RawLine, UnknownEvent

STDOUT = "stdout"
STDERR = "stderr"

JsonObject: TypeAlias = dict[str, JsonValue]


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a stream: where it starts, and its bytes without the line ending."""

    offset: int
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def split_lines(data: bytes, base_offset: int = 0) -> Iterator[Line]:
    """The non-blank lines of ``data``; a last line without a newline (a cut stream) is a line too."""
    offset = base_offset
    for chunk in data.split(b"\n"):
        if chunk.strip():
            yield Line(offset, chunk.removesuffix(b"\r"))
        offset += len(chunk) + 1


# A line that may hold an event: it starts with "{", after blanks. Only these are looked at one by
# one; the lines between them are noise, kept whole as one RawLine per run (a flood of noise lines
# costs a regular-expression scan and one event, not a Python object per line: 16 MB of "a" lines
# took 1 MB/s and 950 MB as a RawLine each).
_OBJECT_LINE = re.compile(rb"^[ \t\f\v]*\{[^\n]*", re.MULTILINE)
_BLANK = b" \t\r\n\f\v"


def event_lines(
    data: bytes,
    stream: str,
    events: list[Event],
    base_offset: int = 0,
    wanted: re.Pattern[bytes] = _OBJECT_LINE,
) -> Iterator[Line]:
    """The lines of ``data`` that ``wanted`` matches (by default those that start with "{"), in order;
    each run of other lines between them is appended to ``events`` as one `RawLine` (verbatim from its
    first non-blank line to its last) as it is passed, so events stay in stream order."""
    position = 0
    for match in wanted.finditer(data):
        events.extend(raw_lines(data[position : match.start()], stream, base_offset + position))
        yield Line(base_offset + match.start(), match.group().removesuffix(b"\r"))
        position = match.end()
    events.extend(raw_lines(data[position:], stream, base_offset + position))


def raw_lines(data: bytes, stream: str, base_offset: int = 0) -> list[Event]:
    """``data`` as noise: one `RawLine` from its first non-blank line to its last, verbatim (none when
    it is blank)."""
    lead = len(data) - len(data.lstrip(_BLANK))
    if lead == len(data):
        return []
    first = data.rfind(b"\n", 0, lead) + 1  # where its first non-blank line starts
    last = data.find(b"\n", first + len(data[first:].rstrip(_BLANK)))  # where its last one ends
    text = data[first : len(data) if last == -1 else last].removesuffix(b"\r")
    return [RawLine(text.decode("utf-8", errors="replace"), stream, base_offset + first)]


def parse_object(line: Line) -> JsonObject | None:
    """The JSON object on this line, or None when the line is anything else."""
    if not line.data.startswith(b"{") and not line.data.lstrip().startswith(b"{"):
        return None
    try:
        value = _bounded_json.loads(line.text)
    except ValueError:  # NestingTooDeep included: an absurdly deep line is not an event
        return None
    return value if isinstance(value, dict) else None


def clean_text(value: str) -> str:
    """``value`` as it can always be encoded: each lone surrogate (a JSON escape such as ``"\\ud83d"``,
    what a Node CLI prints when it cuts a string inside an emoji) as the six characters ``\\ud83d``,
    which keep the code unit the engine sent (U+FFFD would not)."""
    return surrogates_escaped(value)


def str_field(record: JsonObject | None, key: str) -> str | None:
    value = record.get(key) if record is not None else None
    return clean_text(value) if isinstance(value, str) else None


def object_field(record: JsonObject | None, key: str) -> JsonObject | None:
    value = record.get(key) if record is not None else None
    return value if isinstance(value, dict) else None


def code_field(record: JsonObject | None, key: str) -> str | int | None:
    """An error code: a string or an integer (JSON true/false is neither)."""
    value = record.get(key) if record is not None else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return clean_text(value) if isinstance(value, str) else None


def unknown(record: JsonObject, line: Line, stream: str, event_type: str | None = None) -> UnknownEvent:
    """Keep a JSON line the reader cannot give a meaning to, under its own type (or ``event_type``)."""
    if event_type is None:
        event_type = str_field(record, "type") or ""
    return UnknownEvent(event_type, line.text, stream, line.offset)
