"""The one done-marker detector, shared by the live gate and the after-the-fact audit.

It is given assistant reply content only (the readers decide what that is); it accepts the
plain form ``"__SKILL_DONE__": true`` and the JSON-escaped form ``\\"__SKILL_DONE__\\": true``
that survives when a reply itself carries escaped JSON (Decision 3.1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from .bugs import bug

MARKER_KEY: Final = "__SKILL_DONE__"
# Whitespace is bounded so the scan stays linear on hostile input.
PLAIN: Final = re.compile(r'"__SKILL_DONE__"[ \t\r\n]{0,16}:[ \t\r\n]{0,16}true\b')
ESCAPED: Final = re.compile(r'\\"__SKILL_DONE__\\"[ \t\r\n]{0,16}:[ \t\r\n]{0,16}true\b')


def has_marker(text: str) -> bool:
    if PLAIN.search(text):
        return True
    if bug("escaped_marker_missed"):
        return False  # the detector was written against iflow's plain text only
    return bool(ESCAPED.search(text))


def any_marker(texts: Iterable[str]) -> bool:
    """Strong evidence: the marker in any assistant reply of the turn."""
    return any(has_marker(text) for text in texts)
