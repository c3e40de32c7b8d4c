"""The job service: the HTTP API's operations on the reference orchestrator, without HTTP.

Each method either returns the JSON answer or raises :class:`ApiError` with
the HTTP status and a stable code, so the web layer (``app.py``) only
translates. Requests are checked before anything is written, so a refused
request changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final, cast

from turngate import __version__
from turngate.base.pathnames import path_problem
from turngate.base.patterns import search
from turngate.engines.fake.invocation import ENGINES
from turngate.implementations.conforming_variants import REFERENCE, Variant
from turngate.implementations.mutants.model import Mutant
from turngate.implementations.reference import protocol
from turngate.implementations.reference.audit import audit_run
from turngate.implementations.reference.clock import Clock, ManualClock, SystemClock
from turngate.implementations.reference.gate import READING_BODY
from turngate.implementations.reference.lifecycle import (
    TERMINAL_STATES,
    EngineSetup,
    Orchestrator,
    RunRequest,
    RunRequestError,
)
from turngate.implementations.reference.profiles import ProfileKind
from turngate.implementations.reference.skill import Skill, SkillPackageError, load_skill, skill_md_name
from turngate.implementations.reference.store import RunRecord, Store
from turngate.implementations.serve.archives import ArchiveLimits, unpack, write_into
from turngate.implementations.serve.errors import ApiError
from turngate.implementations.serve.identity import Served
from turngate.implementations.serve.values import check_request_values

MAX_PACKAGE_BYTES: Final = 16 * 1024 * 1024
MAX_REPLY_BYTES: Final = 64 * 1024
MAX_JOB_BYTES: Final = 1024 * 1024
# The largest wait a client may ask for (about 31 years): anything above is a mistake, not a wish.
MAX_SESSION_TIMEOUT_SEC: Final = 10**9
MAX_TURN_TIMEOUT_SEC: Final = 86400
MAX_PACKAGES_KEPT: Final = 1024  # installed packages kept loaded (see JobService._loaded)

# Runtime options of HTTP_API.md, plus turngate's own (prefixed) for its reference server.
RUNTIME_OPTIONS: Final = frozenset(
    {
        "execution_mode",
        "no_cache",
        "interactive_require_user_reply",
        "session_timeout_sec",
        "turngate_profile",
        "turngate_gemini_output_format",
        "turngate_turn_timeout_sec",
    }
)
SETTLED_STATES: Final = TERMINAL_STATES | {"waiting_user"}
PROFILES: Final = ("resumable", "sticky_process")
GEMINI_FORMATS: Final = ("json", "stream-json")


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    data_dir: Path
    engines: EngineSetup
    slots: int = 2
    soft_completion_reading: str = READING_BODY
    test_hooks: bool = False  # the manual clock, restart and internals under /v1/_turngate/
    # Probe the engine's resume support for every interactive run, as a real server may, rather
    # than once per engine: an engine that turns non-resumable makes the next run sticky_process.
    probe_each_run: bool = False
    max_reply_bytes: int = MAX_REPLY_BYTES
    max_package_bytes: int = MAX_PACKAGE_BYTES
    max_job_bytes: int = MAX_JOB_BYTES
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    variant: Variant = REFERENCE  # a conforming variant's names and exposure (conforming_variants.py)
    mutant: Mutant | None = None  # the spec mutant the process runs (activated by its caller), to say so


class JobService:
    """One reference orchestrator, its store and its installed skills."""

    def __init__(self, config: ServiceConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.clock: Clock = clock or (ManualClock() if config.test_hooks else SystemClock())
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self._skills_dir = config.data_dir / "skills"
        self._skills_dir.mkdir(exist_ok=True)
        self._lock = threading.Lock()
        self._packages: dict[Path, Skill] = {}  # installed folder -> its package, loaded once
        self._store, self._orchestrator = self._open()

    def _open(self) -> tuple[Store, Orchestrator]:
        store = Store(self.config.data_dir / "reference.sqlite3")
        orchestrator = Orchestrator(
            store=store,
            runs_dir=self.config.data_dir / "runs",
            engines=self.config.engines,
            clock=self.clock,
            slots=self.config.slots,
            soft_completion_reading=self.config.soft_completion_reading,
            # With the test hooks each job probes like a fresh in-process orchestrator does per case.
            cache_probes=not (self.config.test_hooks or self.config.probe_each_run),
        )
        return store, orchestrator

    def close(self) -> None:
        self._orchestrator.shutdown()
        self._store.close()

    @property
    def served(self) -> Served:
        config = self.config
        return Served(config.variant, config.mutant, config.soft_completion_reading)

    def health(self) -> dict[str, Any]:
        """``version`` is turngate's; ``implementation`` what it serves (a variant, a mutant)."""
        return {"status": "ok", "version": __version__, "implementation": dict(self.served.to_json())}

    # Skills ------------------------------------------------------------------------------

    def install(self, archive: bytes) -> dict[str, Any]:
        """Unpack a zipped skill folder into a folder of its own, named by the zip's hash, and check it.

        The answer's ``version`` is runner.json's own (null when it has none); ``archive_sha256``
        is the hash of the zip as uploaded. A folder never changes once written, so a run keeps
        the package it started with even when the same skill is installed again while it waits.
        """
        if len(archive) > self.config.max_package_bytes:
            raise ApiError(
                413, "PACKAGE_TOO_LARGE", f"{len(archive)} bytes > {self.config.max_package_bytes}"
            )
        digest = hashlib.sha256(archive).hexdigest()
        upload = digest[:16]  # this upload's folder: a later install never changes it
        name, files = _package_files(archive, self.config.archive_limits)
        target = self._skills_dir / name / upload
        if not (target / "SKILL.md").exists():
            staging = self._skills_dir / name / f".{upload}.partial"
            shutil.rmtree(staging, ignore_errors=True)
            try:
                write_into(staging, files)
                skill = load_skill_as(staging, name)
                if skill.name != name:  # load_skill_as checks; kept for the type checker's benefit
                    raise ApiError(400, "SKILL_NAME_MISMATCH", f"{skill.name!r} != {name!r}")
                staging.rename(target)
            except SkillPackageError as problem:
                raise ApiError(400, problem.code, _package_problem(problem, staging)) from None
            finally:
                # Nothing half-written stays: a refused package leaves no staging folder behind.
                shutil.rmtree(staging, ignore_errors=True)
                shutil.rmtree(staging.parent / ".by-name" / staging.name, ignore_errors=True)
        with self._lock:
            (self._skills_dir / name / "current").write_text(upload, encoding="utf-8")
        # The version is the package's own (runner.json); the upload is told apart by its hash.
        runner = json.loads(files["assets/runner.json"])
        return {
            "status": "installed",
            "skill_id": name,
            "version": runner.get("version"),
            "archive_sha256": digest,
        }

    def _skill(self, skill_id: object) -> Skill:
        if not isinstance(skill_id, str) or not skill_id:
            raise ApiError(400, "REQUEST_INVALID", f"skill_id: {skill_id!r}: must be a non-empty string")
        # A name no folder can have (too long, a NUL) is no installed skill: asked before the disk is.
        if "/" in skill_id or skill_id.startswith(".") or path_problem(skill_id) is not None:
            raise ApiError(404, "SKILL_NOT_FOUND", f"skill_id: {skill_id!r:.120} is not installed")
        current = self._skills_dir / skill_id / "current"
        if not current.exists():
            raise ApiError(404, "SKILL_NOT_FOUND", f"skill_id: {skill_id!r} is not installed")
        upload = current.read_text(encoding="utf-8").strip()
        return self._loaded(
            self._skills_dir / skill_id / upload, lambda folder: load_skill_as(folder, skill_id)
        )

    def _loaded(self, folder: Path, load: Callable[[Path], Skill]) -> Skill:
        """The package in an installed folder, read and checked once: such a folder never changes
        (see `install`), and checking it again for every job and every look at a run was most of the
        server's own work in a catalog run."""
        skill = self._packages.get(folder)
        if skill is None:
            if len(self._packages) >= MAX_PACKAGES_KEPT:
                self._packages.clear()
            skill = self._packages[folder] = load(folder)
        return skill

    # Jobs --------------------------------------------------------------------------------

    def create_job(self, body: object) -> dict[str, Any]:
        request = self._run_request(body)
        try:
            run_id = self._orchestrator.submit(request)
        except RunRequestError as refusal:
            raise ApiError(400, refusal.code, str(refusal)) from None
        return {"request_id": run_id, "cache_hit": False, "status": "queued"}

    def _run_request(self, body: object) -> RunRequest:
        if not isinstance(body, Mapping):
            raise ApiError(400, "REQUEST_INVALID", "the body must be a JSON object")
        check_request_values(body)
        known = {"skill_id", "engine", "input", "parameter", "model", "runtime_options"}
        unknown = sorted(set(body) - known)
        if unknown:
            raise ApiError(400, "REQUEST_INVALID", f"unknown field {unknown[0]!r}")
        skill = self._skill(body.get("skill_id"))
        engine = body.get("engine")
        if engine not in ENGINES:
            raise ApiError(400, "ENGINE_UNKNOWN", f"engine: {engine!r}: known: {', '.join(ENGINES)}")
        for name in ("input", "parameter"):
            if not isinstance(body.get(name, {}), Mapping):
                raise ApiError(400, "REQUEST_INVALID", f"{name}: {body.get(name)!r}: must be an object")
        _check_declared_inputs(skill, body.get("input", {}))
        model = body.get("model")
        if model is not None and not isinstance(model, str):
            raise ApiError(400, "REQUEST_INVALID", f"model: {model!r}: must be a string")
        options = body.get("runtime_options", {})
        if not isinstance(options, Mapping):
            raise ApiError(400, "REQUEST_INVALID", f"runtime_options: {options!r}: must be an object")
        unknown = sorted(set(options) - RUNTIME_OPTIONS)
        if unknown:
            raise ApiError(400, "RUNTIME_OPTION_UNKNOWN", f"runtime_options.{unknown[0]}: not supported")
        mode = options.get("execution_mode", "auto")
        if mode not in ("auto", "interactive"):
            raise _invalid_option("execution_mode", mode, "auto or interactive")
        strict = options.get("interactive_require_user_reply", True)
        if not isinstance(strict, bool):
            raise _invalid_option("interactive_require_user_reply", strict, "must be true or false")
        timeout = options.get("session_timeout_sec", 1200)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int)
            or not 1 <= timeout <= MAX_SESSION_TIMEOUT_SEC
        ):
            raise _invalid_option(
                "session_timeout_sec", timeout, f"must be an integer from 1 to {MAX_SESSION_TIMEOUT_SEC}"
            )
        profile = options.get("turngate_profile")
        if profile is not None and profile not in PROFILES:
            raise _invalid_option("turngate_profile", profile, f"one of {', '.join(PROFILES)}")
        output_format = options.get("turngate_gemini_output_format")
        if output_format is not None and output_format not in GEMINI_FORMATS:
            raise _invalid_option("turngate_gemini_output_format", output_format, "json or stream-json")
        if output_format is None and engine == "gemini":
            output_format = _skill_gemini_format(skill.folder)
        turn_timeout = options.get("turngate_turn_timeout_sec")
        if turn_timeout is not None and (
            isinstance(turn_timeout, bool)
            or not isinstance(turn_timeout, int | float)
            or not 0 < turn_timeout <= MAX_TURN_TIMEOUT_SEC
        ):
            raise _invalid_option(
                "turngate_turn_timeout_sec",
                turn_timeout,
                f"a number of seconds in (0, {MAX_TURN_TIMEOUT_SEC}]",
            )
        return RunRequest(
            skill=skill,
            engine=str(engine),
            mode=mode,
            input=dict(body.get("input", {})),
            parameter=dict(body.get("parameter", {})),
            profile=cast(ProfileKind | None, profile),
            require_user_reply=strict,
            session_timeout_sec=timeout,
            model=model,
            gemini_output_format=output_format,
            turn_timeout_sec=None if turn_timeout is None else float(turn_timeout),
        )

    def status(self, job_id: str) -> dict[str, Any]:
        run = self._run(job_id)
        variant = self.config.variant
        interactions = self._store.interactions(job_id)
        return {
            "request_id": run.run_id,
            "status": run.state,
            "skill_id": run.skill_id,
            "engine": run.engine,
            "execution_mode": run.mode,
            "pending_interaction_id": run.pending["interaction_id"] if run.pending else None,
            "interaction_count": len(interactions),
            "attempt_count": run.attempt_count,
            "warnings": list(self._warnings(run, run.warnings)),
            "error": None
            if run.error_code is None
            else {"code": variant.code(run.error_code), "message": run.error_message},
            "created_at": run.created_at,
            "updated_at": run.updated_at,
        }

    def pending(self, job_id: str) -> dict[str, Any]:
        run = self._run(job_id)
        waiting = run.state == "waiting_user" and run.pending is not None
        pending = self.config.variant.pending(run.pending, run.engine) if waiting else None
        return {"status": run.state, "pending": pending}

    def reply(self, job_id: str, body: object) -> dict[str, Any]:
        self._run(job_id)
        if not isinstance(body, Mapping):
            raise ApiError(400, "REQUEST_INVALID", "the body must be a JSON object")
        interaction_id = body.get("interaction_id")
        if isinstance(interaction_id, bool) or not isinstance(interaction_id, int):
            raise ApiError(400, "REQUEST_INVALID", f"interaction_id: {interaction_id!r}: must be an integer")
        if "response" not in body:
            raise ApiError(400, "REQUEST_INVALID", "response: missing")
        check_request_values(body)
        response = body["response"]
        # Free text, or any JSON value (a structured answer to a choice), given to the engine as JSON.
        text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        key = body.get("idempotency_key")
        if key is not None and not isinstance(key, str):
            raise ApiError(400, "REQUEST_INVALID", f"idempotency_key: {key!r}: must be a string")
        with self._lock:
            # A key already used gets the first answer, nothing redone, across restarts too (the store).
            # The id as the variant shows it, back in the orchestrator's own numbering.
            own = self.config.variant.own_id(interaction_id) or 0
            outcome = self._orchestrator.reply(job_id, own, text, idempotency_key=key)
            if not outcome.accepted:
                raise ApiError(
                    409,
                    self.config.variant.code(outcome.code) or "INTERACTION_STALE",
                    f"interaction_id {interaction_id}: not the pending interaction of a waiting job"
                    f" (status {outcome.status})",
                )
        return {"request_id": job_id, "status": outcome.status, "accepted": True}

    def cancel(self, job_id: str) -> dict[str, Any]:
        self._run(job_id)
        accepted = self._orchestrator.cancel(job_id)
        return {"request_id": job_id, "status": self._run(job_id).state, "accepted": accepted}

    def result(self, job_id: str) -> dict[str, Any]:
        run = self._run(job_id)
        if run.state not in TERMINAL_STATES or run.result is None:
            raise ApiError(409, "RUN_NOT_TERMINAL", f"job {job_id} is {run.state}")
        result = dict(run.result)
        if result.get("status") == "succeeded":
            result["status"] = "success"
        result["validation_warnings"] = list(self._warnings(run, result.get("validation_warnings") or ()))
        if isinstance(result.get("error"), Mapping):
            result["error"] = {
                **result["error"],
                "code": self.config.variant.code(result["error"].get("code")),
            }
        return {"request_id": job_id, "result": result}

    def history(self, job_id: str, after_seq: int = 0) -> dict[str, Any]:
        return {"request_id": job_id, "events": self.events_after(job_id, after_seq)}

    def events_after(self, job_id: str, after_seq: int) -> list[Mapping[str, Any]]:
        run = self._run(job_id)
        variant = self.config.variant
        if not variant.protocol_events:
            return []
        shown: list[Mapping[str, Any]] = []
        for event in self._store.events(job_id, after=after_seq):
            envelope = dict(protocol.envelope(run, event))
            envelope["type"] = variant.event_type(event.type)
            envelope["data"] = variant.event_data(event.type, event.data)
            shown.append(envelope)
        return shown

    def _warnings(self, run: RunRecord, warnings: Any) -> tuple[str, ...]:
        chosen = (
            run.request.get("gemini_output_format")
            or self.config.engines.command_options.gemini_output_format
        )
        return self.config.variant.warnings(
            tuple(warnings), engine=run.engine, gemini_format=chosen, state=run.state
        )

    def upload(self, job_id: str, archive: bytes) -> dict[str, Any]:
        """Keep the job's input files; the reference's skills take none, so its runs start at creation."""
        run = self._run(job_id)
        if len(archive) > self.config.max_package_bytes:
            raise ApiError(413, "UPLOAD_TOO_LARGE", f"{len(archive)} bytes > {self.config.max_package_bytes}")
        files = unpack(archive, self.config.archive_limits)
        write_into(Path(run.run_dir) / "uploads", files)
        return {"request_id": job_id, "status": run.state, "files": sorted(files)}

    def _run(self, job_id: str) -> RunRecord:
        run = self._store.run(job_id)
        if run is None:
            raise ApiError(404, "JOB_NOT_FOUND", f"no job {job_id!r}")
        return run

    # Time -------------------------------------------------------------------------------

    def tick(self) -> None:
        """Act on passed wait deadlines (called every second by the server on the real clock)."""
        self._orchestrator.check_deadlines()

    # Test hooks (only with test_hooks) -----------------------------------------------------

    def advance_clock(self, body: object) -> dict[str, Any]:
        self._hooks()
        seconds = body.get("seconds") if isinstance(body, Mapping) else None
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise ApiError(400, "REQUEST_INVALID", f"seconds: {seconds!r}: must be a number >= 0")
        job_id = self._hook_job(body)  # that job's clock alone: cases sharing the server each move their own
        cast(ManualClock, self.clock).advance(float(seconds), job_id)
        self._orchestrator.check_deadlines()
        return {"now": self.clock.now(job_id), **({"job_id": job_id} if job_id is not None else {})}

    def restart(self) -> dict[str, Any]:
        """Stop the orchestrator as a crash would and start a new one on the same store."""
        self._hooks()
        with self._lock:
            self.close()
            self._store, self._orchestrator = self._open()
        return {"restarted": True}

    def fill_slots(self, body: object) -> dict[str, Any]:
        """Hold every free slot (as other work would) until `free_slots`: a run answered meanwhile
        waits for a slot. With a ``job_id``, for that job alone: it finds no slot free, as if every
        one were taken, while the other jobs go on (cases sharing the server need not take turns)."""
        self._hooks()
        job_id = self._hook_job(body)
        if job_id is not None:
            self._orchestrator.keep_from_slots(job_id)
            return {"held": 0, "job_id": job_id}
        return {"held": self._orchestrator.hold_free_slots()}

    def free_slots(self, body: object) -> dict[str, Any]:
        self._hooks()
        job_id = self._hook_job(body)
        if job_id is not None:
            self._orchestrator.let_into_slots(job_id)
            return {"freed": 0, "job_id": job_id}
        return {"freed": self._orchestrator.release_held_slots()}

    def wait_idle(self, body: object) -> dict[str, Any]:
        self._hooks()
        timeout = body.get("timeout", 120.0) if isinstance(body, Mapping) else 120.0
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 <= timeout <= 3600:
            raise ApiError(
                400, "REQUEST_INVALID", f"timeout: {timeout!r:.80}: must be seconds from 0 to 3600"
            )
        # One job's turn (what a case sharing the server waits for), or every job's.
        job_id = self._hook_job(body)
        idle = self._orchestrator.wait_idle(float(timeout), job_id)
        if job_id is None:
            return {"idle": idle}
        # The job as GET /v1/jobs/{id} shows it now: what the caller would ask for next, one call fewer.
        return {"idle": idle, "job_id": job_id, "status": self.status(job_id)}

    def internals(self, job_id: str) -> dict[str, Any]:
        """What only the reference can show: the gate's decisions, the slot, the patched SKILL.md."""
        self._hooks()
        run = self._run(job_id)
        patch_path = Path(run.run_dir) / "skills" / run.skill_id / "SKILL.md"
        attempts = self._store.attempts(job_id)
        variant = self.config.variant
        shown: dict[str, Any] = {
            "decisions": [
                variant.decision(attempt.decision) for attempt in attempts if attempt.decision is not None
            ],
            "slot_held": self._orchestrator.slots.holds(job_id),
            "patch": patch_path.read_text(encoding="utf-8") if patch_path.exists() else None,
            # The after-the-fact audit next to the live gate's decisions (Decision 3.1).
            "audit": [
                {
                    "attempt": item.attempt_number,
                    "marker_found": item.marker_found,
                    "completion": item.completion,
                    "agrees_with_gate": item.agrees_with_gate,
                }
                for item in audit_run(self._store, job_id, output_schema=self._run_skill(run).output_schema)
            ],
        }
        if variant.history:  # a variant without history shows it nowhere, not even to turngate's hooks
            shown["history"] = list(
                variant.history_rows(
                    {
                        "interaction_id": item.interaction_id,
                        "prompt": item.prompt,
                        "response": item.response,
                        "automatic": item.automatic,
                        "timestamp": item.replied_at if item.replied_at is not None else item.asked_at,
                    }
                    for item in self._store.interactions(job_id)
                )
            )
        return shown

    def _run_skill(self, run: RunRecord) -> Skill:
        return self._loaded(Path(run.request["skill_dir"]), load_skill)  # the package the run started with

    def _hook_job(self, body: object) -> str | None:
        """The job a test hook is scoped to (``job_id`` in its body), or None for the whole server."""
        job_id = body.get("job_id") if isinstance(body, Mapping) else None
        if job_id is None:
            return None
        if not isinstance(job_id, str):
            raise ApiError(400, "REQUEST_INVALID", f"job_id: {job_id!r:.80}: must be a job id (a string)")
        return self._run(job_id).run_id

    def _hooks(self) -> None:
        if not self.config.test_hooks:
            raise ApiError(404, "NOT_FOUND", "test hooks are off (start the server with --test-hooks)")


