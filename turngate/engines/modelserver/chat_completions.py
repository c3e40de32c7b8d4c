"""Chat Completions over SSE, as opencode's ``@ai-sdk/openai-compatible`` provider calls it.

``POST /v1/chat/completions`` with ``messages`` and ``tools``; the answer is
``chat.completion.chunk`` events (``delta`` with ``reasoning_content``,
``content``, ``tool_calls``), a last chunk with ``finish_reason`` and usage,
then ``data: [DONE]``. opencode (and kilo) also ask for a session title, a
request without tools, answered with a fixed title. qwen and codebuddy call
the same endpoint through their own OpenAI clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from turngate.engines.modelserver.answer import Answer, json_answer, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.reply import Declared, Reply

TITLE = "Scripted turngate run"
CREATED = 1_763_812_800
# Side agents a CLI runs beside the turn, on the same endpoint, replaying the conversation with a system
# prompt of their own: qwen 0.24.4's memory extraction after each turn (it would read as the next turn).
# They get a short text that ends them, not a round of the script.
SIDE_AGENTS = ("You are now acting as the managed memory extraction subagent",)
SIDE_TEXT = "Nothing to record."


def entries(body: Mapping[str, Any]) -> list[Entry]:
    found: list[Entry] = []
    for message in body.get("messages") or ():
        if not isinstance(message, dict):
            continue
        match message.get("role"):
            case "assistant":
                found.append("answer_with_call" if message.get("tool_calls") else "answer")
            case "tool":
                found.append("result")
            case _:
                found.append("user")
    return found


def last_call(body: Mapping[str, Any]) -> str | None:
    for message in reversed(body.get("messages") or ()):
        if isinstance(message, dict) and message.get("role") == "assistant":
            calls = [(call.get("function") or {}).get("name") for call in message.get("tool_calls") or ()]
            return str(calls[-1]) if calls else None
    return None


def declared_tools(body: Mapping[str, Any]) -> list[Declared]:
    declared = []
    for tool in body.get("tools") or ():
        function = (tool or {}).get("function") or {}
        if isinstance(function.get("name"), str):
            declared.append(Declared(function["name"], function.get("parameters") or {}))
    return declared


def is_title_request(body: Mapping[str, Any]) -> bool:
    return not body.get("tools")


def title_answer(body: Mapping[str, Any], ids: Callable[[str], str]) -> Answer:
    return _chunks(body, ids, [{"role": "assistant", "content": TITLE}], "stop", TITLE, "title")


def is_side_agent(body: Mapping[str, Any]) -> bool:
    """A side agent's request (SIDE_AGENTS): its first message is a system prompt naming it."""
    messages = body.get("messages") or []
    first = messages[0] if messages and isinstance(messages[0], dict) else {}
    content = first.get("content")
    text = content if isinstance(content, str) else ""
    return first.get("role") == "system" and text.lstrip().startswith(SIDE_AGENTS)


def side_agent_answer(body: Mapping[str, Any], ids: Callable[[str], str]) -> Answer:
    return _chunks(body, ids, [{"role": "assistant", "content": SIDE_TEXT}], "stop", SIDE_TEXT, "side")


def render(body: Mapping[str, Any], reply: Reply, ids: Callable[[str], str]) -> Answer:
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": thought} for thought in reply.thinking]
    for index, chunks in enumerate(reply.text):
        pieces = list(chunks)
        if index > 0:
            pieces[0] = "\n\n" + pieces[0]
        deltas += [{"content": piece} for piece in pieces if piece]
    finish = "stop"
    if reply.call is not None:
        call = {
            "index": 0,
            "id": ids("call"),
            "type": "function",
            "function": {"name": reply.call.name, "arguments": json.dumps(dict(reply.call.arguments))},
        }
        deltas.append({"tool_calls": [call]})
        finish = "tool_calls"
    return _chunks(body, ids, deltas, finish, json.dumps(deltas), "round", cut=reply.cut)


def error(status: int, message: str) -> Answer:
    kind = "invalid_request_error" if status < 500 else "server_error"
    kind = "rate_limit_exceeded" if status == 429 else kind
    document = {"error": {"message": message, "type": kind, "code": "turngate_scripted"}}
    return json_answer(status, document, "error")


def _chunks(
    body: Mapping[str, Any],
    ids: Callable[[str], str],
    deltas: list[dict[str, Any]],
    finish: str,
    written: str,
    kind: str,
    *,
    cut: bool = False,
) -> Answer:
    completion_id = ids("chatcmpl")
    model = str(body.get("model", "turngate"))

    def chunk(delta: dict[str, Any], finish_reason: str | None, **extra: Any) -> bytes:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    read = tokens(json.dumps(body.get("messages") or []))
    out = tokens(written)
    usage = {"prompt_tokens": read, "completion_tokens": out, "total_tokens": read + out}
    if body.get("stream") is False:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(d.get("content", "") for d in deltas),
        }
        calls = [call for d in deltas for call in d.get("tool_calls", ())]
        if calls:
            message["tool_calls"] = calls
        document = {
            "id": completion_id,
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return replace(json_answer(200, document, "cut" if cut else kind), cut=cut)
    pieces = [chunk(delta, None) for delta in deltas]
    if cut:  # the deltas so far, then the connection goes: no finish_reason, no [DONE]
        return Answer(200, "text/event-stream", tuple(pieces), "cut", cut=True)
    pieces.append(chunk({}, finish, usage=usage))
    pieces.append(b"data: [DONE]\n\n")
    return Answer(200, "text/event-stream", tuple(pieces), kind)
