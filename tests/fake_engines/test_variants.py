"""Format variants: the drifted shapes real engines have been seen to produce."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EngineBench, first_turn_args, resume_args

REPLY = '{"value": 7, "__SKILL_DONE__": true}'


def test_codex_legacy_msg_envelope(bench: EngineBench, snapshot: object) -> None:
    bench.case(
        "legacy",
        variants={"codex": {"envelope": "legacy_msg"}},
        turns=[
            {
                "steps": [
                    {"think": "Reading the skill."},
                    {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\n"}},
                    {"say": REPLY},
                ]
            }
        ],
    )
    played = bench.run("codex", first_turn_args("codex", "tg-case-legacy"))
    events = played.json_lines()
    assert all(set(event) == {"id", "msg"} for event in events)
    assert [event["msg"]["type"] for event in events] == [
        "session_configured",
        "task_started",
        "agent_reasoning",
        "exec_command_begin",
        "exec_command_end",
        "agent_message",
        "task_complete",
    ]
    assert events[-1]["msg"]["last_agent_message"] == REPLY
    assert played.out.replace(str(bench.workdir), "<cwd>") == snapshot


@pytest.mark.parametrize("pretty", [True, False])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_gemini_json_document_variants(
    bench: EngineBench, pretty: bool, stream: str, snapshot: object
) -> None:
    bench.case(
        "doc",
        variants={
            "gemini": {
                "document_stream": stream,
                "pretty": pretty,
                "noise": ["Loaded cached credentials."],
                "glue_noise": True,
            }
        },
        turns=[{"steps": [{"say": {"chunks": ['{"value": 7, "__SKILL', '_DONE__": true}']}}]}],
    )
    played = bench.run("gemini", first_turn_args("gemini", "tg-case-doc", gemini_format="json"))
    assert played.returncode == 0
    # the noise line is glued to the document: no newline between them
    assert played.out.startswith("Loaded cached credentials.{") == (stream == "stdout")
    carrier = played.out if stream == "stdout" else played.err
    document = json.loads(carrier.removeprefix("Loaded cached credentials."))
    assert document["response"] == REPLY
    assert ('\n  "session_id"' in carrier) == pretty
    assert (played.out, played.err) == snapshot


def test_gemini_output_format_from_settings_json(bench: EngineBench) -> None:
    bench.case("settings", turns=[{"steps": [{"say": "hi"}]}])
    (bench.workdir / ".gemini").mkdir()
    (bench.workdir / ".gemini" / "settings.json").write_text('{"output": {"format": "json"}}')
    played = bench.run("gemini", ["--yolo", "tg-case-settings"])
    assert json.loads(played.out)["response"] == "hi"


def test_gemini_marker_split_across_deltas(bench: EngineBench) -> None:
    bench.case(
        "deltas", turns=[{"steps": [{"say": {"chunks": ['{"value": 7, "__SKILL', '_DONE__": true}']}}]}]
    )
    played = bench.run("gemini", first_turn_args("gemini", "tg-case-deltas"))
    deltas = [
        e["content"] for e in played.json_lines() if e["type"] == "message" and e["role"] == "assistant"
    ]
    assert deltas == ['{"value": 7, "__SKILL', '_DONE__": true}']
    assert b"__SKILL_DONE__" not in played.stdout


def test_gemini_stream_echoes_the_user_prompt(bench: EngineBench) -> None:
    bench.case("echo", turns=[{"steps": [{"say": "Which style?"}]}])
    prompt = 'tg-case-echo. When done, output {"__SKILL_DONE__": true}.'
    events = bench.run("gemini", first_turn_args("gemini", prompt)).json_lines()
    assert events[1] == {
        "type": "message",
        "timestamp": events[1]["timestamp"],
        "role": "user",
        "content": prompt,
    }


@pytest.mark.parametrize("block_stream", ["stdout", "stderr"])
def test_iflow_block_stream_and_resuming_banner(bench: EngineBench, block_stream: str) -> None:
    bench.case(
        "iflow-block",
        variants={"iflow": {"block_stream": block_stream, "resuming_banner": True}},
        turns=[{"steps": [{"say": "First?"}]}, {"steps": [{"say": REPLY}]}],
    )
    first = bench.run("iflow", first_turn_args("iflow", "tg-case-iflow-block"))
    carrier = first.out if block_stream == "stdout" else first.err
    assert carrier.endswith("</Execution Info>\n")
    session = json.loads(carrier.split("<Execution Info>\n")[1].split("\n</Execution Info>")[0])["session-id"]
    second = bench.run("iflow", resume_args("iflow", session, "go on"))
    assert second.out.startswith(f"Resuming session {session}...\n{REPLY}\n")


def test_opencode_text_at_top_level(bench: EngineBench) -> None:
    bench.case("top", variants={"opencode": {"text_at": "top_level"}}, turns=[{"steps": [{"say": REPLY}]}])
    events = bench.run("opencode", first_turn_args("opencode", "tg-case-top")).json_lines()
    (text,) = [event for event in events if event["type"] == "text"]
    assert text["text"] == REPLY
    assert "part" not in text


@pytest.mark.parametrize("engine", ["codex", "gemini", "opencode"])
def test_truncate_cuts_the_last_line_mid_way(bench: EngineBench, engine: str) -> None:
    bench.case("cut", turns=[{"steps": [{"say": REPLY}, {"truncate": {"at": 0.5, "exit_code": 137}}]}])
    played = bench.run(engine, first_turn_args(engine, "tg-case-cut"))
    assert played.returncode == 137
    *whole, last = played.stdout.split(b"\n")
    for line in whole:
        json.loads(line)
    assert last
    assert not last.endswith(b"}")
    with pytest.raises(json.JSONDecodeError):
        json.loads(last)
    assert [call["outcome"] for call in bench.calls()] == ["truncated"]


@pytest.mark.parametrize("engine", ["codex", "gemini", "opencode"])
def test_split_delivers_the_same_bytes_in_several_writes(bench: EngineBench, engine: str) -> None:
    outputs = []
    for name, steps in (("whole", [{"say": REPLY}]), ("split", [{"split": {"parts": 5}}, {"say": REPLY}])):
        scripts = bench.root / name
        scripts.mkdir()
        (scripts / "same.yaml").write_text(f"case: same\nturns:\n  - steps: {json.dumps(steps)}\n")
        played = bench.run(
            engine,
            first_turn_args(engine, "tg-case-same"),
            TURNGATE_SCRIPTS=str(scripts),
            TURNGATE_STATE=str(scripts / ".state"),
        )
        assert played.returncode == 0, played.err
        outputs.append(played.stdout)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("engine", ["codex", "gemini", "iflow", "opencode"])
def test_failed_turn_ends_with_the_engine_failure_shape(
    bench: EngineBench, engine: str, snapshot: object
) -> None:
    bench.case(
        "fails",
        turns=[
            {
                "steps": [
                    {"error": {"message": "Reconnecting... 1/5", "transient": True}},
                    {"error": {"message": "SERVER_OAUTH2_REQUIRED: login needed", "code": 401}},
                ],
                "end": "failed",
            }
        ],
    )
    played = bench.run(engine, first_turn_args(engine, "tg-case-fails"))
    assert played.returncode == 1
    assert "SERVER_OAUTH2_REQUIRED" in played.out + played.err
    assert (played.out, played.err) == snapshot
