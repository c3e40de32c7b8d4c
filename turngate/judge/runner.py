"""The runner: scenario × engine → a prepared case folder → the connector's actions → a verdict.

Each case gets its own temporary folder (fake engines, scripts, call log,
engine state, the skill, the target's own files) so cases can run in parallel
across processes and never see each other.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import signal
import tempfile
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import yaml

from turngate.engines.fake.engine import NON_RESUMABLE_FILE, find_case_token
from turngate.engines.fake.install import install
from turngate.engines.fake.script import discard_companion, precompile
from turngate.judge.catalog import Scenario
from turngate.judge.decision_record import Placeholders, observed_step, record
from turngate.judge.targets import Target, parse_target
from turngate.judge.verdict import Verdict, judge
from turngate.protocol.connector import (
    CaseSetup,
    CaseSkipped,
    Connector,
    Observation,
    PackageRefused,
    ReplyResult,
    SlotFilling,
    TargetUnreachable,
)

if TYPE_CHECKING:
    from turngate.engines.real.caseengines import RealEngines

FIXED_EPOCH_MS: Final = 1_763_812_800_000  # deterministic engine timestamps

GREETING_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class CaseResult:
    scenario_id: str
    engine: str
    reading: str | None
    level: str
    capability: str
    outcome: str
    message: str
    duration_sec: float
    record: Mapping[str, Any] | None
    # Everything the verdict was computed from, so `turngate report judge` can compute it again:
    differences: tuple[Mapping[str, Any], ...] = ()
    checks: Mapping[str, Any] | None = None  # Checks.to_json()
    observed: tuple[Mapping[str, Any], ...] = ()  # the observed steps (engine calls accumulated)
    conventions: str | None = None
    # An ambiguous scenario: whether the user chose its reading (judged strictly by it), and each
    # reading's outcome where none was chosen (judged under every reading; see verdict.judge).
    reading_chosen: bool = False
    readings: Mapping[str, str] = dataclasses.field(default_factory=dict)


def case_id(scenario: Scenario, engine: str) -> str:
    """The fake engines' case name: the scenario ID made file-safe, plus the engine."""
    return scenario.id.replace("/", "__").replace(".", "_") + "__" + engine


