"""Which tool the model calls, over real HTTP: the CLI's shell tool whatever its name (Bash too), its
file-writing tool for a file_change, a named tool by its name, StructuredOutput on Chat Completions,
tool outputs inside the CLI's working directory when asked; and where each CLI names that directory."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.modelserver.serving import log, post, write_scripts
from turngate.engines.modelserver.conversation import working_directory
from turngate.engines.modelserver.endpoint import ModelServer

ECHO = 'Finish with {"__SKILL_DONE__": true}\n'
PATCHED = '{"greeting": "Hello", "__SKILL_DONE__": true}\n'
SCRIPTS = (
    {
        "case": "echo",
        "turns": [{"steps": [{"tool": {"name": "bash", "output": ECHO, "status": "error"}}, {"say": "ok"}]}],
    },
    {
        "case": "patch",
        "turns": [{"steps": [{"file_change": {"path": "drafts/g.json", "content": PATCHED}}, {"say": "ok"}]}],
    },
    {
        "case": "update",
        "turns": [
            {
                "steps": [
                    {"file_change": {"path": "g.json", "kind": "update", "content": "new\n"}},
                    {"say": "ok"},
                ]
            }
        ],
    },
    {
        "case": "ask",
        "turns": [
            {
                "steps": [
                    {"tool": {"name": "request_user_input", "input": {"questions": [{"id": "style"}]}}},
                    {"say": "ok"},
                ]
            }
        ],
    },
    {"case": "final", "turns": [{"steps": [{"final": {"greeting": "Hello"}}]}]},
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    with ModelServer(
        scripts, tmp_path / "requests.jsonl", tmp_path / "data", named_tools=frozenset({"request_user_input"})
    ) as running:
        yield running


def function(name: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required or list(properties)}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def chat_call(
    server: ModelServer, case: str, tools: list[dict[str, Any]], context: str = ""
) -> dict[str, Any]:
    body = {
        "messages": [{"role": "system", "content": context}, {"role": "user", "content": f"tg-case-{case}"}]
    }
    answered = post(server, "/v1/chat/completions", {**body, "tools": tools, "stream": True})
    assert answered.status == 200, answered.body
    (call,) = [
        delta["tool_calls"][0]
        for event in answered.events()[:-1]
        for delta in [event["choices"][0]["delta"]]
        if "tool_calls" in delta
    ]
    return {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}


def test_claude_and_codebuddys_bash_is_a_shell_tool(server: ModelServer) -> None:
    bash = function("Bash", {"command": {"type": "string"}, "description": {"type": "string"}}, ["command"])
    call = chat_call(server, "echo", [function("Read", {"file_path": {"type": "string"}}), bash])
    assert call["name"] == "Bash"
    ran = subprocess.run(
        ["bash", "-c", call["arguments"]["command"]], capture_output=True, text=True, check=False
    )
    assert (ran.stdout, ran.returncode) == (ECHO, 1)  # a failed tool: the output, then exit 1


def test_tool_outputs_go_inside_the_named_working_directory_when_asked(tmp_path: Path) -> None:
    scripts = write_scripts(tmp_path / "scripts", SCRIPTS)
    run = tmp_path / "run"
    run.mkdir()
    with ModelServer(scripts, tmp_path / "log.jsonl", tmp_path / "data", outputs_in_workdir=True) as server:
        bash = function("bash", {"command": {"type": "string"}})
        call = chat_call(server, "echo", [bash], f"<env>\n  Working directory: {run}\n</env>")
        command = call["arguments"]["command"]
        assert command == "cat .turngate-tool-outputs/echo/t1-r1.out; exit 1"  # relative: inside the cwd
        ran = subprocess.run(["bash", "-c", command], cwd=run, capture_output=True, text=True, check=False)
        assert ran.stdout == ECHO
        refused = post(
            server,
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "tg-case-echo"}], "tools": [bash]},
        )
        assert refused.status == 400
        assert "the request names none" in refused.json()["error"]["message"]


def test_a_file_change_is_codexs_freeform_apply_patch(server: ModelServer, tmp_path: Path) -> None:
    patch_tool = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}
    body = {
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "tg-case-patch"}]}
        ],
        "tools": [{"type": "function", "name": "exec_command", "parameters": {}}, patch_tool],
    }
    answered = post(server, "/v1/responses", body)
    (item,) = [event["item"] for event in answered.events() if event["type"] == "response.output_item.done"]
    assert (item["type"], item["name"]) == ("custom_tool_call", "apply_patch")
    assert item["input"] == (
        "*** Begin Patch\n*** Add File: drafts/g.json\n"
        '+{"greeting": "Hello", "__SKILL_DONE__": true}\n*** End Patch\n'
    )
    # An update replaces the old file's lines: the server reads them in the CLI's working directory.
    (tmp_path / "g.json").write_text("old 1\nold 2\n", encoding="utf-8")
    context = {
        "type": "input_text",
        "text": f"<environment_context>\n  <cwd>{tmp_path}</cwd>\n</environment_context>",
    }
    body["input"] = [
        {
            "type": "message",
            "role": "user",
            "content": [context, {"type": "input_text", "text": "tg-case-update"}],
        }
    ]
    (item,) = [event["item"] for event in post(server, "/v1/responses", body).events() if "item" in event]
    assert (
        item["input"] == "*** Begin Patch\n*** Update File: g.json\n@@\n-old 1\n-old 2\n+new\n*** End Patch\n"
    )


def test_a_file_change_is_a_write_tool_with_an_absolute_path_elsewhere(server: ModelServer) -> None:
    write = function("write", {"filePath": {"type": "string"}, "content": {"type": "string"}})
    call = chat_call(server, "patch", [function("bash", {}), write], "Working directory: /srv/run\n")
    assert call == {"name": "write", "arguments": {"filePath": "/srv/run/drafts/g.json", "content": PATCHED}}
    refused = post(
        server,
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "tg-case-patch"}], "tools": [function("bash", {})]},
    )
    assert refused.status == 400
    assert "none of apply_patch, write_file, write, Write" in refused.json()["error"]["message"]


def test_a_named_tool_is_called_by_its_name_with_the_scripts_input(server: ModelServer) -> None:
    asking = function("request_user_input", {"questions": {"type": "array"}})
    call = chat_call(server, "ask", [function("bash", {"command": {"type": "string"}}), asking])
    assert call == {"name": "request_user_input", "arguments": {"questions": [{"id": "style"}]}}
    # Not declared by this CLI: the usual shell call.
    assert chat_call(server, "ask", [function("bash", {"command": {"type": "string"}})])["name"] == "bash"


def test_codebuddy_gets_structured_output_then_a_closing_line_over_chat_completions(
    server: ModelServer,
) -> None:
    tools = [function("Bash", {"command": {"type": "string"}}), function("StructuredOutput", {})]
    call = chat_call(server, "final", tools)
    assert call == {"name": "StructuredOutput", "arguments": {"__SKILL_DONE__": True, "greeting": "Hello"}}
    messages = [
        {"role": "user", "content": "tg-case-final"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "StructuredOutput", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "Structured output captured successfully"},
    ]
    closing = post(server, "/v1/chat/completions", {"messages": messages, "tools": tools, "stream": True})
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in closing.events()[:-1]) == "Done."
    assert log(server)[-1]["answer"] == "after_structured_output"


@pytest.mark.parametrize(
    ("text", "folder"),
    [
        ("<environment_context>\n  <cwd>/w/codex</cwd>\n  <shell>bash</shell>", "/w/codex"),
        ("- **Workspace Directories:**\n  - /w/gemini\n- **Directory Structure:**", "/w/gemini"),
        ("<env>\n  Working directory: /w/opencode\n  Workspace root folder: /", "/w/opencode"),
        (" - Primary working directory: /w/claude\n - Is a git repository: false", "/w/claude"),
        ("My operating system is: linux\nI'm currently working in the directory: /w/qwen\nHere", "/w/qwen"),
        ("no folder named here", None),
    ],
)
def test_each_clis_way_of_naming_its_working_directory(text: str, folder: str | None) -> None:
    assert working_directory({"messages": [{"role": "system", "content": [{"text": text}]}]}) == folder


def test_a_named_tool_behind_codexs_tool_search_is_searched_for_then_called_in_its_namespace(
    tmp_path: Path,
) -> None:
    mcp = {
        "case": "mcp",
        "turns": [
            {"steps": [{"tool": {"name": "lookup_greeting", "input": {"style": "formal"}}}, {"say": "ok"}]}
        ],
    }
    scripts = write_scripts(tmp_path / "scripts", [mcp])
    with ModelServer(
        scripts, tmp_path / "log.jsonl", tmp_path / "data", named_tools=frozenset({"lookup_greeting"})
    ) as server:
        prompt = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "tg-case-mcp"}],
        }
        tools = [
            {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
            {"type": "tool_search", "execution": "client", "parameters": {"properties": {"query": {}}}},
        ]
        (search,) = [
            e["item"]
            for e in post(server, "/v1/responses", {"input": [prompt], "tools": tools}).events()
            if "item" in e
        ]
        assert (search["type"], search["execution"], search["arguments"]) == (
            "tool_search_call",
            "client",
            {"query": "lookup_greeting", "limit": 8},
        )
        loaded = {
            "type": "tool_search_output",
            "call_id": search["call_id"],
            "execution": "client",
            "tools": [
                {
                    "type": "namespace",
                    "name": "mcp__turngate",
                    "tools": [{"type": "function", "name": "lookup_greeting", "parameters": {}}],
                }
            ],
        }
        history = [prompt, search, loaded]
        (call,) = [
            e["item"]
            for e in post(server, "/v1/responses", {"input": history, "tools": tools}).events()
            if "item" in e
        ]
        assert (call["type"], call["name"], call["namespace"]) == (
            "function_call",
            "lookup_greeting",
            "mcp__turngate",
        )
        assert json.loads(call["arguments"]) == {"style": "formal"}
        result = {"type": "function_call_output", "call_id": call["call_id"], "output": "Good day"}
        (reply,) = [
            e["item"]
            for e in post(
                server, "/v1/responses", {"input": [*history, call, result], "tools": tools}
            ).events()
            if "item" in e
        ]
        assert reply["content"][0]["text"] == "ok"  # the search was no round of the script
        assert [line["round"] for line in log(server)] == [1, 1, 2]


def test_a_search_that_found_nothing_is_not_made_again_the_tool_is_a_shell_call(tmp_path: Path) -> None:
    mcp = {
        "case": "gone",
        "turns": [{"steps": [{"tool": {"name": "lookup_greeting", "output": "x"}}, {"say": "ok"}]}],
    }
    scripts = write_scripts(tmp_path / "scripts", [mcp])
    with ModelServer(
        scripts, tmp_path / "log.jsonl", tmp_path / "data", named_tools=frozenset({"lookup_greeting"})
    ) as server:
        prompt = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "tg-case-gone"}],
        }
        search = {"type": "tool_search_call", "call_id": "c", "execution": "client", "arguments": {}}
        found_nothing = {"type": "tool_search_output", "call_id": "c", "execution": "client", "tools": []}
        tools = [
            {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
            {"type": "tool_search", "execution": "client", "parameters": {}},
        ]
        body = {"input": [prompt, search, found_nothing], "tools": tools}
        (call,) = [e["item"] for e in post(server, "/v1/responses", body).events() if "item" in e]
        assert (call["type"], call["name"]) == ("function_call", "exec_command")


def test_qwens_memory_extraction_agent_gets_a_short_text_not_the_next_turn(server: ModelServer) -> None:
    messages = [
        {
            "role": "system",
            "content": "You are now acting as the managed memory extraction subagent for an AI.",
        },
        {"role": "user", "content": "tg-case-final"},
        {"role": "assistant", "content": '{"greeting": "Hello", "__SKILL_DONE__": true}'},
        {"role": "user", "content": "Managed memory has TWO directories."},
    ]
    tools = [function("save_memory", {"fact": {"type": "string"}})]
    answered = post(server, "/v1/chat/completions", {"messages": messages, "tools": tools, "stream": True})
    assert answered.status == 200
    assert (
        "".join(e["choices"][0]["delta"].get("content") or "" for e in answered.events()[:-1])
        == "Nothing to record."
    )
    assert (log(server)[-1]["answer"], log(server)[-1]["case"]) == ("side", None)
