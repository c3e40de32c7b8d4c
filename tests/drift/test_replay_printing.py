"""`turngate replay` prints any capture safely, hostile bytes included.

The bytes are a misbehaving engine's: a lone surrogate from a JSON escape in a
tool's input, escape sequences, C1 controls and bidirectional overrides in a
reply. The command runs as a real process with a strict UTF-8 stdout, as a
terminal would have it; it must exit as for any capture and print nothing raw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turngate.tools.drift.capture import Capture
from turngate.tools.drift.gate_replay import printable, printable_json, render, replay

HOSTILE_REPLY = "Hi \x1b[31mred\x1b[0m \x9b2J \u202eevil\u202c bell\x07 nul\x00 del\x7f"
LINES = [
    {"type": "thread.started", "thread_id": "t-1"},
    {
        "type": "item.started",
        "item": {"id": "c1", "type": "command_execution", "command": "echo \ud800 \x1b]0;title\x07"},
    },
    {
        "type": "item.started",
        "item": {"id": "c2", "type": "mcp_tool_call", "tool": "t", "arguments": {"\udc00": ["\ud800"]}},
    },
    {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": HOSTILE_REPLY}},
    {"type": "turn.completed", "usage": {}},
]
STDOUT = "".join(json.dumps(line) + "\n" for line in LINES).encode()  # ensure_ascii: "\\ud800" escapes


def _unsafe(text: str) -> list[str]:
    return [
        char
        for char in text
        if (ord(char) < 0x20 and char != "\n")
        or 0x7F <= ord(char) < 0xA0
        or 0xD800 <= ord(char) < 0xE000
        or char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    ]


@pytest.mark.parametrize("as_json", [False, True])
def test_replay_prints_hostile_bytes_escaped_with_a_strict_utf8_stdout(tmp_path: Path, as_json: bool) -> None:
    stdout = tmp_path / "stdout"
    stdout.write_bytes(STDOUT + b"raw \xff\xfe bytes \x1b[2J\n")
    turngate = Path(sys.executable).parent / "turngate"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    command = [str(turngate), "replay", str(stdout), "--engine", "codex", *(["--json"] if as_json else [])]
    done = subprocess.run(command, capture_output=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    text = done.stdout.decode("utf-8")  # strict: every byte printed is valid UTF-8
    assert _unsafe(text) == []
    if as_json:
        document = json.loads(text)
        assert document["assistant_messages"] == [HOSTILE_REPLY]  # escaped in print, intact as data
    else:
        assert "\\x1b[31mred" in text
        assert "\\u202eevil" in text


def test_the_printers_escape_every_unsafe_character() -> None:
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000) + "\ud800x\udfff"
    assert _unsafe(printable(every)) == []
    assert "\n" not in printable(every)
    shown = printable_json({"text": every})
    assert _unsafe(shown.replace("\n", "")) == []
    assert json.loads(shown)["text"] == every


def test_render_of_a_capture_is_encodable() -> None:
    rendered = render(replay(Capture("codex", STDOUT)))
    rendered.encode("utf-8")
    assert _unsafe(rendered) == []
