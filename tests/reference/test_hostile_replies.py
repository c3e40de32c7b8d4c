"""Hostile replies through readers, gate, audit and store: deep nesting, lone surrogates, dense
fences and dense hints.

Each is pinned by what it once did: deep nesting raised RecursionError, a lone
surrogate could not be stored, the fence scan was quadratic, the hint scan
parsed and rescanned without bound. Linearity is shown by counting calls
(`tests.work.calls_made`), never by timing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.reference.conftest import Lab
from tests.work import calls_made
from turngate.engines import readers
from turngate.engines.readers import _bounded_json
from turngate.engines.readers._bounded_json import MAX_JSON_DEPTH, NestingTooDeep
from turngate.implementations.reference import audit
from turngate.implementations.reference.hints import (
    MAX_HINT_CHARS,
    find_hints,
    read_hint,
    scan_hints,
    strip_hints,
)
from turngate.implementations.reference.outcome import ProcessEnd
from turngate.implementations.reference.output import (
    OUTPUT_NOT_FOUND,
    OUTPUT_SCHEMA_INVALID,
    check_output,
    extract_output,
)
from turngate.implementations.reference.pending import FALLBACK_PROMPT, build_pending
from turngate.implementations.reference.store import Store
from turngate.implementations.reference.turn import TurnInput, assess
from turngate.judge.skill_writer import GREETING_SCHEMA

DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
DEEP_ARRAY = "[" * 1_000_000


def _codex(reply: str) -> bytes:
    lines = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": reply}},
        {"type": "turn.completed", "usage": {}},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _assess(reply: str, mode: str = "interactive") -> Any:
    turn = TurnInput(
        engine="codex",
        mode=mode,  # type: ignore[arg-type]
        attempt_number=1,
        max_attempt=None,
        output_schema=GREETING_SCHEMA,
        needs_session_id=True,
    )
    return assess(turn, _codex(reply), b"", ProcessEnd(0, None))


def _nested(depth: int) -> str:
    return '{"a":' * (depth - 1) + '{"greeting": "Hi"' + "}" * depth


# -- deep nesting ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [DEEP_OBJECT, DEEP_ARRAY, "{" * 100_000, 'x {"a":' * 50_000])
def test_deep_nesting_is_a_named_decision_not_a_recursion_error(reply: str) -> None:
    check = check_output(reply, output_schema=GREETING_SCHEMA)
    # Not found, or an inner object of the innermost levels found in the prose and refused.
    assert not check.valid
    assert check.problem in (OUTPUT_NOT_FOUND, OUTPUT_SCHEMA_INVALID)
    assessment = _assess(reply)
    assert assessment.decision.state == "waiting_user"  # no marker, no valid output: ask the user
    assert assessment.pending is not None
    found, completion = audit.classify("codex", _codex(reply), b"", output_schema=GREETING_SCHEMA)
    assert (found, completion) == (False, "none")


def test_a_live_run_with_a_deep_reply_waits_and_its_audit_agrees(lab: Lab) -> None:
    lab.case("deep", [{"say": DEEP_OBJECT}], [{"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'}])
    run = lab.settle(lab.start(lab.skill(), "codex", "interactive", "deep", profile="resumable"))
    assert (run.state, run.error_code) == ("waiting_user", None), run.error_message
    (record,) = audit.audit_run(lab.store, run.run_id, output_schema=GREETING_SCHEMA)
    assert record.agrees_with_gate
    assert record.completion == "none"


def test_the_not_found_detail_names_the_nesting_bound() -> None:
    check = check_output('{"a":[' * 1000, output_schema=GREETING_SCHEMA)
    assert check.problem == OUTPUT_NOT_FOUND
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in check.detail


def test_the_bound_is_exact_and_the_same_at_any_stack_depth() -> None:
    inside, beyond = _nested(MAX_JSON_DEPTH), _nested(MAX_JSON_DEPTH + 1)

    def at_depth(frames: int, work: Callable[[], Any]) -> Any:
        return work() if frames == 0 else at_depth(frames - 1, work)

    shallow = extract_output(beyond)
    for frames in (0, 600):  # from a shallow and from a deep call stack: the same answers
        assert at_depth(frames, lambda: extract_output(inside)) == ("none", json.loads(inside))
        assert at_depth(frames, lambda: extract_output(beyond)) == shallow
        assert at_depth(frames, lambda: _bounded_json.too_deep(beyond))
    assert shallow is not None
    assert shallow[0] == "embedded"  # only an inner object, read as prose
    with pytest.raises(NestingTooDeep):
        _bounded_json.loads(beyond)


def test_a_deep_line_in_every_reader_is_noise_not_a_crash() -> None:
    deep_line = ('{"type":' + "[" * 5000 + "\n").encode()
    for engine in readers.ENGINES:
        transcript = readers.read(engine, deep_line * 3, deep_line)
        assert transcript.events  # kept as raw lines or text, nothing raised


def test_an_object_after_deep_noise_is_still_found() -> None:
    # The search drops every brace of the too-deep structure at once and goes on.
    reply = "[" * 5000 + '{"a":' * 3000 + ' and then {"greeting": "Hi"}'
    assert extract_output(reply) == ("embedded", {"greeting": "Hi"})


def _decoded_depth(value: Any) -> int:
    """How many arrays and objects nest on the deepest path (a scalar: 0), without recursion."""
    depth, level = 0, [value]
    while containers := [item for item in level if isinstance(item, dict | list)]:
        depth += 1
        level = [
            inner for item in containers for inner in (item.values() if isinstance(item, dict) else item)
        ]
    return depth


@given(st.lists(st.sampled_from(['{"k":', "[", "]", "}", '"', "\\", ",", "1", '"s"']), max_size=60))
@settings(deadline=None, max_examples=300)
@example(['{"k":', "1", "}"])  # one level: not deeper than 1 (the depth was once counted as 2 here)
@example(['{"k":', "[", "]", "}"])
def test_the_lexical_depth_never_underestimates_the_decoder(parts: list[str]) -> None:
    text = "".join(parts)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return
    depth = _decoded_depth(value)
    for limit in (0, 1, 2, 3, 5):
        if depth > limit:
            assert _bounded_json.too_deep(text, limit=limit), (text, limit)


def test_the_depth_check_is_linear() -> None:
    small = calls_made(_bounded_json.too_deep, "[" * 200_000)
    large = calls_made(_bounded_json.too_deep, "[" * 400_000)
    assert large <= 2.2 * small + 50


# -- lone surrogates -------------------------------------------------------------------------------

SURROGATE_HINTS = [
    '<ASK_USER_YAML>\nask_user:\n  prompt: "pick \\ud800 one"\n  kind: "choose_one\\udfff"\n'
    '  options: [{label: "A\\ud800", value: "a\\ud800"}]\n  context: {"\\ud800": "\\udc00"}\n'
    "</ASK_USER_YAML>",
    '{"outcome": "ask_user", "interaction": {"prompt": "pick \\ud800 one", "kind": "\\ud800"}}',
]


@pytest.mark.parametrize("hint", SURROGATE_HINTS)
def test_a_hint_with_lone_surrogates_gives_an_encodable_pending(hint: str) -> None:
    reading = read_hint(hint)
    assert reading is not None
    assert reading.clean
    pending = build_pending(attempt_number=1, final_message=hint)
    json.dumps(pending.to_json(), ensure_ascii=False).encode("utf-8")  # strict: raises on a surrogate
    assert "pick \\ud800 one" in pending.prompt  # the code unit kept, as six characters (not U+FFFD)


def test_the_store_keeps_lone_surrogates_as_their_six_character_escapes(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    try:
        with store.transaction() as tx:
            tx.ask("run-1", 1, "prompt \ud800", {"prompt": "prompt \ud800", "\udc00": ["\udfff"]}, 1.0)
            tx.answer("run-1", 1, "reply \ud800", 2.0, automatic=False)
            tx.append_event("run-1", "user.reply", 1, 2.0, {"text": "reply \ud800"})
        (interaction,) = store.interactions("run-1")
        assert (interaction.prompt, interaction.response) == ("prompt \\ud800", "reply \\ud800")
        # read back as text, never as the surrogate again (a JSON escape would decode to it)
        assert interaction.pending == {"prompt": "prompt \\ud800", "\\udc00": ["\\udfff"]}
        (event,) = store.events("run-1")
        assert event.data == {"text": "reply \\ud800"}
    finally:
        store.close()


def test_a_run_asks_and_takes_a_reply_with_lone_surrogates(lab: Lab) -> None:
    question = 'Which one? {"outcome": "ask_user", "interaction": {"prompt": "pick \\ud800", "kind": "x"}}'
    lab.case("surrogates", [{"say": question}], [{"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'}])
    run = lab.settle(lab.start(lab.skill(), "codex", "interactive", "surrogates", profile="resumable"))
    assert run.state == "waiting_user"
    assert lab.orchestrator.reply(run.run_id, 1, "answer \ud800").accepted
    run = lab.settle(run.run_id)
    assert run.state == "succeeded", (run.error_code, run.error_message)
    (interaction,) = lab.store.interactions(run.run_id)
    assert interaction.response == "answer \\ud800"


def test_business_output_with_a_lone_surrogate_is_escaped_with_a_warning_naming_where() -> None:
    schema = {"type": "object", "properties": {"greeting": {"type": "string", "pattern": "^Hi"}}}
    reply = '{"greeting": "Hi \\ud83d", "items": ["ok", "\\udc80"], "__SKILL_DONE__": true}'
    checked = check_output(reply, output_schema=schema)
    assert checked.valid, checked.detail  # the pattern is matched on the kept text: no crash
    assert checked.data == {"greeting": "Hi \\ud83d", "items": ["ok", "\\udc80"]}
    assert checked.warnings == ("OUTPUT_TEXT_ESCAPED: greeting, items[1]",)
    json.dumps(dict(checked.data or {}), ensure_ascii=False).encode("utf-8")
    assert check_output('{"greeting": "Hi"}', output_schema=schema).warnings == ()


# -- the fence scan --------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["```x\n", "```\n", "```json\n{}\n```\n", "  ```py\n```\n``` \n"])
def test_the_fence_scan_is_linear(unit: str) -> None:
    small = calls_made(extract_output, unit * 5_000)
    large = calls_made(extract_output, unit * 10_000)
    assert large <= 2.2 * small + 100, f"quadratic fence scan: {small} calls, then {large}"


def test_lines_without_fences_cost_no_work_per_line() -> None:
    # 50 MB of "a\n" once made a list of 25 M lines; now no line is looked at on its own.
    assert calls_made(extract_output, "a\n" * 200_000) < 100


def test_fences_keep_their_meaning() -> None:
    reply = '```python\n{"greeting": "code"}\n```\ntext\n```json\n{"greeting": "Hi"}\n```'
    assert extract_output(reply) == ("fenced", {"greeting": "Hi"})
    assert extract_output('```python\n{"greeting": "code"}\n```') is None
    assert extract_output('```x\n```x\n{"greeting": "Hi"}') == ("embedded", {"greeting": "Hi"})


# -- the hint scan ---------------------------------------------------------------------------------


def _gate(reply: str) -> None:
    _assess(reply)


@pytest.mark.parametrize(
    "unit",
    [
        "ask_user: {a: b}\n",
        "ask_user: {prompt: [x]}\n",
        '{"outcome": "ask_user", "interaction": {"prompt": "p"}}\n',
        "<ASK_USER_YAML>\nprompt: p\n</ASK_USER_YAML>\n",
        "```ask_user_yaml\nprompt: p\n```\n",
        "{{{{",
        '{"a":x',
    ],
)
def test_the_whole_gate_is_linear_on_dense_hints(unit: str) -> None:
    small = calls_made(_gate, unit * 2_000)
    large = calls_made(_gate, unit * 4_000)
    assert large <= 2.2 * small + 200, f"superlinear gate: {small} calls, then {large}"


def test_only_the_hint_that_counts_is_parsed() -> None:
    text = "ask_user: {prompt: p, kind: confirm}\n" * 3_000
    # one YAML parse, not three thousand: the calls of a single scan are a small multiple of the hints
    assert calls_made(scan_hints, text) < 20 * 3_000
    scan = scan_hints(text)
    assert scan.count == 3_000
    assert scan.last is not None
    assert scan.last.clean


def test_an_oversized_hint_is_malformed_never_parsed_never_output() -> None:
    prompt = "a" * (MAX_HINT_CHARS + 10)
    reply = f'<ASK_USER_YAML>\nask_user: {{prompt: "{prompt}"}}\n</ASK_USER_YAML>'
    hint = read_hint(reply)
    assert hint is not None
    assert not hint.clean
    assert hint.problems == (
        f"ASK_USER_HINT_MALFORMED: yaml_block: larger than {MAX_HINT_CHARS} characters (not parsed)",
    )
    assessment = _assess(reply)
    assert assessment.decision.state == "waiting_user"  # a malformed hint never blocks waiting
    assert assessment.pending is not None
    assert assessment.pending.prompt == FALLBACK_PROMPT
    assert not assessment.output.valid


def test_an_unclosed_envelope_beyond_the_bound_runs_to_the_end() -> None:
    reply = '{"outcome": "ask_user", "interaction": {"prompt": "' + "[" * (MAX_HINT_CHARS * 2)
    scan = scan_hints(reply + ' {"greeting": "Hi"}')
    assert scan.last is not None
    assert "larger than" in scan.last.problems[0]
    assert scan.stripped == ""  # nothing of it leaks into the output or the prompt


def test_the_recursion_limit_is_untouched() -> None:
    assert sys.getrecursionlimit() == 1000  # the bound does not rely on raising it


def _fences_as_specified(text: str) -> tuple[list[tuple[str, str]], str]:
    """The fence rule as first written, line by line and quadratic: what the linear scan must equal."""
    fences, kept, lines, index = [], [], text.split("\n"), 0
    while index < len(lines):
        line = lines[index].strip()
        close = None
        if line.startswith("```"):
            close = next((end for end in range(index + 1, len(lines)) if lines[end].strip() == "```"), None)
        if close is None:
            kept.append(lines[index])
            index += 1
            continue
        language = line[3:].strip().lower()
        fences.append((language, "\n".join(lines[index + 1 : close])))
        if language in ("", "json", "jsonc"):
            kept.extend(lines[index : close + 1])
        index = close + 1
    return fences, "\n".join(kept)


FENCE_PARTS = [
    "```",
    "```py",
    "```json",
    "\n",
    "\n",
    " ",
    "x",
    "`",
    "\r",
    "\u2028",
    "{}",
    "````",
    "\x1c",
    "\t",
]


@given(st.lists(st.sampled_from(FENCE_PARTS), max_size=24).map("".join))
@settings(deadline=None, max_examples=400)
def test_the_linear_fence_scan_equals_the_rule_as_first_written(text: str) -> None:
    from turngate.implementations.reference.output import _fences

    assert _fences(text) == _fences_as_specified(text)


HINT_PARTS = [
    "ask_user: {a: b}",
    "ask_user: {prompt: p}",
    "ask_user: {a: [b]}",
    "ask_user: {a\nask_user: b}",
    "ask_user:{x}",
    "ask_user: {",
    "\n",
    "\n",
    "\r",
    " ",
    "x",
    "}",
    "<ASK_USER_YAML>prompt: q</ASK_USER_YAML>",
    "```ask_user_yaml\n",
    "```\n",
    '{"outcome": "ask_user", "interaction": {"prompt": "p"}}',
]


@given(st.lists(st.sampled_from(HINT_PARTS), max_size=30).map("".join))
@settings(deadline=None, max_examples=500)
def test_the_one_pass_scan_agrees_with_the_hint_by_hint_search(text: str) -> None:
    scan = scan_hints(text)
    hints = find_hints(text)
    assert scan.count == len(hints)
    assert scan.last == (hints[-1] if hints else None)
    assert scan.stripped == strip_hints(text)
