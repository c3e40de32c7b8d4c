"""Plans: the runs exploration generates (hypothesis strategies), and each as a catalog scenario.

A plan is runtime options, a skill, an engine script composed from the fake engines' evidence atoms,
and the user's actions in any order. Atoms are the shapes that decide gates: the marker (plain,
escaped inside a string, echoed by a tool, in reasoning, on stderr), valid, invalid and missing
output, ask_user hints valid and malformed, crashes, signals, truncated streams and hangs. The model
(``turngate.judge.model``) predicts every step; the plan becomes a scenario whose checks are those
predictions, so the runner and the verdict judge an explored run exactly as a catalog case.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

from turngate.judge.model import StepPrediction, Undetermined, predict
from turngate.judge.model.run_machine import RunConfig
from turngate.judge.model.scenarios import GREETING_SCHEMA, readings_named, scenario_document

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
# The spec's ambiguous sentences, each with its default reading first (the catalog's defaults).
AMBIGUITIES: Final = (("decision-4.1-body", "decision-4.1-heading"), ("marker-literal", "marker-lenient"))
# Which capability a predicted check needs the target to have (absent: every target shows it).
_NEEDS: Final[Mapping[str, str]] = {
    "slot_held": "slots",
    "history": "history",
    "history.automatic": "history",
    "required_event": "events",
    "argv": "argv",
    "engine_calls": "argv",
}


@dataclass(frozen=True, slots=True)
class Plan:
    """One generated run: everything a scenario file says but the expectations."""

    engine: str
    runtime: Mapping[str, Any]
    skill: Mapping[str, Any]
    script: Mapping[str, Any]  # the engine script: {turns: [...], resident?: true}
    steps: tuple[tuple[str, Any], ...]
    gemini_output_format: str | None = None  # stream-json: gemini's deltas, its echo of the user's turn

    def config(self, reading: str | None = None) -> RunConfig:
        return RunConfig(
            engine=self.engine,
            mode=str(self.runtime["mode"]),
            turns=tuple(self.script["turns"]),
            profile=str(self.runtime.get("profile", "resumable")),
            require_user_reply=bool(self.runtime.get("require_user_reply", True)),
            session_timeout_sec=float(self.runtime.get("session_timeout_sec", 1200)),
            max_attempt=self.skill.get("max_attempt"),
            output_schema=self.skill.get("output_schema", GREETING_SCHEMA),
            readings=readings_named(reading),
        )

    @property
    def digest(self) -> str:
        text = json.dumps(
            [self.engine, self.runtime, self.skill, self.script, self.steps, self.gemini_output_format],
            sort_keys=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()[:10]


def scenario_for(
    plan: Plan, capabilities: frozenset[str], *, scenario_id: str, provenance: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The plan as a catalog scenario whose checks are the model's predictions, keeping only the
    checks the target can show (a target's missing capability never turns a check unverified).

    Where a reading of an ambiguous sentence changes a prediction, the scenario carries the readings
    (as the catalog's do); a run that two ambiguities both change is not the model's to decide."""
    default = _kept(predict(plan.config(None), plan.steps), capabilities)
    ambiguous: list[tuple[str, str, tuple[StepPrediction, ...]]] = []
    for usual, other in AMBIGUITIES:
        steps = _kept(predict(plan.config(other), plan.steps), capabilities)
        if steps != default:
            ambiguous.append((usual, other, steps))
    if len(ambiguous) > 1:
        raise Undetermined("two ambiguous sentences both change this run")
    readings = {ambiguous[0][0]: default, ambiguous[0][1]: ambiguous[0][2]} if ambiguous else None
    others = {ambiguous[0][1]: ambiguous[0][2]} if ambiguous else {}
    document = scenario_document(
        scenario_id,
        f"explored run {plan.digest} on {plan.engine}",
        default,
        engines=[plan.engine],
        capabilities=sorted(_needed(plan, default, others)),
        script=plan.script,
        runtime=plan.runtime,
        skill=plan.skill,
        readings=readings,
        default_reading=ambiguous[0][0] if ambiguous else None,
        provenance=provenance,
    )
    if plan.gemini_output_format is not None:
        document["tags"]["gemini_output_format"] = plan.gemini_output_format
    return document


