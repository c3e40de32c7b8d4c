"""Fidelity's comparison by shape, and the named variants (no npm: the streams are written here)."""

from __future__ import annotations

import json

from turngate.engines.real.shapes import events
from turngate.tools.realengines.fidelity import Difference, TurnOutput, classify, compare
from turngate.tools.realengines.variants import TURN_KINDS, VARIANTS, TurnContext, TurnFacts


def lines(*documents: object) -> bytes:
    return b"".join(json.dumps(document).encode() + b"\n" for document in documents)


MESSAGE = {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "hi"}}
END = {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}


def test_ids_texts_and_counts_do_not_count_only_shape_does() -> None:
    other = {"type": "item.completed", "item": {"id": "item_9", "type": "agent_message", "text": "different"}}
    real = [TurnOutput(lines(MESSAGE, END), b"", 0)]
    fake = [
        TurnOutput(
            lines(other, {"type": "turn.completed", "usage": {"input_tokens": 999, "output_tokens": 7}}),
            b"",
            0,
        )
    ]
    assert list(compare(real, fake)) == []


def test_keys_kinds_order_streams_and_exit_codes_do() -> None:
    real_end = {
        "type": "turn.completed",
        "usage": {"input_tokens": 5, "output_tokens": 1, "reasoning_output_tokens": 0},
    }
    failed = {"type": "item.completed", "item": {"id": "i", "type": "command_execution", "status": "failed"}}
    done = {"type": "item.completed", "item": {"id": "i", "type": "command_execution", "status": "completed"}}
    real = [TurnOutput(lines(done, MESSAGE, real_end), b"notice\n", 0)]
    fake = [TurnOutput(lines(failed, END), b"", 1)]
    assert [text for _, text in compare(real, fake)] == [
        "exit code: real 0, fake 1",
        'stdout: item.completed:command_execution: item.status: real "completed", fake "failed"',
        "stdout: only in real: item.completed:agent_message",
        "stdout: turn.completed: keys only in real: usage.reasoning_output_tokens",
        "stderr: line only in real: notice",
    ]


def test_a_pretty_document_after_noise_is_one_document() -> None:
    data = b"YOLO mode is enabled.\n" + json.dumps({"session_id": "s", "response": "r"}, indent=2).encode()
    assert [label for label, _ in events(data)] == ["text", "document"]


def test_stderr_lines_are_compared_one_by_one_and_a_document_on_it_by_shape() -> None:
    document = json.dumps({"session_id": "s", "error": {"type": "Error", "message": "m"}}, indent=2)
    real = [TurnOutput(b"", f"YOLO mode is enabled.\nTrace\n{document}\n".encode(), 1)]
    fake = [TurnOutput(b"", b"YOLO mode is enabled.\nOther\n", 1)]
    assert [text for _, text in compare(real, fake)] == [
        "stderr: only in real: document",
        "stderr: line only in real: Trace",
        "stderr: line only in fake: Other",
    ]


def _context(engine: str, *kinds: str, mode: str = "json", stdout: bytes = b"") -> TurnContext:
    return TurnContext(engine, mode, TurnFacts(frozenset({"any", *kinds})), stdout, b"")


def test_differences_are_explained_only_by_a_variant_for_their_engine_and_turn() -> None:
    text = "stdout: line error in real where fake has item.completed:error"
    failed = lines({"type": "error", "message": "m"}, {"type": "turn.failed", "error": {"message": "m"}})
    difference = Difference("codex", "0.169.0", "s", "json", 1, text)
    (explained,) = classify([difference], _context("codex", "error-turn", stdout=failed))
    assert explained.variant == "codex-api-error-event"
    (other_engine,) = classify([difference], _context("gemini", "error-turn", stdout=failed))
    assert other_engine.variant is None
    (not_an_error_turn,) = classify([difference], _context("codex", stdout=failed))
    assert not_an_error_turn.variant is None
    extra = lines(
        {"type": "error", "message": "m", "code": 4}, {"type": "turn.failed", "error": {"message": "m"}}
    )
    (extra_key,) = classify([difference], _context("codex", "error-turn", stdout=extra))
    assert extra_key.variant is None
    unknown = Difference("codex", "0.169.0", "s", "json", 1, "stdout: only in real: turn.surprise")
    assert classify([unknown], _context("codex", "error-turn")) == [unknown]


def test_a_stderr_notice_is_excused_whole_never_as_a_prefix() -> None:
    notice = "stderr: line only in real: YOLO mode is enabled. All tool calls will be automatically approved."
    context = _context("gemini")
    found = [Difference("gemini", "0.61.0", "s", "json", 1, text) for text in (notice, notice + " And more.")]
    assert [d.variant for d in classify(found, context)] == ["gemini-stderr-notices", None]


def test_every_variant_has_a_reason_a_source_and_a_distinct_name_per_engine() -> None:
    pairs = [(variant.name, engine) for variant in VARIANTS for engine in variant.engines]
    assert len(pairs) == len(set(pairs))
    for variant in VARIANTS:
        assert len(variant.reason) > 40 and variant.engines and variant.source, variant.name
        assert variant.when in TURN_KINDS
        assert variant.excuses or variant.derived is not None, variant.name
        assert (variant.holds is None) == (not variant.requires), variant.name
        assert (variant.derived is None) == (not variant.derived_text), variant.name


def _assistant(*blocks: str) -> dict[str, object]:
    return {"type": "assistant", "message": {"content": [{"type": block} for block in blocks]}}


def test_a_missing_claude_event_is_excused_only_when_every_block_of_the_answers_is_there() -> None:
    missing = Difference("claude", "2.1.331", "s", "json", 1, "stdout: only in fake: assistant")
    facts = TurnFacts(frozenset({"any", "text-turn", "tool-turn"}), text_answers=2, calls=1)
    whole = lines(_assistant("text"), _assistant("tool_use"), _assistant("text"), {"type": "result"})
    (joined,) = classify([missing], TurnContext("claude", "json", facts, whole, b""))
    assert joined.variant == "claude-one-text-block-per-answer"
    no_call = lines(_assistant("text"), _assistant("text"), {"type": "result"})  # a tool_use event lost
    (lost,) = classify([missing], TurnContext("claude", "json", facts, no_call, b""))
    assert lost.variant is None


def test_a_codebuddy_reply_missing_from_the_events_is_excused_only_where_the_result_holds_it() -> None:
    missing = Difference("codebuddy", "2.118.2", "s", "json", 1, "stdout: only in fake: assistant")
    facts = TurnFacts(
        frozenset({"any", "text-turn", "tool-turn"}), text_answers=1, calls=1, last_answer_text=True
    )
    success = {"type": "result", "subtype": "success", "result": "the reply"}
    held = lines(_assistant("tool_use"), success)
    (excused,) = classify([missing], TurnContext("codebuddy", "json", facts, held, b""))
    assert excused.variant == "codebuddy-reply-only-in-result"
    for result in ({**success, "result": ""}, {"type": "result", "subtype": "success"}):
        (flagged,) = classify(
            [missing], TurnContext("codebuddy", "json", facts, lines(_assistant("tool_use"), result), b"")
        )
        assert flagged.variant is None
