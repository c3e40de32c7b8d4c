"""JSON nested at most a few levels deep is a regular language: its grammar as one RE2 pattern.

Python's decoder finds an object at one given brace, one Python call per brace tried; a text dense in
braces that open no object (``{"a":1 x`` over and over) then costs microseconds per brace, under
2 MB/s. RE2 runs a pattern as a DFA, in C++, at hundreds of MB/s whatever the text, and a leftmost
search by it is exactly "the first brace where an object starts". Nesting is what a regular
language cannot count, so the pattern spells out `SCANNED_DEPTH` levels and stops there:

- ``OBJECT`` matches an object that Python's ``json`` decodes (strict strings, ``NaN``,
  ``Infinity``), nested at most `SCANNED_DEPTH` levels, and nothing else;
- ``DEEPER`` matches a valid beginning of an object that opens a level deeper than that, up to and
  including the bracket that does: such a brace may still open an object (the windowed decoder of
  `_object_search` decides), and no other brace can.

Each level holds the one below four times (first and later members, of objects and of arrays), so
the pattern grows fourfold per level: 4 levels make a program whose DFA RE2 keeps within its default
memory; at 6 the DFA runs out of memory and RE2 falls back to an engine 50 times slower.
"""

from __future__ import annotations

from typing import Final

SCANNED_DEPTH: Final = 4

_WS: Final = r"[ \t\n\r]*"
# What the decoder accepts: no raw control character, the escapes JSON has, four hex digits after \u.
_STRING: Final = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
_NUMBER: Final = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_SCALAR: Final = rf"(?:{_STRING}|true|false|null|NaN|Infinity|-Infinity|{_NUMBER})"


def _member(value: str) -> str:
    return rf"{_STRING}{_WS}:{_WS}{value}"


def _object(value: str) -> str:
    return rf"\{{{_WS}(?:\}}|{_member(value)}{_WS}(?:,{_WS}{_member(value)}{_WS})*\}})"


def _array(value: str) -> str:
    return rf"\[{_WS}(?:\]|{value}{_WS}(?:,{_WS}{value}{_WS})*\])"


def value(depth: int) -> str:
    """A JSON value nested at most ``depth`` levels (a scalar is 0)."""
    if depth == 0:
        return _SCALAR
    inner = value(depth - 1)
    return rf"(?:{_SCALAR}|{_object(inner)}|{_array(inner)})"


def _object_opening_deeper(depth: int) -> str:
    """A valid beginning of an object that opens more than ``depth`` levels below its own brace, up
    to and including the bracket that opens the first such level. The members before it are whole
    and nest at most ``depth - 1`` levels (one nesting deeper would be the member that opens deeper)."""
    whole_members = rf"(?:{_member(value(depth - 1))}{_WS},{_WS})*"
    return rf"\{{{_WS}{whole_members}{_STRING}{_WS}:{_WS}{_opening_deeper(depth - 1)}"


def _array_opening_deeper(depth: int) -> str:
    return rf"\[{_WS}(?:{value(depth - 1)}{_WS},{_WS})*{_opening_deeper(depth - 1)}"


def _opening_deeper(depth: int) -> str:
    """A valid beginning of a value that opens ``depth`` levels below its own bracket or more."""
    if depth == 0:
        return r"[{\[]"
    return rf"(?:{_object_opening_deeper(depth)}|{_array_opening_deeper(depth)})"


OBJECT: Final = _object(value(SCANNED_DEPTH - 1))
DEEPER: Final = _object_opening_deeper(SCANNED_DEPTH)
