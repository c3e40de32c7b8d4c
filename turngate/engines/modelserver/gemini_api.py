"""The Gemini API as the Gemini CLI calls it: a router ``:generateContent``, then ``:streamGenerateContent``.

Each turn, the CLI first asks a small model to route the request
(``generateContent`` with a JSON response schema); it wants an object that
fits the schema, with ``complexity_score`` at least 1. Other JSON-schema
side requests (which speaker is next, loop checks) get an object fitting
their schema too, with ``next_speaker: user`` so the CLI does not ask for
another answer. The turn itself is ``streamGenerateContent?alt=sse``: one
``data:`` event per chunk, the last with ``finishReason`` and usage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from turngate.engines.modelserver.answer import Answer, json_answer, sse, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.reply import Declared, Reply
from turngate.engines.modelserver.toolargs import fit_schema

SIDE_ANSWERS = {"next_speaker": "user", "complexity_score": 1, "model_choice": "flash"}


def entries(body: Mapping[str, Any]) -> list[Entry]:
    found: list[Entry] = []
    for content in body.get("contents") or ():
        if not isinstance(content, dict):
            continue
        parts = [part for part in content.get("parts") or () if isinstance(part, dict)]
        if content.get("role") == "model":
            calls = any("functionCall" in part for part in parts)
            found.append("answer_with_call" if calls else "answer")
        elif parts and all("functionResponse" in part for part in parts):
            found.append("result")  # tool results travel as a user turn of functionResponse parts
        else:
            found.append("user")
    return found


def is_side_request(body: Mapping[str, Any]) -> bool:
    """A request for a JSON object (router, next speaker...), not a turn of the conversation."""
    config = body.get("generationConfig") or {}
    return bool(config.get("responseJsonSchema") or config.get("responseSchema")) or (
        config.get("responseMimeType") == "application/json"
    )


def side_answer(body: Mapping[str, Any]) -> Answer:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    value = fit_schema(schema, SIDE_ANSWERS) if schema else {"complexity_score": 1}
    text = json.dumps(value)
    document = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _usage(body, text),
    }
    return json_answer(200, document, "router")


def last_call(body: Mapping[str, Any]) -> str | None:
    for content in reversed(body.get("contents") or ()):
        if isinstance(content, dict) and content.get("role") == "model":
            calls = [
                (part.get("functionCall") or {}).get("name")
                for part in content.get("parts") or ()
                if isinstance(part, dict) and "functionCall" in part
            ]
            return str(calls[-1]) if calls else None
    return None


def declared_tools(body: Mapping[str, Any]) -> list[Declared]:
    declared = []
    for tool in body.get("tools") or ():
        for function in (tool or {}).get("functionDeclarations") or ():
            schema = function.get("parametersJsonSchema") or function.get("parameters") or {}
            declared.append(Declared(str(function.get("name", "")), schema))
    return declared


def render(body: Mapping[str, Any], reply: Reply, ids: Callable[[str], str]) -> Answer:
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True} for thought in reply.thinking]
    for index, chunks in enumerate(reply.text):
        pieces = list(chunks)
        if index > 0:
            pieces[0] = "\n\n" + pieces[0]  # say steps of one answer are paragraphs of one reply
        parts.extend({"text": piece} for piece in pieces if piece)
    if reply.call is not None:
        parts.append({"functionCall": {"name": reply.call.name, "args": dict(reply.call.arguments)}})
    written = "".join(json.dumps(part) for part in parts)
    events = []
    for index, part in enumerate(parts or [{"text": ""}]):
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]}
        # A cut stream never says it finished: no chunk carries a finishReason.
        if index == max(len(parts), 1) - 1 and not reply.cut:
            chunk["candidates"][0]["finishReason"] = "STOP"
            chunk["usageMetadata"] = _usage(body, written)
        chunk["modelVersion"] = "gemini-2.5-pro"
        chunk["responseId"] = ids("gresp")
        events.append(sse(chunk))
    if reply.cut:
        return Answer(200, "text/event-stream", tuple(events), "cut", cut=True)
    return Answer(200, "text/event-stream", tuple(events), "round")


def error(status: int, message: str) -> Answer:
    names = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    }
    document = {
        "error": {"code": status, "message": message, "status": names.get(status, "FAILED_PRECONDITION")}
    }
    return json_answer(status, document, "error")


def _usage(body: Mapping[str, Any], written: str) -> dict[str, int]:
    read = tokens(json.dumps(body.get("contents") or []))
    out = tokens(written)
    return {"promptTokenCount": read, "candidatesTokenCount": out, "totalTokenCount": read + out}
