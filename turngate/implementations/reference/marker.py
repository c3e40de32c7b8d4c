"""The done-marker detector: the one function the live gate and the audit share (Decision 3.1).

Decision 3.1 asks for both spellings of the marker: plain JSON text
(``"__SKILL_DONE__": true``, as iflow prints it or as a gemini pretty document
decodes) and the JSON-escaped form inside an NDJSON string
(``\\"__SKILL_DONE__\\": true``, as it sits in a raw codex or opencode line, or
in a reply that itself quotes JSON). The pattern has no nested quantifiers and
its whitespace runs are disjoint, so a search is linear in the text.

Where the marker counts is decided here too, not by callers: only assistant
reply content is evidence. Tool calls, tool results, reasoning, the echoed user
prompt and raw noise are echoes (spec 003, "done marker 检测兼容转义流文本").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from turngate.engines.readers import AssistantText, Transcript

MARKER_KEY = "__SKILL_DONE__"

# An optional backslash before each quote gives the escaped form; `true` must end there
# (`trueish` is not a marker) and `false` never is.
_MARKER = re.compile(r'(\\?)"__SKILL_DONE__\\?"[ \t\r\n]*:[ \t\r\n]*true(?![A-Za-z0-9_])')

MarkerForm = Literal["plain", "escaped"]


@dataclass(frozen=True, slots=True)
class MarkerHit:
    """One marker occurrence in one text: its spelling and where it is."""

    form: MarkerForm
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class MarkerEvidence:
    """What the detector found in one turn: hits as (assistant message index, hit)."""

    hits: tuple[tuple[int, MarkerHit], ...]

    @property
    def found(self) -> bool:
        return bool(self.hits)

    @property
    def forms(self) -> tuple[MarkerForm, ...]:
        return tuple(dict.fromkeys(hit.form for _, hit in self.hits))


def find_markers(text: str) -> tuple[MarkerHit, ...]:
    """Every marker in ``text``, plain or escaped, in order.

    The same matches as ``_MARKER.finditer(text)``, found faster: ``str.find`` jumps
    to each occurrence of the key and the pattern is tried only where a marker
    could start (the quote, or the backslash before it, just ahead of the key).
    Long streams are mostly not the key, so this runs at memory-scan speed.
    """
    hits: list[MarkerHit] = []
    index = text.find(MARKER_KEY)
    while index != -1:
        start = index - 2 if index >= 2 and text[index - 2 : index] == '\\"' else index - 1
        match = _MARKER.match(text, start) if start >= 0 else None
        if match is not None:
            hits.append(MarkerHit("escaped" if match.group(1) else "plain", match.start(), match.end()))
        index = text.find(MARKER_KEY, index + len(MARKER_KEY))
    return tuple(hits)


def has_done_marker(text: str) -> bool:
    return bool(find_markers(text))


def marker_evidence(transcript: Transcript) -> MarkerEvidence:
    """The marker evidence of one turn: assistant reply content only, never echoes."""
    hits: list[tuple[int, MarkerHit]] = []
    messages = (event.text for event in transcript.events if isinstance(event, AssistantText))
    for index, text in enumerate(messages):
        hits.extend((index, hit) for hit in find_markers(text))
    return MarkerEvidence(tuple(hits))
