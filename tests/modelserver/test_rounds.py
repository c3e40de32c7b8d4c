"""Script turns as model rounds, which scripts a real CLI can play, and where a conversation stands."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from turngate.engines.fake.compiler import compile_script
from turngate.engines.modelserver.conversation import Position, case_of, position
from turngate.engines.modelserver.rounds import playable, retry_limit, rounds_of


def compiled(tmp_path: Path, document: dict[str, object]) -> dict[str, object]:
    path = tmp_path / f"{document['case']}.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return compile_script(path)


def test_a_turn_is_cut_after_each_tool_step(tmp_path: Path) -> None:
    script = compiled(
        tmp_path,
        {
            "case": "c",
            "turns": [
                {
                    "steps": [
                        {"think": "a"},
                        {"say": "first"},
                        {
                            "tool": {
                                "name": "bash",
                                "input": {"command": "ls"},
                                "output": "x",
                                "status": "error",
                            }
                        },
                        {"tool": {"name": "read_file", "input": {}, "output": "y"}},
                        {"say": "done"},
                        {"ask_user": {"form": "yaml_flow", "prompt": "Style?"}},
                    ]
                }
            ],
        },
    )
    rounds = rounds_of(script["turns"][0])  # type: ignore[index]
    assert [(r.thinking, len(r.text), r.tool.name if r.tool else None) for r in rounds] == [
        (("a",), 1, "bash"),
        ((), 0, "read_file"),
        ((), 2, None),
    ]
    assert rounds[0].tool is not None
    assert rounds[0].tool.exit_code == 1
    assert rounds[2].text[1][0].startswith("ask_user: {")  # ask_user is the hint text a model writes


def test_a_failed_turn_ends_in_an_error_round(tmp_path: Path) -> None:
    script = compiled(tmp_path, {"case": "f", "turns": [{"steps": [{"say": "x"}], "end": "failed"}]})
    (only,) = rounds_of(script["turns"][0])  # type: ignore[index]
    assert only.error == "turn failed"


@pytest.mark.parametrize(
    ("turn", "why"),
    [
        ({"steps": [{"say": "x"}, {"crash": {"exit_code": 3}}]}, "step 'crash'"),
        ({"steps": [{"raw": "x"}], "start": "none", "end": "none"}, "start/end none"),
        ({"steps": [{"say": "x"}, {"stderr": "noise"}]}, "step 'stderr'"),
        ({"steps": [{"error": {"message": "m", "transient": True}}], "end": "failed"}, "transient error"),
        ({"steps": [{"say": "x"}], "exit_code": 3}, "exit code 3"),
    ],
)
def test_process_level_steps_are_not_playable_by_a_real_engine(
    tmp_path: Path, turn: dict[str, object], why: str
) -> None:
    reason = playable(compiled(tmp_path, {"case": "p", "turns": [turn]}))
    assert reason is not None
    assert why in reason


def test_a_format_variant_is_not_playable_but_a_default_one_is(tmp_path: Path) -> None:
    turns = [{"steps": [{"say": "x"}]}]
    assert (
        playable(
            compiled(tmp_path, {"case": "v", "turns": turns, "variants": {"codex": {"envelope": "items"}}})
        )
        is None
    )
    reason = playable(
        compiled(tmp_path, {"case": "w", "turns": turns, "variants": {"codex": {"envelope": "legacy_msg"}}})
    )
    assert reason is not None
    assert "legacy_msg" in reason


def test_a_format_variant_is_named_by_what_it_changes(tmp_path: Path) -> None:
    # kilo's variants are kilo's own bytes in cases the server does not stage (a dropped connection):
    # the reason names the one setting the script chose, not every default beside it.
    script = {
        "case": "k",
        "turns": [{"steps": [{"say": "x"}]}],
        "variants": {"kilo": {"text_after_error": True}},
    }
    assert playable(compiled(tmp_path, script)) == (
        "format variant for kilo (text_after_error: True): a real CLI's output format is its own,"
        " not the model's to choose"
    )


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([], Position(0, 0)),
        (["user"], Position(0, 0)),
        (["user", "user"], Position(0, 0)),  # injected context messages before any model work
        (["user", "answer_with_call", "result"], Position(0, 1)),
        (["user", "answer", "answer_with_call", "result", "answer_with_call", "result"], Position(0, 2)),
        (["user", "answer_with_call", "result", "answer", "user"], Position(1, 0)),
        (["user", "answer", "user", "answer", "user", "answer_with_call", "result"], Position(2, 1)),
        # a turn whose final answer was empty left only its tool round: the user message still counts
        (["user", "answer_with_call", "result", "user"], Position(1, 0)),
        (["user", "answer", "user", "user"], Position(1, 0)),  # context re-sent with the reply
    ],
)
def test_position_counts_finished_turns_and_tool_rounds(entries: list[str], expected: Position) -> None:
    assert position(entries) == expected  # type: ignore[arg-type]


def test_the_case_is_the_first_token() -> None:
    assert case_of('{"input": "tg-case-a_b-1 then tg-case-other"}') == "a_b-1"
    assert case_of("no token") is None


def test_a_model_error_is_a_fault_of_its_round_carrying_what_was_streamed_before_it(tmp_path: Path) -> None:
    script = compiled(
        tmp_path,
        {
            "case": "m",
            "turns": [
                {
                    "steps": [
                        {"say": "first"},
                        {"model_error": {"cut": True, "retries": 1, "recovers": True}},
                        {"say": "second"},
                        {"file_change": {"path": "a.txt", "content": "x"}},
                        {"think": "t"},
                        {"model_error": {"status": 429, "retries": 3}},
                        {"say": "never asked for: the fault ends the turn"},
                    ]
                }
            ],
        },
    )
    first, second = rounds_of(script["turns"][0])  # type: ignore[index]
    assert first.fault is not None
    assert (first.fault.status, first.fault.recovers, first.fault.text) == (None, True, (("first",),))
    assert first.text == (("first",), ("second",))  # the whole answer, once it gets through
    assert first.change is not None and first.change.path == "a.txt"
    assert not first.final
    assert second.fault is not None
    assert (second.fault.status, second.fault.retries, second.fault.thinking) == (429, 3, ("t",))
    assert second.text == ()
    assert retry_limit(script) == 3
    assert retry_limit(compiled(tmp_path, {"case": "n", "turns": [{"steps": [{"say": "x"}]}]})) == 0


def test_model_errors_and_file_changes_are_playable(tmp_path: Path) -> None:
    turns = [{"steps": [{"file_change": {"path": "a"}}, {"say": "x"}, {"model_error": {"status": 500}}]}]
    assert playable(compiled(tmp_path, {"case": "ok", "turns": turns})) is None


@pytest.mark.parametrize(
    ("turn", "why"),
    [
        ({"steps": [{"detach": 20}, {"say": "x"}]}, "step 'detach' shapes the engine's process"),
        ({"steps": [{"say": "x"}], "linger": {"seconds": "forever"}}, "linger (the process lives on"),
        ({"steps": [{"say": "x"}], "linger": {"seconds": 3}}, "linger"),
        ({"steps": [{"say": "x"}], "repair": []}, "repair answers"),
        ({"steps": [{"say": "a"}, {"sleep": 2}, {"say": "b"}]}, "step 'sleep' inside an answer"),
        ({"steps": [{"say": "a"}, {"sleep": 2}]}, "step 'sleep' inside an answer"),
        (
            {"steps": [{"tool": {"name": "bash", "status": "running"}}, {"hang": True}]},
            "step 'tool' that never",
        ),
        ({"steps": [{"say": "cut \ud83d"}]}, "lone surrogate"),
    ],
)
def test_steps_a_model_cannot_produce_are_refused_by_name(
    tmp_path: Path, turn: dict[str, object], why: str
) -> None:
    reason = playable(compiled(tmp_path, {"case": "p", "turns": [turn]}))
    assert reason is not None
    assert why in reason


def test_a_sleep_before_an_answer_is_the_model_answering_slowly(tmp_path: Path) -> None:
    turn = {"steps": [{"sleep": 1}, {"tool": {"name": "bash"}}, {"sleep": 4}, {"sleep": 0.5}, {"say": "x"}]}
    script = compiled(tmp_path, {"case": "s", "turns": [turn]})
    assert playable(script) is None
    assert [r.delay for r in rounds_of(script["turns"][0])] == [1.0, 4.5]  # type: ignore[index]
