"""The run as the spec describes it: a state machine over the user's actions and the engine's turns.

``predict`` walks a run (runtime options, the skill's ``max_attempt`` and output schema, the engine
script, the actions) and gives, for every step, two things:

- :class:`Check` values: what the spec fixes about the run after the step, each with the sentence
  that fixes it (or ``reference`` / ``convention`` where the spec leaves the value open). These are
  the model's *predictions*; ``turngate.judge.exploration`` turns them into a scenario's ``expect``
  and ``by``.
- an observation in the shape a connector's step has (``decision_record.observed_step``), with
  turngate's own names where the spec leaves names open: the model run as an implementation, so
  that the verdict can judge the model against the catalog (the model agrees with every scenario).

Written from the five spec files; the reference orchestrator's code is not consulted. Where the spec
is silent the model declines (:class:`Unmodelled`) or cites ``reference``; where a step lands exactly
on a deadline the spec's "超过" (exceeds) leaves open, it raises :class:`Undetermined`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from turngate.judge.decision_record import OBSERVED_FORMAT
from turngate.judge.model.decision_table import DEFAULT_READINGS, REFERENCE, GateDecision, Readings, decide
from turngate.judge.model.evidence import Unmodelled, turn_evidence

# Engines whose turn's reply is one document holding every message of the turn (gemini's `response`,
# iflow's reply text); every other engine prints its messages apart, and its reply is the last.
ONE_DOCUMENT_ENGINES: Final = frozenset({"gemini", "iflow"})

__all__ = ["CONVENTION", "REFERENCE", "Check", "RunConfig", "StepPrediction", "Undetermined", "predict"]

CONVENTION: Final = "convention"
DEFAULT_SESSION_TIMEOUT_SEC: Final = 1200  # 001: session_timeout_sec, default 1200
FALLBACK_PROMPT: Final = "The skill is waiting for your input."  # turngate's name; the spec gives none
DEFAULT_POLICY: Final = "engine_judgement"  # turngate's name for default_decision_policy
AUTO_REPLY: Final = "(automatic decision)"
TIMEOUT_CODE: Final = "INTERACTION_WAIT_TIMEOUT"

_LIFE: Final = "interactive-run-lifecycle"
_D5: Final = "design/decision-5/backend-pending-baseline"
_CLI: Final = "interactive-engine-turn-protocol/adapter-cli-command"
_HISTORY: Final = f"{_LIFE}/interaction-history/ask-reply-recorded#then"
_MARKER_TEXT: Final = '"__SKILL_DONE__": true'
# The model's own command line per engine (its observation): the flags 003 requires.
_ARGV: Final[Mapping[str, tuple[str, ...]]] = {
    "codex": ("--full-auto",),
    "gemini": ("--yolo",),
    "iflow": ("--yolo", "--thinking"),
    "opencode": (),
    # 003 names no flag for these: Skill-Runner v0.7.9's command lines are the reference's choice
    "claude": (),
    "qwen": (),
    "codebuddy": (),
    "kilo": (),  # 003 names no flags for kilo either
}


class Undetermined(ValueError):
    """The spec does not decide this run (a clock that lands exactly on a deadline, say)."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything about a run that is fixed before it starts."""

    engine: str
    mode: str
    turns: tuple[Mapping[str, Any], ...]  # the engine script's turns
    profile: str = "resumable"
    require_user_reply: bool = True
    session_timeout_sec: float = DEFAULT_SESSION_TIMEOUT_SEC
    max_attempt: Any = None  # runner.json's value as written (None: absent)
    output_schema: Mapping[str, Any] | None = None
    readings: Readings = DEFAULT_READINGS


@dataclass(frozen=True, slots=True)
class Check:
    """One predicted fact: a check key (``state``, ``pending.prompt``, ``history``…), its value, and
    what backs it (a sentence ID, ``convention`` or ``reference``)."""

    key: str
    value: Any
    by: str


@dataclass(frozen=True, slots=True)
class StepPrediction:
    action: str
    argument: Any
    checks: tuple[Check, ...]
    observed: Mapping[str, Any]  # the model's own observation, in observed_step's shape


