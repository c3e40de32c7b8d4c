"""What the four readers' tests share: streams written line by line, random JSON records, and what
every transcript must be whatever it was read from."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from turngate.engines import readers

OUT, ERR = "stdout", "stderr"


def stream(*lines: str) -> bytes:
    """The lines as an engine writes them: each ended by a newline, UTF-8."""
    return "".join(line + "\n" for line in lines).encode("utf-8")


def starts(*lines: str) -> list[int]:
    """The byte offset where each line of ``stream(*lines)`` begins."""
    offsets, offset = [], 0
    for line in lines:
        offsets.append(offset)
        offset += len(line.encode("utf-8")) + 1
    return offsets


def json_records(keys: list[str], types: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects made of an engine's own keys, with its event types among the values, nested."""
    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.sampled_from(types)
    values = st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(keys), children),
        max_leaves=12,
    )
    return st.dictionaries(st.sampled_from(keys), values)


def assert_well_formed(transcript: readers.Transcript, stdout: bytes, stderr: bytes) -> None:
    """Every event points into its stream; stdout events come first, each stream in offset order."""
    for event in transcript.events:
        assert event.stream in (OUT, ERR)
        assert 0 <= event.offset <= len(stdout if event.stream == OUT else stderr)
    order = [(event.stream == ERR, event.offset) for event in transcript.events]
    assert order == sorted(order)
