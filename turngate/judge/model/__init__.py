"""turngate's executable model of the spec: what a conforming orchestrator must show, run by run.

Written from the five files of ``../shared/spec/`` and independent of the reference orchestrator's
code, so that the two can be checked against each other:

- ``evidence``: what a scripted engine turn means to the gate (reply text, echoes, interruptions);
- ``decision_table``: the decision table of Decisions 1–8, each row with the sentences that back it;
- ``run_machine``: the run's state machine over start, reply, cancel, clock, restart and engine turns, per
  mode and profile, predicting every step's checks with their sentences;
- ``scenarios``: the catalog's scenario format both ways (a scenario as a run, a run as a scenario).

``turngate.explore`` uses it to generate runs no scenario wrote down and to judge any target on them.
"""

from turngate.judge.model.decision_table import Readings, decide
from turngate.judge.model.evidence import TurnEvidence, Unmodelled, turn_evidence
from turngate.judge.model.run_machine import Check, RunConfig, StepPrediction, Undetermined, predict

__all__ = [
    "Check",
    "Readings",
    "RunConfig",
    "StepPrediction",
    "TurnEvidence",
    "Undetermined",
    "Unmodelled",
    "decide",
    "predict",
    "turn_evidence",
]
