"""Between the model and the catalog: a scenario's run as a model input, the model's predictions as a
scenario's ``expect`` and ``by``.

The catalog's scenario format is the one language turngate judges in, so the model speaks it both
ways: :func:`config_of` reads a catalog scenario as a run to predict (the model must agree with every
scenario), and :func:`scenario_document` writes a predicted run as a scenario file (an explored run
that found a difference becomes a permanent regression case).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from turngate.judge.catalog import Scenario
from turngate.judge.catalog.sentences import sentences
from turngate.judge.model.decision_table import Readings
from turngate.judge.model.evidence import Unmodelled
from turngate.judge.model.run_machine import (
    DEFAULT_SESSION_TIMEOUT_SEC,
    REFERENCE,
    Check,
    RunConfig,
    StepPrediction,
)

# The greeting schema every catalog skill has unless it says otherwise (judge/skill_writer.py writes it).
GREETING_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}
# Each named reading of the spec's ambiguous sentences, as the gate's readings.
READINGS: Final[Mapping[str, Readings]] = {
    "decision-4.1-body": Readings(soft="decision-4.1-body"),
    "decision-4.1-heading": Readings(soft="decision-4.1-heading"),
    "marker-literal": Readings(marker="marker-literal"),
    "marker-lenient": Readings(marker="marker-lenient"),
    "quoted-in-reply-counts": Readings(escaped="quoted-in-reply-counts"),
    "wire-escape-only": Readings(escaped="wire-escape-only"),
    "process-failure-fails": Readings(process="process-failure-fails"),
    "evidence-first": Readings(process="evidence-first"),
}


def readings_named(name: str | None) -> Readings:
    return READINGS.get(name or "", Readings())


def config_of(scenario: Scenario, engine: str, reading: str | None = None) -> RunConfig:
    """A catalog scenario's run, on one engine, under one of its readings (None: its default)."""
    if any(step.slots_full for step in scenario.steps):
        # Other work holding every slot is the harness's doing, not a run's: the model has no slots.
        raise Unmodelled("a step with every slot held by other work")
    runtime = scenario.runtime
    schema = scenario.skill.get("output_schema", GREETING_SCHEMA)
    return RunConfig(
        engine=engine,
        mode=str(runtime["mode"]),
        turns=_as_played(scenario.engine_script, engine),
        profile=str(runtime.get("profile") or "resumable"),
        require_user_reply=bool(runtime.get("require_user_reply", True)),
        session_timeout_sec=float(runtime.get("session_timeout_sec", DEFAULT_SESSION_TIMEOUT_SEC)),
        max_attempt=scenario.skill.get("max_attempt"),
        output_schema=schema if schema is not None else {"type": "object"},
        readings=readings_named(reading or scenario.default_reading),
    )


def _as_played(script: Mapping[str, Any], engine: str) -> tuple[Mapping[str, Any], ...]:
    """The script's turns as the engine plays them, where an engine's variant changes what a step means:
    kilo's ``cut_ends_step`` ends a cut stream's turn as a finished one (the answer, ``step_finish``
    reason ``other``, exit 0; docs/fake-engines.md, kilo), so its turn is the steps before the cut."""
    turns = tuple(script.get("turns", ()))
    if not script.get("variants", {}).get(engine, {}).get("cut_ends_step"):
        return turns
    return tuple(_cut_ends_turn(turn) for turn in turns)


def _cut_ends_turn(turn: Mapping[str, Any]) -> Mapping[str, Any]:
    steps = list(turn.get("steps", ()))
    for index, step in enumerate(steps):
        error = step.get("model_error") if isinstance(step, Mapping) else None
        if isinstance(error, Mapping) and error.get("cut") and not error.get("recovers"):
            return {**turn, "steps": steps[:index], "end": "completed", "exit_code": 0}
    return turn


def source_of(sentence_id: str) -> dict[str, str]:
    """A scenario's ``source``: the sentence it checks, quoted verbatim from sentences.yaml."""
    sentence = sentences()[sentence_id]
    return {"file": sentence.file, "heading": sentence.heading, "quote": sentence.quote}


def step_expectations(checks: Sequence[Check]) -> tuple[dict[str, Any], dict[str, str]]:
    """A step's predicted checks as the catalog's ``expect`` and that step's ``by``."""
    expect: dict[str, Any] = {}
    by: dict[str, str] = {}
    for check in checks:
        head, _, field = check.key.partition(".")
        match head:
            case "pending" if field:
                if expect.get("pending", {}) is None:
                    continue
                expect.setdefault("pending", {})[field] = check.value
                by[check.key] = check.by
                by.setdefault("pending", REFERENCE)
            case "argv":
                line = dict(check.value)
                if "resumed" in line:
                    by["argv.resumed"] = check.by
                elif "by" not in line:
                    line["by"] = check.by
                expect.setdefault("argv", []).append(line)
                by.setdefault("argv", REFERENCE)
            case "history" if field:
                by[check.key] = check.by
            case "history":
                expect["history"] = check.value
                by["history"] = check.by
                by.setdefault("history.automatic", REFERENCE)  # True only for the model's own reason
            case _:
                expect[check.key] = check.value
                by[check.key] = check.by
    return expect, by


def scenario_document(
    scenario_id: str,
    title: str,
    predictions: Sequence[StepPrediction],
    *,
    engines: Sequence[str],
    capabilities: Sequence[str],
    script: Mapping[str, Any],
    runtime: Mapping[str, Any],
    skill: Mapping[str, Any],
    readings: Mapping[str, Sequence[StepPrediction]] | None = None,
    default_reading: str | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A catalog scenario file (docs/scenarios.md) for a predicted run. ``readings``: where the run's
    predictions differ by a reading of an ambiguous sentence, every reading's predictions."""
    steps = []
    for prediction in predictions:
        expect, by = step_expectations(prediction.checks)
        step: dict[str, Any] = {prediction.action: prediction.argument, "expect": expect}
        if by:
            step["by"] = by
        steps.append(step)
    cited = [check.by for p in predictions for check in p.checks if check.by not in (REFERENCE, "convention")]
    document: dict[str, Any] = {
        "id": scenario_id,
        "title": title,
    }
    if provenance:
        document["provenance"] = dict(provenance)
    document.update(
        {
            # The first sentence the run's checks cite, quoted (an explored finding cites the one it broke).
            "source": source_of(cited[0] if cited else "design/decision-1/dual-track-gate#3"),
            "level": "MUST",
            "tags": {"kind": "scenario", "engines": list(engines), "capabilities": sorted(capabilities)},
        }
    )
    if readings and default_reading:
        overrides: dict[str, dict[str, Any]] = {}
        reading_by: dict[str, dict[str, Any]] = {}
        for name, predicted in readings.items():
            changed: dict[str, Any] = {}
            changed_by: dict[str, Any] = {}
            for index, (mine, theirs) in enumerate(zip(predictions, predicted, strict=True)):
                if theirs.checks != mine.checks:
                    expect, by = step_expectations(theirs.checks)
                    changed[str(index)] = expect
                    changed_by[str(index)] = by
            overrides[name] = changed
            if changed_by:
                reading_by[name] = changed_by
        document["ambiguous"] = {
            "note": "The model's predictions differ by a reading of an ambiguous sentence.",
            "default": default_reading,
            "readings": overrides,
            **({"by": reading_by} if reading_by else {}),
        }
    if skill:
        document["skill"] = dict(skill)
    document["runtime"] = dict(runtime)
    document["engine_script"] = dict(script)
    document["steps"] = steps
    return document
