"""Many cases at once: the cases a run plans, and running them across worker processes.

Results come as cases finish. Once a case finds the target unreachable, the cases not yet started are
reported ``unreached`` instead of each waiting for its own timeout; Ctrl-C ends the workers within
``STOP_GRACE_SEC`` and keeps what finished.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Final

from turngate.judge.case_folder import wants_sticky
from turngate.judge.case_result import CaseResult
from turngate.judge.case_run import run_case
from turngate.judge.catalog import Scenario
from turngate.judge.catalog.editions import edition_named
from turngate.judge.targets import Target, parse_target

if TYPE_CHECKING:
    from turngate.engines.real.caseengines import RealEngines

STOP_GRACE_SEC: Final = 1.5  # Ctrl-C must end a run within 2 s, its report and summary written


def cases(
    scenarios: Iterable[Scenario], engines: Iterable[str] | None, edition: str | None = None
) -> list[tuple[Scenario, str]]:
    """Each scenario on each of its engines (those of ``engines``, when given), among the scenarios of
    ``edition`` (the default edition when None): one written for other editions is not planned."""
    wanted = set(engines) if engines else None
    judged_by = edition_named(edition).name
    return [
        (scenario, engine)
        for scenario in scenarios
        if scenario.planned_under(judged_by)
        for engine in scenario.engines
        if wanted is None or engine in wanted
    ]


def default_jobs() -> int:
    """Twice the cores: a case spends most of its time waiting on engine processes and their pauses
    (the seed catalog against the reference on 2 cores: 66 s of case time for 23 s of CPU; 34 s at
    2 jobs, 25 s at 4). A target that takes fewer at once says so (``max_jobs``)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, 2 * cores)


def exclusive(scenario: Scenario, *, hooks: bool) -> bool:
    """A case that must have a shared server to itself: what it does or observes would disturb, or be
    disturbed by, other cases running at the same time.

    A restart, always: every run on the server goes down with it. Without turngate serve's test
    hooks, slots taken (filler jobs hold the server's) and the engines' resumability on a server that
    probes for it (a sticky case sets it for every run of the engine there). The hooks scope to the
    case's job (``job_id``): its own clock, its own view of full slots, its own profile; only slots
    held before the job exists hold the server's. Without the hooks a clock is the case's own too: it
    sends its own short real session timeout.
    """
    if any(step.action == "restart" for step in scenario.steps):
        return True
    if hooks:
        return any(step.slots_full and step.action == "start" for step in scenario.steps)
    return "slots" in scenario.capabilities or wants_sticky(scenario)


def run_all(
    planned: list[tuple[Scenario, str]],
    *,
    target: str | Target,
    jobs: int,
    reading: str | None = None,
    conventions: str | None = None,
    real: RealEngines | None = None,
    edition: str | None = None,
) -> Iterator[CaseResult]:
    """Run cases across ``jobs`` processes, yielding results as they finish."""
    chosen = target if isinstance(target, Target) else parse_target(target)
    jobs = min(jobs, chosen.max_jobs or jobs, max(1, len(planned)))  # no pool of idle processes
    if jobs <= 1:
        down: CaseResult | None = None
        for scenario, engine in planned:
            if down is not None:
                yield CaseResult.not_run(scenario, engine, down)
                continue
            result = _run_one(scenario, engine, chosen, reading, conventions, real, edition)
            down = result if result.outcome == "unreached" else None
            yield result
        return
    alone: list[tuple[Scenario, str]] = []
    shared = chosen.shared
    if shared is not None:  # one server for all cases: some must have it to themselves
        alone = [
            (scenario, engine) for scenario, engine in planned if exclusive(scenario, hooks=shared.hooks)
        ]
        planned = [case for case in planned if case not in alone]
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_signals)
    try:
        futures = {
            pool.submit(_run_one, scenario, engine, chosen, reading, conventions, real, edition): (
                scenario,
                engine,
            )
            for scenario, engine in planned
        }
        down = None
        for future in as_completed(futures):
            if future.cancelled():
                continue
            result = future.result()
            if down is None and result.outcome == "unreached":
                down = result
                for other in futures:
                    other.cancel()
            yield result
        if down is not None:
            for future, (scenario, engine) in futures.items():
                if future.cancelled():
                    yield CaseResult.not_run(scenario, engine, down)
    except BaseException:  # Ctrl-C, or the caller stopped reading: no case after this one matters
        _stop_now(pool)
        raise
    pool.shutdown()
    for scenario, engine in alone:
        result = (
            _run_one(scenario, engine, chosen, reading, conventions, real, edition)
            if down is None
            else CaseResult.not_run(scenario, engine, down)
        )
        down = down or (result if result.outcome == "unreached" else None)
        yield result


def _run_one(
    scenario: Scenario,
    engine: str,
    target: Target,
    reading: str | None,
    conventions: str | None = None,
    real: RealEngines | None = None,
    edition: str | None = None,
) -> CaseResult:
    """One case in a worker: a fresh connector, and the target's shared folders if it has them."""
    return run_case(
        scenario,
        engine,
        target.connector(),
        reading=reading,
        shared=target.shared,
        conventions=conventions,
        real=real,
        edition=edition,
    )


def _worker_signals() -> None:
    """In each pool worker. Ctrl-C reaches the whole process group, but only the parent decides what
    it means (it stops the workers itself, and keeps the results it has). Its SIGTERM unwinds the
    running case as an exception, so the case's engines are stopped and its folder removed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _unwind)


def _unwind(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers: SIGTERM, a short grace, then SIGKILL.
    (Leaving the pool's ``with`` block instead would wait for every queued case to finish.)"""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    deadline = time.monotonic() + STOP_GRACE_SEC
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.is_alive():
            worker.kill()
            worker.join(1.0)
