"""Chat Completions over SSE, as opencode's ``@ai-sdk/openai-compatible`` provider calls it.

``POST /v1/chat/completions`` with ``messages`` and ``tools``; the answer is
``chat.completion.chunk`` events (``delta`` with ``reasoning_content``,
``content``, ``tool_calls``), a last chunk with ``finish_reason`` and usage,
then ``data: [DONE]``. opencode also asks for a session title, a request
without tools, answered with a fixed title.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from turngate.engines.modelserver.answer import Answer, json_answer, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.rounds import Round, ToolCall
from turngate.engines.modelserver.toolargs import pick_shell_tool, shell_arguments

TITLE = "Scripted turngate run"
CREATED = 1_763_812_800


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


def is_title_request(body: Mapping[str, Any]) -> bool:
    return not body.get("tools")


def title_answer(body: Mapping[str, Any], ids: Callable[[str], str]) -> Answer:
    return _chunks(body, ids, [{"role": "assistant", "content": TITLE}], "stop", TITLE, "title")


def answer(
    body: Mapping[str, Any], step: Round, ids: Callable[[str], str], command_for: Callable[[ToolCall], str]
) -> Answer:
    if step.error is not None:
        return error(400, step.error)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": thought} for thought in step.thinking]
    for index, chunks in enumerate(step.text):
        pieces = list(chunks)
        if index > 0:
            pieces[0] = "\n\n" + pieces[0]
        deltas += [{"content": piece} for piece in pieces if piece]
    finish = "stop"
    if step.tool is not None:
        name, schema = pick_shell_tool(_declared_tools(body))
        call = {
            "index": 0,
            "id": ids("call"),
            "type": "function",
            "function": {
                "name": name,
                "arguments": json.dumps(shell_arguments(schema, command_for(step.tool))),
            },
        }
        deltas.append({"tool_calls": [call]})
        finish = "tool_calls"
    return _chunks(body, ids, deltas, finish, json.dumps(deltas), "round")


def error(status: int, message: str) -> Answer:
    document = {"error": {"message": message, "type": "invalid_request_error", "code": "turngate_scripted"}}
    return json_answer(status, document, "error")


def _chunks(
    body: Mapping[str, Any],
    ids: Callable[[str], str],
    deltas: list[dict[str, Any]],
    finish: str,
    written: str,
    kind: str,
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
        return json_answer(200, document, kind)
    pieces = [chunk(delta, None) for delta in deltas]
    pieces.append(chunk({}, finish, usage=usage))
    pieces.append(b"data: [DONE]\n\n")
    return Answer(200, "text/event-stream", tuple(pieces), kind)


def _declared_tools(body: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    declared = []
    for tool in body.get("tools") or ():
        function = (tool or {}).get("function") or {}
        if isinstance(function.get("name"), str):
            declared.append((function["name"], function.get("parameters") or {}))
    return declared
