"""iflow ``-p``: the reply as plain text on stdout, then an execution-info block.

```
<Execution Info>
{"session-id":"session-…","conversation-id":"…","assistantRounds":2,…}
</Execution Info>
```

The block belongs on stderr but drifts to stdout, so both streams are searched
for it. The reply is the stdout text outside the block(s), after any leading
``Resuming session …`` lines. Errors are stderr lines ``Error: <message>``
(often ``Error: CODE: …``), followed by a JavaScript stack trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from turngate.engines.readers import _bounded_json
from turngate.engines.readers._stream import (
    STDERR,
    STDOUT,
    Line,
    clean_text,
    event_lines,
    raw_lines,
    str_field,
)
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    Event,
    RawLine,
    SessionId,
    Transcript,
    TurnEnd,
    UnknownEvent,
)

OPEN_TAG = b"<Execution Info>"
CLOSE_TAG = b"</Execution Info>"
RESUMING_BANNER = b"Resuming session"
ERROR_PREFIX = "Error:"

# "Error: SERVER_OAUTH2_REQUIRED: …": the upper-case word before the colon is the error's code.
_ERROR_CODE = re.compile(r"([A-Z][A-Z0-9_]*[A-Z0-9]):")
# For blocks whose JSON does not decode (elided or cut): the session id is all an orchestrator needs.
_SESSION_ID = re.compile(rb'"session-id"\s*:\s*"((?:[^"\\\n]++|\\.)*+)"')


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    return Transcript("iflow", (*_stdout_events(stdout), *_stderr_events(stderr)))


@dataclass(frozen=True, slots=True)
class _Block:
    """One execution-info block: from its opening tag to the end of its closing tag's line (exclusive)."""

    start: int
    end: int
    body: bytes
    body_offset: int
    closing_tag: int | None  # None when the stream was cut inside the block


@dataclass(frozen=True, slots=True)
class _Gap:
    """Bytes outside every block."""

    start: int
    data: bytes


def _find_blocks(data: bytes) -> Iterator[_Block]:
    position = data.find(OPEN_TAG)
    while position != -1:
        body_offset = position + len(OPEN_TAG)
        closing_tag = data.find(CLOSE_TAG, body_offset)
        if closing_tag == -1:
            yield _Block(position, len(data), data[body_offset:], body_offset, None)
            return
        end = _after_line_ending(data, closing_tag + len(CLOSE_TAG))
        yield _Block(position, end, data[body_offset:closing_tag], body_offset, closing_tag)
        position = data.find(OPEN_TAG, end)


def _after_line_ending(data: bytes, position: int) -> int:
    for ending in (b"\r\n", b"\n"):
        if data.startswith(ending, position):
            return position + len(ending)
    return position


def _split(data: bytes) -> tuple[list[_Gap], list[_Block]]:
    """The stream cut into the bytes outside the blocks and the blocks."""
    gaps, blocks, position = [], [], 0
    for block in _find_blocks(data):
        gaps.append(_Gap(position, data[position : block.start]))
        blocks.append(block)
        position = block.end
    gaps.append(_Gap(position, data[position:]))
    return gaps, blocks


def _block_events(block: _Block, stream: str) -> list[Event]:
    events = _block_info_events(block, stream)
    if block.closing_tag is not None:
        events.append(TurnEnd(True, stream, block.closing_tag))
    return events


def _block_info_events(block: _Block, stream: str) -> list[Event]:
    """The session id from the block's JSON (the JSON's own offset is the event's)."""
    first_brace = block.body.find(b"{")
    if first_brace == -1:
        return raw_lines(block.body, stream, block.body_offset)
    at = block.body_offset + first_brace
    text = block.body[first_brace:].decode("utf-8", errors="replace")
    try:
        info, _ = _bounded_json.raw_decode(text)
    except ValueError:
        info = None
    session_id = str_field(info, "session-id") if isinstance(info, dict) else _loose_session_id(block.body)
    if session_id is not None:
        return [SessionId(session_id, stream, at)]
    if isinstance(info, dict):
        return [UnknownEvent("execution-info", text.strip(), stream, at)]
    return raw_lines(block.body, stream, block.body_offset)


def _loose_session_id(body: bytes) -> str | None:
    """``"session-id"`` read from JSON that does not decode as a whole."""
    found = _SESSION_ID.search(body)
    if found is None:
        return None
    try:
        value = json.loads(b'"' + found.group(1) + b'"')
    except ValueError:
        return None
    return clean_text(value) if isinstance(value, str) else None


# --- stdout: the reply --------------------------------------------------------------------------


def _stdout_events(stdout: bytes) -> list[Event]:
    gaps, blocks = _split(stdout)
    banner, gaps[0] = _strip_resuming_banner(gaps[0])
    events: list[Event] = [RawLine(line.text, STDOUT, line.offset) for line in banner]
    parts = [gap for gap in gaps if gap.data]
    if parts:
        # one part (the usual case) is decoded as it is: no joined copy of a long reply
        reply = parts[0].data if len(parts) == 1 else b"".join(gap.data for gap in parts)
        events.append(AssistantText(reply.decode("utf-8", errors="replace"), STDOUT, parts[0].start))
    for block in blocks:
        events.extend(_block_events(block, STDOUT))
    # The reply may also take in text after a block; order by where each event starts.
    return sorted(events, key=lambda event: event.offset)


def _strip_resuming_banner(gap: _Gap) -> tuple[list[Line], _Gap]:
    """The leading ``Resuming session …`` lines, and what is left of the gap after them."""
    banner: list[Line] = []
    data, start = gap.data, gap.start
    while data.startswith(RESUMING_BANNER):
        newline = data.find(b"\n")
        length = len(data) if newline == -1 else newline + 1
        banner.append(Line(start, data[:length].rstrip(b"\r\n")))
        data, start = data[length:], start + length
    return banner, _Gap(start, data)


# --- stderr: errors, noise, and usually the block -----------------------------------------------


def _stderr_events(stderr: bytes) -> list[Event]:
    gaps, blocks = _split(stderr)
    events: list[Event] = []
    for index, gap in enumerate(gaps):
        for line in event_lines(gap.data, STDERR, events, gap.start, _ERROR_LINE):
            events.append(_stderr_error(line))
        if index < len(blocks):
            events.extend(_block_events(blocks[index], STDERR))
    return events


# The stderr lines that report an error; the runs of other lines are noise (one RawLine each).
_ERROR_LINE = re.compile(rb"^" + re.escape(ERROR_PREFIX.encode()) + rb"[^\n]*", re.MULTILINE)


def _stderr_error(line: Line) -> Event:
    message = line.text.removeprefix(ERROR_PREFIX).strip()
    code = _ERROR_CODE.match(message)
    return EngineError(message, code.group(1) if code else None, False, STDERR, line.offset)
