"""The one done-marker detector (Decision 3.1), on text and on engine transcripts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turngate.engines import readers
from turngate.implementations.reference.marker import find_markers, has_done_marker, marker_evidence

PLAIN = '{"greeting": "Hello", "__SKILL_DONE__": true}'


@pytest.mark.spec("design/decision-3.1/unified-detector")
@pytest.mark.parametrize(
    ("text", "forms"),
    [
        (PLAIN, ("plain",)),
        ('{"__SKILL_DONE__":true}', ("plain",)),
        ('{"__SKILL_DONE__" :\n  true }', ("plain",)),
        (json.dumps(PLAIN), ("escaped",)),  # the reply quoted as a JSON string, as in a raw NDJSON line
        ('{\\"__SKILL_DONE__\\": true}', ("escaped",)),
        ('{"__SKILL_DONE__": false}', ()),
        ('{"__SKILL_DONE__": "true"}', ()),
        ('{"__SKILL_DONE__": trueish}', ()),
        ("__SKILL_DONE__: true", ()),
        ("{'__SKILL_DONE__': True}", ()),
        ("", ()),
    ],
)
def test_marker_spellings(text: str, forms: tuple[str, ...]) -> None:
    assert tuple(hit.form for hit in find_markers(text)) == forms
    assert has_done_marker(text) == bool(forms)


@given(st.text())
def test_marker_found_in_any_reply_that_carries_it(prefix: str) -> None:
    assert has_done_marker(prefix + PLAIN + prefix)
    assert has_done_marker(prefix + json.dumps(PLAIN) + prefix)


def _codex(*items: dict[str, object]) -> bytes:
    lines = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}]
    lines += [{"type": "item.completed", "item": item} for item in items]
    lines += [{"type": "turn.completed", "usage": {}}]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


# 003 "done marker 检测兼容转义流文本": escaped in an NDJSON assistant string counts;
# tool_use / tool echoes MUST NOT count.
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection")
def test_escaped_marker_in_agent_message_is_evidence() -> None:
    stdout = _codex({"id": "item_1", "type": "agent_message", "text": PLAIN})
    assert b'\\"__SKILL_DONE__\\": true' in stdout  # escaped on the wire
    assert marker_evidence(readers.read("codex", stdout)).found


@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection")
@pytest.mark.parametrize(
    "item",
    [
        {
            "id": "i",
            "type": "command_execution",
            "command": "cat SKILL.md",
            "aggregated_output": PLAIN,
            "exit_code": 0,
            "status": "completed",
        },
        {"id": "i", "type": "reasoning", "text": f"I must end with {PLAIN}"},
    ],
)
def test_echoes_are_not_evidence(item: dict[str, object]) -> None:
    transcript = readers.read(
        "codex", _codex(item, {"id": "j", "type": "agent_message", "text": "Which style?"})
    )
    assert not marker_evidence(transcript).found


def test_marker_in_echoed_user_prompt_or_stderr_noise_is_not_evidence() -> None:
    stdout = "".join(
        json.dumps(line) + "\n"
        for line in [
            {"type": "init", "session_id": "s", "model": "m"},
            {"type": "message", "role": "user", "content": f"finish with {PLAIN}"},
            {"type": "message", "role": "assistant", "content": "Which style?", "delta": True},
            {"type": "result", "status": "success", "stats": {}},
        ]
    ).encode()
    transcript = readers.read("gemini", stdout, PLAIN.encode() + b"\n", mode="stream-json")
    assert not marker_evidence(transcript).found


def test_marker_split_across_gemini_deltas_is_found_once_joined() -> None:
    half = len(PLAIN) // 2
    stdout = "".join(
        json.dumps(line) + "\n"
        for line in [
            {"type": "init", "session_id": "s", "model": "m"},
            {"type": "message", "role": "assistant", "content": PLAIN[:half], "delta": True},
            {"type": "message", "role": "assistant", "content": PLAIN[half:], "delta": True},
            {"type": "result", "status": "success", "stats": {}},
        ]
    ).encode()
    assert marker_evidence(readers.read("gemini", stdout, mode="stream-json")).found


@given(st.integers(min_value=1, max_value=20_000))
def test_hostile_text_is_scanned_without_blowup(size: int) -> None:
    # Long runs of what the pattern could start on: quotes, backslashes, near-markers.
    text = ('\\"__SKILL_DONE__\\"' + " " * 50) * (size // 60 + 1)
    assert not has_done_marker(text)
