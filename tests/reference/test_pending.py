"""The backend-owned pending interaction: baseline, enrichment from a clean hint only, replies."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference.conftest import DEFECTS, FORMS
from turngate.engines.fake.hint_forms import render
from turngate.implementations.reference.hints import ASK_USER_HINT_MALFORMED, read_hint
from turngate.implementations.reference.pending import (
    ASK_USER_KIND_UNKNOWN,
    ASK_USER_POLICY_UNKNOWN,
    DEFAULT_DECISION_POLICY,
    DEFAULT_KIND,
    FALLBACK_PROMPT,
    INTERACTION_STALE,
    KINDS,
    Option,
    Pending,
    accepts_reply,
    auto_decision_reply,
    build_pending,
    pending_from_json,
)

PROSE = "I need to know the greeting style first."
OPTIONS = [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}]
ENRICHED: dict[str, Any] = {
    "prompt": "Which greeting style do you want?",
    "kind": "choose_one",
    "options": OPTIONS,
    "ui_hints": {"widget": "radio"},
    "context": {"step": 2, "seen": ["formal"], "nested": {"deep": [1, {"x": None}]}},
    "required_fields": ["style"],
    "default_decision_policy": "first_option",
    "interaction_id": 99,
}
API_KEYS = {
    "interaction_id",
    "kind",
    "prompt",
    "options",
    "ui_hints",
    "context",
    "required_fields",
    "default_decision_policy",
    "source",
    "diagnostics",
}
NO_REPLY = "No reply from the user within the time limit."


def _hint(form: str, *, text: str | None = PROSE, defect: str | None = None, **fields: Any) -> str:
    spec: dict[str, Any] = {"form": form, **fields}
    if text is not None:
        spec["text"] = text
    if defect is not None:
        spec["defect"] = defect
    return render(spec)


def _baseline(pending: Pending, *, attempt: int, prompt: str) -> None:
    assert pending.interaction_id == attempt
    assert (pending.kind, pending.prompt, pending.source) == (DEFAULT_KIND, prompt, "baseline")
    assert pending.options == ()
    assert pending.required_fields == ()
    assert dict(pending.ui_hints) == {}
    assert dict(pending.context) == {}
    assert pending.default_decision_policy == DEFAULT_DECISION_POLICY


# -- the baseline (Decision 5) ---------------------------------------------------------------------


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
@pytest.mark.spec("interactive-decision-policy/question-payload/core-fields")
def test_baseline_from_the_final_message_without_a_hint() -> None:
    pending = build_pending(attempt_number=3, final_message="  Which style do you want?\n")
    _baseline(pending, attempt=3, prompt="Which style do you want?")
    assert pending.diagnostics == ()
    payload = pending.to_json()
    assert set(payload) == API_KEYS
    assert (payload["kind"], payload["prompt"]) == ("open_text", "Which style do you want?")
    assert payload["default_decision_policy"] == "engine_judgement"


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
@pytest.mark.parametrize("message", [None, "", "   \n\t"])
def test_fallback_prompt_when_there_is_no_message(message: str | None) -> None:
    _baseline(build_pending(attempt_number=1, final_message=message), attempt=1, prompt=FALLBACK_PROMPT)
    assert FALLBACK_PROMPT == "The skill is waiting for your input."


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
def test_fallback_prompt_when_the_message_is_only_a_malformed_hint() -> None:
    message = _hint("yaml_block", text=None, defect="missing_prompt", kind="choose_one")
    pending = build_pending(attempt_number=2, final_message=message)
    _baseline(pending, attempt=2, prompt=FALLBACK_PROMPT)
    assert pending.diagnostics == (f"{ASK_USER_HINT_MALFORMED}: yaml_block: prompt: missing",)


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
@pytest.mark.parametrize("form", FORMS)
def test_the_hint_prompt_when_the_message_is_only_a_clean_hint(form: str) -> None:
    pending = build_pending(attempt_number=1, final_message=_hint(form, text=None, **ENRICHED))
    assert pending.prompt == "Which greeting style do you want?"
    assert pending.source == f"baseline+{form}"


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
@pytest.mark.parametrize("form", FORMS)
def test_a_hint_never_becomes_the_prompt_verbatim(form: str) -> None:
    for defect in (None, *DEFECTS):
        pending = build_pending(attempt_number=1, final_message=_hint(form, defect=defect, **ENRICHED))
        assert pending.prompt == PROSE, (form, defect)
        for fragment in ("ASK_USER_YAML", "ask_user", "outcome", "```"):
            assert fragment not in pending.prompt


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
def test_a_repeated_hint_id_never_stalls_the_attempt_count() -> None:
    message = _hint("legacy_json", **ENRICHED)  # the engine says interaction_id 99 every turn
    ids = [build_pending(attempt_number=n, final_message=message).interaction_id for n in (1, 2, 3)]
    assert ids == [1, 2, 3]
    hint = read_hint(message)
    assert hint is not None
    assert hint.fields["interaction_id"] == 99  # read, never used


@pytest.mark.spec("design/decision-5/backend-pending-baseline")
@given(
    attempt=st.integers(min_value=1, max_value=10**9),
    hint_id=st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.none()),
    form=st.sampled_from(FORMS),
    defect=st.sampled_from((None, *DEFECTS)),
)
@settings(deadline=None, max_examples=200)
def test_interaction_id_is_the_attempt_number_whatever_the_hint_says(
    attempt: int, hint_id: object, form: str, defect: str | None
) -> None:
    fields = {**ENRICHED, "interaction_id": hint_id}
    pending = build_pending(attempt_number=attempt, final_message=_hint(form, defect=defect, **fields))
    assert pending.interaction_id == attempt
    assert pending.to_json()["interaction_id"] == attempt


@given(st.text(), st.integers(min_value=1, max_value=1000))
@settings(deadline=None)
def test_any_message_gives_a_usable_pending(message: str, attempt: int) -> None:
    pending = build_pending(attempt_number=attempt, final_message=message)
    assert pending.interaction_id == attempt
    assert pending.prompt.strip()
    assert pending.kind in KINDS
    assert pending.default_decision_policy
    json.dumps(pending.to_json(), allow_nan=False)  # always storable and servable as JSON
    assert auto_decision_reply(pending).startswith(NO_REPLY)


@pytest.mark.parametrize("attempt", [0, -1, True])
def test_attempt_numbers_start_at_one(attempt: int) -> None:
    with pytest.raises(ValueError, match="attempt_number"):
        build_pending(attempt_number=attempt, final_message="x")


# -- enrichment from a clean hint only (Decision 4) ------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/unified-turn-protocol/ask-user-optional-enrichment")
@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.spec("interactive-decision-policy/question-payload/core-fields")
@pytest.mark.parametrize("form", FORMS)
def test_a_clean_hint_enriches_the_baseline(form: str) -> None:
    pending = build_pending(attempt_number=4, final_message=_hint(form, **ENRICHED))
    assert pending.interaction_id == 4
    assert (pending.kind, pending.prompt, pending.source) == ("choose_one", PROSE, f"baseline+{form}")
    assert pending.options == (Option("Formal", "formal"), Option("Casual", "casual"))
    assert pending.required_fields == ("style",)
    assert pending.default_decision_policy == "first_option"
    assert pending.diagnostics == ()
    payload = pending.to_json()
    assert payload["ui_hints"] == {"widget": "radio"}
    assert payload["context"] == ENRICHED["context"]
    assert payload["options"] == OPTIONS


@pytest.mark.spec("interactive-engine-turn-protocol/ask-user-validation/incomplete-payload")
@pytest.mark.spec("design/decision-4/ask-user-optional-enrichment")
@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("form", FORMS)
def test_a_malformed_hint_changes_nothing_but_the_enrichment(form: str, defect: str) -> None:
    message = _hint(form, defect=defect, **ENRICHED)
    pending = build_pending(attempt_number=5, final_message=message)
    _baseline(pending, attempt=5, prompt=PROSE)
    hint = read_hint(message)
    assert hint is not None
    assert not hint.clean
    assert pending.diagnostics == hint.problems
    assert all(line.startswith(f"{ASK_USER_HINT_MALFORMED}: {form}: ") for line in pending.diagnostics)


@pytest.mark.spec("interactive-decision-policy/question-kind/kind-missing-or-unexpected")
def test_a_missing_kind_is_open_text_and_keeps_the_enrichment() -> None:
    fields = {key: value for key, value in ENRICHED.items() if key != "kind"}
    pending = build_pending(attempt_number=1, final_message=_hint("yaml_block", **fields))
    assert (pending.kind, pending.source, pending.diagnostics) == ("open_text", "baseline+yaml_block", ())
    assert [option.value for option in pending.options] == ["formal", "casual"]


@pytest.mark.spec("interactive-decision-policy/question-kind/kind-missing-or-unexpected")
@pytest.mark.parametrize("kind", ["multiple_choice", "CHOOSE_ONE", ""])
def test_an_unexpected_kind_is_open_text_with_a_diagnostic(kind: str) -> None:
    pending = build_pending(
        attempt_number=1, final_message=_hint("yaml_fenced", **{**ENRICHED, "kind": kind})
    )
    assert pending.kind == "open_text"
    assert pending.diagnostics == (f"{ASK_USER_KIND_UNKNOWN}: {kind!r}: shown as open_text",)
    assert pending.source == "baseline+yaml_fenced"  # the rest of the enrichment stays
    assert pending.options
    assert pending.default_decision_policy == "first_option"
    assert accepts_reply(pending, 1, "whatever the kind") is None  # the flow still proceeds


@pytest.mark.spec("interactive-decision-policy/question-payload/core-fields")
@pytest.mark.parametrize("kind", KINDS)
def test_every_known_kind_is_kept(kind: str) -> None:
    pending = build_pending(attempt_number=1, final_message=_hint("yaml_flow", prompt="p", kind=kind))
    assert pending.kind == kind
    assert "kind" in pending.to_json()
    assert pending.to_json()["prompt"] == PROSE


# -- the value: frozen, JSON round trip ------------------------------------------------------------


def test_pending_is_frozen_all_the_way_down() -> None:
    pending = build_pending(attempt_number=1, final_message=_hint("yaml_block", **ENRICHED))
    with pytest.raises(dataclasses.FrozenInstanceError):
        pending.kind = "confirm"  # type: ignore[misc]
    with pytest.raises(TypeError):
        pending.ui_hints["widget"] = "select"  # type: ignore[index]
    with pytest.raises(TypeError):
        pending.context["nested"]["deep"] = []
    assert isinstance(pending.context["seen"], tuple)
    payload = pending.to_json()
    payload["context"]["nested"]["deep"].append(2)  # a plain copy: the value itself is untouched
    assert pending.to_json()["context"] == ENRICHED["context"]


@pytest.mark.parametrize("defect", [None, "wrong_types"])
@pytest.mark.parametrize("form", FORMS)
def test_json_round_trip(form: str, defect: str | None) -> None:
    message = _hint(form, defect=defect, **{**ENRICHED, "kind": "odd"})
    pending = build_pending(attempt_number=7, final_message=message)
    stored = json.loads(json.dumps(pending.to_json(), allow_nan=False))
    assert pending_from_json(stored) == pending
    assert pending_from_json(stored).to_json() == stored


def test_pending_from_json_fills_defaults_and_refuses_a_bad_id() -> None:
    assert pending_from_json({"interaction_id": 2}) == Pending(2, DEFAULT_KIND, FALLBACK_PROMPT)
    with pytest.raises(ValueError, match="interaction_id"):
        pending_from_json({"interaction_id": "2"})


# -- default_decision_policy and the automatic decision --------------------------------------------


@pytest.mark.spec("interactive-decision-policy/default-decision-policy/pending-has-policy")
def test_every_pending_carries_a_decision_policy() -> None:
    for message in (
        None,
        "Which?",
        _hint("yaml_block", prompt="p"),
        _hint("legacy_json", defect="truncated"),
    ):
        payload = build_pending(attempt_number=1, final_message=message).to_json()
        assert payload["default_decision_policy"] == "engine_judgement"


@pytest.mark.spec("interactive-decision-policy/default-decision-policy/pending-has-policy")
@pytest.mark.parametrize(
    ("policy", "reply"),
    [
        ("engine_judgement", f"{NO_REPLY} Decide by your own best judgement and continue."),
        (
            "first_option",
            f'{NO_REPLY} Proceed with the first option, "Formal" (value: formal), and continue.',
        ),
        ("casual", f'{NO_REPLY} Proceed with the option "Casual" (value: casual) and continue.'),
        (
            "safe_default",
            f"{NO_REPLY} Take the safest, most conservative choice, do nothing irreversible, and continue.",
        ),
        (
            "deny",
            f"{NO_REPLY} Treat the question as declined: do not take the action asked about, and continue.",
        ),
        ("coin_flip", f"{NO_REPLY} Decide by your own best judgement and continue."),
    ],
)
def test_auto_decision_reply_follows_the_policy(policy: str, reply: str) -> None:
    message = _hint("yaml_block", **{**ENRICHED, "default_decision_policy": policy})
    pending = build_pending(attempt_number=1, final_message=message)
    assert pending.default_decision_policy == policy
    assert auto_decision_reply(pending) == reply
    unknown = policy == "coin_flip"
    assert pending.diagnostics == (
        (f"{ASK_USER_POLICY_UNKNOWN}: 'coin_flip': decided as engine_judgement",) if unknown else ()
    )


def test_first_option_without_options_leaves_the_decision_to_the_engine() -> None:
    pending = Pending(1, "open_text", "Which?", default_decision_policy="first_option")
    assert auto_decision_reply(pending) == f"{NO_REPLY} Decide by your own best judgement and continue."


# -- replies ---------------------------------------------------------------------------------------


@pytest.mark.spec("interactive-decision-policy/free-text-reply/any-kind-free-text")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "response", ["Formal, please", "", "  ", '{"style": "formal"}', "yes", "42", "不要", "formal\ncasual"]
)
def test_free_text_is_accepted_for_every_kind(kind: str, response: str) -> None:
    pending = Pending(3, kind, "Which?", options=(Option("Formal", "formal"),))
    assert accepts_reply(pending, 3, response) is None


@pytest.mark.parametrize("interaction_id", [2, 4, 0, -3, True, "3", 3.0, None])
def test_a_reply_to_another_interaction_is_stale(interaction_id: object) -> None:
    pending = Pending(3, "open_text", "Which?")
    assert accepts_reply(pending, interaction_id, "Formal") == INTERACTION_STALE


def test_a_reply_to_the_engines_own_id_is_stale() -> None:
    pending = build_pending(attempt_number=2, final_message=_hint("legacy_json", **ENRICHED))
    assert accepts_reply(pending, 99, "Formal") == INTERACTION_STALE
    assert accepts_reply(pending, 2, "Formal") is None
