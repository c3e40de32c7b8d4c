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

from harness.readers import AssistantText, Transcript

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
    """Every marker in ``text``, plain or escaped, in order."""
    return tuple(
        MarkerHit("escaped" if match.group(1) else "plain", match.start(), match.end())
        for match in _MARKER.finditer(text)
    )


def has_done_marker(text: str) -> bool:
    return _MARKER.search(text) is not None


def marker_evidence(transcript: Transcript) -> MarkerEvidence:
    """The marker evidence of one turn: assistant reply content only, never echoes."""
    hits: list[tuple[int, MarkerHit]] = []
    messages = (event.text for event in transcript.events if isinstance(event, AssistantText))
    for index, text in enumerate(messages):
        hits.extend((index, hit) for hit in find_markers(text))
    return MarkerEvidence(tuple(hits))
