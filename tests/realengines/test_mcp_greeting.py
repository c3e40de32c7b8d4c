"""The exploration's MCP server as a CLI starts it: a process speaking newline-delimited JSON-RPC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import turngate.tools.realengines.mcp_greeting as module


def test_it_answers_the_mcp_handshake_lists_its_tool_and_calls_it() -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "lookup_greeting", "arguments": {"style": "formal"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "lookup_greeting", "arguments": {"style": "loud"}},
        },
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "other"}},
        {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
    ]
    stdin = "\n".join(json.dumps(message) for message in messages) + "\n{not json\n"
    # Run as a file, as a CLI's MCP config starts it: standard library only, no turngate on its path.
    done = subprocess.run(
        [sys.executable, "-S", str(Path(module.__file__))],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer.get("id") for answer in answers] == [1, 2, 3, 4, 5, 6, None]  # the notification: none
    assert answers[0]["result"]["protocolVersion"] == "2025-03-26"
    assert answers[0]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == ["lookup_greeting"]
    assert answers[2]["result"] == {"content": [{"type": "text", "text": "Good day"}], "isError": False}
    assert answers[3]["result"]["isError"] is True
    assert answers[4]["error"]["code"] == -32602
    assert answers[5]["error"]["code"] == -32601
    assert answers[6]["error"]["code"] == -32700
