"""The probe's jobs: the probe skill's case setups and scripts, and the ledger of jobs it started.

Every probe step runs jobs of turngate's fake engines on the server; the ledger keeps the ids of
those that hold the server on purpose (slot fillers, a hung engine), so that the probe cancels any
left at its end, even when it is interrupted, and names any that would not end.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.engines.fake.script import write_compiled
from turngate.judge.connectors.http_jobs import TERMINAL
from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.connectors.http_transport import TargetError, Transport
from turngate.protocol.connector import CaseSetup, TargetUnreachable

PROBE_SKILL: Final = "turngate-probe"
DONE: Final = '{"greeting": "Hi", "__SKILL_DONE__": true}'
# How long canceled probe jobs are given, all together, to end.
TIDY_SEC: Final = 10.0


def case_setup(
    skill: Path, engine: str, case: str, mode: str, workdir: Path, runtime: Mapping[str, Any] | None = None
) -> CaseSetup:
    return CaseSetup(case, engine, skill, {"mode": mode, **(runtime or {})}, None, workdir, {}, workdir)


def write_script(scripts: Path, case: str, turns: list[Any], *, resident: bool = False) -> Path:
    """A probe job's script; ``resident``: the engine stays for the reply when it is kept (sticky).

    Compiled beside it, as the HTTP connector does a case's script (the server's engines' state
    folder is the server's); `remove_compiled` removes both."""
    document: dict[str, Any] = {"case": case, "turns": turns, **({"resident": True} if resident else {})}
    path = scripts / f"{case}.yaml"
    write_compiled(str(path), yaml.safe_dump(document), None)
    return path


def job_state(transport: Transport, job: str) -> str | None:
    """The job's state as GET /v1/jobs/{job} shows it; None when it does not say."""
    status, answer = transport.call("GET", f"/v1/jobs/{job}")
    state = answer.get("status") if status == 200 and isinstance(answer, Mapping) else None
    return state if isinstance(state, str) else None


class Ledger:
    """The jobs probe steps started to hold the server (fillers, a hung engine)."""

    def __init__(self) -> None:
        self.jobs: list[str] = []

    def add(self, job: str) -> None:
        self.jobs.append(job)

    def tidy(self, options: HttpOptions, *, wait_sec: float = TIDY_SEC) -> list[str]:
        """Cancel every job not ended yet and wait, bounded, for them to end; those that did not.

        Tidying never raises for the server: a job it misanswers about counts as not ended, and a
        server that stopped answering ends the tidying at once, with every job not seen ended."""
        transport = Transport(options)
        open_jobs = list(self.jobs)
        try:
            open_jobs = [job for job in open_jobs if self._state(transport, job) not in TERMINAL]
            for job in open_jobs:
                with contextlib.suppress(TargetError):
                    transport.call("POST", f"/v1/jobs/{job}/cancel", json={})
            deadline = time.monotonic() + wait_sec
            while open_jobs and time.monotonic() < deadline:
                open_jobs = [job for job in open_jobs if self._state(transport, job) not in TERMINAL]
                if open_jobs:
                    time.sleep(0.1)
        except TargetUnreachable:
            pass  # nothing answers: nothing more can be canceled, or seen ended
        finally:
            transport.close()
        return open_jobs

    @staticmethod
    def _state(transport: Transport, job: str) -> str | None:
        try:
            return job_state(transport, job)
        except TargetError:
            return None