@dataclass(slots=True)
class _State:
    """The run's state between steps (mutable inside ``predict`` only)."""

    state: str = "queued"
    step: int = 0  # the index of the step being taken
    pending_at: int | None = None  # the step at which the current pending was first shown
    pending_shown: bool = False  # the step made a new pending (a new id to relate)
    attempt: int = 0
    now: float = 0.0
    waiting_since: float | None = None
    # When an automatic decision's turn waits again inside one clock advance, the new wait began
    # somewhere between the deadline that fired and the end of the advance: how far, the spec's
    # clock does not say (a real server is at the deadline, a manual clock at the end).
    waiting_since_latest: float | None = None
    pending: dict[str, Any] | None = None
    prompt_by: str = REFERENCE
    kind_by: str = REFERENCE  # Decision 5's default kind applies (no hint, or a malformed one)
    history: list[dict[str, Any]] = field(default_factory=list)
    history_prompt_by: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    data: Mapping[str, Any] | None = None
    error_code: str | None = None
    warnings: tuple[str, ...] = ()
    reason: str | None = None
    last: GateDecision | None = None


def valid_max_attempt(value: Any) -> bool:
    """Decision 6: ``max_attempt`` is optional and, when given, an integer ``>= 1``."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


def predict(config: RunConfig, steps: Sequence[tuple[str, Any]]) -> tuple[StepPrediction, ...]:
    """Every step's predictions. ``steps``: (action, argument) pairs; the first is ``start``."""
    if config.profile == "sticky_process" and config.mode != "interactive":
        raise Unmodelled("sticky_process is an interactive profile")
    run = _State()
    out: list[StepPrediction] = []
    for index, (action, argument) in enumerate(steps):
        run.step = index
        run.pending_shown = False
        checks: list[Check] = []
        reply: dict[str, Any] | None = None
        accepted: bool | None = None
        match action:
            case "start":
                if index != 0:
                    raise Unmodelled("a second start")
                if not valid_max_attempt(config.max_attempt):
                    if config.mode != "interactive":
                        # max_attempt is "only applied to interactive mode": whether an auto run's
                        # package is refused for an invalid one, the spec does not say.
                        raise Undetermined("an invalid max_attempt in an auto skill")
                    run.state = "refused"
                    checks.append(
                        Check("state", "refused", "design/decision-6/max-attempt-interactive-only#1")
                    )
                    out.append(_step(config, run, index, action, argument, checks, None, None))
                    break
                run.events.append("conversation.started")
                checks += _turn(config, run, automatic=None)
            case "reply":
                text, wanted = (
                    (argument, None)
                    if isinstance(argument, str)
                    else (argument["text"], argument.get("interaction_id"))
                )
                reply, reply_checks = _reply(config, run, str(text), wanted)
                checks += reply_checks
            case "cancel":
                accepted, cancel_checks = _cancel(config, run)
                checks += cancel_checks
            case "advance_clock":
                checks += _advance(config, run, float(argument))
            case "restart":
                checks += _restart(config, run)
            case _:
                raise Unmodelled(f"action {action!r}")
        out.append(_step(config, run, index, action, argument, checks, reply, accepted))
    return tuple(out)


# Actions ----------------------------------------------------------------------------------------