INPUT_UNDECLARED: Final = "INPUT_UNDECLARED"


def _check_declared_inputs(skill: Skill, given: Mapping[str, Any]) -> None:
    """Refuse an input key the skill's input schema does not declare, as Skill-Runner's server does
    (HTTP_API.md, "Inputs"), rather than JSON Schema's default of taking any other key.

    Declared: a key of ``properties``, or one a ``patternProperties`` pattern matches. A schema
    that takes other keys says so explicitly: ``additionalProperties`` true or a schema. A skill
    without an input schema declares no input. Only the keys are checked here, not the values.
    """
    schema = skill.input_schema or {}
    extra = schema.get("additionalProperties")
    if extra is not None and extra is not False:
        return
    declared = schema.get("properties")
    names = list(declared) if isinstance(declared, Mapping) else []
    patterns = schema.get("patternProperties")
    pattern_texts = [str(pattern) for pattern in patterns] if isinstance(patterns, Mapping) else []
    # in linear time (RE2): a key is the caller's text, a pattern the package's
    undeclared = [
        key
        for key in given
        if key not in names and not any(search(pattern, key) for pattern in pattern_texts)
    ]
    if not undeclared:
        return
    if skill.input_schema is None:
        where = "the skill declares no input (its runner.json names no schemas.input)"
    else:
        where = f"the skill's input schema declares {', '.join(map(_quoted, names)) or 'no key'}"
        if pattern_texts:
            where += f" and keys matching {', '.join(map(_quoted, pattern_texts))}"
    keys = ", ".join(_quoted(key) for key in undeclared[:5]) + (", ..." if len(undeclared) > 5 else "")
    raise ApiError(
        400,
        INPUT_UNDECLARED,
        f"input: {keys}: not declared; {where} (a schema that takes other keys says"
        ' "additionalProperties": true)',
    )


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _invalid_option(name: str, value: object, why: str) -> ApiError:
    return ApiError(400, "RUNTIME_OPTION_INVALID", f"runtime_options.{name}: {value!r}: {why}")


