"""The shape of an engine's output, as fidelity compares it: key paths and kinds, not values.

Each stdout line that is JSON becomes (label, flattened key paths → leaf type);
the fields that say what an event is (``type``, ``role``, ``status``,
``reason``, ``delta``, ``severity``) keep their values, everything else (ids,
timestamps, token counts, texts) is reduced to its type. A JSON document
spread over lines (gemini ``json``) is one entry, ``document``; other text
lines are ``text``. Maps keyed by names (models, files, metadata, claude's
modelUsage) are not looked into: their keys are data, not fields.
"""

from __future__ import annotations

import json
from typing import Any, Final

_KIND_FIELDS: Final = frozenset({"type", "role", "status", "reason", "delta", "severity"})
# Maps keyed by names (a model's, a file's): their keys are data. claude's `modelUsage` is keyed by
# the model's name, and so is its model_usage_since_last_result (corpus/claude/real-*/stdout, the
# result line).
NAMED_MAPS: Final = frozenset(
    {"models", "byName", "files", "metadata", "modelUsage", "model_usage_since_last_result"}
)


def line_label(event: Any) -> str:
    """A short name for an event: its type, its item's or part's type, its role."""
    if not isinstance(event, dict):
        return type(event).__name__
    label = str(event.get("type", "?"))
    for holder in ("item", "part"):
        inner = event.get(holder)
        if isinstance(inner, dict) and "type" in inner:
            label += f":{inner['type']}"
    if event.get("role"):
        label += f":{event['role']}"
    return label


def events(data: bytes) -> list[tuple[str, dict[str, str]]]:
    """(label, flattened key path → leaf shape) per line or document."""
    text = data.decode("utf-8", "replace")
    found: list[tuple[str, dict[str, str]]] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        try:
            event = json.loads(stripped)
        except ValueError:
            if stripped.startswith("{"):
                try:
                    document = json.loads("\n".join(lines[index:]))
                except ValueError:
                    document = None
                if document is not None:
                    found.append(("document", flatten(document)))
                    return found
            found.append(("text", {}))
            continue
        found.append((line_label(event), flatten(event)))
    return found


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    if isinstance(value, dict):
        if not value:
            flat[prefix or "."] = "{}"
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key in NAMED_MAPS and isinstance(inner, dict):
                flat[path] = "{named}"
            elif key in _KIND_FIELDS and isinstance(inner, str | bool):
                flat[path] = json.dumps(inner)
            else:
                flat.update(flatten(inner, path))
    elif isinstance(value, list):
        flat[prefix] = "list"
        for item in value:  # every element's keys, merged: a list's shape, not its length
            flat.update(flatten(item, prefix + "[]"))
    else:
        flat[prefix] = {str: "str", bool: "bool", int: "num", float: "num", type(None): "null"}.get(
            type(value), "?"
        )
    return flat
