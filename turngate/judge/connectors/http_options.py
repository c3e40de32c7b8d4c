"""The options of an HTTP target (a job-API server), as its target file gives them: read and checked.

Every field is optional but ``base_url``; a wrong one is a one-line ``TargetProblem``
naming the file, the field and the value. The HTTP connector reads these; the target
(``turngate.judge.targets``) builds them from ``--target`` and ``--target-options``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from turngate.base.optionsfile import check_types
from turngate.judge.connectors.audit_records import AuditSource, EvidenceProblem
from turngate.judge.connectors.http_dialect import DEFAULT_DIALECT, DIALECTS, Dialect
from turngate.protocol.connector import CAPABILITIES

KNOWN_CAPABILITIES: Final = CAPABILITIES | {"http"}
# What any job-API server shows: the events and history; the call log adds argv and the patch.
HTTP_BASE_CAPABILITIES: Final = frozenset({"history", "events", "http"})
# turngate serve --test-hooks adds its manual clock, restart, the reference's internals, holding its
# free slots for a step, and lets a case choose the profile (sticky) and gemini's output format.
HOOK_CAPABILITIES: Final = frozenset(
    {"clock", "restart", "slots", "slot_fill", "patch", "sticky", "gemini_output_format", "watchdog"}
)

_OPTION_FIELDS: Final[dict[str, type | tuple[type, ...]]] = {
    "base_url": str,
    "scripts_dir": str,
    "call_log": str,
    "capabilities": list,
    "extra_request": dict,
    "request_timeout_sec": (int, float),
    "settle_timeout_sec": (int, float),
    "turngate_hooks": bool,
    "jobs": int,
    "events_stream": bool,
    "engines": list,
    "models": dict,
    "auth": dict,
    "headers": dict,
    "retries": int,
    "events_source": str,
    "honours_session_timeout": bool,
    "session_timeout_real_sec": int,
    "clock_grace_sec": (int, float),
    "restart_command": str,
    "patch_modules": dict,
    "slots": int,
    "probes_each_run": bool,
    "sticky_process": bool,
    "skill_gemini_settings": bool,
    "turn_timeout_sec": (int, float),
    "audit_source": dict,
    "dialect": str,
    "providers": dict,
    "turn_timeout_per_job": bool,
}
EVENTS_SOURCES: Final = ("auto", "history", "stream", "none")
AUTH_SCHEMES: Final = ("bearer", "basic")


class TargetProblem(ValueError):
    """A ``--target`` or target options file turngate cannot use; names the file, field and value."""


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """The target options file of an HTTP target (all but ``base_url`` optional)."""

    base_url: str
    scripts_dir: Path  # where the server's fake engines read scripts (TURNGATE_SCRIPTS)
    call_log: Path | None = None  # their call log (TURNGATE_CALL_LOG); without it no argv checks
    capabilities: frozenset[str] = HTTP_BASE_CAPABILITIES
    extra_request: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"model": "..."}
    request_timeout_sec: float = 30.0
    settle_timeout_sec: float = 300.0
    turngate_hooks: bool = False
    jobs: int = 1  # cases at once (each case installs its own skill, so they may run together)
    events_stream: bool = True  # follow GET /events (SSE) while waiting, polling as the fallback
    engines: frozenset[str] | None = None  # the engines the server runs (None: ask it, case by case)
    models: Mapping[str, str] = field(default_factory=dict)  # engine -> the ``model`` to request
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with every request (auth included)
    retries: int = 5  # transient failures (reset, 429, 503) retried with backoff
    # Where the protocol (FCMP) events are: the history endpoint, the SSE stream's chat_event
    # frames (a server whose history holds runtime events), or nowhere; auto looks at the history.
    events_source: str = "auto"
    # A short real session_timeout_sec in the request works: the clock scenarios run on real time,
    # the scenario's timeout scaled down to session_timeout_real_sec, and the server given
    # clock_grace_sec past it to act.
    honours_session_timeout: bool = False
    session_timeout_real_sec: int = 3
    clock_grace_sec: float = 8.0
    restart_command: str | None = None  # a shell command that restarts the server (else no restart)
    # Runs the server lets hold an engine at once: whether a run holds a slot is then seen by
    # starting that many filler jobs (all start: it holds none); None: slots are not observable.
    slots: int | None = None
    # The server probes each run's engine for resume support, so the fake engines' non-resumable
    # knob (a file in the scripts folder) makes it choose sticky_process: the sticky scenarios run.
    probes_each_run: bool = False
    # The server runs gemini in the output format the skill's own assets/gemini_settings.json names:
    # a case needing one (stream-json) carries it in its package, so those cases run without hooks.
    skill_gemini_settings: bool = False
    # The server's own engine watchdog (seconds a turn may take before it ends the engine), from its
    # configuration: the hung-engine scenarios run, waiting that long; None: they are skipped.
    turn_timeout_sec: float | None = None
    # A phrase that opens each of the server's patch modules -> the spec's module name (callpatch.py).
    patch_modules: Mapping[str, str] = field(default_factory=dict)
    # Where the server shows each attempt's audit record (connectors/audit_records.py); None: nowhere known.
    audit_source: AuditSource | None = None
    # The server's generation of the job API: its runtime options' names (http_dialect.py).
    dialect: Dialect = DIALECTS[DEFAULT_DIALECT]
    # engine -> the provider_id its jobs name (a server that runs one engine against several
    # providers refuses a job without one: Skill-Runner v0.7 for opencode, claude, qwen, kilo).
    providers: Mapping[str, str] = field(default_factory=dict)
    # The dialect's per-job engine watchdog works (the probe saw a hung engine ended by it): each
    # hung-engine case sets its own, as turngate's hooks do.
    turn_timeout_per_job: bool = False


def http_options(raw: Mapping[str, Any], source: Path | None) -> HttpOptions:
    where = str(source) if source else "--target"
    check_types(where, raw, _OPTION_FIELDS, TargetProblem)
    base_url = str(raw["base_url"]).rstrip("/")
    if not base_url.startswith(("http://", "https://")):
        raise TargetProblem(f"{where}: base_url: {base_url!r}: must start with http:// or https://")
    hooks = bool(raw.get("turngate_hooks", False))
    call_log = Path(raw["call_log"]).expanduser() if raw.get("call_log") else None
    declared = raw.get("capabilities")
    if declared is None:
        capabilities = set(HTTP_BASE_CAPABILITIES)
        if call_log is not None:  # the engines' own record: argv, and the patched SKILL.md they read
            capabilities |= {"argv", "patch"}
        if hooks:
            capabilities |= HOOK_CAPABILITIES
        if raw.get("honours_session_timeout"):
            capabilities |= {"clock"}
        if raw.get("slots"):  # seen, and held for a step, with filler jobs (http_slots.py)
            capabilities |= {"slots", "slot_fill"}
        # A server that probes each run chooses sticky_process for a non-resumable engine, unless
        # the probe saw it resume one anyway (sticky_process: false): then no run is ever sticky.
        if raw.get("probes_each_run") and raw.get("sticky_process", True):
            capabilities |= {"sticky"}
        if raw.get("skill_gemini_settings"):
            capabilities |= {"gemini_output_format"}
        if raw.get("turn_timeout_sec") or raw.get("turn_timeout_per_job"):
            capabilities |= {"watchdog"}
        if raw.get("restart_command"):
            capabilities |= {"restart"}
    else:
        unknown = sorted(set(map(str, declared)) - KNOWN_CAPABILITIES)
        if unknown:
            raise TargetProblem(
                f"{where}: capabilities: {unknown[0]!r}: known: {', '.join(sorted(KNOWN_CAPABILITIES))}"
            )
        capabilities = set(map(str, declared))
    if not raw.get("scripts_dir"):
        raise TargetProblem(
            f"{where}: scripts_dir: missing: the folder the server's fake engines read their scripts from"
            " (TURNGATE_SCRIPTS, or `turngate engines install DIR --scripts FOLDER`); see the README"
        )
    jobs = int(raw.get("jobs", 1))
    if jobs < 1:
        raise TargetProblem(f"{where}: jobs: {jobs!r}: must be >= 1")
    events_source = str(raw.get("events_source", "auto"))
    if events_source not in EVENTS_SOURCES:
        raise TargetProblem(f"{where}: events_source: {events_source!r}: one of {', '.join(EVENTS_SOURCES)}")
    engines = raw.get("engines")
    models = {str(engine): str(model) for engine, model in dict(raw.get("models", {})).items()}
    turn_timeout = float(raw["turn_timeout_sec"]) if raw.get("turn_timeout_sec") is not None else None
    settle = float(raw.get("settle_timeout_sec", 300.0))
    if turn_timeout is not None and not 0 < turn_timeout < settle:
        raise TargetProblem(
            f"{where}: turn_timeout_sec: {turn_timeout!r}: must be more than 0 and less than"
            f" settle_timeout_sec ({settle:g}), or a hung engine's case cannot wait for the watchdog"
        )
    dialect = str(raw.get("dialect", DEFAULT_DIALECT))
    if dialect not in DIALECTS:
        raise TargetProblem(f"{where}: dialect: {dialect!r}: one of {', '.join(DIALECTS)}")
    if raw.get("turn_timeout_per_job") and DIALECTS[dialect].hard_timeout_option is None:
        raise TargetProblem(
            f"{where}: turn_timeout_per_job: true: dialect {dialect} has no per-job engine watchdog"
            f" (one of {', '.join(name for name, known in DIALECTS.items() if known.hard_timeout_option)})"
        )
    retries = int(raw.get("retries", 5))
    if retries < 0:
        raise TargetProblem(f"{where}: retries: {retries!r}: must be >= 0")
    return HttpOptions(
        base_url=base_url,
        scripts_dir=Path(raw["scripts_dir"]).expanduser(),
        call_log=call_log,
        capabilities=frozenset(capabilities),
        extra_request=dict(raw.get("extra_request", {})),
        request_timeout_sec=float(raw.get("request_timeout_sec", 30.0)),
        settle_timeout_sec=settle,
        turngate_hooks=hooks,
        jobs=jobs,
        events_stream=bool(raw.get("events_stream", True)),
        engines=frozenset(map(str, engines)) if engines is not None else None,
        models=models,
        headers=_headers(where, raw),
        retries=retries,
        events_source=events_source,
        honours_session_timeout=bool(raw.get("honours_session_timeout", False)),
        session_timeout_real_sec=_at_least_one(where, "session_timeout_real_sec", raw),
        clock_grace_sec=float(raw.get("clock_grace_sec", 8.0)),
        restart_command=str(raw["restart_command"]) if raw.get("restart_command") else None,
        slots=_at_least_one(where, "slots", raw) if "slots" in raw else None,
        probes_each_run=bool(raw.get("probes_each_run", False)),
        skill_gemini_settings=bool(raw.get("skill_gemini_settings", False)),
        turn_timeout_sec=turn_timeout,
        patch_modules={str(phrase): str(name) for phrase, name in dict(raw.get("patch_modules", {})).items()},
        audit_source=_audit_source(where, raw),
        dialect=DIALECTS[dialect],
        providers={str(engine): str(name) for engine, name in dict(raw.get("providers", {})).items()},
        turn_timeout_per_job=bool(raw.get("turn_timeout_per_job", False)),
    )


def _audit_source(where: str, raw: Mapping[str, Any]) -> AuditSource | None:
    if raw.get("audit_source") is None:
        return None
    try:
        return AuditSource.parse(raw["audit_source"], where)
    except EvidenceProblem as problem:
        raise TargetProblem(str(problem)) from None


def _at_least_one(where: str, name: str, raw: Mapping[str, Any]) -> int:
    value = int(raw.get(name, 3))
    if value < 1:
        raise TargetProblem(f"{where}: {name}: {value!r}: must be >= 1 (seconds)")
    return value


def _headers(where: str, raw: Mapping[str, Any]) -> dict[str, str]:
    """``headers`` as given, plus ``auth: {scheme: bearer|basic, env: VARIABLE}``: the secret stays in
    the environment, never in the file (basic: the variable holds ``user:password``)."""
    headers = {str(name): str(value) for name, value in dict(raw.get("headers", {})).items()}
    auth = raw.get("auth")
    if auth is None:
        return headers
    scheme, variable = auth.get("scheme"), auth.get("env")
    if scheme not in AUTH_SCHEMES:
        raise TargetProblem(f"{where}: auth.scheme: {scheme!r}: one of {', '.join(AUTH_SCHEMES)}")
    if not isinstance(variable, str) or not variable:
        raise TargetProblem(f"{where}: auth.env: {variable!r}: the name of an environment variable")
    secret = os.environ.get(variable)
    if not secret:
        raise TargetProblem(f"{where}: auth.env: {variable!r}: not set in the environment")
    if scheme == "bearer":
        headers["Authorization"] = f"Bearer {secret}"
    else:
        if ":" not in secret:
            raise TargetProblem(f"{where}: auth.env: {variable!r}: basic needs user:password in it")
        headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
    return headers
