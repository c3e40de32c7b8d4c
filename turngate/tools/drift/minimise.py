"""Minimise: shrink a capture to the fewest lines that still get the same wrong decision, and
write it out as a catalog scenario with a note of where it came from.

Delta debugging (Zeller's ddmin) over the capture's lines, stdout and stderr
together: a candidate keeps a subset of lines in order, and is kept when the
decider still decides what it decided on the whole capture. The result is
1-minimal: dropping any single line loses the wrong decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import yaml

from turngate.judge.catalog.checks import CONVENTION, REFERENCE
from turngate.tools.drift.capture import Capture
from turngate.tools.drift.mutators import Mutator
from turngate.tools.drift.sweep import Decider, Seen

T = TypeVar("T")


def ddmin(units: Sequence[T], keeps: Callable[[Sequence[T]], bool]) -> list[T]:
    """The classic algorithm: try halves, then complements, at ever finer granularity."""
    current = list(units)
    parts = 2
    while len(current) >= 2:
        size = max(1, len(current) // parts)
        chunks = [current[start : start + size] for start in range(0, len(current), size)]
        reduced = False
        for index, chunk in enumerate(chunks):
            if keeps(chunk):
                current, parts, reduced = chunk, 2, True
                break
            complement = [unit for other, part in enumerate(chunks) if other != index for unit in part]
            if len(chunks) > 2 and keeps(complement):
                current, parts, reduced = complement, max(parts - 1, 2), True
                break
        if not reduced:
            if parts >= len(current):
                break
            parts = min(len(current), parts * 2)
    return current


@dataclass(frozen=True, slots=True)
class Line:
    stream: str
    data: bytes


def lines_of(capture: Capture) -> list[Line]:
    return [Line("stdout", line) for line in capture.stdout.splitlines(keepends=True)] + [
        Line("stderr", line) for line in capture.stderr.splitlines(keepends=True)
    ]


def rebuild(capture: Capture, lines: Sequence[Line]) -> Capture:
    stdout = b"".join(line.data for line in lines if line.stream == "stdout")
    stderr = b"".join(line.data for line in lines if line.stream == "stderr")
    return capture.with_streams(stdout, stderr)


def minimise(
    capture: Capture,
    decider: Decider,
    aspect: str = "decision",
    *,
    expected: Seen | None = None,
    right: Decider | None = None,
) -> tuple[Capture, Seen]:
    """The smallest capture on which ``decider`` still decides as it does on ``capture``.

    With ``expected``, every candidate must also still get the ``expected`` decision from
    ``right`` (the reference): otherwise shrinking could keep the wrong answer while
    destroying what made the right answer right, and the scenario would test nothing.
    """
    wrong = decider(capture)

    def keeps(candidate: Sequence[Line]) -> bool:
        shrunk = rebuild(capture, candidate)
        if decider(shrunk).aspect(aspect) != wrong.aspect(aspect):
            return False
        if expected is None or right is None:
            return True
        return bool(right(shrunk).aspect(aspect) == expected.aspect(aspect))

    return rebuild(capture, ddmin(lines_of(capture), keeps)), wrong


# Writing the scenario ----------------------------------------------------------------------------

_MARKER_SOURCE: Final = {
    "file": "ENGINE_FORMATS.md",
    "heading": "Where the done marker may and may not count",
    "quote": (
        "Only the assistant's reply content is evidence: codex `agent_message`,\n"
        "gemini `response` / assistant `message`, iflow text outside the execution-info\n"
        "block, opencode `text`. The same marker text inside a tool call, a tool\n"
        "result, a command's `aggregated_output`, reasoning, or raw stderr noise is an\n"
        "echo, not evidence.\n"
    ),
}
_VARIANT_SOURCE: Final = {
    "file": "ENGINE_FORMATS.md",
    "heading": "The four engines as an orchestrator sees them",
    "quote": (
        "when a real engine's output drifts. Where a fact below has a known variant, the\n"
        'fake engine should be able to emit both (a "format variant" knob).\n'
    ),
}
_MARKER_MUTATORS: Final = frozenset(
    {
        "add-unknown-event",
        "escape-marker-twice",
        "marker-true-as-string",
        "marker-in-tool-result",
        "marker-in-reasoning",
        "marker-in-echoed-prompt",
    }
)


def _user_source(expectation: str) -> dict[str, str]:
    """The ``source`` of a scenario whose decision is the user's own expectation: no spec words."""
    return {
        "file": "(the user's expectation, not the spec)",
        "heading": f"turngate replay --expect {expectation}",
        "quote": (
            f"The user expects the decision {expectation} on these bytes: the user's own expectation, not"
            " a sentence of the spec. Its checks are backed by `convention`: informational unless a"
            " convention set is enforced (--conventions NAME).\n"
        ),
    }