def _kept(steps: Sequence[StepPrediction], capabilities: frozenset[str]) -> tuple[StepPrediction, ...]:
    return tuple(
        StepPrediction(
            step.action,
            step.argument,
            tuple(check for check in step.checks if _NEEDS.get(check.key, "") in capabilities | {""}),
            step.observed,
        )
        for step in steps
    )


def _needed(
    plan: Plan, steps: Sequence[StepPrediction], others: Mapping[str, Sequence[StepPrediction]]
) -> set[str]:
    needed: set[str] = set()
    for step in (*steps, *(s for other in others.values() for s in other)):
        needed |= {_NEEDS[check.key] for check in step.checks if check.key in _NEEDS}
    actions = {action for action, _ in plan.steps}
    if "advance_clock" in actions:
        needed.add("clock")
    if "restart" in actions:
        needed.add("restart")
    if plan.runtime.get("profile") == "sticky_process":
        needed.add("sticky")
    if "turn_timeout_sec" in plan.runtime:
        needed.add("watchdog")
    return needed


# The atoms ---------------------------------------------------------------------------------------

_MARKER: Final = '"__SKILL_DONE__": true'
QUESTIONS: Final = (
    "Which greeting style do you want?",
    "Should the greeting include a name?",
    "Formal or casual?",
)
# Replies; the last carries the marker, which an engine may echo back as the user's turn (gemini's
# stream-json does): the user's words are never the assistant's evidence.
REPLIES: Final = ("Formal", "Yes, Ada", "Casual, please", 'Formal, like {"greeting": "Hi", ' + _MARKER + "}")
# The reply text of one turn: what decides the gate.
_REPLY_ATOMS: Final[Mapping[str, Any]] = {
    "question": None,  # prose only (one of QUESTIONS)
    "valid-with-marker": '{"greeting": "Good day", ' + _MARKER + "}",
    "valid": '{"greeting": "Good day"}',
    "invalid-with-marker": '{"greeting": 42, ' + _MARKER + "}",
    "invalid": '{"greeting": 42}',
    "marker-alone": "{" + _MARKER + "}",
    "escaped-marker-invalid": '{"greeting": 42, "note": "{\\"__SKILL_DONE__\\": true}"}',
    "fenced-valid-with-marker": 'Here it is:\n```json\n{"greeting": "Hello", ' + _MARKER + "}\n```",
    "prose-then-valid": 'Done.\n{"greeting": "Hello"}',
    # Look-alikes of the marker: not it under the literal reading, it under the lenient one.
    "look-alike-string-true": '{"style": "formal", "__SKILL_DONE__": "true"}',
    "look-alike-key-case": '{"style": "formal", "__skill_done__": true}',
    "look-alike-true-prefix": '{"style": "formal", "__SKILL_DONE__": trueish}',
}
# Echoes and noise before the reply: never evidence, whatever they carry.
_NOISE_ATOMS: Final[Sequence[Mapping[str, Any]]] = (
    {"think": "I will end with {" + _MARKER + "} once the user answered."},
    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": "end with {" + _MARKER + "}"}},
    {"tool": {"name": "search", "input": {"q": "style"}, "output": "no results", "status": "error"}},
    {"stderr": "warning: retrying {" + _MARKER + "}"},
)
_DEFECTS: Final = (
    "missing_prompt",
    "non_numeric_interaction_id",
    "wrong_types",
    "broken_syntax",
    "truncated",
)
_FORMS: Final = ("yaml_block", "yaml_fenced", "yaml_flow", "legacy_json")


@st.composite
def _hint(draw: st.DrawFn) -> dict[str, Any]:
    hint: dict[str, Any] = {
        "form": draw(st.sampled_from(_FORMS)),
        "prompt": draw(st.sampled_from(QUESTIONS)),
        "kind": draw(st.sampled_from(("choose_one", "open_text", "confirm"))),
        "options": [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}],
    }
    if draw(st.booleans()):
        hint["defect"] = draw(st.sampled_from(_DEFECTS))
    if draw(st.booleans()):
        # The hint's own id: never the pending's (Decision 5: backend-generated), never a count.
        hint["interaction_id"] = 7  # the same at every wait: a pending that took it would not grow
    return hint


