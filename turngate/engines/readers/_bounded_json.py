"""JSON decoding with a fixed bound on nesting, checked by a linear scan before the decoder runs.

``json.loads`` recurses once per level of nesting and raises ``RecursionError``
near the interpreter's recursion limit, which depends on how deep the caller's
own stack already is. A document nested a few hundred levels deep would then
decode in one place (the live gate) and not in another (the audit, a deeper
stack), and ``RecursionError`` is not a ``ValueError``, so every caller must
remember to catch it. Here the bound is fixed instead: a value nested deeper
than `MAX_JSON_DEPTH` is not decoded at all, everywhere, and the refusal is a
``ValueError`` (`NestingTooDeep`) that names the bound.

The depth is measured lexically: strings are cut out (a JSON string is the
same token whatever the context) and the brackets of the first value are
counted until that value closes. Where the text is not valid JSON the decoder
stops at or before the point where the lexical view and its own could differ
(a raw control character inside a string, a bad escape, a stray quote), so the
lexical depth is never smaller than the depth the decoder would reach. The
scan is linear and runs at C speed: ``str.count`` first (a text with few
brackets cannot nest deeply), then two regular-expression passes and
``itertools.accumulate`` over the brackets, in blocks of bounded memory.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, Final

# Far below the recursion limit (1000) even from a deep call stack, far above any real event,
# reply or hint (a skill's output is a handful of levels).
MAX_JSON_DEPTH: Final = 200

# A JSON string, or one cut by the end of the text. Possessive: a plain repeated group makes
# `re` keep a backtracking state per escape (a reply of 700,000 escaped quotes took 39 bytes of
# memory per byte of text).
_STRING: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}
_BLOCK: Final = 1 << 16
_FIRST_PREFIX: Final = 1 << 12

_DECODER: Final = json.JSONDecoder()


class NestingTooDeep(ValueError):
    """A JSON value nested deeper than `MAX_JSON_DEPTH`: not decoded."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def too_deep(text: str, start: int = 0, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the first JSON value at or after ``start`` nests deeper than ``limit``.

    Looked at in prefixes that double: lexing a prefix gives the same tokens as lexing
    the whole text (a string cut at the prefix's end only hides brackets), so a prefix
    that already nests too deep, or whose first value closes, answers for the whole.
    The total work is linear, and a text that goes deep early costs only its start.
    """
    if text.count("{", start) + text.count("[", start) <= limit:
        return False  # the common case: too few brackets to nest that deep
    size = _FIRST_PREFIX
    while True:
        end = min(len(text), start + size)
        verdict = _prefix_too_deep(text[start:end], limit)
        if verdict is not None:
            return verdict
        if end == len(text):
            return False  # the first value never closes and never gets too deep
        size *= 2


def _prefix_too_deep(prefix: str, limit: int) -> bool | None:
    """True if the first value nests deeper than ``limit`` within ``prefix``; False if it closes
    there without doing so; None if the prefix ends before either is known."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", prefix))
    depth = 0
    for block_start in range(0, len(brackets), _BLOCK):
        block = brackets[block_start : block_start + _BLOCK]
        sums = list(accumulate(map(_STEP.__getitem__, block), initial=depth))
        if 0 in sums[1:]:  # the first value closed inside this block: only its part counts
            return max(sums[: sums.index(0, 1)]) > limit
        if max(sums) > limit:
            return True
        depth = sums[-1]
    return None


def loads(text: str) -> Any:
    """``json.loads`` for a value nested at most `MAX_JSON_DEPTH` deep; `NestingTooDeep` otherwise."""
    if too_deep(text):
        raise NestingTooDeep
    return json.loads(text)


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode`` from ``start`` under the same bound."""
    if too_deep(text, start):
        raise NestingTooDeep
    return _DECODER.raw_decode(text, start)
