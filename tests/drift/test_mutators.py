"""Each drift mutator on a canonical capture: the reference's decision before and after, and the spec's word.

"irrelevant": the decision (or the marker) must not change; "flips": it must;
"unspecified": the spec is silent, and the test pins what the reference does.
"""

from __future__ import annotations

import pytest

from tests.drift.conftest import DONE, QUESTION, Play
from turngate.tools.drift.mutators import BY_NAME, MUTATORS
from turngate.tools.drift.sweep import DriftResult, drift

# (mutator, engine, gemini mode, capture, decision before, decision after); decisions are state[/error].
CASES = [
    ("drop-turn-end", "codex", None, DONE, "succeeded", "failed/ENGINE_TURN_INCOMPLETE"),
    ("drop-turn-end", "opencode", None, QUESTION, "waiting_user", "failed/ENGINE_TURN_INCOMPLETE"),
    ("drop-turn-end", "iflow", None, DONE, "succeeded", "failed/ENGINE_TURN_INCOMPLETE"),
    ("drop-turn-end", "gemini", "stream-json", DONE, "succeeded", "failed/ENGINE_TURN_INCOMPLETE"),
    ("add-unknown-event", "codex", None, DONE, "succeeded", "succeeded"),
    ("add-unknown-event", "opencode", None, QUESTION, "waiting_user", "waiting_user"),
    ("add-unknown-event", "gemini", "stream-json", DONE, "succeeded", "succeeded"),
    ("legacy-envelope", "codex", None, DONE, "succeeded", "succeeded"),
    ("legacy-envelope", "codex", None, QUESTION, "waiting_user", "waiting_user"),
    ("iflow-block-other-stream", "iflow", None, DONE, "succeeded", "succeeded"),
    ("iflow-block-other-stream", "iflow", None, QUESTION, "waiting_user", "waiting_user"),
    ("glue-noise", "gemini", "json", DONE, "succeeded", "succeeded"),
    ("glue-noise", "codex", None, DONE, "succeeded", "failed/SESSION_RESUME_FAILED"),
    ("pretty-print", "gemini", "json", DONE, "succeeded", "succeeded"),
    ("pretty-print", "codex", None, DONE, "succeeded", "waiting_user"),
    ("split-line", "codex", None, DONE, "succeeded", "succeeded"),
    ("split-line", "iflow", None, QUESTION, "waiting_user", "waiting_user"),
    ("escape-marker-twice", "codex", None, DONE, "succeeded", "failed/OUTPUT_NOT_FOUND"),
    ("escape-marker-twice", "iflow", None, DONE, "succeeded", "failed/OUTPUT_NOT_FOUND"),
    ("marker-true-as-string", "codex", None, DONE, "succeeded", "succeeded"),
    ("marker-true-as-string", "gemini", "json", DONE, "succeeded", "succeeded"),
    ("marker-in-tool-result", "codex", None, QUESTION, "waiting_user", "waiting_user"),
    ("marker-in-tool-result", "opencode", None, QUESTION, "waiting_user", "waiting_user"),
    ("marker-in-tool-result", "gemini", "stream-json", QUESTION, "waiting_user", "waiting_user"),
    ("marker-in-reasoning", "codex", None, QUESTION, "waiting_user", "waiting_user"),
    ("marker-in-reasoning", "opencode", None, QUESTION, "waiting_user", "waiting_user"),
    ("marker-in-echoed-prompt", "gemini", "stream-json", QUESTION, "waiting_user", "waiting_user"),
    ("opencode-top-level-text", "opencode", None, DONE, "succeeded", "succeeded"),
    ("rename-text-to-content", "codex", None, DONE, "succeeded", "waiting_user"),
    ("rename-text-to-content", "opencode", None, QUESTION, "waiting_user", "waiting_user"),
]


def shown(result: DriftResult, which: str) -> str:
    seen = getattr(result, which)
    return seen.state + (f"/{seen.error_code}" if seen.error_code else "")


@pytest.mark.parametrize(
    ("name", "engine", "gemini", "steps", "before", "after"),
    CASES,
    ids=[f"{name}-{engine}-{before}" for name, engine, _, _, before, _ in CASES],
)
def test_mutator(
    play: Play, name: str, engine: str, gemini: str | None, steps: list, before: str, after: str
) -> None:
    mutator = BY_NAME[name]
    capture = play(engine, steps, gemini=gemini or "json")
    [result] = drift([capture], mutators=[mutator])
    assert (shown(result, "before"), shown(result, "after")) == (before, after)
    # What the spec says, and the reference agrees with it (None where the spec is silent).
    assert result.agrees is not False, f"{name}: {result.verdict} ({mutator.source})"
    if result.verdict == "flips":
        assert result.flipped


def test_every_mutator_is_shown_on_a_capture() -> None:
    assert {name for name, *_ in CASES} == {mutator.name for mutator in MUTATORS}


def test_marker_mutators_compare_the_marker(play: Play) -> None:
    capture = play("codex", DONE)
    [twice] = drift([capture], mutators=[BY_NAME["escape-marker-twice"]])
    assert twice.aspect == "marker"
    assert twice.before.marker_found
    assert twice.after.marker_found
    [string] = drift([capture], mutators=[BY_NAME["marker-true-as-string"]])
    assert string.before.marker_found
    assert not string.after.marker_found
    assert string.agrees is True


def test_a_mutator_that_does_not_apply_is_left_out(play: Play) -> None:
    capture = play("iflow", DONE)
    assert BY_NAME["legacy-envelope"].apply(capture) is None
    assert drift([capture], mutators=[BY_NAME["legacy-envelope"]]) == []


def test_mutators_are_pure(play: Play) -> None:
    capture = play("codex", DONE)
    snapshot = (capture.stdout, capture.stderr)
    for mutator in MUTATORS:
        first = mutator.apply(capture)
        assert mutator.apply(capture) == first
    assert (capture.stdout, capture.stderr) == snapshot


def test_a_capture_nested_too_deep_is_not_an_object_and_no_recursion_error() -> None:
    from turngate.tools.drift.mutators import _json_objects, _obj

    deep = "[" * 100_000 + "]" * 100_000
    assert _obj(deep.encode()) is None
    assert _obj(b'{"a": 1}') == {"a": 1}
    assert _obj(b"\xff{}") is None  # not UTF-8: not an object either
    text = "noise " + '{"a":' * 5_000 + "1" + "}" * 5_000 + ' then {"ok": true}'
    found = [value for _, _, value in _json_objects(text)]  # an inner object shallow enough is fine
    assert found[-1] == {"ok": True}