def run_case(
    scenario: Scenario,
    engine: str,
    connector: Connector,
    *,
    reading: str | None = None,
    root: Path | None = None,
    shared_scripts: Path | None = None,
    shared_call_log: Path | None = None,
    conventions: str | None = None,
    real: RealEngines | None = None,
) -> CaseResult:
    """Run one case. ``shared_scripts``/``shared_call_log``: a target whose engines are not ours to
    configure per case (an HTTP server) reads scripts from one folder and logs all calls to one file.
    ``real``: real CLIs (against turngate's model server) in place of the fakes they pin."""
    started = time.monotonic()
    # A reading names one side of an ambiguous scenario; scenarios without it keep their default (the
    # reading the target is set up with), and are judged under every reading.
    chosen = reading in scenario.readings
    reading = reading if chosen else scenario.default_reading

    def result(
        outcome: str,
        message: str,
        case_record: Mapping[str, Any] | None = None,
        verdict: Verdict | None = None,
        steps: list[dict[str, Any]] | None = None,
    ) -> CaseResult:
        return CaseResult(
            scenario.id,
            engine,
            reading,
            scenario.level,
            scenario.capability,
            outcome,
            message,
            round(time.monotonic() - started, 3),
            case_record,
            tuple(item.to_json() for item in verdict.differences) if verdict else (),
            scenario.checks().to_json(),
            tuple(steps or ()),
            conventions,
            chosen,
            dict(verdict.readings) if verdict else {},
        )

    needed = set(scenario.capabilities)
    if scenario.gemini_output_format and engine == "gemini":
        needed.add("gemini_output_format")  # the hazard lives in one output format the target must choose
    missing = sorted(needed - connector.capabilities)
    if missing:
        return result("skipped", f"target {connector.name} lacks: {', '.join(missing)}")
    unplayable = real.unplayable(engine, case_id(scenario, engine), scenario.engine_script) if real else None
    if unplayable:
        return result("skipped", f"the real {engine} cannot play this script: {unplayable}")
    with tempfile.TemporaryDirectory(prefix="turngate-case-", dir=root or _case_root()) as folder:
        workdir = Path(folder)
        try:
            setup = _prepare(scenario, engine, reading, workdir, shared_scripts)
            call_log = shared_call_log or workdir / "calls.jsonl"
            scripts = shared_scripts or workdir / "scripts"
            with real.for_case(workdir, scripts, call_log) if real else nullcontext():
                steps = _perform(scenario, connector, setup, workdir, call_log)
        except CaseSkipped as refusal:  # the target's own reason, e.g. an engine it does not run
            return result("skipped", str(refusal))
        except Exception as error:  # the harness or the target broke: say so, keep going
            detail = "".join(traceback.format_exception_only(type(error), error)).strip()
            outcome = "unreached" if isinstance(error, TargetUnreachable) else "errored"
            return result(outcome, f"{detail}\n{traceback.format_exc(limit=6)}")
        finally:
            connector.close()
            if shared_scripts is not None:
                script_path = shared_scripts / f"{case_id(scenario, engine)}.yaml"
                script_path.unlink(missing_ok=True)
                discard_companion(str(script_path))
                if wants_sticky(scenario):
                    (shared_scripts / NON_RESUMABLE_FILE).unlink(missing_ok=True)
    verdict = judge(scenario.checks(), steps, reading=reading if chosen else None, conventions=conventions)
    case_record = record(scenario.id, engine, reading, verdict.outcome, steps)
    return result(verdict.outcome, verdict.message, case_record, verdict, steps)


@functools.cache
def _case_root() -> str | None:
    """Where case folders go unless told: memory (/dev/shm) when it may hold executables, and TMPDIR is unset.

    A case writes and removes a few dozen small files; on a busy disk removing them
    alone took 60-75 ms a case, a third of the in-process catalog's time (0.6 ms in memory).
    """
    if os.environ.get("TMPDIR"):
        return None
    try:
        noexec = bool(os.statvfs(_SHM).f_flag & os.ST_NOEXEC)
    except OSError:
        return None
    return None if noexec or not os.access(_SHM, os.W_OK | os.X_OK) else _SHM


_SHM: Final = "/dev/shm"


def wants_sticky(scenario: Scenario) -> bool:
    return "sticky" in scenario.capabilities or scenario.runtime.get("profile") == "sticky_process"


def exclusive(scenario: Scenario, *, shared_clock: bool) -> bool:
    """A case that must have a shared server to itself: what it observes (slots taken, the engines'
    resumability, and with turngate serve's test hooks the one manual clock every run shares) would
    be disturbed by other cases running at the same time."""
    moves_clock = shared_clock and any(step.action == "advance_clock" for step in scenario.steps)
    return wants_sticky(scenario) or "slots" in scenario.capabilities or moves_clock


def _prepare(
    scenario: Scenario, engine: str, reading: str | None, workdir: Path, shared_scripts: Path | None
) -> CaseSetup:
    for name in ("scripts", "state", "home", "skills"):
        (workdir / name).mkdir()
    install(workdir / "bin")
    name = case_id(scenario, engine)
    script = {"case": name, **scenario.engine_script}
    (shared_scripts or workdir / "scripts").mkdir(parents=True, exist_ok=True)
    script_path = (shared_scripts or workdir / "scripts").joinpath(f"{name}.yaml")
    script_path.write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    # Compiled once for every engine process of the case: into the engines' state folder when it is
    # the case's, else beside the script (a server's engines, whose state folder is the server's).
    precompile(str(script_path), str(workdir / "state") if shared_scripts is None else None)
    skill_dir = write_skill(workdir / "skills", scenario.skill, name=skill_id(name))
    env = {
        "HOME": str(workdir / "home"),
        "TURNGATE_SCRIPTS": str(workdir / "scripts"),
        "TURNGATE_STATE": str(workdir / "state"),
        "TURNGATE_CALL_LOG": str(workdir / "calls.jsonl"),
        "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
    }
    if wants_sticky(scenario):
        env["TURNGATE_NON_RESUMABLE"] = engine  # what a probing orchestrator needs to choose sticky_process
        if shared_scripts is not None:  # a server's engines: the same knob, as a file they read
            (shared_scripts / NON_RESUMABLE_FILE).write_text(engine, encoding="utf-8")
    return CaseSetup(
        name,
        engine,
        skill_dir,
        scenario.runtime,
        reading,
        workdir,
        env,
        workdir / "bin",
        scenario.gemini_output_format,
        uses_clock=any(step.action == "advance_clock" for step in scenario.steps),
        observes_slots="slots" in scenario.capabilities,
    )


INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    # The case token rides inline in the job's input; real servers refuse an undeclared or
    # file-sourced key given inline (HTTP_API.md, "Inputs").
    "properties": {"case": {"type": "string", "x-input-source": "inline"}},
    "required": ["case"],
}
PARAMETER_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {},
}
SKILL_VERSION: Final = "1.0.0"


def write_skill(folder: Path, spec: Mapping[str, Any], name: str = "greet") -> Path:
    """A skill package from a scenario's ``skill`` block: SKILL.md, assets/runner.json, its schemas.

    Keys (all optional): ``output_schema`` (default the greeting schema; None for a schema that
    accepts any object, since real servers require one), ``max_attempt``, ``artifacts``, ``modes``.
    The package is one real servers accept: ``version``, and ``schemas.input``/``parameter``/``output``
    naming files that exist, the case token declared as an inline input.
    """
    root = folder / name
    (root / "assets").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\n---\n\n# Greet\n\nGreet the user.\n", encoding="utf-8"
    )
    output_schema = spec.get("output_schema", GREETING_SCHEMA)
    schemas = {
        "input": INPUT_SCHEMA,
        "parameter": PARAMETER_SCHEMA,
        "output": output_schema if output_schema is not None else {"type": "object"},
    }
    for key, schema in schemas.items():
        (root / "assets" / f"{key}.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    runner: dict[str, Any] = {
        "id": name,
        "version": SKILL_VERSION,
        "execution_modes": list(spec.get("modes", ("auto", "interactive"))),
        "schemas": {key: f"assets/{key}.schema.json" for key in schemas},
    }
    if spec.get("max_attempt") is not None:
        runner["max_attempt"] = spec["max_attempt"]
    if spec.get("artifacts"):  # objects, the form every server of this family reads (not only strings)
        runner["artifacts"] = [
            {"role": path.replace(".", "_").replace("/", "_"), "pattern": path, "required": True}
            for path in spec["artifacts"]
        ]
    (root / "assets" / "runner.json").write_text(json.dumps(runner, indent=2), encoding="utf-8")
    return root


def skill_id(case: str) -> str:
    """One skill per case, so reinstalls never collide and HTTP cases can run in parallel.

    A case id is letters, digits, ``-`` and ``_`` (see :func:`case_id`): already a valid folder
    and SKILL.md name; lower-cased because some servers fold skill ids.
    """
    return case.lower()


def _perform(
    scenario: Scenario, connector: Connector, setup: CaseSetup, workdir: Path, call_log: Path
) -> list[dict[str, Any]]:
    names = Placeholders(str(workdir))
    steps: list[dict[str, Any]] = []
    log_start = call_log.stat().st_size if call_log.exists() else 0  # a shared log: only this case's part
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
            calls = _calls(call_log, setup.case_id, log_start)
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
    """This case's engine calls: those written since it started that name it, or no case (probes)."""
    if not path.exists():
        return []
    with path.open("rb") as log:
        log.seek(start)
        lines = log.read().decode("utf-8").splitlines()
    calls = [json.loads(line) for line in lines if line.strip()]
    # A --version probe (the reference's codex flag choice) is no part of the run's lifecycle.
    return [call for call in calls if _of_case(call, case) and call.get("action") != "version"]