def _turn(config: RunConfig, run: _State, *, automatic: bool | None) -> list[Check]:
    """Play the next engine turn and apply the gate. ``automatic``: the turn answers an automatic
    decision (True), a user's reply (False), or is the first (None)."""
    if run.attempt >= len(config.turns):
        raise Unmodelled("the run asks for more turns than the script has")
    evidence = turn_evidence(
        config.turns[run.attempt], reply_is_last_message=config.engine not in ONE_DOCUMENT_ENGINES
    )
    hint = evidence.hint
    if hint is not None and hint.valid and hint.form == "legacy_json" and _accepts_envelope(config):
        # A clean JSON envelope under a schema it satisfies: Decision 4 rules out only a *malformed*
        # one as output, and 003 only recommends (SHOULD) a non-JSON hint to avoid the mix-up.
        raise Undetermined("a clean legacy ask_user envelope that the output schema accepts")
    if evidence.output_found and not evidence.output_in_final:
        # "final output": the JSON of the final assistant message, or any JSON of the turn's reply?
        # The spec does not say; a run whose answer differs by it is not the model's to predict.
        raise Undetermined("the turn's JSON output is not in its final assistant message")
    run.attempt += 1
    checks = _engine_call(config, run, automatic)
    decision = decide(
        evidence,
        mode=config.mode,
        attempt=run.attempt,
        max_attempt=config.max_attempt if config.mode == "interactive" else None,
        output_valid=evidence.output_valid(config.output_schema),
        readings=config.readings,
        schema=config.output_schema,
        echoed_reply=automatic is False
        and _MARKER_TEXT in (run.history[-1]["response"] if run.history else ""),
    )
    run.last = decision
    run.reason = decision.reason
    checks.append(Check("state", decision.state, decision.state_by))
    if decision.never_waits is not None:
        checks.append(Check("state_not", ["waiting_user"], decision.never_waits))
    if decision.state == "waiting_user":
        run.state = "waiting_user"
        run.waiting_since = run.now
        run.waiting_since_latest = run.now
        run.pending_at = run.step
        run.pending_shown = True
        hint = evidence.hint if evidence.hint is not None and evidence.hint.valid else None
        prompt = evidence.final_message
        if hint is None and prompt is not None:
            run.prompt_by = f"{_D5}#3"  # the final assistant message, quoted as it is
        else:
            run.prompt_by = REFERENCE  # a hint's prompt, the prose beside it or a fallback: the target's
            prompt = (hint.prompt if hint else None) or _last_prose(evidence.messages) or FALLBACK_PROMPT
        run.kind_by = REFERENCE if evidence.hint is not None and evidence.hint.partial else f"{_D5}#4"
        run.pending = {
            "interaction_id": run.attempt,
            "kind": (hint.kind if hint and hint.kind else "open_text"),
            "prompt": prompt,
            "default_decision_policy": DEFAULT_POLICY,
        }
        if hint is not None:
            for name in ("options", "ui_hints", "context"):
                value = getattr(hint, name)
                if value:
                    run.pending[name] = list(value) if name == "options" else dict(value)
        run.events.append("user.input.required")
        return checks
    run.state = decision.state
    run.pending = None
    run.waiting_since = None
    run.error_code = decision.error_code
    run.warnings = decision.warnings
    run.data = evidence.output if decision.data_valid else None
    run.events.append("conversation.completed" if decision.state == "succeeded" else "conversation.failed")
    return checks


def _accepts_envelope(config: RunConfig) -> bool:
    import jsonschema

    interaction = {"interaction_id": 1, "prompt": "?", "kind": "open_text"}
    envelope = {"outcome": "ask_user", "interaction": interaction}
    schema = config.output_schema if config.output_schema is not None else {"type": "object"}
    return bool(jsonschema.Draft202012Validator(schema).is_valid(envelope))


def _engine_call(config: RunConfig, run: _State, automatic: bool | None) -> list[Check]:
    """The engine process that plays this attempt: a new one per turn for a resumable run (a resume
    after the first), the one resident process for a sticky run."""
    sticky = config.profile == "sticky_process"
    if sticky and run.calls:
        run.calls[0]["turns"].append(run.attempt)
        return []
    argv = ["<engine>", *_ARGV[config.engine]]
    resumed = run.attempt > 1
    run.calls.append({"action": "run", "argv": argv, "resumed": resumed, "turns": [run.attempt]})
    if sticky:
        # The resident process's command line is seen (its call log line) once it has ended:
        # checked by _standing when the run is over.
        return []
    checks = [Check("argv", line, line["by"]) for line in _flags_lines(config, run.attempt)]
    if automatic is True and not sticky:
        # 001 resumable + strict=false: the automatic reply starts a resume turn.
        checks.append(
            Check(
                "argv",
                {"attempt": run.attempt, "resumed": True},
                f"{_LIFE}/strict-switch/resumable-strict-false#then",
            )
        )
    return checks


