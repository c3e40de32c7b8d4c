"""Slots seen and held from outside a server, with filler jobs (the target file's ``slots``).

A filler is an auto job of the case's skill whose fake engine sleeps: once started it holds a slot
until it is canceled. Started as many times as the server has slots while the case's run waits, the
fillers show whether that run holds a slot (all start: it holds none; all but one: it holds one),
and, kept running for a step, they hold every slot the run does not.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from turngate.engines.fake.script import remove_compiled, write_compiled
from turngate.judge.connectors.http_jobs import TERMINAL, job_request
from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.connectors.http_transport import TargetError, Transport
from turngate.protocol.connector import CaseSetup, TargetUnreachable

FILLER_WAIT_SEC: Final = 4.0  # how long slot fillers are given to start
# The real time a case that observes slots spends on its fillers (started, waited for, canceled).
LOOKING_SEC: Final = int(2 * FILLER_WAIT_SEC + 2)
FILLER_RUNTIME: Final = MappingProxyType({"execution_mode": "auto", "no_cache": True})


@dataclass(frozen=True, slots=True)
class Fillers:
    """Filler jobs started on the server, and the scripts their engines play."""

    jobs: tuple[str, ...]
    scripts: tuple[Path, ...]


class SlotFillers:
    """One case's filler jobs: held for a step (`hold`, `release`), or started to look (`run_holds_slot`)."""

    def __init__(self, transport: Transport, options: HttpOptions) -> None:
        self._transport = transport
        self._options = options
        self.held: Fillers | None = None

    def hold(self, setup: CaseSetup, slots: int) -> None:
        """Hold every free slot until `release`. The fillers are started while the case's run waits
        (holding no slot, or the case's own slot_held check says otherwise), so as many as the server
        has slots are started, and those that start within FILLER_WAIT_SEC hold every slot that was free."""
        fillers = self._start(setup, "holder", slots, hold_sec=self._options.settle_timeout_sec)
        if fillers is None:
            raise TargetError("slots cannot be held: the server refused a filler job")
        self.held = fillers
        self._running(fillers, until_all=True)

    def release(self) -> None:
        """Cancel the held fillers, if any, and let their slots go."""
        if self.held is not None:
            fillers, self.held = self.held, None
            self._stop(fillers)

    def run_holds_slot(self, setup: CaseSetup, slots: int) -> bool | None:
        """Whether the case's run holds a slot, seen from outside: start as many filler jobs as the
        server has slots; if all of them start, the run holds none. None when the fillers cannot tell.

        Each filler plays a case script that sleeps longer than the wait, so a started filler keeps
        its slot while the others are counted; all are canceled afterwards. While `hold` holds the
        free slots with fillers of its own, those are counted instead: all running, the run holds none.
        """
        if self.held is not None:
            started = self._running(self.held, until_all=False)
            return False if started == slots else (True if started == slots - 1 else None)
        fillers = self._start(setup, "filler", slots, hold_sec=FILLER_WAIT_SEC + 5)
        if fillers is None:
            return None
        try:
            started = self._running(fillers, until_all=True)
            return False if started == slots else (True if started == slots - 1 else None)
        finally:
            self._stop(fillers)

    def _start(self, setup: CaseSetup, name: str, count: int, *, hold_sec: float) -> Fillers | None:
        """``count`` auto jobs of this case's skill whose engine sleeps ``hold_sec`` (holding a slot
        once started); None when the server refuses one (kept as an anomaly; those started are stopped)."""
        jobs: list[str] = []
        scripts: list[Path] = []
        for index in range(count):
            case = f"{setup.case_id}__{name}{index}"
            script = self._options.scripts_dir / f"{case}.yaml"
            turns = [{"steps": [{"sleep": hold_sec}, {"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'}]}]
            write_compiled(str(script), json.dumps({"case": case, "turns": turns}), None)
            scripts.append(script)
            request = job_request(self._options, setup, case, FILLER_RUNTIME)
            status, answer = self._transport.call("POST", "/v1/jobs", json=request)
            if status != 200 or not isinstance(answer, Mapping) or "request_id" not in answer:
                self._transport.anomaly("POST", "/v1/jobs", status, answer, "a slot filler job was refused")
                self._stop(Fillers(tuple(jobs), tuple(scripts)))
                return None
            jobs.append(str(answer["request_id"]))
        return Fillers(tuple(jobs), tuple(scripts))

    def _running(self, fillers: Fillers, *, until_all: bool) -> int:
        """How many fillers have started (hold a slot); ``until_all``: give them FILLER_WAIT_SEC to."""
        deadline = time.monotonic() + (FILLER_WAIT_SEC if until_all else 0.0)
        while True:
            started = sum(self._state(job) not in ("queued", None) for job in fillers.jobs)
            if started == len(fillers.jobs) or time.monotonic() >= deadline:
                return started
            time.sleep(0.1)

    def _stop(self, fillers: Fillers) -> None:
        """Cancel the fillers and wait, bounded, for them to let their slots go."""
        for job in fillers.jobs:
            # Stopping is tidying up: a server that went away or misanswers has no slot to give back.
            with contextlib.suppress(TargetError, TargetUnreachable):
                self._transport.call("POST", f"/v1/jobs/{job}/cancel", json={})
        for job in fillers.jobs:
            until = time.monotonic() + FILLER_WAIT_SEC
            while self._state(job) not in TERMINAL and time.monotonic() < until:
                time.sleep(0.1)
        for script in fillers.scripts:
            remove_compiled(str(script))

    def _state(self, job: str) -> str | None:
        status, answer = self._transport.call("GET", f"/v1/jobs/{job}")
        state = answer.get("status") if status == 200 and isinstance(answer, Mapping) else None
        return str(state) if isinstance(state, str) else None
