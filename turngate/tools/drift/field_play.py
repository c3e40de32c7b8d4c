"""A capture played by the fake engines against any target: the field report, reproduced where it failed.

The capture becomes a one-turn scenario whose engine script writes the exact
bytes (``raw`` steps, no end-of-turn added, the capture's exit code or
signal), run through the ordinary runner and connector, so an HTTP server or
a command-protocol implementation sees the stream as a real engine would
deliver it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from turngate.judge.case_run import run_case
from turngate.judge.catalog import load_catalog
from turngate.judge.targets import Target
from turngate.tools.drift.capture import Capture
from turngate.tools.drift.minimise import scenario_document, write_scenario
from turngate.tools.drift.sweep import Decider, Seen

_PLACEHOLDER = Seen("waiting_user", None, None)


class PlayError(RuntimeError):
    """The target could not run the capture (errored or skipped), so there is no decision to compare."""


def target_decider(target: Target) -> Decider:
    def decide(capture: Capture) -> Seen:
        document = scenario_document(
            capture,
            expected=_PLACEHOLDER,
            observed=_PLACEHOLDER,
            mutator=None,
            decider_name=target.name,
            original_lines=0,
        )
        with tempfile.TemporaryDirectory(prefix="turngate-play-") as folder:
            path = write_scenario(document, Path(folder))
            [scenario] = load_catalog(Path(folder), paths=[path])
            result = run_case(
                scenario,
                capture.engine,
                target.connector(),
                shared=target.shared,
            )
        if result.record is None:
            raise PlayError(
                f"{capture.name} on {target.name}: {result.outcome}: {result.message.splitlines()[0]}"
            )
        observation = result.record["steps"][0]["observation"]
        decisions = observation.get("decisions") or []
        marker = decisions[-1]["marker"]["found"] if decisions and decisions[-1].get("marker") else None
        return Seen(observation["state"], observation["error_code"], marker)

    return decide
