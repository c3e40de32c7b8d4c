"""`final:` and `pending:` write Skill-Runner's JSON union contract branches (v0.6.0+) as the reply.

The whole reply text is one JSON object, `__SKILL_DONE__` first, on one line:
what a model following the runtime patch prints. Each engine shows it where it
shows any `say`. Real subprocesses of the installed launchers.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args
from turngate.engines.fake.problems import EXIT_SCRIPT_ERROR

UI_HINTS = {"kind": "choose_one", "options": [{"label": "Formel", "value": "formal"}]}
PENDING_TEXT = (
    '{"__SKILL_DONE__": false, "message": "Quel style ?", '
    '"ui_hints": {"kind": "choose_one", "options": [{"label": "Formel", "value": "formal"}]}}'
)
FINAL_TEXT = '{"__SKILL_DONE__": true, "greeting": "Grüß dich", "count": 2, "tags": ["a"], "extra": null}'


def reply_of(engine: str, stdout: bytes, *, gemini_format: str = "stream-json") -> str:
    if engine == "iflow":
        return stdout.decode().removesuffix("\n")
    lines = [json.loads(line) for line in stdout.decode().splitlines()]
    match engine:
        case "codex":
            return "".join(
                e["item"]["text"] for e in lines if e.get("item", {}).get("type") == "agent_message"
            )
        case "gemini" if gemini_format == "json":
            return str(lines[-1]["response"]) if len(lines) == 1 else ""
        case "gemini":
            return "".join(e["content"] for e in lines if e.get("role") == "assistant")
        case "claude" | "qwen" | "codebuddy":  # without --json-schema the branch is a reply text
            return "".join(
                block["text"]
                for e in lines
                if e.get("type") == "assistant"
                for block in e["message"]["content"]
                if block["type"] == "text"
            )
    return "".join(e["part"]["text"] for e in lines if e.get("type") == "text")


@pytest.mark.parametrize("engine", ENGINES)
def test_final_and_pending_are_the_reply_text_on_every_engine(bench: EngineBench, engine: str) -> None:
    final = {"greeting": "Grüß dich", "count": 2, "tags": ["a"], "extra": None}
    bench.case(
        "branches", turns=[{"steps": [{"pending": {"message": "Quel style ?", "ui_hints": UI_HINTS}}]}]
    )
    bench.case("done", turns=[{"steps": [{"final": final}]}])
    pending = bench.run(engine, first_turn_args(engine, "tg-case-branches"))
    assert pending.returncode == 0, pending.err
    assert reply_of(engine, pending.stdout) == PENDING_TEXT
    done = bench.run(engine, first_turn_args(engine, "tg-case-done"))
    assert reply_of(engine, done.stdout) == FINAL_TEXT
    assert json.loads(FINAL_TEXT) == {"__SKILL_DONE__": True, **final}


def test_gemini_json_document_holds_the_branch_as_its_response(bench: EngineBench) -> None:
    bench.case("doc", turns=[{"steps": [{"final": {"ok": True}}]}])
    played = bench.run("gemini", first_turn_args("gemini", "tg-case-doc", gemini_format="json"))
    document = json.loads(played.stdout)
    assert document["response"] == '{"__SKILL_DONE__": true, "ok": true}'


def test_pending_keeps_further_fields_after_message_and_hints(bench: EngineBench) -> None:
    # A codex compat schema wants the inactive branch's fields as explicit nulls.
    pending = {"greeting": None, "message": "Which?", "ui_hints": {"kind": "open_text"}}
    bench.case("compat", turns=[{"steps": [{"pending": pending}]}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-compat"))
    assert reply_of("codex", played.stdout) == (
        '{"__SKILL_DONE__": false, "greeting": null, "message": "Which?", "ui_hints": {"kind": "open_text"}}'
    )


def test_the_steps_are_the_same_bytes_as_the_equivalent_say(bench: EngineBench) -> None:
    bench.case("sugar", turns=[{"steps": [{"final": {"greeting": "Hello"}}]}])
    bench.case("plain", turns=[{"steps": [{"say": '{"__SKILL_DONE__": true, "greeting": "Hello"}'}]}])
    sugar = bench.run("opencode", first_turn_args("opencode", "tg-case-sugar"))
    plain = bench.run("opencode", first_turn_args("opencode", "tg-case-plain"))
    # Fresh state folders aside (the session counter differs), the lines are the same.
    assert [json.loads(line)["type"] for line in sugar.stdout.splitlines()] == [
        json.loads(line)["type"] for line in plain.stdout.splitlines()
    ]
    assert reply_of("opencode", sugar.stdout) == reply_of("opencode", plain.stdout)


BAD = {
    "own-marker": (
        "case: own-marker\nturns:\n  - steps:\n      - final: {__SKILL_DONE__: false, a: 1}\n",
        "turns[0].steps[0].final.__SKILL_DONE__",
        "False",
        "the step sets __SKILL_DONE__ itself",
    ),
    "no-hints": (
        "case: no-hints\nturns:\n  - steps:\n      - pending: {message: Which?}\n",
        "turns[0].steps[0].pending.ui_hints",
        "None",
        "'ui_hints' is a required property",
    ),
    "hints-a-list": (
        "case: hints-a-list\nturns:\n  - steps:\n      - pending: {message: Which?, ui_hints: [a]}\n",
        "turns[0].steps[0].pending.ui_hints",
        "['a']",
        "is not of type 'object'",
    ),
    "not-a-mapping": (
        "case: not-a-mapping\nturns:\n  - steps:\n      - final: done\n",
        "turns[0].steps[0].final",
        "'done'",
        "is not of type 'object'",
    ),
    "a-date": (
        "case: a-date\nturns:\n  - steps:\n      - say: x\n  - steps:\n      - final: {when: 2026-07-01}\n",
        "turns[1].steps[0].final",
        "{'when': datetime.date(2026, 7, 1)}",
        "not JSON:",
    ),
    "not-a-number": (
        "case: not-a-number\nturns:\n  - steps:\n      - final: {score: .nan}\n",
        "turns[0].steps[0].final",
        "{'score': nan}",
        "not JSON:",
    ),
}


@pytest.mark.parametrize("case_id", sorted(BAD))
def test_a_bad_branch_is_one_line_naming_file_field_and_value(bench: EngineBench, case_id: str) -> None:
    text, field, value, message = BAD[case_id]
    path = bench.scripts / f"{case_id}.yaml"
    path.write_text(text, encoding="utf-8")
    played = bench.run("iflow", first_turn_args("iflow", f"tg-case-{case_id}"))
    assert played.returncode == EXIT_SCRIPT_ERROR
    assert played.stdout == b""
    (line,) = played.err.splitlines()
    assert line.startswith(f"turngate-fake-iflow: SCRIPT_INVALID: {path}: {field}: {value}: ")
    assert message in line
    assert "Traceback" not in played.err
