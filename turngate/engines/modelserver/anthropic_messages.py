"""The Anthropic Messages API over SSE, as Claude Code calls it (``ANTHROPIC_BASE_URL``).

``POST /v1/messages`` (``?beta=true``) with ``messages`` and ``tools``; the answer is
``message_start``, per content block ``content_block_start`` / ``content_block_delta`` /
``content_block_stop`` (thinking, text, tool_use), then ``message_delta`` with the stop reason and
``message_stop``. ``POST /v1/messages/count_tokens`` gets a count. Requests without tools are
Claude Code's side requests (a title, a topic, a quota probe): a short text answers them.

Claude Code 2.1.331's conversation (seen against this server, November 2026) has habits the
position reading must know: it sends ``role: "system"`` messages inside ``messages``; on a resumed
session it merges the new prompt into the user message that holds the last tool result (next to
``<system-reminder>`` text blocks that are no user's words); and after a cut stream it asks the model
to go on with a user message of its own ("Your response above was cut off mid-stream…", wrapped in
a reminder by 2.1.331, bare in 2.1.326), which starts no turn; nor does the text it adds beside the
last tool result when the model's answer after it was empty ("[Your previous response had no visible
output. Please continue and produce a user-visible response.]", bare in 2.1.326): the model is asked
for the same round again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from turngate.engines.modelserver.answer import Answer, json_answer, sse, tokens
from turngate.engines.modelserver.conversation import Entry
from turngate.engines.modelserver.reply import Declared, Reply

SIDE_TEXT: Final = "Scripted turngate run"
# Texts Claude Code writes into the conversation itself, never a user's words: context reminders, the
# prompt it sends after a stream that was cut, and the one it sends once after an answer with no text
# (a tool call, then an empty answer), beside the last tool result (2.1.331 wraps both in a reminder,
# 2.1.326 does not).
_CLIS_OWN: Final = (
    "<system-reminder>",
    "Your response above was cut off mid-stream.",
    "[Your previous response had no visible output.",
)
_ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def entries(body: Mapping[str, Any]) -> list[Entry]:
    found: list[Entry] = []
    for message in body.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") == "system":
            continue  # in-conversation system messages are the CLI's, never a user's turn
        blocks = _blocks(message)
        kinds = {block.get("type") for block in blocks}
        if message.get("role") == "assistant":
            found.append("answer_with_call" if "tool_use" in kinds else "answer")
        elif "tool_result" in kinds:
            found.append("result")
            if _user_words(blocks):
                found.append("user")  # a resumed prompt merged into the last tool result's message
        elif not blocks or not all(_clis_own(block) for block in blocks):
            found.append("user")  # a message of the CLI's own texts alone is no user's turn
    return found


def last_call(body: Mapping[str, Any]) -> str | None:
    """The name of the tool the model's last answer called, if it called one."""
    for message in reversed(body.get("messages") or ()):
        if isinstance(message, dict) and message.get("role") == "assistant":
            calls = [block.get("name") for block in _blocks(message) if block.get("type") == "tool_use"]
            return str(calls[-1]) if calls else None
    return None


def declared_tools(body: Mapping[str, Any]) -> list[Declared]:
    return [
        Declared(tool["name"], tool.get("input_schema") or {})
        for tool in body.get("tools") or ()
        if isinstance(tool, dict) and isinstance(tool.get("name"), str)
    ]


def is_side_request(body: Mapping[str, Any]) -> bool:
    return not body.get("tools")


def side_answer(body: Mapping[str, Any], ids: Callable[[str], str]) -> Answer:
    return render(body, Reply(text=((SIDE_TEXT,),)), ids, kind="side")


def count_tokens(body: Mapping[str, Any]) -> Answer:
    return json_answer(200, {"input_tokens": tokens(json.dumps(body))}, "count_tokens")


def render(body: Mapping[str, Any], reply: Reply, ids: Callable[[str], str], kind: str = "round") -> Answer:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": thought, "signature": "dHVybmdhdGU="} for thought in reply.thinking
    ]
    text = "\n\n".join("".join(chunks) for chunks in reply.text)
    if text:
        content.append({"type": "text", "text": text})
    stop = "end_turn"
    if reply.call is not None:
        arguments = dict(reply.call.arguments)
        content.append({"type": "tool_use", "id": ids("toolu"), "name": reply.call.name, "input": arguments})
        stop = "tool_use"
    message_id = ids("msg")
    model = str(body.get("model", "claude-scripted"))
    read = tokens(json.dumps(body.get("messages") or []))
    written = tokens(json.dumps(content))
    if not body.get("stream"):
        document = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": read, "output_tokens": written},
        }
        answer = json_answer(200, document, "cut" if reply.cut else kind)
        return replace(answer, cut=reply.cut)
    started: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": read,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        },
    }
    events = [sse({"type": "message_start", "message": started}, "message_start")]
    for index, block in enumerate(content):
        events += _block_events(index, block)
    if reply.cut:  # the content so far, then the connection goes: no message_delta, no message_stop
        return Answer(200, "text/event-stream", tuple(events), "cut", cut=True)
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": written},
    }
    events += [sse(delta, "message_delta"), sse({"type": "message_stop"}, "message_stop")]
    return Answer(200, "text/event-stream", tuple(events), kind)


def error(status: int, message: str) -> Answer:
    document = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}
    return json_answer(status, document, "error")


def _block_events(index: int, block: Mapping[str, Any]) -> list[bytes]:
    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, "index": index, **data}, kind)

    opened: dict[str, Any]
    match block["type"]:
        case "thinking":
            opened = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        case "text":
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        case _:
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
    return [
        event("content_block_start", content_block=opened),
        *(event("content_block_delta", delta=delta) for delta in deltas),
        event("content_block_stop"),
    ]


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or () if isinstance(block, dict)]


def _user_words(blocks: list[dict[str, Any]]) -> bool:
    """Text a user wrote: not the texts Claude Code adds itself (reminders beside tool results)."""
    return any(block.get("type") == "text" and not _clis_own(block) for block in blocks)


def _clis_own(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).lstrip().startswith(_CLIS_OWN)
