"""Values a request may carry to an engine: bounded nesting, text that is Unicode and has no NUL.

What a client sends ends up in a prompt, a command line, ``input.json`` and the
store. A lone surrogate (``"\\ud800"``) is valid JSON but not encodable text, a
NUL cannot be on a command line, and nesting thousands deep breaks whatever
recurses over the value later; each is refused here with the field named,
before anything is written.
"""

from __future__ import annotations

from typing import Any, Final

from turngate.implementations.serve.errors import ApiError

MAX_DEPTH: Final = 32
_SHOWN: Final = 40


def check_request_values(body: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``ApiError`` 400 ``REQUEST_INVALID`` naming the first unusable value; iterative, no recursion."""
    stack: list[tuple[str, Any, int]] = [("", body, 0)]
    while stack:
        where, value, depth = stack.pop()
        if depth > max_depth:
            raise _invalid(where, f"nested deeper than {max_depth} levels")
        if isinstance(value, str):
            _check_text(where, value)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(f"{where}: key {_shown(key)}" if where else f"key {_shown(key)}", key)
                stack.append((f"{where}.{key}" if where else str(key), item, depth + 1))
        elif isinstance(value, list):
            stack.extend((f"{where}[{index}]", item, depth + 1) for index, item in enumerate(value))


def _check_text(where: str, text: str) -> None:
    if "\x00" in text:
        raise _invalid(where, "contains a NUL character, which no engine command line can carry")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise _invalid(where, f"is not valid Unicode text ({error.reason} at index {error.start})") from None


def _invalid(where: str, why: str) -> ApiError:
    return ApiError(400, "REQUEST_INVALID", f"{where or 'the body'}: {why}")


def _shown(text: str) -> str:
    shown = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return repr(shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "...")
