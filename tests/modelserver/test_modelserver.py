"""The scripted model server over real HTTP on 127.0.0.1: protocol shapes, script → answer, the log.

Plain HTTP clients stand in for the CLIs (no npm in CI); the requests carry
the conversation shapes the real CLIs send (logged from codex 0.169.0, gemini
0.61.0 and opencode 1.18.33, docs/real-engines.md).
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from turngate.engines.modelserver.endpoint import ModelServer

CASE = "demo"
TOOL_OUTPUT = '# Greet\n"__SKILL_DONE__": true\n'
DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
SCRIPT = {
    "case": CASE,
    "turns": [
        {
            "steps": [
                {"think": "Let me look at the skill."},
                {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": TOOL_OUTPUT}},
                {"say": "Which greeting style?"},
            ]
        },
        {"steps": [{"say": {"chunks": ['{"greeting": "Hello", ', '"__SKILL_DONE__": true}']}}]},
    ],
}
FAILING = {
    "case": "broken",
    "turns": [{"steps": [{"say": "trying"}, {"error": {"message": "quota exhausted"}}], "end": "failed"}],
}
PROMPT = "Run the skill greet.\nInputs:\n- case: tg-case-demo"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for document in (SCRIPT, FAILING):
        (scripts / f"{document['case']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    with ModelServer(scripts, tmp_path / "requests.jsonl", tmp_path / "data") as running:
        yield running


def post(server: ModelServer, path: str, body: Any) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        server.url + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def events(raw: bytes) -> list[Any]:
    """The data of each SSE event ([DONE] kept as the string)."""
    found = []
    for block in raw.decode().split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                payload = line[len("data: ") :]
                found.append(payload if payload == "[DONE]" else json.loads(payload))
    return found


def log(server: ModelServer) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.log.read_text(encoding="utf-8").splitlines()]


def run_shell(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-lc", command], capture_output=True, text=True, check=False)


# Responses API (codex) ------------------------------------------------------------------------------

EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_responses_rounds_follow_the_script_and_the_tool_call_really_echoes(server: ModelServer) -> None:
    status, raw = post(
        server, "/v1/responses", {"input": [user(PROMPT)], "tools": [EXEC_COMMAND], "stream": True}
    )
    assert status == 200
    first = events(raw)
    assert [event["type"] for event in first] == [
        "response.created",
        "response.output_item.done",
        "response.output_item.done",
        "response.completed",
    ]
    reasoning, call = (event["item"] for event in first[1:3])
    assert reasoning["type"] == "reasoning"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Let me look at the skill."}]
    assert (call["type"], call["name"]) == ("function_call", "exec_command")
    command = json.loads(call["arguments"])["cmd"]
    assert run_shell(command).stdout == TOOL_OUTPUT  # the CLI's command prints the scripted output
    assert set(first[-1]["response"]["usage"]) >= {"input_tokens", "output_tokens", "total_tokens"}

    history = [
        user(PROMPT),
        reasoning,
        call,
        {"type": "function_call_output", "call_id": call["call_id"], "output": TOOL_OUTPUT},
    ]
    _, raw = post(server, "/v1/responses", {"input": history, "tools": [EXEC_COMMAND]})
    (message,) = (event["item"] for event in events(raw) if event["type"] == "response.output_item.done")
    assert (message["type"], message["role"]) == ("message", "assistant")
    assert message["content"][0]["text"] == "Which greeting style?"

    history += [message, user("Formal, please")]
    _, raw = post(server, "/v1/responses", {"input": history, "tools": [EXEC_COMMAND]})
    (reply,) = (event["item"] for event in events(raw) if event["type"] == "response.output_item.done")
    assert reply["content"][0]["text"] == DONE  # chunks of one say step are one message
    assert [(line["case"], line["turn"], line["round"]) for line in log(server)] == [
        ("demo", 1, 1),
        ("demo", 1, 2),
        ("demo", 2, 1),
    ]


def test_an_older_codex_shell_tool_gets_its_argument_shape(server: ModelServer) -> None:
    shell = {
        "type": "function",
        "name": "shell",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "array"}},
            "required": ["command"],
        },
    }
    _, raw = post(server, "/v1/responses", {"input": [user(PROMPT)], "tools": [shell]})
    call = events(raw)[2]["item"]
    arguments = json.loads(call["arguments"])
    assert call["name"] == "shell"
    assert arguments["command"][:2] == ["bash", "-lc"]


# Gemini API ------------------------------------------------------------------------------------------

SHELL_DECLARATION = {
    "functionDeclarations": [
        {
            "name": "run_shell_command",
            "parametersJsonSchema": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
                "required": ["command"],
            },
        }
    ]
}


def test_gemini_router_gets_an_object_fitting_its_schema(server: ModelServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100},
        },
        "required": ["reasoning", "complexity_score"],
    }
    body = {
        "contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema},
    }
    status, raw = post(server, "/v1beta/models/gemini-router:generateContent", body)
    assert status == 200
    text = json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"]
    value = json.loads(text)
    assert isinstance(value["reasoning"], str)
    assert value["complexity_score"] >= 1
    assert log(server)[-1]["answer"] == "router"


def test_gemini_next_speaker_check_hands_the_turn_back_to_the_user(server: ModelServer) -> None:
    schema = {
        "type": "OBJECT",
        "properties": {
            "reasoning": {"type": "STRING"},
            "next_speaker": {"type": "STRING", "enum": ["model", "user"]},
        },
    }
    body = {
        "contents": [],
        "generationConfig": {"responseSchema": schema, "responseMimeType": "application/json"},
    }
    _, raw = post(server, "/v1beta/models/x:generateContent", body)
    assert (
        json.loads(json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"])["next_speaker"] == "user"
    )


def test_gemini_stream_answers_rounds_with_a_shell_call_then_text(server: ModelServer) -> None:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": PROMPT}]}]
    status, raw = post(
        server,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        {"contents": contents, "tools": [SHELL_DECLARATION]},
    )
    assert status == 200
    chunks = events(raw)
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    assert parts[0] == {"text": "Let me look at the skill.", "thought": True}
    call = parts[1]["functionCall"]
    assert call["name"] == "run_shell_command"
    assert run_shell(call["args"]["command"]).stdout == TOOL_OUTPUT
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in chunks[-1]

    contents += [
        {"role": "model", "parts": [parts[1]]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {}}}]},
    ]
    _, raw = post(
        server,
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        {"contents": contents, "tools": [SHELL_DECLARATION]},
    )
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in events(raw)] == [
        "Which greeting style?"
    ]
    contents += [
        {"role": "model", "parts": [{"text": "Which greeting style?"}]},
        {"role": "user", "parts": [{"text": "formal"}]},
    ]
    _, raw = post(
        server,
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        {"contents": contents, "tools": [SHELL_DECLARATION]},
    )
    deltas = [c["candidates"][0]["content"]["parts"][0]["text"] for c in events(raw)]
    assert deltas == ['{"greeting": "Hello", ', '"__SKILL_DONE__": true}']  # a say's chunks are stream deltas


# Chat Completions (opencode) ----------------------------------------------------------------------

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command", "description"],
        },
    },
}


def test_chat_title_request_without_tools_gets_a_title(server: ModelServer) -> None:
    _, raw = post(
        server, "/v1/chat/completions", {"messages": [{"role": "user", "content": PROMPT}], "stream": True}
    )
    chunks = events(raw)
    assert chunks[-1] == "[DONE]"
    assert (
        "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1]) == "Scripted turngate run"
    )
    assert log(server)[-1]["answer"] == "title"


def test_chat_rounds_stream_reasoning_tool_calls_and_text(server: ModelServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are opencode"},
        {"role": "user", "content": PROMPT},
    ]
    _, raw = post(server, "/v1/chat/completions", {"messages": messages, "tools": [BASH], "stream": True})
    chunks = events(raw)
    assert chunks[-1] == "[DONE]"
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert {"reasoning_content": "Let me look at the skill."} in deltas
    (call,) = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    arguments = json.loads(call["function"]["arguments"])
    assert call["function"]["name"] == "bash"
    assert arguments["description"]
    assert run_shell(arguments["command"]).stdout == TOOL_OUTPUT
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert "usage" in chunks[-2]

    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": TOOL_OUTPUT},
    ]
    _, raw = post(server, "/v1/chat/completions", {"messages": messages, "tools": [BASH], "stream": True})
    chunks = events(raw)
    assert (
        "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1]) == "Which greeting style?"
    )
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


# Errors: always a 4xx the CLI reports, never a 5xx -----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"input": [user("go tg-case-broken")], "tools": [EXEC_COMMAND]}),
        (
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            {"contents": [{"role": "user", "parts": [{"text": "tg-case-broken"}]}]},
        ),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "tg-case-broken"}], "tools": [BASH]},
        ),
    ],
)
def test_a_scripted_error_is_a_400_with_its_message(server: ModelServer, path: str, body: Any) -> None:
    status, raw = post(server, path, body)
    assert status == 400
    assert json.loads(raw)["error"]["message"] == "quota exhausted"
    assert (log(server)[-1]["answer"], log(server)[-1]["error"]) == ("error", "quota exhausted")


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"{not json", "request body: not JSON"),
        (b"[1, 2]", "request body: a JSON list, not an object"),
        (json.dumps({"input": [user("no token here")]}).encode(), "no tg-case-<id> token"),
        (json.dumps({"input": [user("tg-case-nosuch")]}).encode(), "CASE_NOT_FOUND"),
    ],
)
def test_requests_it_cannot_place_get_a_400_saying_why(server: ModelServer, body: bytes, why: str) -> None:
    status, raw = post(server, "/v1/responses", body)
    assert status == 400
    assert why in json.loads(raw)["error"]["message"]


def test_a_turn_past_the_script_is_a_400_naming_case_and_turn(server: ModelServer) -> None:
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
    body = {"input": [user(PROMPT), said, user("a"), said, user("b")], "tools": [EXEC_COMMAND]}
    status, raw = post(server, "/v1/responses", body)
    assert status == 400
    assert "case demo: turn 3: the script has 2 turns" in json.loads(raw)["error"]["message"]


def test_other_paths_are_404_and_logged(server: ModelServer) -> None:
    status, _ = post(server, "/v1/models/whatever", {})
    assert status == 404
    assert log(server)[-1]["protocol"] == "unknown"


def test_the_log_keeps_what_the_cli_sent(server: ModelServer) -> None:
    body = {
        "input": [user(PROMPT + "\n\nSKILL.md (patched): finish with __SKILL_DONE__")],
        "tools": [EXEC_COMMAND],
    }
    post(server, "/v1/responses", body)
    (line,) = log(server)
    assert line["body"] == body
    assert (line["method"], line["path"], line["protocol"], line["status"]) == (
        "POST",
        "/v1/responses",
        "responses",
        200,
    )


@pytest.mark.parametrize(("length", "status"), [("-5", 400), ("many", 400), (str(1 << 40), 413)])
def test_a_bad_or_huge_content_length_is_refused_without_reading(
    server: ModelServer, length: str, status: int
) -> None:
    import http.client

    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.putrequest("POST", "/v1/responses")
    connection.putheader("Content-Length", length)
    connection.endheaders()
    answer = connection.getresponse()
    assert answer.status == status
    assert "error" in json.loads(answer.read())
    connection.close()


def test_a_request_still_being_answered_when_the_server_stopped_breaks_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sleep step's answer whose CLI the turn watchdog killed: the case is over and its folder (the
    # log among it) gone, so writing the log line fails; that is no news for the runner's stderr.
    server = ModelServer(tmp_path / "scripts", tmp_path / "log.jsonl", tmp_path / "data").start()
    running = server._server
    assert running is not None
    try:
        raise FileNotFoundError(2, "No such file or directory")
    except FileNotFoundError:
        running.handle_error(None, ("127.0.0.1", 1))
    assert "FileNotFoundError" in capsys.readouterr().err  # while it serves: one line, as before
    server.stop()
    try:
        raise FileNotFoundError(2, "No such file or directory")
    except FileNotFoundError:
        running.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""
