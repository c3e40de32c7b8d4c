"""JSON text exactly as `json.dumps` writes it, without importing `json`.

`json` pulls in `re` and `enum` at import time, a third of a fake engine's
start-up budget; the C helpers in `_json` do the one hard part (string
escaping) without them. Output matches `json.dumps(value, ensure_ascii=False,
separators=(",", ":"))` (compact) or `json.dumps(value, ensure_ascii=False,
indent=2)` (pretty), which is also what `JSON.stringify(value, null, 2)`
gives: the tests compare the two on generated values. Lone surrogates are the
one difference: written as `\\udXXX` escapes, as `JSON.stringify` writes them,
where `json.dumps` leaves them raw and unencodable.
"""

from __future__ import annotations

from _json import encode_basestring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _float(number: float) -> str:
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def dumps(value: Any, indent: int | None = None) -> str:
    """Serialise `value` (dict, list, tuple, str, int, float, bool, None)."""
    if indent is None:
        return _compact(value)
    return _pretty(value, indent, 0)


def _string(value: str) -> str:
    """A JSON string; a lone surrogate (a string cut inside an emoji, an undecodable byte kept by
    ``surrogateescape``) as its ``\\udXXX`` escape, as Node's ``JSON.stringify`` writes it: raw, it
    could not be encoded to the UTF-8 a real CLI prints."""
    text = str(encode_basestring(value))
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # rare: no `re` here (start-up budget), one pass over the characters
        return "".join(f"\\u{ord(char):04x}" if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def _scalar(value: Any) -> str | None:
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _compact(value: Any) -> str:
    text = _scalar(value)
    if text is not None:
        return text
    if isinstance(value, dict):
        return "{" + ",".join(f"{_key(k)}:{_compact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_compact(item) for item in value) + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _pretty(value: Any, indent: int, level: int) -> str:
    text = _scalar(value)
    if text is not None:
        return text
    inner = "\n" + " " * (indent * (level + 1))
    outer = "\n" + " " * (indent * level)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = (f"{_key(k)}: {_pretty(v, indent, level + 1)}" for k, v in value.items())
        return "{" + inner + ("," + inner).join(items) + outer + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        parts = (_pretty(item, indent, level + 1) for item in value)
        return "[" + inner + ("," + inner).join(parts) + outer + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _string(key)
    raise TypeError(f"keys must be str, not {type(key).__name__}")
