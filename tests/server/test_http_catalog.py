"""The whole catalog through the HTTP connector against `turngate serve`: the in-process records, exactly.

The in-process records are the golden files (tests/conformance/test_golden.py
pins the in-process connector to them), so equality with them is equality
with the in-process run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.catalog_parts import PARTS, in_part
from tests.server.conftest import Server, start_server, stop_server
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import Scenario, load_catalog
from turngate.judge.connectors.http_options import http_options
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import Target

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"


def golden(result: CaseResult) -> Mapping[str, Any]:
    name = f"{result.scenario_id.replace('/', '.')}.{result.engine}.json"
    return dict(json.loads((GOLDEN / name).read_text(encoding="utf-8")))


def as_in_process(record: Mapping[str, Any]) -> dict[str, Any]:
    """An HTTP case's record with what only a job-API server shows taken out: each event's seq and
    attempt (``event_envelopes``; the in-process connector's events have no envelope)."""
    steps = []
    for step in record.get("steps", ()):
        observation = {k: v for k, v in step["observation"].items() if k != "event_envelopes"}
        steps.append({**step, "observation": observation})
    return {**record, "steps": steps} if "steps" in record else dict(record)


def http_target(server: Server, *, hooks: bool, jobs: int = 1) -> Target:
    options = http_options(
        {
            **server.target_fields(turngate_hooks=hooks),
            "settle_timeout_sec": 60,
            # without hooks, the clock scenarios run on a short real session timeout
            "honours_session_timeout": not hooks,
            **({} if hooks else {"slots": 2}),  # the server's --slots: fillers show a held slot
            # without hooks, --probe-each-run makes the sticky scenarios run by the server's own
            # probe, and the skill's gemini settings choose gemini's output format
            **({} if hooks else {"probes_each_run": True, "skill_gemini_settings": True}),
            **({} if hooks else {"turn_timeout_sec": PLAIN_TURN_TIMEOUT}),  # its --turn-timeout
            "jobs": jobs,
        },
        None,
    )
    return Target(server.url, "http", http=options)


# The hookless server's engine watchdog: a hung engine's case waits this long (a bound, not a measure:
# a turn that takes longer on a loaded machine would be ended early, so it is not too short).
PLAIN_TURN_TIMEOUT = 10


@pytest.fixture(scope="module")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        tmp_path_factory.mktemp("serve-plain"), "--probe-each-run", "--turn-timeout", str(PLAIN_TURN_TIMEOUT)
    )
    try:
        yield running
    finally:
        stop_server(running)


# One test per engine, so that pytest-xdist's workers share the catalog; together they are all of it.
ENGINES = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")


def test_the_engines_here_are_all_the_catalogs_engines() -> None:
    assert {path.name.rsplit(".", 2)[-2] for path in GOLDEN.glob("*.json")} == set(ENGINES)


# The server passes the engine through to the reference's own code, which the in-process goldens
# pin per engine: codex runs the whole catalog over HTTP; gemini its stream hazards and the cases
# whose output format the job chooses, the others their stream hazards (the suite's time on
# two cores is counted). Two cases at a time: the test hooks are scoped to each case's job.
WHOLE_CATALOG_OVER_HTTP = ("codex",)


def _over_http(scenario: Scenario, engine: str) -> bool:
    if engine in WHOLE_CATALOG_OVER_HTTP:
        return True
    return scenario.id.startswith("engine-format/") or (
        engine == "gemini" and bool(scenario.gemini_output_format)
    )


def _over_http_in_parts() -> list[tuple[str, str]]:
    catalog = load_catalog(ROOT / "scenarios")
    return [
        (engine, part)
        for engine in ENGINES
        for part in PARTS
        if any(_over_http(scenario, engine) for scenario in in_part(catalog, part))
    ]


def test_codex_runs_every_golden_of_its_over_http() -> None:
    planned = cases(tuple(s for s in load_catalog(ROOT / "scenarios") if _over_http(s, "codex")), ["codex"])
    assert len(planned) == len(list(GOLDEN.glob("*.codex.json")))
    assert {engine for engine, _ in _over_http_in_parts()} == set(ENGINES)


@pytest.mark.parametrize(("engine", "part"), _over_http_in_parts())
def test_the_whole_catalog_over_http_gives_the_in_process_records(
    server: Server, engine: str, part: str
) -> None:
    catalog = tuple(s for s in in_part(load_catalog(ROOT / "scenarios"), part) if _over_http(s, engine))
    planned = cases(catalog, [engine])
    results = list(run_all(planned, target=http_target(server, hooks=True), jobs=2))
    assert len(results) == len(planned)
    problems = [
        f"{result.scenario_id} [{result.engine}]: {result.outcome}: {(result.message or ' ').splitlines()[0]}"
        for result in results
        # the goldens judge an ambiguous scenario by its default reading (unchosen here: `ambiguous`)
        if dict(
            as_in_process(result.record or {}),
            outcome=result.readings.get(str(result.reading), result.outcome),
        )
        != golden(result)
    ]
    assert not problems, "\n".join(problems[:10])


