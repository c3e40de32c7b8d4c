"""`turngate engines real serve` as a process: its options reach the model server it starts."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.modelserver.serving import write_scripts

ECHO = 'Finish with {"__SKILL_DONE__": true}\n'


def test_serve_writes_tool_outputs_in_the_workdir_and_calls_named_tools_when_told(tmp_path: Path) -> None:
    scripts = write_scripts(
        tmp_path / "scripts",
        [
            {
                "case": "echo",
                "turns": [{"steps": [{"tool": {"name": "bash", "output": ECHO}}, {"say": "ok"}]}],
            },
            {
                "case": "ask",
                "turns": [{"steps": [{"tool": {"name": "ask", "input": {"q": 1}}}, {"say": "ok"}]}],
            },
        ],
    )
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "turngate", "engines", "real", "serve", "--scripts", str(scripts)),
            *("--outputs-in-workdir", "--named-tool", "ask", "--log", str(tmp_path / "log.jsonl")),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        host, port = url.removeprefix("http://").split(":")
        tools = [
            {"type": "function", "function": {"name": "bash", "parameters": {"properties": {"command": {}}}}},
            {"type": "function", "function": {"name": "ask", "parameters": {}}},
        ]

        def call(case: str) -> dict[str, object]:
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
            messages = [{"role": "user", "content": f"Working directory: {tmp_path}\ntg-case-{case}"}]
            connection.request(
                "POST",
                "/v1/chat/completions",
                json.dumps({"messages": messages, "tools": tools, "stream": False}),
            )
            answer = json.loads(connection.getresponse().read())
            connection.close()
            function = answer["choices"][0]["message"]["tool_calls"][0]["function"]
            return {"name": function["name"], "arguments": json.loads(function["arguments"])}

        assert call("echo") == {
            "name": "bash",
            "arguments": {"command": "cat .turngate-tool-outputs/echo/t1-r1.out"},
        }
        assert (tmp_path / ".turngate-tool-outputs" / "echo" / "t1-r1.out").read_text(
            encoding="utf-8"
        ) == ECHO
        assert call("ask") == {"name": "ask", "arguments": {"q": 1}}
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0
