"""A bad script stops the engine with code 97 and one stderr line naming file, field and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args
from turngate.engines.fake.problems import EXIT_SCRIPT_ERROR


def write(bench: EngineBench, case_id: str, text: str) -> Path:
    path = bench.scripts / f"{case_id}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BAD_SCRIPTS = {
    "unknown-step": (
        "case: unknown-step\nturns:\n  - steps:\n      - say: hi\n      - shout: loud\n",
        "SCRIPT_INVALID",
        "turns[0].steps[1].shout",
        "'loud'",
    ),
    "wrong-type": (
        "case: wrong-type\nturns:\n  - steps:\n      - sleep: soon\n",
        "SCRIPT_INVALID",
        "turns[0].steps[0].sleep",
        "'soon'",
    ),
    "bad-end": (
        "case: bad-end\nturns:\n  - steps: []\n    end: maybe\n",
        "SCRIPT_INVALID",
        "turns[0].end",
        "'maybe'",
    ),
    "two-keys": (
        "case: two-keys\nturns:\n  - steps:\n      - {say: a, think: b}\n",
        "SCRIPT_INVALID",
        "turns[0].steps[0]",
        "{'say': 'a', 'think': 'b'}",
    ),
    "wrong-id": (
        "case: other-name\nturns:\n  - steps: []\n",
        "SCRIPT_INVALID",
        "case",
        "'other-name'",
    ),
    "not-yaml": (
        'case: not-yaml\nturns:\n  - steps: [\n   - x: "\n',
        "SCRIPT_INVALID",
        "line 4, column 4",
        "",
    ),
}


# Every engine meets a bad script and every bad script an engine (not all 48 pairs): the check is the
# engines' one shared compiler, and each of these starts imports PyYAML and jsonschema to run it.
PAIRS = [(engine, sorted(BAD_SCRIPTS)[index % len(BAD_SCRIPTS)]) for index, engine in enumerate(ENGINES)]


def test_the_pairs_cover_every_engine_and_every_bad_script() -> None:
    assert {engine for engine, _ in PAIRS} == set(ENGINES)
    assert {case_id for _, case_id in PAIRS} == set(BAD_SCRIPTS)


@pytest.mark.parametrize(("engine", "case_id"), PAIRS)
def test_bad_script_names_file_field_and_value(bench: EngineBench, engine: str, case_id: str) -> None:
    text, code, field, value = BAD_SCRIPTS[case_id]
    path = write(bench, case_id, text)
    played = bench.run(engine, first_turn_args(engine, f"tg-case-{case_id}"))
    assert played.returncode == EXIT_SCRIPT_ERROR
    assert played.stdout == b""
    (line,) = played.err.splitlines()
    assert line.startswith(f"turngate-fake-{engine}: {code}: {path}: {field}: {value}")
    (call,) = bench.calls()
    assert call["outcome"] == "script_error"
    assert call["error"]["field"] == field
    assert call["exit_code"] == EXIT_SCRIPT_ERROR


@pytest.mark.parametrize("engine", ENGINES)
def test_missing_case_file(bench: EngineBench, engine: str) -> None:
    played = bench.run(engine, first_turn_args(engine, "tg-case-nowhere"))
    assert played.returncode == EXIT_SCRIPT_ERROR
    (line,) = played.err.splitlines()
    assert line.startswith(
        f"turngate-fake-{engine}: CASE_NOT_FOUND: {bench.scripts / 'nowhere.yaml'}: case: 'nowhere'"
    )
    assert [call["outcome"] for call in bench.calls()] == ["script_error"]


def test_no_case_token_anywhere(bench: EngineBench) -> None:
    played = bench.run("codex", first_turn_args("codex", "Run the skill please"))
    assert played.returncode == EXIT_SCRIPT_ERROR
    assert "CASE_UNKNOWN" in played.err
    assert "'Run the skill please'" in played.err


def test_script_fixed_after_an_error_is_recompiled(bench: EngineBench) -> None:
    path = write(bench, "fixme", "case: fixme\nturns:\n  - steps:\n      - sleep: soon\n")
    assert bench.run("codex", first_turn_args("codex", "tg-case-fixme")).returncode == EXIT_SCRIPT_ERROR
    path.write_text("case: fixme\nturns:\n  - steps:\n      - say: fixed now\n", encoding="utf-8")
    played = bench.run("codex", first_turn_args("codex", "tg-case-fixme"))
    assert played.returncode == 0
    assert "fixed now" in played.out
