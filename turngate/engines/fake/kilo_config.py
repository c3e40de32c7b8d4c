"""What the call log says of the config a server hands kilo in ``KILO_CONFIG``.

Skill-Runner v0.7.9 writes ``RUN/.kilo/kilo.jsonc`` for every run and points
``KILO_CONFIG`` at it (``server/engines/kilo/adapter/execution_adapter.py``); its
``config/enforced.json`` sets, among others, ``permission.question: "deny"`` (the
question tool would wait for an answer no one gives) and
``permission.external_directory: "deny"`` (no file outside the run folder). The
fake does not obey the file, but records its path and those two values, so a
check can see what a server asked of the engine.

The file is JSON with comments ("jsonc", kilo's config format): comments and
trailing commas are dropped before it is decoded. It is read where the turn
runs (after ``run --dir``), as kilo resolves a relative path there.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The permissions the call log keeps (the ones a server's enforced config is there for).
PERMISSIONS = ("question", "external_directory")
_MOST_BYTES = 1024 * 1024  # a config is a few KiB; the log never holds more than this much of one


def describe(path: str) -> dict[str, Any]:
    """``{"path", "permission": {name: value or None}}`` of the config at ``path``, or ``{"path",
    "error"}`` when it cannot be read or decoded (kilo itself would refuse to start)."""
    import json  # only with KILO_CONFIG set: json costs a fake engine's start-up time otherwise
    import os

    absolute = os.path.abspath(path)
    try:
        with open(absolute, encoding="utf-8", errors="replace") as handle:
            text = handle.read(_MOST_BYTES)
    except OSError as error:
        return {"path": absolute, "error": f"cannot read it: {error.strerror}"}
    try:
        document = json.loads(strip_jsonc(text))
    except ValueError as error:
        return {"path": absolute, "error": f"not JSON with comments: {error}"}
    permission = document.get("permission") if isinstance(document, dict) else None
    values = permission if isinstance(permission, dict) else {}
    return {"path": absolute, "permission": {name: values.get(name) for name in PERMISSIONS}}


def strip_jsonc(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments and without commas before a closing bracket,
    strings left as they are: JSON, when ``text`` is JSON with comments."""
    out: list[str] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            out.append(text[index:end])
            index = end
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = size if newline == -1 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            index = size if close == -1 else close + 2
        elif char in "]}":
            _drop_trailing_comma(out)
            out.append(char)
            index += 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """The index just past the string literal opening at ``start`` (its end of text if unclosed)."""
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text[index] == '"':
            return index + 1
        else:
            index += 1
    return len(text)


def _drop_trailing_comma(out: list[str]) -> None:
    for at in range(len(out) - 1, -1, -1):
        piece = out[at]
        if piece.strip():
            if piece.rstrip().endswith(","):
                out[at] = piece.rstrip()[:-1]
            return
