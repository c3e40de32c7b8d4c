"""A case's steps on the connector: each scenario step done, then what the target shows observed,
with the engine calls the step caused (read from the call log)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, cast

from turngate.engines.fake.engine import find_case_token
from turngate.judge.catalog import Scenario
from turngate.judge.connectors.call_log import LogMarks, calls_since, wait_finished
from turngate.judge.decision_record import Placeholders, observed_step
from turngate.protocol.connector import (
    CaseSetup,
    Connector,
    Observation,
    PackageRefused,
    ReplyResult,
    SlotFilling,
)

# States after which no engine of the run should still be running.
_ENDED: Final = frozenset({"succeeded", "failed", "canceled"})


def perform(
    scenario: Scenario, connector: Connector, setup: CaseSetup, workdir: Path, call_log: Path
) -> list[dict[str, Any]]:
    """The observed steps, one per scenario step done (a package the target refused ends them)."""
    names = Placeholders(str(workdir))
    steps: list[dict[str, Any]] = []
    marks = LogMarks.of(call_log)  # a shared log: only this case's part
    for index, step in enumerate(scenario.steps):
        reply: ReplyResult | None = None
        accepted: bool | None = None
        with _slots_held(connector, step.slots_full):
            match step.action:
                case "start":
                    try:
                        connector.start(setup)
                    except PackageRefused as refusal:  # no run at all: the one thing left to observe
                        if scenario.expectations(setup.reading)[index].get("state") != "refused":
                            raise  # a package the scenario thinks valid: the target's reason, errored
                        refused = Observation(
                            "refused", None, (), None, None, None, 0, extra={"refusal": str(refusal)}
                        )
                        observed = observed_step(
                            index, step.action, step.argument, refused, None, None, [], names
                        )
                        steps.append({**observed, "engine": setup.engine})
                        break
                case "reply":
                    text, interaction_id = (
                        (step.argument, None)
                        if isinstance(step.argument, str)
                        else (step.argument["text"], step.argument.get("interaction_id"))
                    )
                    reply = connector.reply(text, interaction_id)
                case "advance_clock":
                    connector.advance_clock(float(step.argument))
                case "cancel":
                    accepted = connector.cancel()
                case "restart":
                    connector.restart()
            connector.settle()
            observation = connector.observe()
            if observation.state in _ENDED:  # the server may say so before its engine has ended
                wait_finished(call_log, marks, setup.case_id)
            calls = _calls(call_log, setup.case_id, marks.log)
            observed = observed_step(
                index, step.action, step.argument, observation, reply, accepted, calls, names
            )
            steps.append({**observed, "engine": setup.engine})
    return steps


@contextmanager
def _slots_held(connector: Connector, held: bool) -> Iterator[None]:
    """Other work holds every free slot during the step (``slots_full``; the scenario needs
    slot_fill, so the connector has the two methods). The slots are given back even when the step
    fails, so that a shared server never keeps them; then what waited for one runs."""
    if not held:
        yield
        return
    filling = cast(SlotFilling, connector)
    filling.fill_slots()
    try:
        yield
    finally:
        filling.free_slots()
    connector.settle()


def _calls(path: Path, case: str, start: int) -> list[dict[str, Any]]:
    """This case's engine calls: those written since it started that name it, or no case (probes).

    Read as `calls_since` reads them: on a shared server another case's engine may be writing its
    line right now, and half a line is not a call."""
    calls = calls_since(path, start)
    # A --version probe (the reference's codex flag choice) is no part of the run's lifecycle.
    return [call for call in calls if _of_case(call, case) and call.get("action") != "version"]


def _of_case(call: dict[str, Any], case: str) -> bool:
    """A call naming this case; or naming none (a probe), unless its prompt names another case: an
    engine killed before it noted its case (a canceled slot filler, another case run beside)."""
    if call.get("case") is not None:
        return bool(call["case"] == case)
    prompt = json.dumps([call.get("argv"), call.get("stdin")], ensure_ascii=False)
    return find_case_token(prompt) in (case, None)
