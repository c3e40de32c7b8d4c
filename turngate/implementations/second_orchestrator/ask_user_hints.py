"""ask_user hints in assistant text: found, parsed when clean, otherwise ignored.

A hint is enrichment only (Decision 4): it may add kind/options/ui_hints/context to the
pending payload, but it never decides the lifecycle. A malformed hint (missing prompt,
non-numeric id, wrong types, broken or truncated syntax) yields no hint at all; its text is
still removed before the business output is looked for, so it cannot pose as output.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

YAML_BLOCK: Final = re.compile(r"<ASK_USER_YAML>(.*?)(?:</ASK_USER_YAML>|\Z)", re.S)
YAML_FENCE: Final = re.compile(r"```ask_user_yaml[ \t]*\n(.*?)(?:```|\Z)", re.S)
YAML_FLOW: Final = re.compile(r"^[ \t]*ask_user:[ \t]*\{[^\n]*$", re.M)
MAX_TEXT: Final = 256 * 1024  # hints are small; a huge text is not parsed for one


@dataclass(frozen=True)
class Hint:
    prompt: str
    kind: str | None
    options: tuple[Any, ...] | None
    ui_hints: dict[str, Any] | None
    context: dict[str, Any] | None
    interaction_id: int | None
    default_decision_policy: str | None


@dataclass(frozen=True)
class HintScan:
    found: bool  # some hint-shaped text was present (clean or not)
    hint: Hint | None  # the parsed hint, only when clean
    rest: str  # the text with every hint removed


def _clean(payload: object) -> Hint | None:
    if not isinstance(payload, dict):
        return None
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    kind = payload.get("kind")
    options = payload.get("options")
    ui_hints = payload.get("ui_hints")
    context = payload.get("context")
    iid = payload.get("interaction_id")
    policy = payload.get("default_decision_policy")
    if kind is not None and not isinstance(kind, str):
        return None
    if options is not None and not isinstance(options, list):
        return None
    if ui_hints is not None and not isinstance(ui_hints, dict):
        return None
    if context is not None and not isinstance(context, dict):
        return None
    if iid is not None and (isinstance(iid, bool) or not isinstance(iid, int)):
        return None
    if policy is not None and not isinstance(policy, str):
        return None
    return Hint(
        prompt=prompt.strip(),
        kind=kind,
        options=tuple(options) if options is not None else None,
        ui_hints=ui_hints,
        context=context,
        interaction_id=iid,
        default_decision_policy=policy,
    )


def _yaml_hint(body: str) -> Hint | None:
    try:
        doc = yaml.safe_load(body)
    except (yaml.YAMLError, RecursionError):  # RecursionError: hostile nesting
        return None
    if isinstance(doc, dict) and "ask_user" in doc:
        return _clean(doc["ask_user"])
    return _clean(doc)


def _legacy_envelopes(text: str) -> list[tuple[int, int, object]]:
    """Spans of legacy JSON envelopes {"outcome": "ask_user", ...} that parse."""
    found: list[tuple[int, int, object]] = []
    decoder = json.JSONDecoder()
    for match in re.finditer(r'\{\s*"outcome"\s*:\s*"ask_user"', text):
        try:
            doc, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            continue
        found.append((match.start(), end, doc))
    return found


def is_envelope(doc: object) -> bool:
    return isinstance(doc, dict) and (doc.get("outcome") == "ask_user" or "ask_user" in doc)


def scan(text: str) -> HintScan:
    if len(text) > MAX_TEXT:
        return HintScan(False, None, text)
    hint: Hint | None = None
    found = False
    rest = text
    for pattern in (YAML_BLOCK, YAML_FENCE):
        for match in pattern.finditer(rest):
            found = True
            hint = hint or _yaml_hint(match.group(1))
        rest = pattern.sub("", rest)
    for match in YAML_FLOW.finditer(rest):
        found = True
        hint = hint or _yaml_hint(match.group(0).strip())
    rest = YAML_FLOW.sub("", rest)
    for start, end, doc in reversed(_legacy_envelopes(rest)):
        found = True
        if hint is None and isinstance(doc, dict):
            hint = _clean(doc.get("interaction"))
        rest = rest[:start] + rest[end:]
    if not found and '"outcome"' in rest and "ask_user" in rest:
        found = True  # a broken legacy envelope: present, not usable
    return HintScan(found, hint, rest.strip())
