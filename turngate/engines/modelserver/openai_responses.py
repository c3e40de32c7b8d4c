"""The OpenAI Responses API over SSE, as codex (``wire_api = "responses"``) calls it.

``POST /v1/responses`` with ``input`` (the conversation items) and ``tools``;
the answer is ``response.created``, one ``response.output_item.done`` per
output item (reasoning, message, function_call), then ``response.completed``
with usage. Errors are ``{"error": {...}}`` with a 4xx status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from turngate.engines.modelserver.answer import Answer, json_answer, sse, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.rounds import Round, ToolCall
from turngate.engines.modelserver.toolargs import pick_shell_tool, shell_arguments

_MODEL_SIDE = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})


def entries(body: Mapping[str, Any]) -> list[Entry]:
    found: list[Entry] = []
    for item in body.get("input") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in _CALLS:
            found.append("answer_with_call")
        elif kind in _MODEL_SIDE or (kind == "message" and item.get("role") == "assistant"):
            found.append("answer")
        elif kind.endswith("_output"):  # function_call_output, custom_tool_call_output...
            found.append("result")
        elif kind == "message":
            found.append("user")  # user, developer, system
    return found


def answer(
    body: Mapping[str, Any], step: Round, ids: Callable[[str], str], command_for: Callable[[ToolCall], str]
) -> Answer:
    if step.error is not None:
        return error(400, step.error)
    response_id = ids("resp")
    items: list[dict[str, Any]] = []
    for thought in step.thinking:
        items.append(
            {
                "type": "reasoning",
                "id": ids("rs"),
                "summary": [{"type": "summary_text", "text": thought}],
                "content": None,
                "encrypted_content": None,
            }
        )
    for chunks in step.text:
        items.append(
            {
                "type": "message",
                "id": ids("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "".join(chunks), "annotations": []}],
            }
        )
    if step.tool is not None:
        name, schema = pick_shell_tool(_declared_tools(body))
        items.append(
            {
                "type": "function_call",
                "id": ids("fc"),
                "status": "completed",
                "name": name,
                "arguments": json.dumps(shell_arguments(schema, command_for(step.tool))),
                "call_id": ids("call"),
            }
        )
    written = sum(tokens(json.dumps(item)) for item in items)
    read = tokens(json.dumps(body.get("input") or []))
    events = [sse({"type": "response.created", "response": {"id": response_id}}, "response.created")]
    for index, item in enumerate(items):
        event = {"type": "response.output_item.done", "output_index": index, "item": item}
        events.append(sse(event, "response.output_item.done"))
    completed = {
        "type": "response.completed",
        "response": {
            "id": response_id,
            "usage": {
                "input_tokens": read,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": written,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": read + written,
            },
        },
    }
    events.append(sse(completed, "response.completed"))
    return Answer(200, "text/event-stream", tuple(events), "round")


def error(status: int, message: str) -> Answer:
    document = {"error": {"message": message, "type": "invalid_request_error", "code": "turngate_scripted"}}
    return json_answer(status, document, "error")


def _declared_tools(body: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    declared = []
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            declared.append((tool["name"], tool.get("parameters") or {}))
    return declared
