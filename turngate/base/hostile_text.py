"""Text from engines and orchestrators as every writer can carry it: lone surrogates, NUL, bidi
controls and undecodable bytes are data, never a crash.

A lone surrogate (``\\ud83d``: a Node CLI that cut a string inside an emoji; ``\\udc80``..``\\udcff``:
an undecodable byte kept by ``surrogateescape``) is a valid ``str`` that UTF-8 cannot encode, so a
writer that dumps it raw dies half-way through its file. Each format gets its own way out:

* JSON: the ``\\udXXX`` escape, which ``json.loads`` reads back to the same string (the one thing
  it cannot give back is a high surrogate directly followed by a low one as two code points: a
  JSON reader joins the two escapes into the character they pair to, as any UTF-16 reader would).
* XML 1.0 and HTML: no escape can carry NUL or a surrogate, so they are written visibly as text
  (``\\x00``, ``\\ud83d``), which a reader can tell from the character itself.
* What an orchestrator keeps and sends on (prompts, replies, business output, its store): each lone
  surrogate becomes the six characters ``\\ud83d`` (`surrogates_escaped`, Python's
  ``backslashreplace``), never U+FFFD: the code unit the engine sent is still there to read, and a
  caller that alters business data this way says where (`escaped_strings`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# What XML 1.0 forbids (its Char production): C0 controls but tab, newline and carriage return,
# the surrogates, and U+FFFE and U+FFFF.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# What a page must not show raw besides: DEL and the C1 controls (an escape sequence starts with
# CSI), and the bidirectional embeddings, overrides, isolates and marks, which reorder what is shown
# around them (a message could read as something it is not).
_NOT_SHOWN: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)


def escape(match: re.Match[str]) -> str:
    """The matched character written visibly: ``\\x1b`` below U+0100, ``\\u202e`` above."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_safe(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every lone surrogate
    written as its ``\\udXXX`` escape, so that it encodes to UTF-8; other text is returned as is.

    Raw characters in JSON text stand only inside strings, where the escape means the same
    character, so the document reads back the same."""
    if text.isascii():  # O(1) in CPython: the common case needs no search
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def xml_safe(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold (NUL and the other C0 controls but tab, newline and
    carriage return; lone surrogates; U+FFFE, U+FFFF) written visibly as ``\\x00`` or ``\\ud83d``."""
    if text.isascii() and text.isprintable():
        return text
    return _NOT_XML.sub(escape, text)


def shown_safe(text: str) -> str:
    """``text`` for a page a person reads: what XML cannot hold, C1 controls and bidirectional
    controls written visibly (``\\x00``, ``\\u202e``); newlines and tabs kept."""
    if text.isascii() and text.isprintable():
        return text
    return _NOT_SHOWN.sub(escape, text)


def _code_unit(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def surrogates_escaped(text: str) -> str:
    """``text`` with every lone surrogate written as the six characters ``\\udXXX``; other text as is."""
    if text.isascii():  # O(1) in CPython: the common case needs no search
        return text
    return _SURROGATE.sub(_code_unit, text)


def json_text_escaped(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) whose strings hold, for each lone surrogate,
    the six characters ``\\udXXX`` (written ``\\\\udXXX``): it encodes to UTF-8, and reads back to
    text with no surrogate in it (`json_safe` reads back to the surrogate itself)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda match: f"\\\\u{ord(match.group()):04x}", text)


def escaped_strings(value: Any, where: str = "") -> tuple[Any, tuple[str, ...]]:
    """A JSON value with `surrogates_escaped` applied to every string and key, and the paths where
    that changed something (``greeting``, ``items[2]``, ``a.b: key``); the value itself when nothing
    changed. Recursive: the values come from the bounded decoder (nesting at most 200 levels)."""
    match value:
        case str():
            escaped = surrogates_escaped(value)
            return escaped, ((where or "(root)",) if escaped != value else ())
        case Mapping():
            items, places = [], []
            for key, item in value.items():
                inner = f"{where}.{key}" if where else str(key)
                new_key = surrogates_escaped(key) if isinstance(key, str) else key
                if new_key != key:
                    places.append(f"{surrogates_escaped(inner)}: key")
                new_item, found = escaped_strings(item, surrogates_escaped(inner))
                items.append((new_key, new_item))
                places.extend(found)
            return (dict(items) if places else value), tuple(places)
        case list() | tuple():
            entries, places = [], []
            for index, item in enumerate(value):
                new_item, found = escaped_strings(item, f"{where}[{index}]")
                entries.append(new_item)
                places.extend(found)
            return (entries if places else value), tuple(places)
    return value, ()
