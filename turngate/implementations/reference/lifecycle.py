"""The run lifecycle (spec 001): states, slots, profiles, the wait deadline, replies, cancel, restart.

States: queued -> running -> (waiting_user -> queued|running ->)* succeeded | failed | canceled.

- ``resumable``: a waiting run gives its slot back; a reply queues it, and it takes a
  slot again before it runs (001, "resumable 恢复执行前重新申请槽位").
- ``sticky_process``: a waiting run keeps its slot and its resident engine process;
  a reply is written to that process.
- The wait deadline is ``session_timeout_sec`` (default 1200) after entering
  waiting_user, on the injected clock. When it passes with no reply: sticky + strict
  fails with ``INTERACTION_WAIT_TIMEOUT`` and terminates the process; with
  ``interactive_require_user_reply`` false the run gets an automatic decision reply
  (a resume turn, or an instruction written to the resident process); resumable +
  strict keeps waiting until a reply or a cancel.
- Every state change is one store transaction with its protocol events.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from turngate.implementations.reference import protocol
from turngate.implementations.reference.clock import Clock
from turngate.implementations.reference.commands import (
    STDIN_MESSAGE_ENGINES,
    CommandOptions,
    build_command,
    codex_auto_flag_for,
    stdin_message,
)
from turngate.implementations.reference.gate import READING_BODY, Mode
from turngate.implementations.reference.outcome import KilledBy
from turngate.implementations.reference.patch import build_patch, patch_skill_md
from turngate.implementations.reference.pending import auto_decision_reply, pending_from_json
from turngate.implementations.reference.processes import (
    OneShot,
    OutputLimits,
    ProcessIdentity,
    Resident,
    TurnBytes,
    identity_of,
    kill_stale_group,
)
from turngate.implementations.reference.profiles import ProfileKind, probe_profile, probe_version
from turngate.implementations.reference.skill import Skill, supports
from turngate.implementations.reference.slots import SlotPool
from turngate.implementations.reference.store import RunRecord, Store
from turngate.implementations.reference.turn import TurnAssessment, TurnInput, assess

DEFAULT_SESSION_TIMEOUT_SEC: Final = 1200
MAX_SESSION_TIMEOUT_SEC: Final = 10**9  # about 31 years; the store keeps deadlines as numbers
TERMINAL_STATES: Final = frozenset({"succeeded", "failed", "canceled"})
_Answer = TypeVar("_Answer")

CANCELED_BY_USER: Final = "CANCELED_BY_USER"
INTERACTION_WAIT_TIMEOUT: Final = "INTERACTION_WAIT_TIMEOUT"
INTERACTION_PROCESS_LOST: Final = "INTERACTION_PROCESS_LOST"
ORCHESTRATOR_RESTART_INTERRUPTED: Final = "ORCHESTRATOR_RESTART_INTERRUPTED"
INTERACTION_STALE: Final = "INTERACTION_STALE"
RUN_NOT_WAITING: Final = "RUN_NOT_WAITING"
ORCHESTRATOR_ERROR: Final = "ORCHESTRATOR_ERROR"


class RunRequestError(ValueError):
    """A run request the orchestrator refuses; ``code`` is the stable code (HTTP 400 material)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True, slots=True)
class RunRequest:
    skill: Skill
    engine: str
    mode: Mode
    input: Mapping[str, Any] = field(default_factory=dict)
    parameter: Mapping[str, Any] = field(default_factory=dict)
    profile: ProfileKind | None = None  # None: probe the engine's help
    require_user_reply: bool = True
    session_timeout_sec: int = DEFAULT_SESSION_TIMEOUT_SEC
    model: str | None = None
    # Per run, for a server whose clients choose (turngate serve); None: the orchestrator's default.
    gemini_output_format: str | None = None
    # Per run, for a case that needs the watchdog soon (a hanging engine); None: EngineSetup's.
    turn_timeout_sec: float | None = None


@dataclass(frozen=True, slots=True)
class ReplyOutcome:
    accepted: bool
    status: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class EngineSetup:
    """Where the engines are and the environment they run with."""

    bin_dir: Path
    env: Mapping[str, str]
    command_options: CommandOptions = field(default_factory=CommandOptions)
    turn_timeout_sec: float = 120.0
    output_limits: OutputLimits = field(default_factory=OutputLimits)

    def executable(self, engine: str) -> Path:
        return self.bin_dir / engine

    def process_env(self) -> dict[str, str]:
        env = dict(self.env)
        env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', os.environ.get('PATH', ''))}"
        return env


