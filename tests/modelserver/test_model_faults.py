"""A script's model_error step on every endpoint, over real HTTP: a status (429 with retry-after, 5xx)
in the protocol's own error shape, or a stream cut after the answer so far; on every attempt, or
(recovers) on the first `retries` attempts only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.modelserver.serving import Reply, log, post, write_scripts
from turngate.engines.modelserver.endpoint import ModelServer

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
SCRIPTS = (
    {"case": "rate", "turns": [{"steps": [{"model_error": {"status": 429}}]}]},
    {
        "case": "down",
        "turns": [{"steps": [{"model_error": {"status": 500, "message": "overloaded", "retries": 2}}]}],
    },
    {"case": "cut", "turns": [{"steps": [{"say": DONE}, {"model_error": {"cut": True, "retries": 2}}]}]},
    {
        "case": "flaky",
        "turns": [
            {
                "steps": [
                    {"say": "Which style?"},
                    {"model_error": {"cut": True, "retries": 2, "recovers": True}},
                    {"say": "Formal or casual?"},
                ]
            }
        ],
    },
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    with ModelServer(scripts, tmp_path / "requests.jsonl", tmp_path / "data") as running:
        yield running


def responses(case: str) -> tuple[str, dict[str, Any]]:
    text = {"type": "input_text", "text": f"go tg-case-{case}"}
    return "/v1/responses", {"input": [{"type": "message", "role": "user", "content": [text]}], "tools": []}


def chat(case: str) -> tuple[str, dict[str, Any]]:
    bash = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    return "/v1/chat/completions", {
        "messages": [{"role": "user", "content": f"go tg-case-{case}"}],
        "tools": [bash],
        "stream": True,
    }


def gemini(case: str) -> tuple[str, dict[str, Any]]:
    return "/v1beta/models/m:streamGenerateContent?alt=sse", {
        "contents": [{"role": "user", "parts": [{"text": f"go tg-case-{case}"}]}]
    }


def anthropic(case: str) -> tuple[str, dict[str, Any]]:
    return "/v1/messages", {
        "stream": True,
        "messages": [{"role": "user", "content": f"go tg-case-{case}"}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    }


PROTOCOLS = [responses, chat, gemini, anthropic]
Request = Callable[[str], tuple[str, dict[str, Any]]]


def text_of(reply: Reply) -> str:
    """The reply text an SSE answer carried, whatever the protocol."""
    found = []
    for event in reply.events():
        if event == "[DONE]":
            continue
        if event.get("type") == "response.output_item.done" and event["item"]["type"] == "message":
            found.append(event["item"]["content"][0]["text"])
        elif "choices" in event:
            found.append(event["choices"][0]["delta"].get("content") or "")
        elif "candidates" in event:
            found += [part.get("text", "") for part in event["candidates"][0]["content"]["parts"]]
        elif event.get("type") == "content_block_delta" and event["delta"]["type"] == "text_delta":
            found.append(event["delta"]["text"])
    return "".join(found)


def ended(reply: Reply) -> bool:
    """Whether the stream said it was over (the protocol's own end-of-answer event)."""
    events = reply.events()
    return any(
        event == "[DONE]"
        or event.get("type") in ("response.completed", "message_stop")
        or any("finishReason" in candidate for candidate in event.get("candidates") or ())
        for event in events
    )


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_429_is_refused_in_the_protocols_error_shape_with_a_short_retry_after(
    server: ModelServer, protocol: Request
) -> None:
    for _attempt in range(3):  # not recovering: every attempt
        refused = post(server, *protocol("rate"))
        assert refused.status == 429
        assert refused.headers["retry-after"] == "1"
        assert "Too Many Requests" in str(refused.json())  # no message scripted: the reason phrase
    assert [(line["answer"], line["status"], line["error"]) for line in log(server)] == [
        ("fault", 429, "Too Many Requests")
    ] * 3


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_500_carries_the_scripted_message(server: ModelServer, protocol: Request) -> None:
    refused = post(server, *protocol("down"))
    assert refused.status == 500
    assert "retry-after" not in refused.headers
    assert "overloaded" in str(refused.json())


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_cut_streams_the_whole_answer_then_ends_the_body_without_the_end_of_answer_event(
    server: ModelServer, protocol: Request
) -> None:
    for _attempt in range(3):
        cut = post(server, *protocol("cut"))
        assert cut.status == 200
        assert cut.complete  # the HTTP body ended...
        assert text_of(cut) == DONE  # ...after a complete marker message...
        assert not ended(cut)  # ...and no event said the answer was over
    assert {line["answer"] for line in log(server)} == {"cut"}


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_dropped_cut_closes_the_connection_in_the_middle_of_the_body(
    tmp_path: Path, protocol: Request
) -> None:
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    with ModelServer(scripts, tmp_path / "log.jsonl", tmp_path / "data", cut_style="dropped") as server:
        cut = post(server, *protocol("cut"))
        assert (cut.status, cut.complete) == (200, False)  # the chunked body never ended
        assert text_of(cut) == DONE
        assert not ended(cut)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_cut_the_script_says_is_dropped_is_dropped_whatever_the_servers_cut_style(
    tmp_path: Path, protocol: Request
) -> None:
    dropped = {
        "case": "drop",
        "turns": [{"steps": [{"say": DONE}, {"model_error": {"cut": True, "dropped": True}}]}],
    }
    scripts = write_scripts(tmp_path / "scripts", [*SCRIPTS, dropped])
    with ModelServer(scripts, tmp_path / "log.jsonl", tmp_path / "data") as server:  # cut_style ended
        cut = post(server, *protocol("drop"))
        assert (cut.status, cut.complete) == (200, False)
        assert text_of(cut) == DONE and not ended(cut)
        assert post(server, *protocol("cut")).complete  # the other cuts still end their body


def test_a_cut_style_the_server_does_not_know_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cut_style: 'reset': one of ended, dropped"):
        ModelServer(tmp_path, tmp_path / "log", tmp_path / "data", cut_style="reset")  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_recovering_cut_fails_retries_times_then_answers_whole_and_fails_again_for_the_next_play(
    server: ModelServer, protocol: Request
) -> None:
    def attempt() -> tuple[bool, str]:
        reply = post(server, *protocol("flaky"))
        return reply.complete and ended(reply), text_of(reply)

    cut = (False, "Which style?")
    whole = (
        True,
        "Which style?\n\nFormal or casual?" if protocol is not responses else "Which style?Formal or casual?",
    )
    assert [attempt() for _ in range(3)] == [cut, cut, whole]
    assert [attempt() for _ in range(3)] == [cut, cut, whole]  # the next CLI to play it meets the same


def test_a_non_streamed_cut_sends_half_its_document(server: ModelServer, tmp_path: Path) -> None:
    path, body = chat("cut")
    cut = post(server, path, {**body, "stream": False})
    assert (cut.status, cut.complete) == (200, True)
    assert len(cut.body) > 0 and not cut.body.endswith(b"}")
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    with ModelServer(scripts, tmp_path / "log.jsonl", tmp_path / "data", cut_style="dropped") as dropping:
        cut = post(dropping, path, {**body, "stream": False})
        assert (cut.status, cut.complete) == (200, False)  # fewer bytes than its Content-Length said


def test_a_sleep_before_an_answer_makes_the_server_wait_before_answering(tmp_path: Path) -> None:
    slow = {"case": "slow", "turns": [{"steps": [{"sleep": 0.2}, {"say": "late"}]}]}
    scripts = write_scripts(tmp_path / "scripts", [slow])
    with ModelServer(scripts, tmp_path / "requests.jsonl", tmp_path / "data") as server:
        assert text_of(post(server, *chat("slow"))) == "late"
        assert log(server)[-1]["waited"] == 0.2


def test_a_client_that_resets_its_connection_is_no_traceback_and_the_server_goes_on(
    server: ModelServer, capfd: pytest.CaptureFixture[str]
) -> None:
    import socket
    import struct

    host, port = server.url.removeprefix("http://").split(":")
    for _ in range(3):
        client = socket.create_connection((host, int(port)), timeout=30)
        client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with RST
        client.close()
    assert post(server, *chat("cut")).status == 200  # still serving
    assert "Traceback" not in capfd.readouterr().err
