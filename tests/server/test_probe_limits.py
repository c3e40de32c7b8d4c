"""`turngate probe` finds turngate serve's test hooks, its slots and its engine watchdog, and leaves
no job of its own behind: each against a real `turngate serve` subprocess on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.server.conftest import Server, start_server, stop_server
from tests.server.miniatures.app import Behaviour, serve
from turngate.judge import probe_limits
from turngate.judge.connectors.http_jobs import TERMINAL
from turngate.judge.connectors.http_options import http_options
from turngate.judge.probe import probe_server
from turngate.judge.probe_jobs import PROBE_SKILL, Ledger
from turngate.judge.probe_limits import count_slots
from turngate.judge.skill_writer import write_skill


@pytest.fixture
def hooked(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "serve", "--test-hooks", "--slots", "2")
    try:
        yield running
    finally:
        stop_server(running)


def states(server: Server, jobs: Iterable[str]) -> set[str]:
    return {server.call("GET", f"/v1/jobs/{job}")[1]["status"] for job in jobs}


def slots_of(server: Server, root: Path, ledger: Ledger, most: int = 8) -> probe_limits.Limit:
    skill = write_skill(root, {}, name=PROBE_SKILL)
    options = http_options({"base_url": server.url, "scripts_dir": str(server.scripts)}, None)
    return count_slots(options, skill, "codex", server.scripts, root, ledger, most=most)


def test_the_probe_finds_the_test_hooks_by_asking_them_and_then_nothing_is_missing(
    hooked: Server, tmp_path: Path
) -> None:
    found = probe_server(
        hooked.url, scripts=hooked.scripts, call_log=hooked.call_log, workdir=tmp_path, models={},
        engines=("codex",),
    )  # fmt: skip
    said = "\n".join(found.lines)
    assert found.target["turngate_hooks"] is True
    assert "turngate test hooks: yes (GET /v1/_turngate/jobs/<job>/internals answers)" in said
    assert "engine watchdog: not probed: turngate's hooks set it per case" in said
    assert found.lines[-1].startswith("nothing missing: all ")
    assert found.target["slots"] == 2
    # Nothing of the probe's holds the server: both slots are free to hold, no turn is running.
    assert hooked.call("POST", "/v1/_turngate/slots/fill") == (200, {"held": 2})
    hooked.call("POST", "/v1/_turngate/slots/free")
    assert hooked.call("POST", "/v1/_turngate/idle", {"timeout": 30})[1] == {"idle": True}
    assert states(hooked, found.jobs) <= TERMINAL


@pytest.mark.parametrize("slots", [1, 2])
def test_slots_are_counted_by_filler_jobs_until_one_queues_and_every_filler_is_canceled(
    slots: int, tmp_path: Path
) -> None:
    server = start_server(tmp_path / "serve", "--slots", str(slots))
    try:
        ledger = Ledger()
        limit = slots_of(server, tmp_path, ledger)
        left = states(server, ledger.jobs)
    finally:
        stop_server(server)
    assert limit.fields == {"slots": slots}
    assert limit.line.startswith(f"slots: {slots} (filler job {slots + 1} queued while {slots} held")
    assert len(ledger.jobs) == slots + 1
    assert left == {"canceled"}
    assert not list(server.scripts.glob(f"{PROBE_SKILL}__slots*"))  # their scripts are gone too


def test_all_fillers_running_is_at_least_the_bound_and_writes_no_slots(tmp_path: Path) -> None:
    server = start_server(tmp_path / "serve", "--slots", "2")
    try:
        ledger = Ledger()
        limit = slots_of(server, tmp_path, ledger, most=2)
        left = states(server, ledger.jobs)
    finally:
        stop_server(server)
    assert limit.fields == {}
    assert limit.line.startswith("slots: at least 2 (2 filler jobs held an engine at once")
    assert left == {"canceled"}


def test_fillers_are_canceled_when_the_count_is_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[str] = []
    past_queue = probe_limits._past_queue

    def interrupted(transport: object, job: str) -> str | None:
        looked.append(job)
        if len(looked) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second filler is looked at
        return past_queue(transport, job)  # type: ignore[arg-type]

    monkeypatch.setattr(probe_limits, "_past_queue", interrupted)
    server = start_server(tmp_path / "serve", "--slots", "2")
    try:
        ledger = Ledger()
        with pytest.raises(KeyboardInterrupt):
            slots_of(server, tmp_path, ledger)
        left = states(server, ledger.jobs)
    finally:
        stop_server(server)
    assert len(ledger.jobs) == 2
    assert left == {"canceled"}


def test_the_watchdog_is_found_by_a_hung_engine_and_written_above_what_was_seen(tmp_path: Path) -> None:
    server = start_server(tmp_path / "serve", "--turn-timeout", "3")
    try:
        found = probe_server(
            server.url, scripts=server.scripts, call_log=None, workdir=tmp_path, models={},
            engines=("codex",), timeout_probe=False, slots_most=0, watchdog_wait=60,
        )  # fmt: skip
        left = states(server, found.jobs)
    finally:
        stop_server(server)
    said = "\n".join(found.lines)
    assert "engine watchdog: a hung engine's job failed TIMEOUT after " in said
    assert found.target["turn_timeout_sec"] > 3  # rounded up past what was seen, never below it
    assert "watchdog" in http_options(found.target, None).capabilities
    assert not any(line.startswith("turn_timeout_sec:") for line in found.lines)  # not missing
    assert left <= TERMINAL


def test_a_server_that_runs_the_engine_before_answering_holds_no_job_so_neither_is_probed(
    tmp_path: Path,
) -> None:
    """The miniature ends every job inside POST /v1/jobs: no filler could hold anything there."""
    with serve(Behaviour()) as (url, _mini):
        found = probe_server(
            url, scripts=tmp_path / "scripts", call_log=None, workdir=tmp_path, models={}, timeout_probe=False
        )
    said = "\n".join(found.lines)
    assert "jobs held: none can be: a job whose engine takes 2 s was already succeeded" in said
    assert "slots: not probed (no job can be held)" in said
    assert "engine watchdog: not probed (no job can be held)" in said
    assert "slots" not in found.target
    assert "turn_timeout_sec" not in found.target


def test_tidying_the_probe_s_jobs_on_a_server_gone_away_names_them_at_once(tmp_path: Path) -> None:
    from tests.server.test_http_connector import free_port

    gone = f"http://127.0.0.1:{free_port()}"
    options = http_options({"base_url": gone, "scripts_dir": str(tmp_path)}, None)
    ledger = Ledger()
    ledger.add("run-1")
    assert ledger.tidy(options) == ["run-1"]