@st.composite
def _turn(draw: st.DrawFn, *, watchdog: bool) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        dict(item) for item in draw(st.lists(st.sampled_from(_NOISE_ATOMS), max_size=2))
    ]
    shape = draw(st.sampled_from(("say", "say", "say", "hint", "say-and-hint")))
    if shape in ("say", "say-and-hint"):
        # A question half the time: runs that wait reach the later turn positions.
        atom = draw(st.sampled_from(("question",) * len(_REPLY_ATOMS) + tuple(sorted(_REPLY_ATOMS))))
        text = _REPLY_ATOMS[atom] or draw(st.sampled_from(QUESTIONS))
        steps.append({"say": text})
    if shape in ("hint", "say-and-hint"):
        steps.append({"ask_user": draw(_hint())})
    ending = draw(
        st.sampled_from(("none",) * 12 + ("crash", "signal", "truncate") + (("hang",) if watchdog else ()))
    )
    match ending:
        case "crash":
            steps.append({"crash": {"exit_code": 1}})
        case "signal":
            steps.append({"crash": {"signal": "SIGKILL"}})
        case "truncate":
            steps.append({"truncate": {"at": 0.5, "exit_code": 1}})
        case "hang":
            steps.append({"hang": True})
    return {"steps": steps}


@st.composite
def _action(draw: st.DrawFn, *, capabilities: frozenset[str], timeout: float) -> tuple[str, Any]:
    kinds = ["reply", "reply", "reply", "cancel"]
    if "clock" in capabilities:
        kinds += ["advance_clock", "advance_clock"]
    if "restart" in capabilities:
        kinds.append("restart")
    kind = draw(st.sampled_from(kinds))
    match kind:
        case "reply":
            return ("reply", draw(st.sampled_from(REPLIES)))
        case "advance_clock":
            # fractions of the session timeout on both sides of it, never exactly on it (the model
            # refuses a run that lands on the deadline: the spec says "exceeds")
            return ("advance_clock", round(timeout * draw(st.sampled_from((0.25, 0.6, 1.3, 2.5))), 3))
    return (kind, None)


@st.composite
def plans(draw: st.DrawFn, *, capabilities: frozenset[str], engines: Sequence[str]) -> Plan:
    """Runs over modes × profiles × engines × turn positions × actions × evidence."""
    engine = draw(st.sampled_from(tuple(engines)))
    mode = draw(st.sampled_from(("interactive", "interactive", "auto")))
    runtime: dict[str, Any] = {"mode": mode}
    if mode == "interactive":
        sticky = "sticky" in capabilities and draw(st.integers(0, 3)) == 0
        runtime["profile"] = "sticky_process" if sticky else "resumable"
        runtime["require_user_reply"] = draw(st.booleans())
    timeout = draw(st.sampled_from((None, 60, 300)))
    if timeout is not None:
        runtime["session_timeout_sec"] = timeout
    watchdog = "watchdog" in capabilities and draw(st.integers(0, 7)) == 0
    if watchdog:
        runtime["turn_timeout_sec"] = 1
    skill: dict[str, Any] = {}
    max_attempt = draw(st.sampled_from((None, None, 1, 2, 3, 4, 0)))
    if max_attempt is not None:
        skill["max_attempt"] = max_attempt
    if draw(st.integers(0, 4)) == 0:
        # Permissive: any JSON object is valid output, so a hint envelope taken for output shows.
        skill["output_schema"] = {"type": "object"}
    actions = draw(st.lists(_action(capabilities=capabilities, timeout=timeout or 1200), max_size=5))
    turns = [draw(_turn(watchdog=watchdog)) for _ in range(len(actions) + 1)]
    script: dict[str, Any] = {"turns": turns}
    if runtime.get("profile") == "sticky_process":
        script["resident"] = True
    stream = engine == "gemini" and "gemini_output_format" in capabilities and draw(st.booleans())
    return Plan(
        engine, runtime, skill, script, (("start", None), *actions), "stream-json" if stream else None
    )


__all__ = ["Plan", "plans", "scenario_for"]