def load_skill_as(folder: Path, name: str) -> Skill:
    """Load a package from a versioned folder whose name is not the skill's.

    ``load_skill`` checks SKILL.md's name against the folder name, so it reads a
    link named after the skill.
    """
    alias = folder.parent / ".by-name" / folder.name / name
    if not alias.exists():
        alias.parent.mkdir(parents=True, exist_ok=True)
        alias.symlink_to(folder.resolve(), target_is_directory=True)
    return load_skill(alias)


def _package_files(archive: bytes, limits: ArchiveLimits) -> tuple[str, dict[str, bytes]]:
    """The package's folder name and its files by relative path.

    A zip of the folder (``greet/SKILL.md``) and a zip of its contents
    (``SKILL.md``, named by SKILL.md's front matter) are both accepted.
    """
    files = unpack(archive, limits)
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and all(len(PurePosixPath(name).parts) > 1 for name in files):
        top = tops.pop()
        files = {PurePosixPath(entry).relative_to(top).as_posix(): data for entry, data in files.items()}
        name = top
    else:
        skill_md = files.get("SKILL.md")
        if skill_md is None:
            raise ApiError(400, "PACKAGE_INVALID", "file: no SKILL.md in the archive")
        try:
            name = skill_md_name(skill_md.decode("utf-8", "replace"), Path("SKILL.md"))
        except SkillPackageError as problem:
            raise ApiError(400, problem.code, f"file: {problem.where(str(problem.file))}") from None
    if not name or name.startswith(".") or "/" in name or name == "current":
        raise ApiError(400, "PACKAGE_INVALID", f"file: skill folder name {name!r} is not usable")
    return name, files