# What any job-API server shows; the reference's per-turn decisions, slot and patch are not among it.
NEUTRAL = ("state", "error_code", "warnings", "data", "pending", "attempts", "history", "events")


def neutral(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    # Without hooks a timeout case runs on a short real session_timeout_sec, which the server's
    # failure message names; the scenario's own value is in the in-process record.
    text = re.sub(r"session_timeout_sec=\d+", "session_timeout_sec=N", json.dumps(record))
    return _neutral(json.loads(text))


def _neutral(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "action": step["action"],
            "reply": step["reply"],
            "accepted": step["accepted"],
            "observation": {name: _timeless(name, step["observation"][name]) for name in NEUTRAL},
            # A server probes an engine's --help once, not once per case.
            "calls": [call for call in step["calls"] if call["action"] != "help"],
        }
        for step in record["steps"]
    ]


def _timeless(name: str, value: Any) -> Any:
    """History rows' timestamps come from the in-process manual clock or the server's real one (its
    events' ``ts``): their order is checked by the verdict; here only that each row carries one."""
    if name != "history" or not value:
        return value
    return [{**row, "timestamp": "<t>"} if row.get("timestamp") is not None else row for row in value]


@pytest.mark.mostly_waiting  # on the server's real timeouts and its slot fillers
@pytest.mark.parametrize("engine", ["codex", "gemini"])
def test_without_test_hooks_the_job_api_alone_shows_the_same_runs(plain_server: Server, engine: str) -> None:
    """The fake engines' call log shows the patch, a short real timeout stands in for the clock,
    filler jobs show whether a run holds a slot, the server's own per-run probe makes the sticky
    cases sticky, the skill's gemini settings choose gemini's output format, and four cases run at
    once (each installs its own skill; those observing slots or the engines' resumability run
    alone), the hung-engine cases wait for the server's own watchdog, and filler jobs hold the
    server's slots for a step (slot_fill): nothing is skipped but restart."""
    target = http_target(plain_server, hooks=False, jobs=4)
    assert target.http is not None
    assert "restart" not in target.http.capabilities
    catalog = load_catalog(ROOT / "scenarios")
    if engine == "gemini":
        # codex runs the whole lifecycle over the bare job API; gemini's own hazards are its output
        # formats, chosen by the skill's settings: its stream cases (the suite's time is counted)
        catalog = tuple(s for s in catalog if s.id.startswith("engine-format/") or s.gemini_output_format)
    planned = cases(catalog, [engine])
    results = list(run_all(planned, target=target, jobs=4))
    ran = [result for result in results if result.outcome != "skipped"]
    skipped = sorted({result.message for result in results if result.outcome == "skipped"})
    lacking = ("lacks: restart",)
    assert skipped == [message for message in skipped if message.endswith(lacking)], skipped
    if engine == "codex":
        assert any(
            result.scenario_id.startswith("interactive-run-lifecycle/strict-switch/sticky") for result in ran
        )
    if engine == "gemini":  # chosen by the skill's own gemini settings
        assert any(result.scenario_id == "engine-format/tool-echo/gemini" for result in ran)
    problems = [
        f"{result.scenario_id} [{result.engine}]: {result.outcome}: {(result.message or ' ').splitlines()[0]}"
        + (_first_difference(neutral(result.record), neutral(golden(result))) if result.record else "")
        for result in ran
        if result.record is None
        or _judged(result) != golden(result)["outcome"]
        or neutral(result.record) != neutral(golden(result))
    ]
    assert not problems, "\n".join(problems[:10])


def _first_difference(mine: Any, theirs: Any, where: str = "") -> str:
    """Where a neutral record first differs from the golden one, and both values (for the message)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            if mine.get(key) != theirs.get(key):
                return _first_difference(mine.get(key), theirs.get(key), f"{where}.{key}")
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}[{index}]")
    if mine == theirs:
        return ""
    return f" (at {where or '(record)'}: {mine!r:.300} here, golden {theirs!r:.300})"


def _judged(result: Any) -> str:
    """A hookless server shows no audit next to its gate (Decision 3.1's third rule): that check alone
    is unverified there, which makes such a case partial; any other unverified check is a problem."""
    unverified = {item["key"] for item in result.differences if item["severity"] == "unverified"}
    # the goldens judge an ambiguous scenario by its default reading (unchosen here: `ambiguous`)
    outcome = result.readings.get(str(result.reading), result.outcome)
    return "passed" if outcome == "partial" and unverified == {"audit"} else str(outcome)
