"""The Anthropic Messages endpoint over real HTTP on 127.0.0.1, with the conversation shapes Claude
Code 2.1.331 sends (logged against this server, docs/real-engines.md): rounds, resume, side requests,
StructuredOutput."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.modelserver.serving import log, post, write_scripts
from turngate.engines.modelserver.endpoint import ModelServer

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
ECHO = 'Finish with {"__SKILL_DONE__": true}\n'
SCRIPTS = (
    {
        "case": "demo",
        "turns": [
            {
                "steps": [
                    {"think": "Let me look."},
                    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": ECHO}},
                    {"say": "Which style?"},
                ]
            },
            {"steps": [{"say": DONE}]},
        ],
    },
    {"case": "plain", "turns": [{"steps": [{"say": "Which style?"}]}]},
)
PROMPT = "Run the skill. tg-case-demo"
BASH = {
    "name": "Bash",
    "description": "Run a command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
        "required": ["command"],
    },
}
STRUCTURED = {"name": "StructuredOutput", "input_schema": {"type": "object"}}
REMINDER = {"type": "text", "text": "<system-reminder>\nContext the CLI adds.\n</system-reminder>"}
SYSTEM = {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/x"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    with ModelServer(scripts, tmp_path / "requests.jsonl", tmp_path / "data") as running:
        yield running


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [REMINDER, *({"type": "text", "text": text} for text in texts)]}


def blocks(events: list[Any]) -> list[dict[str, Any]]:
    """The content blocks an SSE answer streams, assembled from their start and deltas."""
    found: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "content_block_start":
            found.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            block = found[event["index"]]
            match delta["type"]:
                case "text_delta":
                    block["text"] += delta["text"]
                case "thinking_delta":
                    block["thinking"] += delta["thinking"]
                case "input_json_delta":
                    block["input"] = json.loads(delta["partial_json"])
    return found


def request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"model": "claude-haiku", "stream": True, "messages": messages, "tools": tools or [BASH]}


def test_a_turn_is_thinking_and_a_bash_call_then_the_reply_in_the_protocols_event_order(
    server: ModelServer,
) -> None:
    first = post(server, "/v1/messages?beta=true", request([user(PROMPT), SYSTEM]))
    assert first.status == 200
    assert first.event_names() == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_delta", "content_block_stop"],
        *["content_block_start", "content_block_delta", "content_block_stop"],
        "message_delta",
        "message_stop",
    ]
    events = first.events()
    thought, call = blocks(events)
    assert thought["thinking"] == "Let me look."
    assert (call["type"], call["name"]) == ("tool_use", "Bash")
    assert call["input"]["description"]
    ran = subprocess.run(
        ["bash", "-c", call["input"]["command"]], capture_output=True, text=True, check=False
    )
    assert ran.stdout == ECHO  # the CLI's own command prints the scripted output: a real echo
    assert events[-2]["delta"]["stop_reason"] == "tool_use"

    history = [
        user(PROMPT),
        SYSTEM,
        {"role": "assistant", "content": [call]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": ECHO}, REMINDER],
        },
    ]
    second = post(server, "/v1/messages", request(history))
    (reply,) = blocks(second.events())
    assert reply == {"type": "text", "text": "Which style?"}
    assert second.events()[-2]["delta"]["stop_reason"] == "end_turn"
    assert [(line["protocol"], line["turn"], line["round"]) for line in log(server)] == [
        ("anthropic", 1, 1),
        ("anthropic", 1, 2),
    ]


def test_a_resumed_prompt_merged_into_the_last_tool_result_starts_the_next_turn(server: ModelServer) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat x"}}
    history = [
        user(PROMPT),
        SYSTEM,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": ECHO}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Which style?"}]},
        SYSTEM,  # an in-conversation system message is never a user's turn
        {"role": "user", "content": [REMINDER]},  # nor a message of reminders alone
        # nor Claude Code 2.1.326's own request to go on after a cut stream
        {
            "role": "user",
            "content": "Your response above was cut off mid-stream. Resume directly from where it stops.",
        },
    ]
    assert blocks(post(server, "/v1/messages", request(history)).events())[0]["text"] == "Which style?"
    # Claude Code's resume: the new prompt rides in the message holding the last tool result.
    merged = [
        *history[:3],
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": ECHO},
                REMINDER,
                {"type": "text", "text": "Formal, please"},
            ],
        },
    ]
    (reply,) = blocks(post(server, "/v1/messages", request(merged)).events())
    assert reply["text"] == DONE
    assert log(server)[-1]["turn"] == 2


NO_VISIBLE_OUTPUT = (
    "[Your previous response had no visible output. Please continue and produce a user-visible response.]"
)


@pytest.mark.parametrize(
    "nudge",
    [
        {"type": "text", "text": NO_VISIBLE_OUTPUT},  # 2.1.326
        {"type": "text", "text": f"<system-reminder>\n{NO_VISIBLE_OUTPUT}\n</system-reminder>"},  # 2.1.331
    ],
)
def test_claudes_own_request_after_an_empty_answer_asks_for_the_same_round_again(
    server: ModelServer, nudge: dict[str, Any]
) -> None:
    # The model answered the tool result with nothing; Claude Code drops that answer and asks again,
    # its text beside the tool result. 2.1.326's was read as a resumed prompt: the next turn's answer
    # (the marker) came one turn early (design/decision-5/backend-pending-baseline succeeded at turn 3).
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat x"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": ECHO}
    history = [
        user(PROMPT),
        SYSTEM,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result, nudge]},
    ]
    (reply,) = blocks(post(server, "/v1/messages", request(history)).events())
    assert reply["text"] == "Which style?"
    assert (log(server)[-1]["turn"], log(server)[-1]["round"]) == (1, 2)


def test_side_requests_without_tools_get_a_short_text_and_count_tokens_a_count(server: ModelServer) -> None:
    side = post(server, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "a title"}]})
    assert side.status == 200
    assert side.json()["content"] == [{"type": "text", "text": "Scripted turngate run"}]  # not streamed: JSON
    counted = post(
        server, "/v1/messages/count_tokens", {"messages": [{"role": "user", "content": "x" * 400}]}
    )
    assert counted.status == 200
    assert counted.json()["input_tokens"] >= 100
    assert [line["answer"] for line in log(server)] == ["side", "count_tokens"]


def test_a_json_final_answer_is_a_structured_output_call_when_the_cli_declares_it(
    server: ModelServer,
) -> None:
    turn_two = [
        user(PROMPT),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Which style?"}]},
        user("Formal, please"),
    ]
    answered = post(server, "/v1/messages", request(turn_two, [BASH, STRUCTURED]))
    (call,) = blocks(answered.events())  # the object as the tool's input, and no text at all
    assert (call["name"], call["input"]) == ("StructuredOutput", json.loads(DONE))
    assert log(server)[-1]["answer"] == "structured_output"
    # A CLI that asks again after the call gets a short, non-empty closing line.
    after = [
        *turn_two,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "s", "name": "StructuredOutput", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s", "content": "ok"}]},
    ]
    (closing,) = blocks(post(server, "/v1/messages", request(after, [BASH, STRUCTURED])).events())
    assert closing == {"type": "text", "text": "Done."}
    assert log(server)[-1]["answer"] == "after_structured_output"
    # A final answer that is no JSON object stays text, StructuredOutput declared or not.
    (text,) = blocks(
        post(server, "/v1/messages", request([user("tg-case-plain")], [BASH, STRUCTURED])).events()
    )
    assert text == {"type": "text", "text": "Which style?"}


def test_a_request_past_the_turns_rounds_is_a_400_in_anthropics_error_shape(server: ModelServer) -> None:
    history = [
        user("tg-case-plain"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
    ]
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]})
    refused = post(server, "/v1/messages", request(history))
    assert refused.status == 400
    assert refused.json()["type"] == "error"
    assert refused.json()["error"]["type"] == "invalid_request_error"
    assert "case plain: turn 1: round 2: the turn has 1 rounds" in refused.json()["error"]["message"]
