"""Exploration: generated runs on a target, each judged against the model's predictions.

hypothesis draws plans (``turngate.judge.exploration.plans``); each plan becomes a scenario whose checks
are the model's predictions with their sentences, and runs through the same runner, connector and
verdict as a catalog case. A case that fails (or is non-strict, or errs) is a finding: hypothesis
shrinks it to its smallest run, and the smallest run is written as a catalog scenario file citing
the sentence it breaks, so that it becomes a permanent regression case. Deterministic for a seed and
a target that behaves the same.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml
from hypothesis import HealthCheck, Phase, given, reject, seed, settings
from hypothesis.errors import HypothesisException

from turngate.judge.case_result import CaseResult
from turngate.judge.case_run import run_case
from turngate.judge.catalog import Scenario, load_scenario
from turngate.judge.exploration.plans import Plan, plans, scenario_for
from turngate.judge.model import Undetermined, Unmodelled
from turngate.judge.model.scenarios import source_of
from turngate.judge.targets import Target

FINDINGS: Final = ("failed", "non-strict", "errored")
ROOT: Final = "explored"  # the first part of an explored scenario's ID


@dataclass(frozen=True, slots=True)
class Finding:
    """The smallest run found that the target gets wrong, as a scenario, with the verdict."""

    plan: Plan
    result: CaseResult
    document: dict[str, Any]
    first_found_at: int  # how many runs exploration needed to find it (before shrinking)
    sentence: str | None  # the sentence the first failing difference cites

    @property
    def headline(self) -> str:
        first = self.result.message.split("\n")[0] if self.result.message else self.result.outcome
        return f"{self.result.outcome}: {first}"


@dataclass(slots=True)
class Exploration:
    """What one exploration did: runs, time, outcomes, and its finding (None: none)."""

    seed: int
    target: str
    runs: int = 0
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)
    declined: int = 0  # runs the model declines to predict (drawn, not run)
    finding: Finding | None = None
    digests: list[str] = field(default_factory=list)  # every run, in order (the same for a seed)
    per_engine: dict[str, int] = field(default_factory=dict)  # runs on each engine

    def to_json(self) -> dict[str, Any]:
        found = self.finding
        return {
            "seed": self.seed,
            "target": self.target,
            "runs": self.runs,
            "seconds": round(self.seconds, 2),
            "outcomes": dict(sorted(self.outcomes.items())),
            "per_engine": dict(sorted(self.per_engine.items())),
            "declined": self.declined,
            "finding": None
            if found is None
            else {
                "outcome": found.result.outcome,
                "sentence": found.sentence,
                "first_found_at": found.first_found_at,
                "message": found.result.message,
                "scenario": found.document,
            },
        }


class _Found(Exception):
    def __init__(self, plan: Plan, result: CaseResult, document: dict[str, Any]) -> None:
        super().__init__(result.outcome)
        self.plan, self.result, self.document = plan, result, document


def explore(
    target: Target,
    capabilities: frozenset[str],
    *,
    engines: Sequence[str],
    budget: int,
    time_budget_sec: float | None = None,
    seed_value: int = 0,
    shrink: bool = True,
    reading: str | None = None,
    progress: Callable[[Exploration], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Exploration:
    """Up to ``budget`` generated runs on ``target`` (fewer when ``time_budget_sec`` runs out first);
    stops at the first finding, shrunk (unless ``shrink`` is False: a slow target's first failing run
    may be all one can afford). ``reading``: judge a run whose prediction depends on a reading of
    an ambiguous sentence strictly by that reading (as ``turngate run --reading``); without it such
    a run holding under one reading and breaking another is ``ambiguous``, never a finding.
    ``capabilities``: what the target offers (its connector's)."""
    report = Exploration(seed=seed_value, target=target.name)
    started = clock()
    first: list[int] = []
    raised: list[_Found] = []
    shrinking = False

    @settings(
        max_examples=budget,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @seed(seed_value)
    @given(plans(capabilities=capabilities, engines=tuple(engines)))
    def one(plan: Plan) -> None:
        nonlocal shrinking
        if not shrinking and time_budget_sec is not None and clock() - started > time_budget_sec:
            return  # the time budget is spent: the remaining examples pass at once
        try:
            document = scenario_for(plan, capabilities, scenario_id=_scenario_id(plan))
        except (Unmodelled, Undetermined):
            report.declined += 1
            reject()
        result = run_plan(plan, document, target, reading)
        report.runs += 1
        report.digests.append(plan.digest)
        report.per_engine[plan.engine] = report.per_engine.get(plan.engine, 0) + 1
        report.outcomes[result.outcome] = report.outcomes.get(result.outcome, 0) + 1
        if progress is not None:
            progress(report)
        if result.outcome in FINDINGS:
            if not first:
                first.append(report.runs)
            shrinking = True
            found = _Found(plan, result, document)
            raised.append(found)
            raise found

    try:
        one()
    except _Found as found:
        report.finding = _finding(found, first[0])
    except HypothesisException:
        # A target that does not fail again on the same run (Flaky): keep the smallest failing run seen.
        if not raised:
            raise
        smallest = min(raised, key=lambda item: len(repr(item.document)))
        report.finding = _finding(smallest, first[0])
    report.seconds = clock() - started
    return report


def run_plan(plan: Plan, document: dict[str, Any], target: Target, reading: str | None = None) -> CaseResult:
    """One plan on the target, through the runner and the verdict, as a catalog case."""
    return run_case(
        scenario_of(document),
        plan.engine,
        target.connector(),
        reading=reading,
        shared=target.shared,
    )


def scenario_of(document: dict[str, Any]) -> Scenario:
    """A scenario document through the catalog's own loader (schema, authorities), as a saved file
    would be read."""
    with tempfile.TemporaryDirectory(prefix="turngate-explore-") as folder:
        root = Path(folder)
        path = root / f"{document['id']}.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return load_scenario(path, root)


def save(finding: Finding, folder: Path) -> Path:
    """Write the finding as a catalog scenario under ``folder`` (use it with ``--catalog folder``)."""
    path = folder / f"{finding.document['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(finding.document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _scenario_id(plan: Plan, sentence: str | None = None) -> str:
    where = _slug(sentence) if sentence else "run"
    return f"{ROOT}/{where}/{plan.engine}-{plan.digest}"


def _slug(sentence: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", sentence).strip("-").lower()


def _finding(found: _Found, first_found_at: int) -> Finding:
    """The shrunk run, renamed after the sentence it breaks and citing it as its source."""
    sentence = next(
        (
            difference["authority"]
            for difference in found.result.differences
            if difference.get("severity") in ("failed", "non-strict")
            and difference.get("authority") not in ("convention", "reference")
        ),
        None,
    )
    document = dict(found.document)
    document["id"] = _scenario_id(found.plan, sentence)
    document["provenance"] = {
        "from": "turngate explore",
        "outcome": found.result.outcome,
        "difference": found.result.message.split("\n")[0] if found.result.message else found.result.outcome,
    }
    if sentence is not None:
        document["source"] = source_of(sentence)
    ordered: dict[str, Any] = {key: document[key] for key in ("id", "title", "provenance") if key in document}
    ordered.update({key: value for key, value in document.items() if key not in ordered})
    return Finding(found.plan, found.result, ordered, first_found_at, sentence)