def scenario_document(
    capture: Capture,
    *,
    expected: Seen,
    observed: Seen,
    mutator: Mutator | None,
    decider_name: str,
    original_lines: int,
    user_expectation: str | None = None,
) -> dict[str, Any]:
    """A catalog scenario that plays the minimised bytes and expects the spec's decision.

    ``user_expectation``: the decision is the user's (``turngate replay --expect STATE[/CODE]``), not the
    spec's. The catalog has no authority for a user's expectation, so its checks cite ``convention`` (a
    choice the spec leaves open, enforced only with ``--conventions``), never a spec sentence, and the
    scenario says whose expectation it is in its ID (``engine-format/user-expectation/...``), title,
    source and provenance.
    """
    digest = hashlib.sha256(capture.stdout + b"\0" + capture.stderr).hexdigest()[:8]
    what = mutator.name if mutator else "capture"
    turn = capture.raw_turn()
    runtime: dict[str, Any] = {"mode": capture.mode, "profile": "resumable"}
    by_user = user_expectation is not None
    provenance = {
        "from": capture.name,
        "mutator": what,
        # "wrongly" by the spec; by a user's expectation, only otherwise
        ("decided_otherwise_by" if by_user else "decided_wrongly_by"): decider_name,
        "observed": observed.label(),
        "minimised": f"{len(lines_of(capture))} of {original_lines} lines",
        "written_by": "turngate replay --expect --minimise" if by_user else "turngate drift --minimise",
    }
    if by_user:
        provenance["expected_by"] = (
            f"the user: turngate replay --expect {user_expectation} (not the spec's words)"
        )
    document: dict[str, Any] = {
        "id": f"engine-format/{'user-expectation' if by_user else 'drift'}/{what}-{capture.engine}-{digest}",
        "title": (
            f"{capture.engine} - {what} on {capture.name}, minimised: "
            + (
                f"the user expects {expected.label()}, not {observed.label()} (the user's expectation,"
                " not the spec's)"
                if by_user
                else f"the decision must be {expected.label()}, not {observed.label()}"
            )
        ),
        "provenance": provenance,
        "source": (
            _user_source(str(user_expectation))
            if by_user
            else dict(_MARKER_SOURCE if what in _MARKER_MUTATORS else _VARIANT_SOURCE)
        ),
        "level": "MUST",
        "tags": {"kind": "hazard", "engines": [capture.engine], "capabilities": ["events"]},
        "runtime": runtime,
        "engine_script": {"turns": [turn]},
        "by": {
            "state": CONVENTION if by_user else _state_authority(what, expected.state, capture.mode),
            "error_code": REFERENCE if expected.error_code is None else CONVENTION,
        },
        "steps": [{"start": None, "expect": {"state": expected.state, "error_code": expected.error_code}}],
    }
    if capture.output_schema != "greeting":
        document["skill"] = {"output_schema": capture.schema()}
    if capture.max_attempt is not None:
        document["skill"] = {**document.get("skill", {}), "max_attempt": capture.max_attempt}
    if capture.engine == "gemini":
        document["tags"]["gemini_output_format"] = capture.reader_options.get("mode", "json")
    return document


def _state_authority(mutator: str, state: str, mode: str) -> str:
    """The spec sentence a minimised scenario's decision rests on (sentences.yaml)."""
    if mutator in _MARKER_MUTATORS:  # an echo moved or a marker disguised: only the reply is evidence
        return "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and1"
    lifecycle = "interactive-run-lifecycle/"
    return {
        ("waiting_user", "interactive"): lifecycle + "pausable-lifecycle/incomplete-turn-enters-waiting#then",
        ("succeeded", "interactive"): lifecycle + "completion-gate-by-mode/interactive-success#then",
        ("succeeded", "auto"): lifecycle + "completion-gate-by-mode/auto-success#then",
    }.get((state, mode), "reference")  # a failure the spec does not name (an engine fault)


def write_scenario(document: dict[str, Any], catalog: Path) -> Path:
    path = catalog / f"{document['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
    )
    return path