def _package_problem(problem: SkillPackageError, staging: Path) -> str:
    """The problem's one line, naming the file inside the package, never the server's folders."""
    file = str(problem.file)
    for root in (staging, staging.parent / ".by-name" / staging.name):
        for candidate in (root, root.resolve()):
            try:
                file = Path(os.path.abspath(problem.file)).relative_to(candidate).as_posix()
            except ValueError:
                continue
    return problem.where(file)  # the code is the answer's own field: not repeated in its message


SKILL_GEMINI_SETTINGS: Final = "assets/gemini_settings.json"


def _skill_gemini_format(folder: Path) -> str | None:
    """`output.format` of the skill's own gemini defaults (`assets/gemini_settings.json`), if any.

    A skill package may carry gemini settings, as Skill-Runner's skills do: so a client without the
    test hooks can still have gemini run in the output format the skill needs.
    """
    path = folder / SKILL_GEMINI_SETTINGS
    if not path.is_file():
        return None
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as problem:
        raise ApiError(400, "SKILL_INVALID", f"{SKILL_GEMINI_SETTINGS}: not JSON: {problem}") from None
    output = settings.get("output") if isinstance(settings, Mapping) else None
    chosen = output.get("format") if isinstance(output, Mapping) else None
    if chosen is None:
        return None
    if chosen not in GEMINI_FORMATS:
        raise ApiError(
            400, "SKILL_INVALID", f"{SKILL_GEMINI_SETTINGS}: output.format: {chosen!r}: json or stream-json"
        )
    return str(chosen)
