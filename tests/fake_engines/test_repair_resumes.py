"""Skill-Runner's output-repair resumes (v0.6.0+) play a turn's `repair:` answers, never the next turn.

The prompts below are what `_build_repair_prompt` in Skill-Runner's
`server/services/orchestration/run_output_convergence_service.py` returns at
v0.6.0 (abe8626, with the previous candidate quoted) and v0.7.9 (c79d774,
without it), for an interactive run whose previous output was prose.
Every test runs the installed launchers as real subprocesses.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args, resume_args
from tests.schemas.schemas import CALL_LOG, line_problems
from turngate.engines.fake.problems import EXIT_SCRIPT_ERROR
from turngate.engines.fake.repair import is_repair_prompt

BRANCH_LINE = (
    "For interactive mode, return exactly one JSON object that matches either the final branch "
    "(`__SKILL_DONE__ = true`) or the pending branch "
    "(`__SKILL_DONE__ = false` with `message` and `ui_hints`)."
)
CONTRACT = "### Output Contract Details\n\n#### Final Branch Contract\n\n- Set `__SKILL_DONE__` to `true`."
# v0.6.0 quotes the previous candidate, which can hold anything the model wrote (a case token too).
REPAIR_V0_6_0 = "\n".join(
    [
        "Your previous output did not satisfy the Skill Runner output contract.",
        "",
        "Previous candidate:",
        '{"note": "echoing tg-case-other from the input"}',
        "",
        "Validation errors:",
        "- Output JSON missing or unreadable",
        "",
        BRANCH_LINE,
        "Do not output explanations.",
        "Do not output Markdown fences.",
        "",
        "Target output contract details:",
        CONTRACT,
    ]
)
REPAIR_V0_7_9 = "\n".join(
    [
        "Your previous output did not satisfy the Skill Runner output contract.",
        "",
        "Validation errors:",
        "- Target output validation failed",
        "",
        "Return exactly one final JSON object with `__SKILL_DONE__ = true`.",
        "Do not output explanations.",
        "Do not output Markdown fences.",
    ]
)
GENERATIONS = {"v0.6.0": REPAIR_V0_6_0, "v0.7.9": REPAIR_V0_7_9}
FINAL = {"greeting": "Hello"}
FINAL_TEXT = '{"__SKILL_DONE__": true, "greeting": "Hello"}'


def session_of(bench: EngineBench) -> str:
    return str(bench.calls()[-1]["session_id"])


def replies(engine: str, played_stdout: bytes, played_stderr: bytes) -> str:
    """The reply text of one played turn, however the engine shows it."""
    lines = [json.loads(line) for line in played_stdout.decode().splitlines() if line.startswith("{")]
    match engine:
        case "codex":
            return "".join(
                e["item"]["text"] for e in lines if e.get("item", {}).get("type") == "agent_message"
            )
        case "gemini":
            return "".join(e["content"] for e in lines if e.get("role") == "assistant")
        case "opencode" | "kilo":
            return "".join(e["part"]["text"] for e in lines if e.get("type") == "text")
        case "claude" | "qwen" | "codebuddy":
            return "".join(
                block["text"]
                for e in lines
                if e.get("type") == "assistant"
                for block in e["message"]["content"]
                if block["type"] == "text"
            )
    return played_stdout.decode().rstrip("\n")


def summary(calls: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(call["action"], call["turns"], call.get("repair"), call["outcome"]) for call in calls]


@pytest.mark.parametrize("prompt", GENERATIONS.values(), ids=GENERATIONS.keys())
def test_both_generations_of_the_repair_prompt_are_recognised(prompt: str) -> None:
    assert is_repair_prompt(prompt)
    assert is_repair_prompt("\n  " + prompt)  # leading whitespace aside
    assert is_repair_prompt(prompt.replace("contract.", "contract", 1))  # the full stop optional


@pytest.mark.parametrize(
    "reply",
    [
        "Formal",
        '{"style": "formal"}',  # a structured reply, as `_build_reply_prompt` sends it
        "",
        "I think your previous output did not satisfy the Skill Runner output contract.",
        "tg-case-greet",
    ],
)
def test_user_replies_are_not_repairs(reply: str) -> None:
    assert not is_repair_prompt(reply)


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_repair_resume_plays_the_repair_answer_and_keeps_the_next_turn(
    bench: EngineBench, engine: str, generation: str
) -> None:
    bench.case(
        "fix",
        turns=[
            {"steps": [{"say": "Here is your greeting: Hello!"}], "repair": [{"steps": [{"final": FINAL}]}]},
            {"steps": [{"say": "turn two"}]},
        ],
    )
    first = bench.run(engine, first_turn_args(engine, "Run greet. tg-case-fix"))
    assert first.returncode == 0, first.err
    session = session_of(bench)
    repaired = bench.run(engine, resume_args(engine, session, GENERATIONS[generation]))
    assert repaired.returncode == 0, repaired.err
    assert replies(engine, repaired.stdout, repaired.stderr) == FINAL_TEXT
    reply = bench.run(engine, resume_args(engine, session, "Formal"))
    assert reply.returncode == 0, reply.err
    assert replies(engine, reply.stdout, reply.stderr) == "turn two"
    assert summary(bench.calls()) == [
        ("run", [1], None, "exited"),
        ("repair", [], {"turn": 1, "round": 1}, "exited"),
        ("run", [2], None, "exited"),
    ]
    assert [call["resumed"] for call in bench.calls()] == [False, True, True]
    assert {call["session_id"] for call in bench.calls()} == {session}
    assert line_problems(CALL_LOG, bench.call_log.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("engine", ["codex", "opencode"])
def test_successive_repairs_play_the_list_in_order_then_refuse(bench: EngineBench, engine: str) -> None:
    answers = [{"steps": [{"say": f"still wrong {n}"}]} for n in (1, 2, 3)]
    bench.case(
        "rounds", turns=[{"steps": [{"say": "wrong"}], "repair": answers}, {"steps": [{"say": "two"}]}]
    )
    bench.run(engine, first_turn_args(engine, "tg-case-rounds"))
    session = session_of(bench)
    played = [bench.run(engine, resume_args(engine, session, REPAIR_V0_7_9)) for _ in range(3)]
    assert [replies(engine, p.stdout, p.stderr) for p in played] == [
        "still wrong 1",
        "still wrong 2",
        "still wrong 3",
    ]
    beyond = bench.run(engine, resume_args(engine, session, REPAIR_V0_7_9))
    assert beyond.returncode == EXIT_SCRIPT_ERROR
    assert beyond.stdout == b""
    (line,) = beyond.err.splitlines()
    assert line == (
        f"turngate-fake-{engine}: REPAIR_OUT_OF_RANGE: {bench.scripts / 'rounds.yaml'}: turns[0].repair: 4:"
        " turn 1 scripts 3 repair answer(s); repair resume 4 of it was asked for"
    )
    # The refused repair consumed no turn: the user's reply still plays turn 2.
    reply = bench.run(engine, resume_args(engine, session, "Formal"))
    assert replies(engine, reply.stdout, reply.stderr) == "two"
    calls = bench.calls()
    assert [call.get("repair") for call in calls] == [
        None,
        {"turn": 1, "round": 1},
        {"turn": 1, "round": 2},
        {"turn": 1, "round": 3},
        {"turn": 1, "round": 4},
        None,
    ]
    assert calls[4]["outcome"] == "script_error"
    assert calls[4]["error"]["code"] == "REPAIR_OUT_OF_RANGE"
    assert line_problems(CALL_LOG, bench.call_log.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_turn_without_repair_answers_answers_every_repair_with_itself(
    bench: EngineBench, engine: str
) -> None:
    bench.case("plain", turns=[{"steps": [{"say": "one"}]}, {"steps": [{"say": "two"}]}])
    bench.run(engine, first_turn_args(engine, "tg-case-plain"))
    session = session_of(bench)
    again = [bench.run(engine, resume_args(engine, session, REPAIR_V0_6_0)) for _ in range(4)]
    assert [(p.returncode, replies(engine, p.stdout, p.stderr)) for p in again] == [(0, "one")] * 4
    reply = bench.run(engine, resume_args(engine, session, "Formal"))  # the user's turn is still there
    assert replies(engine, reply.stdout, reply.stderr) == "two"
    assert [call.get("repair") for call in bench.calls()][1:5] == [
        {"turn": 1, "round": n} for n in (1, 2, 3, 4)
    ]


@pytest.mark.parametrize("engine", ["codex", "opencode"])
def test_an_empty_repair_list_refuses_a_repair(bench: EngineBench, engine: str) -> None:
    bench.case("refuses", turns=[{"steps": [{"say": "one"}], "repair": []}, {"steps": [{"say": "two"}]}])
    bench.run(engine, first_turn_args(engine, "tg-case-refuses"))
    refused = bench.run(engine, resume_args(engine, session_of(bench), REPAIR_V0_6_0))
    assert refused.returncode == EXIT_SCRIPT_ERROR
    (line,) = refused.err.splitlines()
    assert "REPAIR_OUT_OF_RANGE" in line and "turns[0].repair: 1:" in line
    assert "turn 1 scripts 0 repair answer(s)" in line


def test_each_turn_counts_its_own_repairs(bench: EngineBench) -> None:
    bench.case(
        "later",
        turns=[
            {"steps": [{"say": "one"}], "repair": [{"steps": [{"say": "one fixed"}]}]},
            {"steps": [{"say": "two"}], "repair": [{"steps": [{"say": "two fixed"}]}]},
        ],
    )
    bench.run("codex", first_turn_args("codex", "tg-case-later"))
    session = session_of(bench)
    texts = []
    for prompt in (REPAIR_V0_7_9, "Formal", REPAIR_V0_7_9):
        played = bench.run("codex", resume_args("codex", session, prompt))
        texts.append(replies("codex", played.stdout, played.stderr))
    assert texts == ["one fixed", "two", "two fixed"]
    assert [call.get("repair") for call in bench.calls()] == [
        None,
        {"turn": 1, "round": 1},
        None,
        {"turn": 2, "round": 1},
    ]


def test_a_repair_answer_is_a_new_message_with_its_own_ids(bench: EngineBench) -> None:
    bench.case("ids", turns=[{"steps": [{"say": "x"}], "repair": [{"steps": [{"say": "x"}]}]}])
    first = bench.run("opencode", first_turn_args("opencode", "tg-case-ids"))
    repaired = bench.run("opencode", resume_args("opencode", session_of(bench), REPAIR_V0_7_9))

    def ids(stdout: bytes) -> set[str]:
        events = [json.loads(line) for line in stdout.decode().splitlines()]
        return {event["part"]["id"] for event in events} | {event["part"]["messageID"] for event in events}

    assert ids(first.stdout).isdisjoint(ids(repaired.stdout))


def test_a_repair_answer_can_fail_like_a_turn(bench: EngineBench) -> None:
    answer = {"steps": [{"error": {"message": "rate limited"}}], "end": "failed"}
    bench.case("fails", turns=[{"steps": [{"say": "x"}], "repair": [answer]}])
    bench.run("codex", first_turn_args("codex", "tg-case-fails"))
    failed = bench.run("codex", resume_args("codex", session_of(bench), REPAIR_V0_6_0))
    assert failed.returncode == 1
    assert json.loads(failed.stdout.decode().splitlines()[-1]) == {
        "type": "turn.failed",
        "error": {"message": "rate limited"},
    }
    assert bench.calls()[-1]["action"] == "repair"


BAD_REPAIRS = {
    "nested": (
        "case: nested\nturns:\n  - steps: []\n    repair:\n      - steps: []\n        repair: []\n",
        "turns[0].repair[0].repair",
        "[]",
        "a repair answer has no repair answers of its own",
    ),
    "not-a-list": (
        "case: not-a-list\nturns:\n  - steps: []\n    repair: later\n",
        "turns[0].repair",
        "'later'",
        "is not of type 'array'",
    ),
    "unknown-field": (
        "case: unknown-field\nturns:\n  - steps: []\n    repair:\n      - steps: []\n        when: always\n",
        "turns[0].repair[0].when",
        "'always'",
        "unknown field 'when'",
    ),
}


@pytest.mark.parametrize("case_id", sorted(BAD_REPAIRS))
def test_a_bad_repair_list_is_one_line_naming_file_field_and_value(bench: EngineBench, case_id: str) -> None:
    text, field, value, message = BAD_REPAIRS[case_id]
    path = bench.scripts / f"{case_id}.yaml"
    path.write_text(text, encoding="utf-8")
    played = bench.run("gemini", first_turn_args("gemini", f"tg-case-{case_id}"))
    assert played.returncode == EXIT_SCRIPT_ERROR
    (line,) = played.err.splitlines()
    assert line.startswith(f"turngate-fake-gemini: SCRIPT_INVALID: {path}: {field}: {value}: ")
    assert message in line
