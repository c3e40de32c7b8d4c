"""The OpenAI Responses API over SSE, as codex (``wire_api = "responses"``) calls it.

``POST /v1/responses`` with ``input`` (the conversation items) and ``tools``;
the answer is ``response.created``, one ``response.output_item.done`` per
output item (reasoning, message, function_call or custom_tool_call), then
``response.completed`` with usage. Errors are ``{"error": {...}}`` with a 4xx
status. A freeform ("custom") tool such as codex's ``apply_patch`` is called
with a ``custom_tool_call`` item whose ``input`` is the text.

codex 0.169.0 declares its MCP tools to the model only through a ``tool_search``
tool (type ``tool_search``, executed by the client): the model calls it with a
``tool_search_call`` item, codex answers with a ``tool_search_output`` item
whose ``tools`` are namespaces (``mcp__SERVER``) of functions, and the model
then calls a function with its ``namespace``. The search is bookkeeping, not a
round of the script: its two items do not count in the position.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from turngate.engines.modelserver.answer import Answer, json_answer, sse, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.reply import Declared, Reply

_MODEL_SIDE = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call"})
_SEARCH = frozenset({"tool_search_call", "tool_search_output"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_ERROR_TYPES = {429: "rate_limit_exceeded"}


def entries(body: Mapping[str, Any]) -> list[Entry]:
    found: list[Entry] = []
    for item in body.get("input") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in _SEARCH:
            continue  # a tool search made on the way to a scripted tool: no round of its own
        if kind in _CALLS:
            found.append("answer_with_call")
        elif kind in _MODEL_SIDE or (kind == "message" and item.get("role") == "assistant"):
            found.append("answer")
        elif kind.endswith("_output"):  # function_call_output, custom_tool_call_output...
            found.append("result")
        elif kind == "message":
            found.append("user")  # user, developer, system
    return found


def last_call(body: Mapping[str, Any]) -> str | None:
    for item in reversed(body.get("input") or ()):
        if not isinstance(item, dict):
            continue
        if item.get("type") in _CALLS:
            return str(item.get("name"))
        if item.get("type") == "message" and item.get("role") == "assistant":
            return None
    return None


def searched(body: Mapping[str, Any]) -> bool:
    """Whether the model already searched for tools in this turn (a tool_search_output after the
    last user message): a tool still missing then is not there to find."""
    for item in reversed(body.get("input") or ()):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "tool_search_output":
            return True
        if item.get("type", "message") == "message" and item.get("role") == "user":
            return False
    return False


def declared_tools(body: Mapping[str, Any]) -> list[Declared]:
    declared = []
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("type") == "tool_search":
            declared.append(Declared("tool_search", tool.get("parameters") or {}, search=True))
        elif isinstance(tool, dict) and isinstance(tool.get("name"), str):
            freeform = tool.get("type") == "custom"
            declared.append(Declared(tool["name"], tool.get("parameters") or {}, freeform))
    return declared + _searched_tools(body)


def _searched_tools(body: Mapping[str, Any]) -> list[Declared]:
    """The tools a tool search loaded earlier in the conversation, each in its namespace."""
    found = []
    for item in body.get("input") or ():
        if not isinstance(item, dict) or item.get("type") != "tool_search_output":
            continue
        for space in item.get("tools") or ():
            if not isinstance(space, dict):
                continue
            namespace = space.get("name") if isinstance(space.get("name"), str) else None
            for tool in space.get("tools") or ():
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    found.append(Declared(tool["name"], tool.get("parameters") or {}, namespace=namespace))
    return found


def render(body: Mapping[str, Any], reply: Reply, ids: Callable[[str], str]) -> Answer:
    response_id = ids("resp")
    items: list[dict[str, Any]] = []
    for thought in reply.thinking:
        items.append(
            {
                "type": "reasoning",
                "id": ids("rs"),
                "summary": [{"type": "summary_text", "text": thought}],
                "content": None,
                "encrypted_content": None,
            }
        )
    for chunks in reply.text:
        items.append(
            {
                "type": "message",
                "id": ids("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "".join(chunks), "annotations": []}],
            }
        )
    if reply.call is not None and reply.call.search:
        items.append(
            {
                "type": "tool_search_call",
                "id": ids("ts"),
                "call_id": ids("call"),
                "execution": "client",
                "arguments": dict(reply.call.arguments),
                "status": "completed",
            }
        )
    elif reply.call is not None and reply.call.freeform is not None:
        items.append(
            {
                "type": "custom_tool_call",
                "id": ids("ctc"),
                "status": "completed",
                "call_id": ids("call"),
                "name": reply.call.name,
                "input": reply.call.freeform,
            }
        )
    elif reply.call is not None:
        call: dict[str, Any] = {
            "type": "function_call",
            "id": ids("fc"),
            "status": "completed",
            "name": reply.call.name,
            "arguments": json.dumps(dict(reply.call.arguments)),
            "call_id": ids("call"),
        }
        if reply.call.namespace is not None:
            call["namespace"] = reply.call.namespace
        items.append(call)
    written = sum(tokens(json.dumps(item)) for item in items)
    read = tokens(json.dumps(body.get("input") or []))
    events = [sse({"type": "response.created", "response": {"id": response_id}}, "response.created")]
    for index, item in enumerate(items):
        event = {"type": "response.output_item.done", "output_index": index, "item": item}
        events.append(sse(event, "response.output_item.done"))
    if reply.cut:  # the items so far, then the connection goes: no response.completed
        return Answer(200, "text/event-stream", tuple(events), "cut", cut=True)
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
    kind = _ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    document = {"error": {"message": message, "type": kind, "code": "turngate_scripted"}}
    return json_answer(status, document, "error")