def _flags_lines(config: RunConfig, attempt: int) -> list[dict[str, Any]]:
    """The flags 003 requires on the command line of one attempt, as ``argv`` check lines, one per
    sentence (a missing ``--thinking`` is iflow's ``#and1``, not the ``--yolo`` sentence)."""
    resume = config.mode == "interactive" and attempt > 1
    match config.engine:
        case "codex":
            words = f"{_CLI}/interactive-resume#and2" if resume else f"{_CLI}/codex-{config.mode}#then"
            return [{"attempt": attempt, "contains_any": ["--full-auto", "--yolo"], "by": words}]
        case "gemini":
            words = f"{_CLI}/interactive-resume#then" if resume else f"{_CLI}/gemini-{config.mode}#then"
            return [{"attempt": attempt, "contains": ["--yolo"], "by": words}]
        case "iflow":
            if resume:
                return [
                    {
                        "attempt": attempt,
                        "contains": ["--yolo", "--thinking"],
                        "by": f"{_CLI}/interactive-resume#and1",
                    }
                ]
            return [
                {"attempt": attempt, "contains": ["--yolo"], "by": f"{_CLI}/iflow-{config.mode}#then"},
                {"attempt": attempt, "contains": ["--thinking"], "by": f"{_CLI}/iflow-{config.mode}#and1"},
            ]
    return []


def _reply(
    config: RunConfig, run: _State, text: str, wanted: int | None
) -> tuple[dict[str, Any], list[Check]]:
    if run.state != "waiting_user" or run.pending is None:
        # Nothing waits: the spec says nothing of such a reply; refusing it is the reference's way.
        return {"accepted": False, "code": "not_waiting"}, [
            Check("reply", {"accepted": False}, REFERENCE),
            Check("state", run.state, REFERENCE),
        ]
    current = run.pending["interaction_id"]
    if wanted is not None and wanted != current:
        # A reply to another question than the one pending (Decision 5's ids tell them apart).
        return {"accepted": False, "code": "stale_interaction"}, [
            Check("reply", {"accepted": False}, f"{_D5}#2"),
            Check("state", "waiting_user", f"{_D5}#2"),
        ]
    checks = [
        Check(
            "reply", {"accepted": True}, "interactive-decision-policy/free-text-reply/any-kind-free-text#then"
        )
    ]
    _answer(run, text, automatic=False)
    checks += _turn(config, run, automatic=False)
    return {"accepted": True, "code": None}, checks


def _answer(run: _State, text: str, *, automatic: bool) -> None:
    """A completed ask/reply round: the history row (001: id, prompt, response, time)."""
    assert run.pending is not None
    run.history.append(
        {
            "interaction_id": run.pending["interaction_id"],
            "prompt": run.pending["prompt"],
            "response": text,
            "automatic": automatic,
            "timestamp": _timestamp(run.now),
            "pending_at": run.pending_at,
        }
    )
    run.history_prompt_by.append(run.prompt_by)
    run.events.append("user.input.replied")
    run.pending = None
    run.waiting_since = None


def _cancel(config: RunConfig, run: _State) -> tuple[bool, list[Check]]:
    if run.state in ("succeeded", "failed", "canceled", "refused"):
        return False, [Check("state", run.state, REFERENCE)]
    checks = [Check("state", "canceled", CONVENTION)]  # the state's name is the target's
    if config.profile == "resumable" and config.require_user_reply:
        # 001 resumable + strict=true: the run stays unfinished "直到用户回复或取消" (until a reply or
        # a cancel): after a cancel it is no longer unfinished.
        unfinished = ["queued", "running", "waiting_user"]
        checks.append(Check("state_not", unfinished, f"{_LIFE}/strict-switch/resumable-strict-true#and1"))
    run.state = "canceled"
    run.pending = None
    run.waiting_since = None
    run.events.append("conversation.failed")
    return True, checks


