"""Fidelity's comparison by shape, and the named variants (no npm: the streams are written here)."""

from __future__ import annotations

import json

from turngate.engines.real.shapes import events
from turngate.tools.realengines.fidelity import VARIANTS, Difference, TurnOutput, classify, compare


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
        "stderr: real text, fake silent",
    ]


def test_a_pretty_document_after_noise_is_one_document() -> None:
    data = b"YOLO mode is enabled.\n" + json.dumps({"session_id": "s", "response": "r"}, indent=2).encode()
    assert [label for label, _ in events(data)] == ["text", "document"]


def test_differences_are_explained_only_by_a_variant_for_their_engine() -> None:
    text = "stdout: line error in real where fake has item.completed:error"
    assert classify(Difference("codex", "0.169.0", "s", "json", 1, text)).variant == "codex-api-error-event"
    assert classify(Difference("gemini", "0.61.0", "s", "json", 1, text)).variant is None
    unknown = "stdout: only in real: turn.surprise"
    assert classify(Difference("codex", "0.169.0", "s", "json", 1, unknown)).variant is None


def test_every_variant_has_a_reason_and_a_distinct_name() -> None:
    names = [variant.name for variant in VARIANTS]
    assert len(names) == len(set(names))
    assert all(len(variant.reason) > 40 and variant.engines for variant in VARIANTS)
