"""The interaction history rebuilt from a server's protocol events: every reply event, automatic ones too."""

from __future__ import annotations

from typing import Any

from turngate.judge.connectors.http_events import history_from_events


def _event(kind: str, data: dict[str, Any], attempt: int, ts: str) -> dict[str, Any]:
    return {"type": kind, "data": data, "meta": {"attempt": attempt}, "ts": ts}


def test_an_automatic_decision_event_closes_its_round_as_automatic() -> None:
    # Skill-Runner from 4cb89ba: the timed-out wait's reply is interaction.auto_decide.timeout.
    events = [
        _event("user.input.required", {"interaction_id": 1, "prompt": "Which style?"}, 1, "t1"),
        _event(
            "interaction.auto_decide.timeout",
            {"interaction_id": 1, "resolution_mode": "auto_decide_timeout", "policy": "engine_judgement"},
            2,
            "t2",
        ),
    ]
    assert history_from_events(events) == (
        {"interaction_id": 1, "prompt": "Which style?", "automatic": True, "timestamp": "t2"},
    )


def test_a_person_s_reply_named_by_its_resolution_mode_is_not_automatic() -> None:
    events = [
        _event("user.input.required", {"interaction_id": 1, "prompt": "Which style?"}, 1, "t1"),
        _event(
            "interaction.reply.accepted",
            {"interaction_id": 1, "resolution_mode": "user_reply", "response_preview": "Formal"},
            2,
            "t2",
        ),
    ]
    assert history_from_events(events) == (
        {
            "interaction_id": 1,
            "prompt": "Which style?",
            "response": "Formal",
            "automatic": False,
            "timestamp": "t2",
        },
    )


def test_an_answered_ask_with_no_reply_event_at_all_leaves_the_history_unknown() -> None:
    events = [
        _event("user.input.required", {"interaction_id": 1, "prompt": "Which style?"}, 1, "t1"),
        _event("conversation.completed", {}, 2, "t2"),
    ]
    assert history_from_events(events) is None
