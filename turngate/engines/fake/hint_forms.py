"""Ask-user hints as an engine writes them into its reply text, well-formed or not.

Runs when a script is compiled (never on the engine's hot path), so it may use
`json` and `yaml`. The forms and defects are those of docs/fake-engines.md;
each defect is one a real model produces and a gate must shrug off
(Decision 4: a malformed hint changes nothing but the enrichment).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

PAYLOAD_FIELDS = (
    "interaction_id",
    "prompt",
    "kind",
    "options",
    "ui_hints",
    "context",
    "default_decision_policy",
    "required_fields",
)


def render(spec: dict[str, Any]) -> str:
    """The assistant text carrying the hint described by an `ask_user` step."""
    payload = {name: spec[name] for name in PAYLOAD_FIELDS if name in spec}
    defect = spec.get("defect")
    payload = _apply_field_defect(payload, defect)
    form = spec["form"]
    body = _render_form(form, payload, defect)
    text = spec.get("text")
    return f"{text}\n\n{body}" if text else body


def _apply_field_defect(payload: dict[str, Any], defect: str | None) -> dict[str, Any]:
    payload = dict(payload)
    if defect == "missing_prompt":
        payload.pop("prompt", None)
    elif defect == "non_numeric_interaction_id":
        payload["interaction_id"] = "next-question"
    elif defect == "wrong_types":
        payload["options"] = "formal or casual"
        payload["kind"] = 7
    return payload


def _render_form(form: str, payload: dict[str, Any], defect: str | None) -> str:
    if form == "legacy_json":
        envelope = {"outcome": "ask_user", "interaction": {"interaction_id": 1, **payload}}
        text = json.dumps(envelope, ensure_ascii=False)
        if defect == "broken_syntax":
            return text[:-2] + ","  # a dangling comma, the closing braces lost
        if defect == "truncated":
            return text[: len(text) // 2]
        return text
    if form == "yaml_flow":
        flow: str = yaml.safe_dump(
            payload, default_flow_style=True, allow_unicode=True, sort_keys=False, width=1 << 20
        )
        text = "ask_user: " + flow.strip()
        if defect == "broken_syntax":
            return text[:-1] + ", prompt: 'unclosed"
        if defect == "truncated":
            return text[: len(text) // 2]
        return text
    block: str = yaml.safe_dump({"ask_user": payload}, allow_unicode=True, sort_keys=False, width=1 << 20)
    if defect == "broken_syntax":
        # a line indented deeper than its siblings, then a quote never closed
        block = block.replace("\n  ", "\n     ", 1) + "  note: 'never closed\n"
    if defect == "truncated":
        block = block[: len(block) // 2]
        opening = "<ASK_USER_YAML>\n" if form == "yaml_block" else "```ask_user_yaml\n"
        return opening + block  # the stream was cut: no closing tag
    if form == "yaml_block":
        return f"<ASK_USER_YAML>\n{block}</ASK_USER_YAML>"
    return f"```ask_user_yaml\n{block}```"
