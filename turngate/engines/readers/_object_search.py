"""Finding a JSON object anywhere in text (after noise, glued to it mid-line), in linear time.

The braces where an object could start are found by RE2 (`_json_grammar`), in one pass at C++ speed
over the text's UTF-8: a brace whose object nests at most `SCANNED_DEPTH` levels is matched whole
(and decoded by ``json``, which the grammar guarantees succeeds); a brace whose valid beginning nests
deeper is handed to the windowed decoder below; every other brace opens no object and costs no
Python step (text dense in ``{"a":1 x`` took one decoder call per brace: 1-2 MB/s). An object found
is skipped as a whole. The windowed decoder keeps the work on deep structures linear:

- A failed ``raw_decode`` costs as much as the text before the failure,
  because ``JSONDecodeError`` counts newlines from the start of the string it
  is given. So each candidate is decoded from a window of the text that
  doubles only while the failure could be due to the window's own end.
- Candidates nested inside a failed one would fail again at the same place,
  re-reading the same text. When decoding from ``p`` fails at ``e``, the
  ``{`` that were open at ``e`` in ``p``'s (valid up to ``e``) structure are
  dropped: their parse shares ``p``'s innermost state at ``e``. When it fails
  for nesting deeper than `MAX_JSON_DEPTH` (checked before decoding, see
  `_bounded_json`), the ``{`` whose own nesting is already deeper than any
  wanted object's are dropped. Where the structure opens level after level
  with nothing closed in between (``{"a":{"a":...``, the usual shape of deep
  noise), that run is measured with one pattern match and dropped whole, so a
  structure a million levels deep costs a scan, not a Python step per level.
- Nothing recurses on the text's nesting: the decoder only runs on windows
  whose first value is known to nest at most `MAX_JSON_DEPTH` deep.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import re2

from turngate.engines.readers import _json_grammar
from turngate.engines.readers._bounded_json import MAX_JSON_DEPTH, too_deep
from turngate.engines.readers._stream import JsonObject

_DECODER = json.JSONDecoder()
_FIRST_WINDOW = 256
# How far before the end of a window a decoding error may be caused by the cut
# (a cut "-Infinity", number or \u escape) rather than by the text itself.
_CUT_MARGIN = 16
# Depth at which the structure of a candidate nested too deeply is looked at (just past
# the bound), and the deepest a wanted object may nest inside a too-deep structure.
_INSPECTED_DEPTH = MAX_JSON_DEPTH + 1
_OBJECT_DEPTH = 64

# The structure of a valid JSON prefix: whole strings (or one cut at the end) and brackets.
_STRUCTURE = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)|[{}\[\]]', re.DOTALL)


@dataclass(frozen=True, slots=True)
class Found:
    """The object, and where it is in the text (character indices, end exclusive)."""

    start: int
    end: int
    value: JsonObject


@dataclass(frozen=True, slots=True)
class _Failure:
    """No object decodes at this candidate; neither does one at ``doomed`` (indices in the text),
    nor at any brace before ``passed`` (an index in the text; the candidate's own when none is)."""

    doomed: tuple[int, ...]
    passed: int = 0


def find_object(text: str, wanted: Callable[[JsonObject], bool]) -> Found | None:
    """The first object in ``text`` that decodes and is ``wanted``."""
    return next((found for found in iter_objects(text) if wanted(found.value)), None)


def iter_objects(text: str) -> Iterator[Found]:
    """Every object that decodes, left to right; the inside of one is not searched again."""
    data = text.encode("utf-8", "surrogatepass")
    places = _Places(text, data)
    doomed: set[int] = set()
    scanner = _scanner()
    at = 0  # where the search goes on, in bytes
    while (hit := scanner.search(data, at)) is not None:
        start = places.char(hit.start())
        if data[hit.end() - 1] == 0x7D:  # "}": a whole object within the scanned depth
            try:
                value, end = _DECODER.raw_decode(text, start)
            except ValueError:  # the grammar is the decoder's (tested); were it not, the decoder rules
                value = None
            if isinstance(value, dict):
                yield Found(start, end, value)
                at = hit.end()
                continue
        # a valid beginning that nests deeper than the pattern spells out: the decoder decides
        if start in doomed:
            at = hit.start() + 1
            continue
        match _decode_at(text, start, places):
            case Found(end=end) as found:
                yield found
                at = places.byte(end)
            case _Failure(doomed=more, passed=passed):
                # Doomed braces with no other brace between them are passed over at once (a deep
                # structure dooms them by the hundred); only those after the last one passed need
                # remembering (the search goes forward).
                resume = max(start, passed - 1)
                for brace in more:  # in text order
                    if brace <= resume:
                        continue
                    if text.find("{", resume + 1, brace) != -1:
                        break
                    resume = brace
                doomed.update(brace for brace in more if brace > resume)
                at = places.byte(resume + 1)


@functools.cache
def _scanner() -> Any:
    """The RE2 search for a brace that opens an object (compiled once, when first needed: 15 ms)."""
    pattern = f"{_json_grammar.OBJECT}|{_json_grammar.DEEPER}"
    return re2.compile(pattern.encode("ascii"), _bytes_options())


def _bytes_options() -> Any:
    options = re2.Options()
    options.log_errors = False
    options.encoding = re2.Options.Encoding.LATIN1  # bytes in, byte offsets out; UTF-8 passes through
    return options


class _Places:
    """Byte offsets in the text's UTF-8 and character indices in the text, converted both ways.

    Conversions go forward through the text (each from the last one), so all of them together cost
    one pass; an ASCII text needs none (its offsets are its indices).
    """

    def __init__(self, text: str, data: bytes) -> None:
        self.text, self.data = text, data
        self.ascii = len(text) == len(data)
        self.last_byte = self.last_char = 0

    def char(self, byte: int) -> int:
        if self.ascii:
            return byte
        self._restart_before(byte, self.last_byte)
        self.last_char += len(self.data[self.last_byte : byte].decode("utf-8", "surrogatepass"))
        self.last_byte = byte
        return self.last_char

    def byte(self, char: int) -> int:
        if self.ascii:
            return char
        self._restart_before(char, self.last_char)
        self.last_byte += len(self.text[self.last_char : char].encode("utf-8", "surrogatepass"))
        self.last_char = char
        return self.last_byte

    def _restart_before(self, wanted: int, last: int) -> None:
        if wanted < last:  # never in a forward search; correct, if slower, all the same
            self.last_byte = self.last_char = 0


def _decode_at(text: str, start: int, places: _Places) -> Found | _Failure:
    window = _FIRST_WINDOW
    while True:
        chunk = text[start : start + window]
        if too_deep(chunk):
            passed = _past_opening_run(places, start)
            if passed is not None:
                return _Failure((), passed)
            return _Failure(tuple(start + index for index in _too_deep(chunk)))
        try:
            value, end = _DECODER.raw_decode(chunk)
        except RecursionError:  # cannot happen under the bound; a deep caller stack is not the text's fault
            return _Failure(())
        except json.JSONDecodeError as error:
            near_the_cut = error.pos >= len(chunk) - _CUT_MARGIN
            # an unterminated string is reported where it starts, not where the text ran out
            if (near_the_cut or error.msg.startswith("Unterminated string")) and start + window < len(text):
                window *= 2
                continue
            return _Failure(tuple(start + index for index in _open_braces(chunk, error.pos)))
        # the text starts with "{", so what decodes is an object
        return Found(start, start + end, value) if isinstance(value, dict) else _Failure(())


def _open_braces(chunk: str, failed_at: int) -> list[int]:
    """The ``{`` still open where decoding ``chunk`` failed (the text before is a valid JSON prefix)."""
    stack = _nesting(chunk, failed_at, depth=None)
    return [index for bracket, index in stack if bracket == "{"]


def _too_deep(chunk: str) -> list[int]:
    """The ``{`` nested deeper than any wanted object when the nesting reached ``_INSPECTED_DEPTH``."""
    stack = _nesting(chunk, len(chunk), depth=_INSPECTED_DEPTH)
    if len(stack) < _INSPECTED_DEPTH:
        return []
    return [index for bracket, index in stack[: len(stack) - _OBJECT_DEPTH] if bracket == "{"]


# A run of levels opened with nothing closed in between, as the structure's own lexing sees it:
# opening brackets, characters that are neither quotes nor brackets, whole strings, and whole arrays
# (nested at most two deep) that close inside the run. No "{" stands anywhere in the run but as the
# opener of a level, so every "{" in it is a candidate nested in all those before it. Matched by RE2
# over the text's UTF-8 (15 times faster than ``re``; greedy, it ends where ``re``'s possessive form
# did: nothing follows the repetition, so no path is ever given back).
_STRING_WITHOUT_BRACE = r'"(?:[^"\\{]|\\[^{])*"'
_FLAT_ARRAY = rf'\[(?:[^"{{}}\[\]]|{_STRING_WITHOUT_BRACE})*\]'
_CLOSED_ARRAY = rf'\[(?:[^"{{}}\[\]]|{_STRING_WITHOUT_BRACE}|{_FLAT_ARRAY})*\]'
_OPENING_RUN = rf'(?:[{{\[](?:[^"{{}}\[\]]|{_STRING_WITHOUT_BRACE}|{_CLOSED_ARRAY})*)+'


@functools.cache
def _opening_run() -> Any:
    return re2.compile(_OPENING_RUN.encode("ascii"), _bytes_options())


def _past_opening_run(places: _Places, start: int) -> int | None:
    """If the too-deep structure at ``start`` opens more than `_OBJECT_DEPTH` objects before it
    closes anything: where the last `_OBJECT_DEPTH` of them begin. Every "{" before that holds more
    than `_OBJECT_DEPTH` levels, so it nests deeper than any wanted object."""
    data, first = places.data, places.byte(start)
    run = _opening_run().match(data, first)
    if run is None:
        return None
    position = run.end()
    for _ in range(_OBJECT_DEPTH):
        position = data.rfind(b"{", first, position)
        if position == -1:
            return None  # the run opens too few objects
    return places.char(position) if position > first else None


_OPENERS = frozenset("{[")
_CLOSERS = frozenset("}]")


def _nesting(chunk: str, end: int, depth: int | None) -> list[tuple[str, int]]:
    """The open brackets at ``end``, or as soon as ``depth`` of them are open."""
    stack: list[tuple[str, int]] = []
    for token in _STRUCTURE.finditer(chunk, 0, end):
        bracket = token.group()
        if bracket in _OPENERS:
            stack.append((bracket, token.start()))
            if len(stack) == depth:
                break
        elif bracket in _CLOSERS and stack:
            stack.pop()
    return stack