class Orchestrator:
    """The reference orchestrator. Thread-safe; turns run on worker threads."""

    def __init__(
        self,
        *,
        store: Store,
        runs_dir: Path,
        engines: EngineSetup,
        clock: Clock,
        slots: int = 2,
        soft_completion_reading: str = READING_BODY,
        recover: bool = True,
        cache_probes: bool = True,
    ) -> None:
        self.store = store
        self.runs_dir = runs_dir
        self.engines = engines
        self.clock = clock
        self.slots = SlotPool(slots)
        self.soft_completion_reading = soft_completion_reading
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._workers: dict[str, threading.Thread] = {}
        self._oneshots: dict[str, OneShot] = {}
        self._residents: dict[str, Resident] = {}
        self._skills: dict[str, Skill] = {}
        self._profiles: dict[str, ProfileKind] = {}
        self._versions: dict[str, str | None] = {}
        self._held_slots: list[str] = []  # slots held for outside work (hold_free_slots)
        self._kept_from_slots: set[str] = set()  # runs that find every slot taken (keep_from_slots)
        self._cache_probes = cache_probes  # False: probe each run's engine afresh (turngate serve's tests)
        self._closed = False
        if recover:
            self._recover()

    # Requests ----------------------------------------------------------------------------

    def submit(self, request: RunRequest) -> str:
        """Queue a run; refuse an engine or mode the skill does not support."""
        refusal = supports(request.skill, request.engine, request.mode)
        if refusal is not None:
            raise RunRequestError(
                refusal, f"skill {request.skill.name!r}: engine {request.engine!r}, mode {request.mode!r}"
            )
        if request.turn_timeout_sec is not None and not 0 < request.turn_timeout_sec <= 86400:
            raise RunRequestError("RUNTIME_OPTION_INVALID", f"turn_timeout_sec: {request.turn_timeout_sec!r}")
        if not 1 <= request.session_timeout_sec <= MAX_SESSION_TIMEOUT_SEC:
            raise RunRequestError(
                "RUNTIME_OPTION_INVALID", f"session_timeout_sec: {request.session_timeout_sec!r}"
            )
        profile = request.profile or self.probe(request.engine)
        run_id = f"run-{uuid.uuid4().hex[:16]}"
        run_dir = self.runs_dir / run_id
        try:
            self._prepare_run_dir(run_dir, request)
        except (OSError, ValueError) as error:  # unwritable values: no half-made run folder stays
            shutil.rmtree(run_dir, ignore_errors=True)
            raise RunRequestError(
                "REQUEST_INVALID", f"the run folder could not be written ({error})"
            ) from None
        now = self.clock.now(run_id)
        record = RunRecord(
            run_id=run_id,
            skill_id=request.skill.name,
            engine=request.engine,
            mode=request.mode,
            profile=profile,
            require_user_reply=request.require_user_reply,
            session_timeout_sec=request.session_timeout_sec,
            max_attempt=request.skill.max_attempt,
            state="queued",
            attempt_count=0,
            session_id=None,
            pending=None,
            wait_deadline_at=None,
            warnings=(),
            error_code=None,
            error_message=None,
            result=None,
            run_dir=str(run_dir),
            request={
                "skill_id": request.skill.name,
                "skill_dir": str(request.skill.folder),
                "engine": request.engine,
                "input": dict(request.input),
                "parameter": dict(request.parameter),
                "model": request.model,
                "gemini_output_format": request.gemini_output_format,
                "runtime_options": {
                    "execution_mode": request.mode,
                    "interactive_require_user_reply": request.require_user_reply,
                    "session_timeout_sec": request.session_timeout_sec,
                    "turn_timeout_sec": request.turn_timeout_sec,
                },
            },
            created_at=now,
            updated_at=now,
        )
        if self._asks_version(request.engine):
            self.version(request.engine)  # a subprocess: asked now, not under the lock
        with self._lock:
            self._skills[run_id] = request.skill
            try:
                with self.store.transaction() as tx:
                    tx.insert_run(record)
                    protocol.started(tx, record, now)
            except BaseException:
                shutil.rmtree(run_dir, ignore_errors=True)  # a run the store refused has no folder
                raise
            self._dispatch()
        return run_id

    def reply(
        self, run_id: str, interaction_id: int, response: str, *, idempotency_key: str | None = None
    ) -> ReplyOutcome:
        """A user's free-text reply to the pending interaction (any ``kind``, 004).

        A reply sent again with the key of an accepted one gets that reply's answer and
        changes nothing; the key is stored in the reply's own transaction, so this holds
        across a restart too.
        """
        with self._lock:
            if idempotency_key is not None:
                first = self.store.reply_answer(run_id, idempotency_key)
                if first is not None:
                    return ReplyOutcome(True, str(first["status"]))
            run = self._run(run_id)
            if run.state != "waiting_user" or run.pending is None:
                return ReplyOutcome(False, run.state, RUN_NOT_WAITING)
            if interaction_id != run.pending["interaction_id"]:
                return ReplyOutcome(False, run.state, INTERACTION_STALE)
            status = self._continue(run, response, automatic=False, idempotency_key=idempotency_key)
            if idempotency_key is not None:  # the status the reply led to, once the turn is under way
                self.store.set_reply_answer(run_id, idempotency_key, {"status": status})
            return ReplyOutcome(True, status)

    def cancel(self, run_id: str) -> bool:
        """Cancel from any non-terminal state; False when the run had already ended."""
        with self._lock:
            run = self._run(run_id)
            if run.state in TERMINAL_STATES:
                return False
            oneshot = self._oneshots.get(run_id)
            # _finish keeps the slot while a resident process is registered; it is freed once stopped.
            self._finish(run, "canceled", CANCELED_BY_USER, "canceled by the user", attempt=run.attempt_count)
            resident = self._residents.pop(run_id, None)
        # Killing can wait for the process; never under the lock, where workers need it.
        if oneshot is not None:
            oneshot.kill("cancel")
        if resident is not None:
            self._stop_resident(run_id, resident, "cancel")
        with self._lock:
            self._dispatch()
        return True

    def check_deadlines(self) -> None:
        """Act on every waiting run whose wait deadline has passed on the clock."""
        doomed: list[tuple[str, Resident]] = []
        with self._lock:
            for run in self.store.runs(states=("waiting_user",)):
                if run.wait_deadline_at is None or self.clock.now(run.run_id) < run.wait_deadline_at:
                    continue
                if not run.require_user_reply:
                    assert run.pending is not None
                    self._continue(run, auto_decision_reply(pending_from_json(run.pending)), automatic=True)
                elif run.profile == "sticky_process":
                    self._finish(
                        run,
                        "failed",
                        INTERACTION_WAIT_TIMEOUT,
                        f"no reply within session_timeout_sec={run.session_timeout_sec}",
                        attempt=run.attempt_count,
                    )
                    resident = self._residents.pop(run.run_id, None)
                    if resident is not None:
                        doomed.append((run.run_id, resident))
                # resumable + strict: keep waiting until a reply or a cancel (001).
        for run_id, resident in doomed:
            self._stop_resident(run_id, resident, "timeout")
        with self._lock:
            self._dispatch()

    def wait_idle(self, timeout: float = 120.0, run_id: str | None = None) -> bool:
        """Block until no turn is running (of the run ``run_id`` alone, if given); True when idle."""
        with self._idle:
            if run_id is not None:
                return self._idle.wait_for(lambda: run_id not in self._workers, timeout=timeout)
            return self._idle.wait_for(lambda: not self._workers, timeout=timeout)

    def hold_free_slots(self) -> int:
        """Hold every free slot for outside work (a conformance case's competing runs, a test hook):
        runs waiting for a slot stay queued until `release_held_slots`. How many are held now."""
        with self._lock:
            while self.slots.try_acquire(holder := f"held-{uuid.uuid4().hex[:12]}"):
                self._held_slots.append(holder)
            return len(self._held_slots)

    def keep_from_slots(self, run_id: str) -> None:
        """Let the run ``run_id`` find every slot taken, as `hold_free_slots` would, until
        `let_into_slots`; other runs take slots as before. A test hook's view of a full server
        scoped to one run, so that conformance cases sharing the server need not take turns."""
        with self._lock:
            self._kept_from_slots.add(run_id)

    def let_into_slots(self, run_id: str) -> None:
        with self._lock:
            self._kept_from_slots.discard(run_id)
            self._dispatch()

    def release_held_slots(self) -> int:
        """Give back the slots `hold_free_slots` held, and run what waited for one. How many."""
        with self._lock:
            held, self._held_slots = self._held_slots, []
            for holder in held:
                self.slots.release(holder)
            self._dispatch()
            return len(held)

    # The probes start the engine (a subprocess): they run outside the lock, so that every other
    # call (a reply, a status, a cancel) goes on meanwhile; two callers may then both probe, and
    # the first answer stored is the one kept.

    def probe(self, engine: str) -> ProfileKind:
        def ask() -> ProfileKind:
            return probe_profile(engine, self.engines.executable(engine), self.engines.process_env())

        return self._asked(self._profiles, engine, ask) if self._cache_probes else ask()

    def version(self, engine: str) -> str | None:
        """The engine's ``--version`` line (commands.py: the codex flag depends on it), asked once: an
        orchestrator's engines and their environment are fixed, so their build is too, even where
        resume support is probed for each run (that answer may change: the sticky scenarios' knob).
        `submit` asks before it takes the lock, so a turn's start finds the answer kept."""
        return self._asked(
            self._versions,
            engine,
            lambda: probe_version(self.engines.executable(engine), self.engines.process_env()),
        )

    def _asked(self, answers: dict[str, _Answer], key: str, ask: Callable[[], _Answer]) -> _Answer:
        """The answer kept under ``key`` (an engine), else ``ask()`` (outside the lock), kept."""
        with self._lock:
            if key in answers:
                return answers[key]
        answer = ask()
        with self._lock:
            return answers.setdefault(key, answer)

    def shutdown(self) -> None:
        """Stop this orchestrator as a crash would: engines killed, the store left as it is.

        Workers still finishing a turn find the orchestrator closed and write nothing,
        so a new orchestrator on the same store sees exactly what a restart would.
        """
        with self._lock:
            self._closed = True
            processes: list[OneShot | Resident] = [*self._oneshots.values(), *self._residents.values()]
            self._residents.clear()
        for process in processes:
            process.kill("shutdown")

    # Reads --------------------------------------------------------------------------------

    def status(self, run_id: str) -> RunRecord:
        return self._run(run_id)

    # Internals ------------------------------------------------------------------------------

    def _run(self, run_id: str) -> RunRecord:
        run = self.store.run(run_id)
        if run is None:
            raise KeyError(f"unknown run {run_id!r}")
        return run

    def _prepare_run_dir(self, run_dir: Path, request: RunRequest) -> None:
        skill = request.skill
        (run_dir / "artifacts").mkdir(parents=True)
        skill_dir = run_dir / "skills" / skill.name
        skill_dir.mkdir(parents=True)
        patch = build_patch(request.mode, artifacts=skill.artifacts, output_schema=skill.output_schema)
        (skill_dir / "SKILL.md").write_text(patch_skill_md(skill.skill_md, patch), encoding="utf-8")
        document = {
            "skill_id": skill.name,
            "input": dict(request.input),
            "parameter": dict(request.parameter),
        }
        (run_dir / "input.json").write_text(
            # allow_nan=False: a caller that let Infinity or NaN through gets an error, never a
            # file that is not JSON (serve refuses them in the request body already).
            json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False),
            encoding="utf-8",
        )
        (run_dir / "attempts").mkdir()
        chosen = request.gemini_output_format or self.engines.command_options.gemini_output_format
        if request.engine == "gemini" and chosen is None:
            # gemini picks its output format from the workspace settings (ENGINE_FORMATS.md).
            (run_dir / ".gemini").mkdir()
            settings = {"output": {"format": "json"}}
            (run_dir / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def _first_prompt(self, run: RunRecord) -> str:
        request = run.request
        lines = [f"Run the skill {run.skill_id} (instructions: skills/{run.skill_id}/SKILL.md)."]
        lines += ["Inputs:"] + [f"- {key}: {value}" for key, value in dict(request["input"]).items()]
        if request["parameter"]:
            lines += ["Parameters:"] + [
                f"- {key}: {value}" for key, value in dict(request["parameter"]).items()
            ]
        return "\n".join(lines)

    def _dispatch(self) -> None:
        """Give free slots to queued runs, oldest first. Caller holds the lock."""
        for run in self.store.runs(states=("queued",)):
            if run.run_id in self._workers or run.run_id in self._kept_from_slots:
                continue
            if not self.slots.try_acquire(run.run_id):
                return
            self._start_turn(run)

    def _start_turn(self, run: RunRecord, *, reply: str | None = None) -> None:
        """Enter running and start the next attempt on a worker. Caller holds the lock and a slot."""
        attempt = run.attempt_count + 1
        prompt = self._first_prompt(run) if attempt == 1 else self._last_response(run)
        resume_id = run.session_id if attempt > 1 and run.profile == "resumable" else None
        argv = build_command(
            run.engine,
            run.mode,
            prompt=prompt,
            resume_id=resume_id,
            options=self._command_options(run),
            resident=run.profile == "sticky_process",
        )
        now = self.clock.now(run.run_id)
        with self.store.transaction() as tx:
            run = tx.update_run(
                run,
                state="running",
                attempt_count=attempt,
                pending=None,
                wait_deadline_at=None,
                updated_at=now,
            )
            if not (run.profile == "sticky_process" and attempt > 1):
                tx.insert_attempt(run.run_id, attempt, argv, now)
            else:
                tx.insert_attempt(run.run_id, attempt, ("<stdin>", prompt), now)
        worker = threading.Thread(target=self._work, args=(run, attempt, argv, reply), daemon=True)
        self._workers[run.run_id] = worker
        worker.start()

    def _asks_version(self, engine: str) -> bool:
        """Whether a turn's command depends on the engine's version (the codex auto flag)."""
        return engine == "codex" and self.engines.command_options.codex_auto_flag == "--full-auto"

    def _command_options(self, run: RunRecord) -> CommandOptions:
        options = self.engines.command_options
        if self._asks_version(run.engine):
            options = replace(options, codex_auto_flag=codex_auto_flag_for(self.version("codex")))
        model = run.request.get("model")
        if model:
            options = replace(options, model=model)
        output_format = run.request.get("gemini_output_format")
        if output_format:
            options = replace(options, gemini_output_format=output_format)
        return options

    def _last_response(self, run: RunRecord) -> str:
        answered = [item for item in self.store.interactions(run.run_id) if item.response is not None]
        return answered[-1].response if answered and answered[-1].response is not None else ""

    def _work(self, run: RunRecord, attempt: int, argv: tuple[str, ...], reply: str | None) -> None:
        try:
            turn = self._play(run, attempt, argv, reply)
            # The gate's work (reading the streams, validating the output) is done outside the
            # lock: one run's judgement never holds up the other runs or the API.
            judged = self._assess(run.run_id, attempt, turn) if turn is not None else None
            with self._lock:
                if not self._closed:
                    self._apply(run.run_id, attempt, turn, judged)
                ended = self._residents.pop(run.run_id) if self._ended_with_resident(run.run_id) else None
            if ended is not None:
                ended.kill("ended")  # before the slot goes back, so processes never outnumber slots
                self.store.forget_process(run.run_id, ended.pid)
        except Exception as error:  # a harness bug must end the run visibly, not hang it
            # The traceback names the server's files: it goes to the run folder, not to the client.
            with contextlib.suppress(OSError):
                (Path(run.run_dir) / "orchestrator-error.txt").write_text(
                    traceback.format_exc(), encoding="utf-8", errors="backslashreplace"
                )
            message = f"the orchestrator failed during the turn ({type(error).__name__})"
            with self._lock:
                if not self._closed:
                    current = self._run(run.run_id)
                    if current.state not in TERMINAL_STATES:
                        self._finish(current, "failed", ORCHESTRATOR_ERROR, message, attempt=attempt)
        finally:
            with self._lock:
                self._workers.pop(run.run_id, None)
                if not self._closed:
                    current = self._run(run.run_id)
                    if self.slots.holds(run.run_id) and not self._keeps_slot(current):
                        self.slots.release(run.run_id)
                    self._dispatch()
                self._idle.notify_all()

    def _ended_with_resident(self, run_id: str) -> bool:
        """A terminal run whose resident process is still registered (caller holds the lock)."""
        return run_id in self._residents and self._run(run_id).state in TERMINAL_STATES

    def _stop_resident(self, run_id: str, resident: Resident, why: KilledBy) -> None:
        """Kill a terminal run's resident process, then give its slot back (never the other way round)."""
        resident.kill(why)
        self.store.forget_process(run_id, resident.pid)
        with self._lock:
            if self.slots.holds(run_id) and run_id not in self._workers:
                self.slots.release(run_id)

    def _keeps_slot(self, run: RunRecord) -> bool:
        return run.state == "running" or (run.state == "waiting_user" and run.profile == "sticky_process")

    def _play(
        self, run: RunRecord, attempt: int, argv: tuple[str, ...], reply: str | None
    ) -> TurnBytes | None:
        run_dir = Path(run.run_dir)
        timeout = run.request["runtime_options"].get("turn_timeout_sec") or self.engines.turn_timeout_sec
        if run.profile == "sticky_process":
            with self._lock:
                if not self._still_running(run.run_id, attempt):
                    return None  # canceled before the engine started: start none
                resident = self._residents.get(run.run_id)
                if attempt == 1:
                    resident = Resident(
                        argv,
                        cwd=run_dir,
                        env=self.engines.process_env(),
                        engine=run.engine,
                        limits=self.engines.output_limits,
                    )
                    self._residents[run.run_id] = resident
                    self._remember(run.run_id, resident.pid)
            # An engine that reads every user message from stdin gets its first one there too.
            message = (reply or "") if attempt > 1 else self._first_prompt(run)
            sends = attempt > 1 or run.engine in STDIN_MESSAGE_ENGINES
            if resident is None or (sends and not resident.send(stdin_message(run.engine, message))):
                return None  # the resident process is gone: nothing to write the reply to
            turn = resident.read_turn(timeout)
        else:
            with self._lock:
                if not self._still_running(run.run_id, attempt):
                    return None  # canceled before the engine started: start none
                oneshot = OneShot(
                    argv, cwd=run_dir, env=self.engines.process_env(), limits=self.engines.output_limits
                )
                self._oneshots[run.run_id] = oneshot
                self._remember(run.run_id, oneshot.pid)
            try:
                turn = oneshot.wait(timeout, engine=run.engine)
            finally:
                with self._lock:
                    self._oneshots.pop(run.run_id, None)
                self.store.forget_process(run.run_id, oneshot.pid)
        (run_dir / "attempts" / f"{attempt}.stdout").write_bytes(turn.stdout)
        (run_dir / "attempts" / f"{attempt}.stderr").write_bytes(turn.stderr)
        return turn

    def _still_running(self, run_id: str, attempt: int) -> bool:
        """Whether this attempt is still the run's running turn (caller holds the lock). A cancel
        that came between the dispatch and the spawn finds no process to kill; the worker must not
        start one then, or it would run, unwatched by anyone, until its turn timeout."""
        if self._closed:
            return False
        run = self._run(run_id)
        return run.state == "running" and run.attempt_count == attempt

    def _remember(self, run_id: str, pid: int) -> None:
        """Record a started engine in the store, so a restart after a crash can end it."""
        identity = identity_of(pid)
        if identity is not None:
            self.store.remember_process(run_id, identity.pid, identity.started)

    def _assess(self, run_id: str, attempt: int, turn: TurnBytes) -> JudgedTurn:
        """The gate's judgement of a turn: a pure function of the turn and the run as it started
        the turn (the run's own fields do not change while its turn runs; a cancel is seen by
        `_apply`). Needs no lock."""
        run = self._run(run_id)
        skill = self._skill(run)
        present = _present_artifacts(run)
        assessment = assess(
            TurnInput(
                engine=run.engine,
                mode=cast(Mode, run.mode),
                attempt_number=attempt,
                max_attempt=run.max_attempt,
                output_schema=skill.output_schema,
                required_artifacts=tuple(skill.artifacts),
                present_artifacts=present,
                needs_session_id=run.mode == "interactive" and run.profile == "resumable",
                soft_completion_reading=self.soft_completion_reading,
            ),
            turn.stdout,
            turn.stderr,
            turn.end,
        )
        return JudgedTurn(assessment, frozenset(present))

    def _apply(
        self, run_id: str, attempt: int, turn: TurnBytes | None, judged: JudgedTurn | None = None
    ) -> None:
        """Persist the turn's decision (``judged``: `_assess`'s, made outside the lock; else made
        here). Caller holds the lock."""
        if not self._still_running(run_id, attempt):
            return  # canceled (or otherwise ended) while the engine was working: the turn is moot
        run = self._run(run_id)
        if turn is None:
            self._residents.pop(run_id, None)
            self._finish(
                run,
                "failed",
                INTERACTION_PROCESS_LOST,
                "the resident engine process is gone",
                attempt=attempt,
            )
            return
        judged = judged if judged is not None else self._assess(run_id, attempt, turn)
        assessment, present = judged.assessment, judged.present  # the artifacts the gate saw
        now = self.clock.now(run_id)
        decision = assessment.decision
        session_id = assessment.transcript.session_id() or run.session_id
        warnings = tuple(dict.fromkeys(run.warnings + assessment.warnings))
        with self.store.transaction() as tx:
            tx.end_attempt(
                run_id,
                attempt,
                ended_at=now,
                exit_code=turn.end.exit_code,
                decision=attempt_record(assessment),
            )
            if assessment.final_message is not None:
                protocol.assistant_final(tx, run, attempt, now, assessment.final_message)
            if decision.state == "waiting_user":
                assert assessment.pending is not None
                pending = dict(assessment.pending.to_json())
                run = tx.update_run(
                    run,
                    state="waiting_user",
                    session_id=session_id,
                    pending=pending,
                    wait_deadline_at=now + run.session_timeout_sec,
                    warnings=warnings,
                    updated_at=now,
                )
                tx.ask(run_id, assessment.pending.interaction_id, assessment.pending.prompt, pending, now)
                protocol.waiting(tx, run, attempt, now)
            else:
                succeeded = decision.state == "succeeded"
                error = (
                    None
                    if succeeded
                    else {"code": decision.error_code, "message": _error_message(assessment)}
                )
                result = {
                    "status": "success" if succeeded else "failed",
                    "data": dict(assessment.output.data)
                    if succeeded and assessment.output.data is not None
                    else None,
                    "artifacts": sorted(present),
                    "validation_warnings": list(warnings),
                    "error": error,
                }
                run = tx.update_run(
                    run,
                    state=decision.state,
                    session_id=session_id,
                    warnings=warnings,
                    error_code=None if succeeded else decision.error_code,
                    error_message=None if succeeded else _error_message(assessment),
                    result=result,
                    updated_at=now,
                )
                protocol.terminal(tx, run, attempt, now, decision.reason_code)

    def _continue(
        self, run: RunRecord, response: str, *, automatic: bool, idempotency_key: str | None = None
    ) -> str:
        """Record the reply; start the next turn (sticky) or queue it (resumable). Caller holds the lock."""
        assert run.pending is not None
        interaction_id = int(run.pending["interaction_id"])
        now = self.clock.now(run.run_id)
        if run.profile == "sticky_process":
            if run.run_id not in self._residents or not self._residents[run.run_id].alive:
                self._residents.pop(run.run_id, None)
                self._finish(
                    run,
                    "failed",
                    INTERACTION_PROCESS_LOST,
                    "the resident engine process is gone",
                    attempt=run.attempt_count,
                )
                return "failed"
            with self.store.transaction() as tx:
                tx.answer(run.run_id, interaction_id, response, now, automatic=automatic)
                if idempotency_key is not None:
                    tx.keep_reply_answer(run.run_id, idempotency_key, {"status": "running"})
                protocol.replied(tx, run, run.attempt_count, now, interaction_id, response, automatic)
            self._start_turn(self._run(run.run_id), reply=response)
            return "running"
        with self.store.transaction() as tx:
            tx.answer(run.run_id, interaction_id, response, now, automatic=automatic)
            if idempotency_key is not None:
                tx.keep_reply_answer(run.run_id, idempotency_key, {"status": "queued"})
            protocol.replied(tx, run, run.attempt_count, now, interaction_id, response, automatic)
            tx.update_run(run, state="queued", pending=None, wait_deadline_at=None, updated_at=now)
        self._dispatch()
        return self._run(run.run_id).state

    def _finish(self, run: RunRecord, state: str, code: str, message: str, *, attempt: int) -> None:
        """End a run outside a turn's decision (cancel, timeout, lost process, restart).

        Caller holds the lock."""
        now = self.clock.now(run.run_id)
        result = {
            "status": state,
            "data": None,
            "artifacts": [],
            "validation_warnings": list(run.warnings),
            "error": {"code": code, "message": message},
        }
        with self.store.transaction() as tx:
            ended = tx.update_run(
                run,
                state=state,
                error_code=code,
                error_message=message,
                pending=None,
                wait_deadline_at=None,
                result=result,
                updated_at=now,
            )
            protocol.terminal(tx, ended, max(attempt, 1), now, None)
        # A slot goes back here unless a worker (which frees it when it ends) or a
        # resident process still being stopped (see _stop_resident) is behind it.
        stopping = run.profile == "sticky_process" and run.run_id in self._residents
        if self.slots.holds(run.run_id) and run.run_id not in self._workers and not stopping:
            self.slots.release(run.run_id)

    def _skill(self, run: RunRecord) -> Skill:
        skill = self._skills.get(run.run_id)
        if skill is None:
            from turngate.implementations.reference.skill import load_skill

            skill = load_skill(Path(run.request["skill_dir"]))
            self._skills[run.run_id] = skill
        return skill

    def _recover(self) -> None:
        """After a restart (001/issue): running runs were interrupted; sticky waits lost their process."""
        with self._lock:
            # Engines the previous orchestrator started and never saw end: their output has no
            # reader any more, and they must not outlive their run (nor a grandchild holding pipes).
            for run_id, pid, started in self.store.processes():
                kill_stale_group(ProcessIdentity(pid, started))
                self.store.forget_process(run_id, pid)
            for run in self.store.runs(states=("running",)):
                self._finish(
                    run,
                    "failed",
                    ORCHESTRATOR_RESTART_INTERRUPTED,
                    "the orchestrator restarted during the turn",
                    attempt=run.attempt_count,
                )
            for run in self.store.runs(states=("waiting_user",)):
                if run.profile == "sticky_process":
                    self._finish(
                        run,
                        "failed",
                        INTERACTION_PROCESS_LOST,
                        "the resident engine process did not survive the restart",
                        attempt=run.attempt_count,
                    )
            self._dispatch()


@dataclass(frozen=True, slots=True)
class JudgedTurn:
    """A turn's judgement and the artifact files it was judged with (the result lists the same)."""

    assessment: TurnAssessment
    present: frozenset[str]


def _present_artifacts(run: RunRecord) -> set[str]:
    folder = Path(run.run_dir) / "artifacts"
    return {str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file()}


def attempt_record(assessment: TurnAssessment) -> dict[str, Any]:
    """What is kept of one turn's judgement: enough to explain the decision later."""
    decision = assessment.decision
    return {
        "state": decision.state,
        "reason_code": decision.reason_code,
        "rule": decision.rule,
        "error_code": decision.error_code,
        "warnings": list(assessment.warnings),
        "marker": {"found": assessment.marker.found, "forms": list(assessment.marker.forms)},
        "output": {
            "valid": assessment.output.valid,
            "problem": assessment.output.problem,
            "detail": assessment.output.detail,
            "repair": assessment.output.repair,
        },
        "process": {
            "ok": assessment.process.ok,
            "error_code": assessment.process.error_code,
            "message": assessment.process.message,
        },
        "hint": None
        if assessment.hint is None
        else {
            "form": assessment.hint.form,
            "clean": assessment.hint.clean,
            "problems": list(assessment.hint.problems),
        },
        "session_id": assessment.transcript.session_id(),
        "final_message": assessment.final_message,
    }


def _error_message(assessment: TurnAssessment) -> str:
    if not assessment.process.ok:
        return assessment.process.message
    if assessment.decision.error_code == "INTERACTIVE_MAX_ATTEMPT_EXCEEDED":
        evidence = assessment.evidence
        return (
            f"attempt {evidence.attempt_number} reached max_attempt {evidence.max_attempt}"
            " with no completion evidence"
        )
    return f"{assessment.output.problem}: {assessment.output.detail}"