def _advance(config: RunConfig, run: _State, seconds: float) -> list[Check]:
    run.now += seconds
    if run.state != "waiting_user" or run.waiting_since is None:
        return [Check("state", run.state, REFERENCE)]
    waited = run.now - run.waiting_since
    timeout = config.session_timeout_sec
    shortest = run.now - (
        run.waiting_since_latest if run.waiting_since_latest is not None else run.waiting_since
    )
    if abs(waited - timeout) < 1e-6 or abs(shortest - timeout) < 1e-6 or (shortest < timeout < waited):
        raise Undetermined("the clock lands on the wait deadline, or the wait's start is not known enough")
    sticky = config.profile == "sticky_process"
    strict = config.require_user_reply
    if waited < timeout:
        words = f"{_LIFE}/sticky-wait-timeout#req" if sticky else f"{_LIFE}/strict-switch#req"
        if not sticky and strict:
            words = f"{_LIFE}/strict-switch/resumable-strict-true#then"
        return [Check("state", "waiting_user", words)]
    if not sticky and strict:
        # 001 resumable + strict=true: no automatic next turn; unfinished until a reply or a cancel.
        return [Check("state", "waiting_user", f"{_LIFE}/strict-switch/resumable-strict-true#then")]
    if sticky and strict:
        run.state = "failed"
        run.error_code = "INTERACTION_WAIT_TIMEOUT"
        run.pending = None
        run.waiting_since = None
        run.events.append("conversation.failed")
        return [
            Check("state", "failed", f"{_LIFE}/sticky-wait-timeout/sticky-timeout-fails#and1"),
            Check("error_code", TIMEOUT_CODE, f"{_LIFE}/sticky-wait-timeout/sticky-timeout-fails#and2"),
        ]
    # strict=false: an automatic decision answers, and the run goes on (never fails for the wait).
    then = f"{_LIFE}/strict-switch/{'sticky' if sticky else 'resumable'}-strict-false#then"
    fired_at = run.waiting_since + timeout
    _answer(run, AUTO_REPLY, automatic=True)
    checks = _turn(config, run, automatic=True)
    if run.state == "waiting_user":
        run.waiting_since = fired_at  # the earliest the new wait can have begun
        if run.now - fired_at >= timeout:
            raise Undetermined("one clock advance long enough for a second automatic decision")
    checks.append(Check("history.automatic", True, then))
    return checks


def _restart(config: RunConfig, run: _State) -> list[Check]:
    if run.state == "waiting_user" and config.profile == "sticky_process":
        raise Unmodelled("a sticky run's resident process across a restart: the spec is silent")
    if run.state == "waiting_user":
        # 001: the pending interaction is persisted: the waiting run and its question survive.
        return [
            Check("state", "waiting_user", f"{_LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#and1")
        ]
    return [Check("state", run.state, REFERENCE)]


# The step's checks and observation ----------------------------------------------------------------


def _step(
    config: RunConfig,
    run: _State,
    index: int,
    action: str,
    argument: Any,
    checks: list[Check],
    reply: dict[str, Any] | None,
    accepted: bool | None,
) -> StepPrediction:
    checks = _merge_state(checks) + _standing(config, run)
    # A resident process writes its call log line when it ends: while it lives, nothing to see.
    alive = config.profile == "sticky_process" and run.state == "waiting_user"
    observation = {
        "state": run.state,
        "error_code": run.error_code,
        "warnings": list(run.warnings),
        "reason_code": run.reason if run.state != "waiting_user" else "WAITING_FOR_USER",
        "data": run.data,
        "pending": None if run.pending is None else dict(run.pending),
        "attempts": run.attempt,
        "history": [{k: v for k, v in row.items() if k != "pending_at"} for row in run.history],
        "events": [{"type": name, "data": _event_data(name, run)} for name in run.events],
        "slot_held": run.state == "waiting_user" and config.profile == "sticky_process",
        "patch": None,
        "unobservable": ["patch"],
        "audit": [{"attempt": n, "agrees_with_gate": True} for n in range(1, run.attempt + 1)],
    }
    observed = {
        "observed_format": OBSERVED_FORMAT,
        "index": index,
        "action": action,
        "argument": argument,
        "reply": reply,
        "accepted": accepted,
        "observation": observation,
        "calls": [] if alive else [dict(call, turns=list(call["turns"])) for call in run.calls],
        "engine": config.engine,
    }
    return StepPrediction(action, argument, tuple(checks), observed)


def _event_data(name: str, run: _State) -> dict[str, Any]:
    if name == "user.input.required" and run.pending is not None:
        return {"interaction_id": run.pending["interaction_id"], "prompt": run.pending["prompt"]}
    return {}


