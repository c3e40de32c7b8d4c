"""The second orchestrator on the engines Skill-Runner v0.7.9 added: claude, qwen, kilo, codebuddy.

Command lines, the stdin message of a resident process, the two new readers on small hand-made
streams, and every real capture of the four in corpus/ replayed through the reader and the gate
(the bytes the real CLIs printed, no subprocess).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from turngate.implementations.second_orchestrator import engine_commands, engine_process, engine_streams
from turngate.implementations.second_orchestrator.engine_process import TurnBytes
from turngate.implementations.second_orchestrator.turn_decision import Evidence, decide
from turngate.implementations.second_orchestrator.turn_evidence import evaluate, turn_over

ROOT = Path(__file__).resolve().parents[2]
NEW_ENGINES = ("claude", "qwen", "kilo", "codebuddy")
BIN = Path("bin")
RUN = Path("run")
GREETING = {
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}


def argv(engine: str, session: str | None = None, resident: bool = False) -> list[str]:
    words = engine_commands.build(BIN, engine, "interactive", "PROMPT", session, "json", RUN, resident)
    assert words[0] == str(BIN / engine)
    return words[1:]


def test_first_and_resume_command_lines() -> None:
    assert argv("claude") == ["-p", "--output-format", "stream-json", "--verbose", "PROMPT"]
    assert argv("claude", "S") == [
        "--resume",
        "S",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "PROMPT",
    ]
    qwen = ["--output-format", "stream-json", "--approval-mode", "yolo"]
    assert argv("qwen") == [*qwen, "-p", "PROMPT"]
    assert argv("qwen", "S") == [*qwen, "--resume", "S", "-p", "PROMPT"]
    kilo = ["run", "--dir", "run", "--format", "json", "--auto", "--thinking"]
    assert argv("kilo") == [*kilo, "PROMPT"]
    assert argv("kilo", "S") == [*kilo, "--session", "S", "PROMPT"]
    codebuddy = ["-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"]
    assert argv("codebuddy") == [*codebuddy, "PROMPT"]
    assert argv("codebuddy", "S") == [*codebuddy, "-r", "S", "PROMPT"]


def test_mode_does_not_change_the_command_line() -> None:
    for engine in NEW_ENGINES:
        for session in (None, "S"):
            auto = engine_commands.build(BIN, engine, "auto", "P", session, "json", RUN)
            interactive = engine_commands.build(BIN, engine, "interactive", "P", session, "json", RUN)
            assert auto == interactive


def test_resident_claude_family_reads_its_messages_from_stdin() -> None:
    assert argv("claude", resident=True) == [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    assert "PROMPT" not in argv("qwen", resident=True)
    assert "--input-format" in argv("codebuddy", resident=True)
    assert argv("kilo", resident=True) == argv("kilo")  # kilo run has no stdin protocol
    line = engine_commands.stdin_line("claude", 'Say "hi"\nthen stop')
    assert "\n" not in line
    assert json.loads(line) == {"type": "user", "message": {"role": "user", "content": 'Say "hi"\nthen stop'}}
    assert engine_commands.stdin_line("kilo", "Formal") == "Formal"


def test_claude_gets_its_settings_file(tmp_path: Path) -> None:
    engine_commands.prepare("claude", tmp_path)
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["permissions"]["defaultMode"] == "bypassPermissions"
    engine_commands.prepare("qwen", tmp_path / "other")
    assert not (tmp_path / "other").exists()


def ndjson(*rows: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def assistant(text: str, block: str = "text") -> dict[str, Any]:
    key = "thinking" if block == "thinking" else "text"
    return {"type": "assistant", "message": {"content": [{"type": block, key: text}]}, "session_id": "S"}


INIT = {"type": "system", "subtype": "init", "session_id": "S"}


def test_sdk_result_echo_is_counted_once_and_a_reply_only_in_result_is_kept() -> None:
    final = '{"greeting": "hi", "__SKILL_DONE__": true}'
    # claude prints `type` late in its result line: found by name
    echo = {"subtype": "success", "is_error": False, "result": final, "type": "result"}
    transcript = engine_streams.read(
        "claude", "json", ndjson(INIT, assistant("Let me see."), assistant(final), echo), b""
    )
    assert transcript.replies == ("Let me see.", final)
    assert transcript.ended and not transcript.failed and transcript.session_id == "S"
    only = ndjson(INIT, assistant("thinking it over", "thinking"), echo)
    assert engine_streams.read("codebuddy", "json", only, b"").replies == (final,)


def test_sdk_structured_output_is_the_last_reply() -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "result": "Done.",
        "structured_output": {"greeting": "hi"},
    }
    transcript = engine_streams.read("codebuddy", "json", ndjson(INIT, result), b"")
    assert transcript.replies[-1] == '{"greeting": "hi"}'


@pytest.mark.parametrize(
    "result",
    [
        {"type": "result", "subtype": "success", "is_error": True, "result": "API Error: 400 quota"},
        {"type": "result", "subtype": "error_during_execution", "is_error": True, "errors": ["boom"]},
        {"type": "error", "error": "No conversation found with session ID: X"},
    ],
)
def test_sdk_failures(result: dict[str, Any]) -> None:
    transcript = engine_streams.read(
        "claude", "json", ndjson(INIT, assistant("API Error: 400 quota"), result), b""
    )
    assert transcript.failed and not transcript.ended
    assert transcript.error


def kilo_row(kind: str, **part: Any) -> dict[str, Any]:
    return {"type": kind, "sessionID": "ses_1", "part": {"type": kind.replace("_", "-"), **part}}


def test_kilo_steps() -> None:
    stream = ndjson(
        kilo_row("step_start"),
        kilo_row("text", text="Let me read the skill first."),
        kilo_row("step_finish", reason="tool-calls"),
    )
    assert not engine_streams.read("kilo", "json", stream, b"").ended  # the model still has to answer
    stream += ndjson(
        kilo_row("step_start"),
        kilo_row("text", text='{"greeting": "hi"}'),
        kilo_row("step_finish", reason="other"),
    )
    transcript = engine_streams.read("kilo", "json", stream, b"")
    assert transcript.ended and transcript.session_id == "ses_1"
    assert transcript.replies[-1] == '{"greeting": "hi"}'
    failed = engine_streams.read(
        "kilo", "json", ndjson({"type": "error", "error": "run ended without an assistant message"}), b""
    )
    assert failed.failed and failed.error == "run ended without an assistant message"


HOSTILE = [
    b"",
    b"\xff\xfe not utf-8\n{",
    b'{"type":"assistant","message":"text"}\n{"type":"assistant","message":{"content":[1,null,{"type":"text","text":5}]}}\n',
    b'{"type":"result","subtype":["x"],"errors":[{"a":1}],"error":"s","result":7,"structured_output":[1]}\n',
    b'{"type":"step_finish","part":[]}\n{"type":"text","part":{"text":null}}\n{"type":"error","error":{"data":5}}\n',
    b"[1,2]\n" + b"{" * 5000 + b"\n",
    b'{"a":' + b"[" * 5_000 + b"\n",  # nesting deeper than the parser's recursion limit
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"' + b"[" * 5_000 + b'"}]}}\n',
    b'{"type":"text","part":{"text":"<ASK_USER_YAML>\\n'
    + b"[" * 5_000
    + b'\\n</ASK_USER_YAML> {\\"a\\": '
    + b"[" * 5_000
    + b'"}}\n',
]


@pytest.mark.parametrize("engine", NEW_ENGINES)
def test_hostile_streams_never_raise(engine: str) -> None:
    for data in HOSTILE:
        raw = TurnBytes(data, data, 0, False, True)
        evaluate(engine, "json", raw, GREETING, "interactive")


def test_an_engine_lingering_after_its_end_of_turn_is_stopped_and_its_turn_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_process, "LINGER_LIMIT", 0.1)
    end = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "hi"})
    script = f"echo '{end}'; exec sleep 600"
    proc = engine_process.EngineProcess(
        ["sh", "-c", script], tmp_path, {"PATH": "/usr/bin:/bin"}, resident=False
    )
    raw = proc.wait_turn(120.0, turn_over("claude", "json"))  # the watchdog is far: the linger limit ends it
    assert not raw.timed_out and raw.exit_code is None
    assert not proc.alive()
    evidence = evaluate("claude", "json", raw, None, "interactive")
    assert evidence.process_error is None and evidence.transcript.replies == ("hi",)


def real_captures() -> list[Path]:
    return sorted(path for engine in NEW_ENGINES for path in (ROOT / "corpus" / engine).glob("real-*"))


@pytest.mark.parametrize("capture", real_captures(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_real_captures_decide_as_expected(capture: Path) -> None:
    meta = yaml.safe_load((capture / "capture.yaml").read_text(encoding="utf-8"))
    stdout = (capture / "stdout").read_bytes() if (capture / "stdout").exists() else b""
    stderr = (capture / "stderr").read_bytes() if (capture / "stderr").exists() else b""
    killed = "exit_code" not in meta  # killed by the recorder: a watchdog
    raw = TurnBytes(stdout, stderr, meta.get("exit_code"), killed, True)
    schema = GREETING if meta.get("output_schema") == "greeting" else None
    evidence = evaluate(meta["engine"], "json", raw, schema, meta["mode"])
    decision = decide(
        Evidence(
            meta["mode"],
            evidence.process_error,
            evidence.marker,
            evidence.output,
            meta.get("attempt_number", 1),
            meta.get("max_attempt"),
        )
    )
    assert decision.state == meta["expect"]["state"], (decision, evidence.process_error)