def _of_case(call: dict[str, Any], case: str) -> bool:
    """A call naming this case; or naming none (a probe), unless its prompt names another case: an
    engine killed before it noted its case (a canceled slot filler, another case run beside)."""
    if call.get("case") is not None:
        return bool(call["case"] == case)
    prompt = json.dumps([call.get("argv"), call.get("stdin")], ensure_ascii=False)
    return find_case_token(prompt) in (case, None)


# Running many cases ------------------------------------------------------------------------------


def connector_for(target: str | Target) -> Connector:
    """A fresh connector for a ``--target`` value."""
    return (target if isinstance(target, Target) else parse_target(target)).connector()


def _run_one(
    scenario: Scenario,
    engine: str,
    target: Target,
    reading: str | None,
    conventions: str | None = None,
    real: RealEngines | None = None,
) -> CaseResult:
    return run_case(
        scenario,
        engine,
        target.connector(),
        reading=reading,
        shared_scripts=target.shared_scripts,
        shared_call_log=target.shared_call_log,
        conventions=conventions,
        real=real,
    )


def cases(scenarios: Iterable[Scenario], engines: Iterable[str] | None) -> list[tuple[Scenario, str]]:
    wanted = set(engines) if engines else None
    return [
        (scenario, engine)
        for scenario in scenarios
        for engine in scenario.engines
        if wanted is None or engine in wanted
    ]


def run_all(
    planned: list[tuple[Scenario, str]],
    *,
    target: str | Target,
    jobs: int,
    reading: str | None = None,
    conventions: str | None = None,
    real: RealEngines | None = None,
) -> Iterator[CaseResult]:
    """Run cases across ``jobs`` processes, yielding results as they finish.

    Once a case finds the target unreachable, the cases not yet started are
    reported ``unreached`` instead of each waiting for its own timeout.
    """
    chosen = target if isinstance(target, Target) else parse_target(target)
    jobs = min(jobs, chosen.max_jobs or jobs)
    if jobs <= 1:
        down: CaseResult | None = None
        for scenario, engine in planned:
            if down is not None:
                yield _unreached(scenario, engine, down)
                continue
            result = _run_one(scenario, engine, chosen, reading, conventions, real)
            down = result if result.outcome == "unreached" else None
            yield result
        return
    alone: list[tuple[Scenario, str]] = []
    if chosen.shared_scripts is not None:  # one server for all cases: some must have it to themselves
        hooks = chosen.http is not None and chosen.http.turngate_hooks
        alone = [
            (scenario, engine) for scenario, engine in planned if exclusive(scenario, shared_clock=hooks)
        ]
        planned = [case for case in planned if case not in alone]
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_signals)
    try:
        futures = {
            pool.submit(_run_one, scenario, engine, chosen, reading, conventions, real): (scenario, engine)
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
                    yield _unreached(scenario, engine, down)
    except BaseException:  # Ctrl-C, or the caller stopped reading: no case after this one matters
        _stop_now(pool)
        raise
    pool.shutdown()
    for scenario, engine in alone:
        result = (
            _run_one(scenario, engine, chosen, reading, conventions)
            if down is None
            else _unreached(scenario, engine, down)
        )
        down = down or (result if result.outcome == "unreached" else None)
        yield result


STOP_GRACE_SEC: Final = 1.5  # Ctrl-C must end a run within 2 s, its report and summary written


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


def _unreached(scenario: Scenario, engine: str, cause: CaseResult) -> CaseResult:
    first = cause.message.split("\n")[0]
    return CaseResult(
        scenario.id,
        engine,
        scenario.default_reading,
        scenario.level,
        scenario.capability,
        "unreached",
        f"not run: {first} (first seen in {cause.scenario_id} [{cause.engine}])",
        0.0,
        None,
    )


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
