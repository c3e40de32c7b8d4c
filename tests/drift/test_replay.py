"""`turngate replay`: what the readers, the detector and the gate saw in a capture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.drift.conftest import DONE, QUESTION, Play
from tests.turngate_cli import in_process as cli
from tests.turngate_cli import turngate
from turngate.tools.drift.gate_replay import as_json, replay
from turngate.tools.drift.sources import CORPUS_DIR


def test_replay_names_evidence_and_echoes_with_their_offsets(play: Play) -> None:
    steps = [
        {
            "tool": {
                "name": "bash",
                "input": {"command": "cat SKILL.md"},
                "output": 'finish with {"__SKILL_DONE__": true}',
            }
        },
        *DONE[1:],
    ]
    capture = play("codex", steps)
    seen = as_json(replay(capture))
    markers = seen["markers"]
    assert [(m["where"], m["evidence"]) for m in markers] == [("tool_result", False), ("assistant", True)]
    reply_line = capture.stdout.index(b'"agent_message"')
    assert markers[1]["offset"] == capture.stdout.rindex(b"\n", 0, reply_line) + 1
    assert seen["decision"]["state"] == "succeeded"
    assert seen["output"]["data"] == {"greeting": "Good day"}


def test_the_cli_prints_a_readable_replay_and_json(play: Play, tmp_path: Path) -> None:
    capture = play("opencode", QUESTION)
    (tmp_path / "out").write_bytes(capture.stdout)
    code, text, _ = cli("replay", str(tmp_path / "out"), "--engine", "opencode")
    assert code == 0
    assert "decision: waiting_user" in text
    assert "done marker:\n  none anywhere" in text
    code, raw, _ = cli("replay", str(tmp_path / "out"), "--engine", "opencode", "--json", "--mode", "auto")
    assert json.loads(raw)["decision"]["state"] == "failed"


def test_the_same_bytes_through_the_gemini_stderr_option(play: Play, tmp_path: Path) -> None:
    capture = play("gemini", DONE)
    (tmp_path / "noise").write_bytes(b"Loaded cached credentials.\n")
    (tmp_path / "doc").write_bytes(capture.stdout)
    code, raw, _ = cli(
        "replay", str(tmp_path / "noise"), "--engine", "gemini", "--stderr", str(tmp_path / "doc"), "--json"
    )
    assert code == 0
    assert json.loads(raw)["decision"]["state"] == "succeeded"


def test_a_raw_file_without_an_engine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "out").write_bytes(b"{}\n")
    code, _, err = cli("replay", str(tmp_path / "out"))
    assert code == 2
    assert err.count("\n") == 1
    assert "--engine" in err


def test_a_bad_capture_folder_names_the_file_field_and_value(tmp_path: Path) -> None:
    folder = tmp_path / "codex" / "bad"
    folder.mkdir(parents=True)
    (folder / "stdout").write_bytes(b"")
    (folder / "capture.yaml").write_text("engine: codex\nmode: batch\n")
    code, _, err = cli("replay", str(folder))
    assert code == 2
    assert "capture.yaml" in err
    assert "mode" in err
    assert "batch" in err
    (folder / "capture.yaml").write_text("engine: codex\nexit_code: zero\n")
    code, _, err = cli("replay", str(folder))
    assert code == 2
    assert "exit_code" in err
    assert "zero" in err


def test_a_fake_engine_call_log_replays_the_bytes_it_wrote(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess

    import yaml

    from turngate.engines.fake.install import install

    install(tmp_path / "bin")
    (tmp_path / "scripts").mkdir()
    turns = [{"steps": QUESTION}, {"steps": [{"say": "half a reply"}, {"crash": {"signal": "SIGKILL"}}]}]
    (tmp_path / "scripts" / "logged.yaml").write_text(yaml.safe_dump({"case": "logged", "turns": turns}))
    env = {
        **os.environ,
        "TURNGATE_SCRIPTS": str(tmp_path / "scripts"),
        "TURNGATE_STATE": str(tmp_path / "state"),
        "TURNGATE_CALL_LOG": str(tmp_path / "calls.jsonl"),
        "TURNGATE_CALL_LOG_OUTPUT": "1",
    }
    engine = str(tmp_path / "bin" / "codex")
    first = subprocess.run([engine, "exec", "--json", "hi tg-case-logged"], env=env, capture_output=True)
    thread = json.loads(first.stdout.splitlines()[0])["thread_id"]
    subprocess.run([engine, "exec", "resume", "--json", thread, "formal"], env=env, capture_output=True)
    log = tmp_path / "calls.jsonl"
    code, raw, _ = cli("replay", str(log), "--call", "1", "--json")
    assert code == 0
    seen = json.loads(raw)
    assert seen["capture"]["stdout_bytes"] == len(first.stdout)
    assert seen["decision"]["state"] == "waiting_user"
    code, raw, _ = cli("replay", str(log), "--json")  # the last call: killed half way
    assert json.loads(raw)["capture"]["signal"] == 9
    assert json.loads(raw)["decision"]["state"] == "failed"
    monkeypatch.delenv("TURNGATE_CALL_LOG_OUTPUT", raising=False)
    (tmp_path / "plain.jsonl").write_text(
        json.dumps({"engine": "codex", "argv": ["exec"], "case": "x"}) + "\n"
    )
    code, _, err = cli("replay", str(tmp_path / "plain.jsonl"))
    assert code == 2
    assert "TURNGATE_CALL_LOG_OUTPUT" in err


# Outside the checkout: the README's example names the shipped corpus, which is not a path there.
SHIPPED = "codex/marker-echo-in-tool-output"


def test_a_shipped_capture_is_named_from_any_folder(tmp_path: Path) -> None:
    done = turngate("replay", f"corpus:{SHIPPED}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "decision: waiting_user" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("written", [f"corpus/{SHIPPED}", SHIPPED])
def test_the_readme_form_falls_back_to_the_shipped_capture_and_says_so(tmp_path: Path, written: str) -> None:
    done = turngate("replay", written, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "decision: waiting_user" in done.stdout
    assert done.stderr == f"replay: no {written} here: the shipped capture corpus:{SHIPPED}\n"


def test_a_path_here_wins_over_a_shipped_name(tmp_path: Path, play: Play) -> None:
    (tmp_path / "codex").mkdir()
    (tmp_path / SHIPPED).write_bytes(play("codex", QUESTION).stdout)
    code, text, err = cli("replay", str(tmp_path / SHIPPED), "--engine", "codex")
    assert code == 0
    assert "decision: waiting_user" in text
    assert err == ""


def test_a_path_that_does_not_exist_is_one_line_naming_it_not_an_engine_question(tmp_path: Path) -> None:
    done = turngate("replay", "out.ndjson", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "turngate: replay out.ndjson: no such file or folder\n"
    assert done.stdout == ""


@pytest.mark.parametrize(
    "written",
    [
        "corpus:codex/marker-echo-in-tool-outpt",
        "corpus/codex/marker-echo-in-tool-outpt",
        "marker-echo-in-tool-output",
    ],
)
def test_a_near_name_gets_a_did_you_mean(tmp_path: Path, written: str) -> None:
    done = turngate("replay", written, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert f"replay {written}: no " in done.stderr
    assert f"did you mean corpus:{SHIPPED}" in done.stderr
    assert "--engine" not in done.stderr


def test_a_near_file_here_gets_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "out.ndjson").write_bytes(b"{}\n")
    typo, meant = tmp_path / "out.ndjosn", tmp_path / "out.ndjson"
    code, _, err = cli("replay", str(typo))
    assert code == 2
    assert err == f"turngate: replay {typo}: no such file or folder; did you mean {meant}?\n"


def test_an_unknown_shipped_name_says_where_the_shipped_captures_are(tmp_path: Path) -> None:
    code, _, err = cli("replay", "corpus:nothing/like-it")
    assert code == 2
    assert err == (
        "turngate: replay corpus:nothing/like-it: no shipped capture of that name"
        f" (the shipped captures: the ENGINE/NAME folders of {CORPUS_DIR})\n"
    )