def _merge_state(checks: list[Check]) -> list[Check]:
    """One ``state`` check per step: the last turn's (a reply's own state check stands only when the
    reply played no turn)."""
    states = [check for check in checks if check.key == "state"]
    rest = [check for check in checks if check.key != "state"]
    return rest + states[-1:]


def _standing(config: RunConfig, run: _State) -> list[Check]:
    """What holds after any step, given the state the run is in."""
    checks: list[Check] = [Check("attempts", run.attempt, REFERENCE)]
    if run.state == "waiting_user" and run.pending is not None:
        checks.append(Check("pending.interaction_id", run.pending["interaction_id"], REFERENCE))
        # Decision 5: a backend-generated monotonic id: a new wait shows a greater id than any before,
        # a step that made no new wait shows the same one. The relation, not the numbers.
        checks.append(Check("pending_id", "new" if run.pending_shown else "same", f"{_D5}#2"))
        if run.prompt_by != REFERENCE:
            checks.append(Check("pending.prompt", run.pending["prompt"], run.prompt_by))
        if run.pending["kind"] == "open_text" and run.kind_by != REFERENCE:
            checks.append(Check("pending.kind", "open_text", run.kind_by))
        checks.append(
            Check(
                "pending_fields",
                ["default_decision_policy"],
                "interactive-decision-policy/default-decision-policy/pending-has-policy#then",
            )
        )
        checks.append(Check("required_event", "from_pending", "design/architecture#2"))
        sticky = config.profile == "sticky_process"
        policy = "sticky-keeps-slot" if sticky else "resumable-releases-slot"
        checks.append(Check("slot_held", sticky, f"{_LIFE}/waiting-slot-policy/{policy}#then"))
    elif run.state in ("succeeded", "failed", "canceled"):
        checks.append(Check("pending", None, REFERENCE))
        if config.profile == "sticky_process" and run.attempt > 1:
            # 001 sticky-keeps-slot: the run stayed bound to its original process for every turn.
            # (Its call log line appears only once the process ended: a sticky run's command line is
            # not checked here, so that a run in the wrong state is blamed on its state alone.)
            checks.append(Check("engine_calls", 1, f"{_LIFE}/waiting-slot-policy/sticky-keeps-slot#and1"))
        if run.state == "succeeded":
            assert run.last is not None
            checks.append(Check("warnings", list(run.warnings), run.last.warnings_by))
            checks.append(Check("data", run.data, REFERENCE))
        if run.error_code is not None and run.last is not None:
            by = run.last.error_by if run.error_code == run.last.error_code else ""
            if run.error_code == TIMEOUT_CODE:
                by = f"{_LIFE}/sticky-wait-timeout/sticky-timeout-fails#and2"
            if by:
                checks.append(Check("error_code", run.error_code, by))
    if run.history:
        checks.append(Check("history", _history_rows(run), _HISTORY))
        checks.append(Check("history_timestamps", "ordered", _HISTORY))
    return _dedupe(checks)


def _history_rows(run: _State) -> list[dict[str, Any]]:
    """The rows with the fields the spec fixes: the response always; the prompt where the pending's
    prompt was the spec's (the final assistant message); ids and origins are checked separately."""
    rows = []
    for row, prompt_by in zip(run.history, run.history_prompt_by, strict=True):
        kept: dict[str, Any] = {"response": row["response"]} if not row["automatic"] else {}
        if prompt_by != REFERENCE:
            kept["prompt"] = row["prompt"]
        # The round it completed: the id of the pending the run showed at that step.
        kept["interaction_id"] = {"pending_at": row["pending_at"]}
        kept["automatic"] = row["automatic"]
        rows.append(kept)
    return rows


def _dedupe(checks: list[Check]) -> list[Check]:
    seen: dict[str, Check] = {}
    argv: list[Check] = []
    for check in checks:
        if check.key == "argv":
            argv.append(check)
        else:
            seen.setdefault(check.key, check)
    return [*seen.values(), *argv]


def _timestamp(seconds: float) -> str:
    """The model's clock as an ISO 8601 time (from an arbitrary fixed epoch)."""
    from datetime import UTC, datetime, timedelta

    return (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).isoformat()


def _last_prose(messages: Sequence[str]) -> str | None:
    for message in reversed(messages):
        if "{" not in message and message.strip():
            return message.strip()
    return None
