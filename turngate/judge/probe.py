"""`turngate probe`: find out what a job-API server offers and write its target file.

It asks the server, with turngate's fake engines behind it (installed with
``turngate engines install DIR --scripts SCRIPTS``), what a new user would
otherwise learn case by case:

- whether it speaks the job API at all, and whether it wants credentials;
- how it installs a skill (synchronously, or asynchronously with its own status);
- which engines it runs (a tiny auto job per engine; one refused with
  ``SKILL_ENGINE_UNSUPPORTED`` is left out, one that wants a model is named);
- whether it streams events (SSE) and what its history endpoint holds
  (protocol events, or its runtime events: then the stream's chat events are read);
- whether it honours a short ``session_timeout_sec`` in real time (an
  interactive job left unanswered with ``interactive_require_user_reply: false``);
- where it shows each attempt's audit record (``audit_source``: the shapes of
  connectors/audit_records.py, tried on a waiting job);
- its runtime patch's modules, in its own words (``patch_modules``): one job per
  mode of a skill with an artifact and an output schema, each part of the
  patched SKILL.md its engine read recognised by what it says (patchmap.py);
- whether turngate serve's test hooks answer (``turngate_hooks``), how many runs may hold an engine
  at once (``slots``, by filler jobs) and the server's engine watchdog (``turn_timeout_sec``, by a
  hung engine's job, waited for at most ``--watchdog-wait``): probe_limits.py.

Every finding is printed as one line and the target file is written with them. At the end, one line
per field it could not find names the cases of the shipped catalog that field's absence skips
(probe_costs.py), and one line the whole. Every job the probe started to hold the server is canceled,
even when the probe is interrupted; one that would not end is named.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.engines.fake.engine import NON_RESUMABLE_FILE
from turngate.engines.fake.script import remove_compiled
from turngate.judge.catalog import CATALOG_DIR, load_catalog
from turngate.judge.connectors.audit_records import AUDIT_CANDIDATES, AuditSource
from turngate.judge.connectors.call_log import LogMarks, calls_since, log_mark, wait_finished
from turngate.judge.connectors.callpatch import split_patched
from turngate.judge.connectors.http import HttpConnector
from turngate.judge.connectors.http_dialect import DEFAULT_DIALECT, DIALECTS
from turngate.judge.connectors.http_events import is_fcmp
from turngate.judge.connectors.http_options import HttpOptions, TargetProblem, http_options
from turngate.judge.connectors.http_transport import TargetError, check_job_api
from turngate.judge.patchmap import PROBE_ARTIFACT, PROBE_PROPERTY, Learned, learn
from turngate.judge.probe_costs import cost_lines
from turngate.judge.probe_dialect import Signs, edition_guess, find_dialect, find_per_job_watchdog
from turngate.judge.probe_jobs import (
    DONE,
    PROBE_SKILL,
    TIDY_SEC,
    Ledger,
    case_setup,
    write_script,
)
from turngate.judge.probe_limits import (
    SLOTS_MOST,
    WATCHDOG_WAIT_SEC,
    Limit,
    count_slots,
    find_watchdog,
    first_look,
)
from turngate.judge.skill_writer import write_skill
from turngate.protocol.connector import CaseSkipped, TargetUnreachable
from turngate.protocol.skill_patch import PATCH_BANNER

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")


@dataclass
class Findings:
    lines: list[str] = field(default_factory=list)
    target: dict[str, Any] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)  # the jobs started to hold the server, all tidied

    def say(self, line: str) -> None:
        self.lines.append(line)
        print(line, flush=True)


def probe_server(
    base_url: str,
    *,
    scripts: Path,
    call_log: Path | None,
    workdir: Path,
    models: Mapping[str, str],
    engines: Sequence[str] = ENGINES,
    extra: Mapping[str, Any] | None = None,
    timeout_probe: bool = True,
    slots_most: int = SLOTS_MOST,
    watchdog_wait: float = WATCHDOG_WAIT_SEC,
) -> Findings:
    """Probe the server; the findings and the target file's contents.

    ``slots_most``: the most filler jobs started to count slots (0: slots not probed);
    ``watchdog_wait``: the most seconds a hung engine's job is watched (0: the watchdog not probed).
    """
    found = Findings()
    raw: dict[str, Any] = {"base_url": base_url, "scripts_dir": str(scripts), **(extra or {})}
    if call_log is not None:
        raw["call_log"] = str(call_log)
    if models:
        raw["models"] = dict(models)
    options = http_options(raw, None)
    check_job_api(options)  # down or not the job API: one line, the caller stops
    found.say(f"job API: {base_url} answers GET /v1/jobs/<unknown> with 404")
    scripts.mkdir(parents=True, exist_ok=True)
    skill = write_skill(workdir, {}, name=PROBE_SKILL)
    found.target = raw
    ledger = Ledger()
    found.jobs = ledger.jobs
    try:
        _probe(
            found, options, skill, scripts, workdir, engines, ledger,
            timeout_probe=timeout_probe, slots_most=slots_most, watchdog_wait=watchdog_wait,
        )  # fmt: skip
    finally:  # an error or Ctrl-C included: no job the probe started keeps holding the server
        left = ledger.tidy(options)
        if left:
            found.say(
                f"probe jobs not seen ended within {TIDY_SEC:g} s of their cancel (the server may still"
                f" hold them): {', '.join(left)}"
            )
    return found


def _probe(
    found: Findings,
    options: HttpOptions,
    skill: Path,
    scripts: Path,
    workdir: Path,
    engines: Sequence[str],
    ledger: Ledger,
    *,
    timeout_probe: bool,
    slots_most: int,
    watchdog_wait: float,
) -> None:
    raw, call_log = found.target, options.call_log
    accepted: list[str] = []
    refused: list[str] = []  # refused as unsupported: a sign of the server's generation
    install_mode = None
    for engine in engines:
        outcome = _auto_job(options, skill, engine, scripts, workdir)
        install_mode = install_mode or outcome.get("install")
        if outcome["ok"]:
            accepted.append(engine)
            found.say(f"engine {engine}: runs (auto job {outcome['state']})")
        else:
            found.say(f"engine {engine}: not used: {outcome['why']}")
            if "SKILL_ENGINE_UNSUPPORTED" in str(outcome["why"]):
                refused.append(engine)
    found.say(f"skill install: {install_mode or 'unknown'}")
    raw["engines"] = accepted
    if not accepted:
        found.say("no engine ran a job: check the server's engine prefix and the launchers' --scripts")
        return
    why: dict[str, str] = {}  # why a field is absent, for the closing list

    # The words of its runtime options, before any job that sends them (interactive ones).
    dialect = find_dialect(options, skill, accepted[0], scripts, workdir)
    if _found(found, dialect) is None:
        options = replace(options, dialect=DIALECTS[raw.get("dialect", DEFAULT_DIALECT)])

    look = first_look(options, skill, accepted[0], scripts, workdir, ledger)
    hooks = _found(found, look.hooks) is None
    if not look.background:
        found.say(f"jobs held: none can be: {look.why_not}")
    if slots_most > 0 and look.background:
        limit = count_slots(options, skill, accepted[0], scripts, workdir, ledger, most=slots_most)
        why["slots"] = _found(found, limit) or "not found"
    else:
        why["slots"] = "not probed (--slots-most 0)" if slots_most <= 0 else "not probed (no job can be held)"
        found.say(f"slots: {why['slots']}")

    events = _events(options, skill, accepted[0], scripts, workdir)
    found.say(
        f"events: SSE stream {'yes' if events['stream'] else 'no'}; history holds {events['history']}"
        f"{'; the end in conversation.state.changed' if events['end_in_state_change'] else ''}"
    )
    raw["events_stream"] = bool(events["stream"])
    raw["events_source"] = "history" if events["history"] == "protocol events" else "stream"
    if not events["stream"] and events["history"] != "protocol events":
        raw["events_source"] = "none"

    if call_log is None:
        why["probes_each_run"] = why["skill_gemini_settings"] = (
            "not probed (it reads the call log: --call-log)"
        )
    else:
        each_run = _probes_each_run(options, skill, accepted[0], scripts, workdir, call_log)
        found.say(f"engine resume support probed for each run: {'yes' if each_run else 'no'}")
        raw["probes_each_run"] = each_run
        why["probes_each_run"] = "no (the server probes an engine's resume support once: no run turns sticky)"
        if each_run:
            # Probing is not enough: the sticky scenarios need a server that then runs the engine as
            # sticky_process; one that resumes it anyway never runs them as their GIVEN says.
            sticky = _sticky_when_non_resumable(options, skill, accepted[0], scripts, workdir, call_log)
            raw["sticky_process"] = sticky
            if not sticky:
                found.say(
                    "a non-resumable engine is resumed for the reply all the same (no sticky_process,"
                    " written as sticky_process: false): the sticky scenarios are skipped"
                )
                why["probes_each_run"] = (
                    "yes, but a non-resumable engine is resumed all the same (sticky_process: false)"
                )
        if "gemini" in accepted:
            chosen = _gemini_format_from_skill(options, skill, scripts, workdir, call_log)
            answer = "yes" if chosen == "stream-json" else f"no (gemini ran {chosen or 'unknown'})"
            found.say(f"gemini output format from the skill's assets/gemini_settings.json: {answer}")
            raw["skill_gemini_settings"] = chosen == "stream-json"
            why["skill_gemini_settings"] = f"{answer}, whatever the skill's settings ask"
        learned = _patch_modules(options, accepted[0], scripts, workdir, call_log)
        for line in learned.said:
            found.say(line)
        if learned.modules:
            raw["patch_modules"] = learned.modules
            found.say(f"patch modules: {len(learned.modules)} learned, written as patch_modules")
        elif learned.problem is not None:
            found.say(
                "patch modules: not learned; the patch order checks stay unverified (name them by hand)"
            )
    source = _audit_source(options, skill, accepted[0], scripts, workdir)
    if source is not None:
        raw["audit_source"] = source.to_json()
        found.say(f"audit records per attempt: yes, at {source.path} (written as audit_source)")
    else:
        found.say("audit records per attempt: none found (the audit checks stay unverified)")
    if hooks:
        found.say("short session_timeout_sec: not probed: turngate's hooks move the clock (turngate_hooks)")
    elif timeout_probe:
        honoured = _honours_timeout(options, skill, accepted[0], scripts, workdir)
        found.say(f"short session_timeout_sec honoured in real time: {'yes' if honoured else 'no'}")
        raw["honours_session_timeout"] = honoured
    else:
        why["honours_session_timeout"] = "not probed (--no-timeout-probe)"
    per_job = False
    if not hooks and options.dialect.hard_timeout_option and watchdog_wait > 0 and look.background:
        per_job = (
            _found(found, find_per_job_watchdog(options, skill, accepted[0], scripts, workdir, ledger))
            is None
        )
    if hooks:
        found.say("engine watchdog: not probed: turngate's hooks set it per case (turngate_hooks)")
    elif per_job:
        found.say("engine watchdog: not probed: each case sets its own (turn_timeout_per_job)")
    elif watchdog_wait > 0 and look.background:
        limit = find_watchdog(options, skill, accepted[0], scripts, workdir, ledger, wait_sec=watchdog_wait)
        why["turn_timeout_sec"] = _found(found, limit) or "not found"
    else:
        why["turn_timeout_sec"] = (
            "not probed (--watchdog-wait 0)" if watchdog_wait <= 0 else "not probed (no job can be held)"
        )
        found.say(f"engine watchdog: {why['turn_timeout_sec']}")

    signs = Signs(
        dialect=raw.get("dialect", DEFAULT_DIALECT) if dialect.missing is None else None,
        protocol_history=events["history"] == "protocol events",
        end_in_state_change=events["end_in_state_change"],
        refused=tuple(refused),
    )
    edition, reasons = edition_guess(signs)
    if edition is None:
        found.say(f"edition: {reasons}")
    else:
        found.say(f"edition: looks like {edition} ({reasons}): judge it with --edition {edition}")
    capabilities = http_options(raw, None).capabilities
    # what each missing field costs in a run judged by the edition the server looks like
    for line in cost_lines(load_catalog(CATALOG_DIR), capabilities, accepted, why, edition):
        found.say(line)


def _found(found: Findings, limit: Limit) -> str | None:
    """Say a limit's finding and write its fields; why it is missing (None: found)."""
    found.say(limit.line)
    found.target.update(limit.fields)
    return limit.missing


def _auto_job(options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path) -> dict[str, Any]:
    case = f"{PROBE_SKILL}__auto__{engine}"
    write_script(scripts, case, [{"steps": [{"say": DONE}]}])
    connector = HttpConnector(options)
    try:
        connector.start(case_setup(skill, engine, case, "auto", workdir))
        connector.settle()
        observed = connector.observe()
    except CaseSkipped as refusal:
        return {"ok": False, "why": str(refusal), "install": connector.install_flow}
    except TargetError as error:
        why = str(error)
        if "provider_id is required" in why and engine not in options.providers:
            # Skill-Runner v0.7: a multi-provider engine's model needs its provider
            why += (
                f" (name the model as PROVIDER/MODEL, or give providers: {{{engine}: PROVIDER}}"
                " in the target file)"
            )
        elif "model" in why.lower() and engine not in options.models:
            why += f" (the server may want a model: --model {engine}=NAME)"
        return {"ok": False, "why": why, "install": connector.install_flow}
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))
    ok = observed.state == "succeeded"
    return {"ok": ok, "state": observed.state, "why": observed.state, "install": connector.install_flow}


def _events(options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path) -> dict[str, Any]:
    case = f"{PROBE_SKILL}__events__{engine}"
    write_script(scripts, case, [{"steps": [{"say": DONE}]}])
    connector = HttpConnector(replace(options, events_source="history"))
    try:
        connector.start(case_setup(skill, engine, case, "auto", workdir))
        connector.settle()
        history = connector.events.history(connector.job)
        stream = connector.events.stream(connector.job)
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))
    ends = [event for event in history or () if event.get("type") == "conversation.state.changed"]
    folded = any(isinstance((event.get("data") or {}).get("terminal"), Mapping) for event in ends)
    if history is None:
        holds = "nothing usable (no endpoint)"
    elif any(map(is_fcmp, history)):
        holds = "protocol events"
    else:
        holds = "runtime events, not protocol events"
    return {"stream": bool(stream), "history": holds, "end_in_state_change": folded}


def _probes_each_run(
    options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path, call_log: Path
) -> bool:
    """Whether a second interactive job makes the server probe the engine's help again.

    Resume support matters to interactive runs only, and a server that caches its probe does it
    once: so two interactive jobs, and the call log of the second is read.
    """
    _interactive_job(options, skill, engine, scripts, workdir)
    before = log_mark(call_log)
    _interactive_job(options, skill, engine, scripts, workdir)
    return any(call.get("action") == "help" for call in calls_since(call_log, before))


def _sticky_when_non_resumable(
    options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path, call_log: Path
) -> bool:
    """Whether a server runs an engine that looks non-resumable as sticky_process: an interactive
    job asks, is answered, and the call log says whether the answer came by a resume.

    Spec 001 fixes what a sticky_process run does, not when a server chooses that profile; a server
    that resumes every engine has no sticky runs, so those scenarios cannot hold there.
    """
    case = f"{PROBE_SKILL}__sticky__{engine}"
    turns = [{"steps": [{"say": "Which greeting?"}]}, {"steps": [{"say": DONE}]}]
    write_script(scripts, case, turns, resident=True)
    knob = scripts / NON_RESUMABLE_FILE
    knob.write_text(engine, encoding="utf-8")
    marks = LogMarks.of(call_log)
    connector = HttpConnector(options)
    try:
        connector.start(case_setup(skill, engine, case, "interactive", workdir))
        connector.settle()
        if connector.status().get("status") != "waiting_user":
            return False
        if connector.reply("Formal", None).accepted:
            connector.settle()
    except (CaseSkipped, TargetError, TargetUnreachable):
        return False
    finally:
        connector.close()
        knob.unlink(missing_ok=True)
        remove_compiled(str(scripts / f"{case}.yaml"))
    runs = [call for call in _case_calls(call_log, marks, case) if call.get("action") == "run"]
    # Sticky: one resident process played both turns, or the reply got a fresh process (a sticky
    # run that does not keep its process, which the sticky scenarios are there to catch: Skill-Runner
    # 7d8914d). Not sticky: the reply came by a resume, or by nothing the engine could play (a resume
    # the non-resumable engine refused as a usage error: Skill-Runner 4cb89ba).
    if any(call.get("resumed") for call in runs):
        return False
    return len(runs) >= 2 or (len(runs) == 1 and 2 in (runs[0].get("turns") or ()))


def _gemini_format_from_skill(
    options: HttpOptions, skill: Path, scripts: Path, workdir: Path, call_log: Path
) -> str | None:
    """The output format gemini ran in for a skill whose own settings ask for stream-json.

    The fake gemini records the format it was given (flag or settings.json) in the call log; a
    server that enforces its own (json) makes the stream-json scenarios impossible there.
    """
    case = f"{PROBE_SKILL}__gemini-format__gemini"
    write_script(scripts, case, [{"steps": [{"say": DONE}]}])
    marks = LogMarks.of(call_log)
    connector = HttpConnector(replace(options, skill_gemini_settings=True))
    try:
        setup = replace(
            case_setup(skill, "gemini", case, "auto", workdir), gemini_output_format="stream-json"
        )
        connector.start(setup)
        connector.settle()
    except (CaseSkipped, TargetError, TargetUnreachable):
        return None
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))
    for call in _case_calls(call_log, marks, case):
        if call.get("output_format"):
            return str(call["output_format"])
    return None


def _patch_modules(
    options: HttpOptions, engine: str, scripts: Path, workdir: Path, call_log: Path
) -> Learned:
    """The server's patch-module map, from the SKILL.md its engine read in an auto and an
    interactive job of a skill declaring the probe's artifact and output schema."""
    spec = {
        "artifacts": [PROBE_ARTIFACT],
        "output_schema": {
            "type": "object",
            "properties": {PROBE_PROPERTY: {"type": "string"}},
            "required": [PROBE_PROPERTY],
        },
    }
    skill = write_skill(workdir / "patch-probe", spec, name=f"{PROBE_SKILL}-patch")
    original = (skill / "SKILL.md").read_text(encoding="utf-8")
    done = json.dumps({PROBE_PROPERTY: "hi", "__SKILL_DONE__": True})
    added: dict[str, str | None] = {}
    for mode, turns in (
        ("auto", [{"steps": [{"say": done}]}]),
        ("interactive", [{"steps": [{"say": "Which word?"}]}, {"steps": [{"say": done}]}]),
    ):
        case = f"{PROBE_SKILL}__patch-{mode}__{engine}"
        write_script(scripts, case, turns)
        marks = LogMarks.of(call_log)
        connector = HttpConnector(options)
        try:
            connector.start(case_setup(skill, engine, case, mode, workdir))
            connector.settle()
        except (CaseSkipped, TargetError, TargetUnreachable) as refusal:
            return Learned({}, (f"patch modules: the {mode} probe job did not run: {refusal}",), "no job")
        finally:
            connector.close()
            remove_compiled(str(scripts / f"{case}.yaml"))
        added[mode] = _added_text(_case_calls(call_log, marks, case), skill.name, original)
    if added["auto"] is None or added["interactive"] is None:
        why = "the engine found no SKILL.md of the probe skill in its working directory"
        return Learned({}, (f"patch modules: not read: {why}",), why)
    if PATCH_BANNER in added["auto"]:
        return Learned({}, ("patch modules: named by turngate's own markers (no map needed)",))
    return learn(added["auto"], added["interactive"])


def _case_calls(call_log: Path, marks: LogMarks, case: str) -> list[dict[str, Any]]:
    """A probe job's own engine calls once its job has settled, the ones still running waited for:
    a resident (sticky) process writes its line only when the server closes its input, which may
    come after the job shows its end; read at once, on a loaded machine, the log lacks that call."""
    wait_finished(call_log, marks, case)
    return [call for call in calls_since(call_log, marks.log) if call.get("case") == case]


def _added_text(calls: list[dict[str, Any]], skill: str, original: str) -> str | None:
    """What the server added to the probe skill's SKILL.md in this case's latest engine run."""
    for call in reversed(calls):
        for folder, seen in (call.get("skills") or {}).items():
            if (
                Path(str(folder)).name == skill
                and isinstance(seen, dict)
                and isinstance(seen.get("text"), str)
            ):
                if PATCH_BANNER in seen["text"]:
                    return PATCH_BANNER
                return split_patched(original, seen["text"])[1]
    return None


def _audit_source(
    options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path
) -> AuditSource | None:
    """The first known audit source that shows a waiting job's first attempt (connectors/audit_records.py)."""
    case = f"{PROBE_SKILL}__audit__{engine}"
    write_script(scripts, case, [{"steps": [{"say": "Which greeting?"}]}, {"steps": [{"say": DONE}]}])
    connector = HttpConnector(options)
    try:
        connector.start(case_setup(skill, engine, case, "interactive", workdir))
        connector.settle()
        for candidate in AUDIT_CANDIDATES:
            source = AuditSource.parse(candidate, "audit source")
            path = source.url(job=connector.job, attempt=1, skill=skill.name)
            status, answer = connector.transport.call("GET", path)
            if status == 200 and source.marker_in(answer) is not None:
                return source
        return None
    except (CaseSkipped, TargetError, TargetUnreachable):
        return None
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))


def _interactive_job(options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path) -> None:
    """An interactive job that asks and is left waiting, then canceled."""
    case = f"{PROBE_SKILL}__interactive__{engine}"
    write_script(scripts, case, [{"steps": [{"say": "Which greeting?"}]}, {"steps": [{"say": DONE}]}])
    connector = HttpConnector(options)
    try:
        connector.start(case_setup(skill, engine, case, "interactive", workdir))
        connector.settle()
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))


def _honours_timeout(options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path) -> bool:
    """An interactive job that asks, left unanswered, with a 2 s timeout and no reply required."""
    case = f"{PROBE_SKILL}__timeout__{engine}"
    write_script(scripts, case, [{"steps": [{"say": "Which greeting?"}]}, {"steps": [{"say": DONE}]}])
    connector = HttpConnector(options)
    runtime = {"require_user_reply": False, "session_timeout_sec": 2}
    try:
        connector.start(case_setup(skill, engine, case, "interactive", workdir, runtime))
        connector.settle()
        if connector.status().get("status") != "waiting_user":
            return False
        deadline = time.monotonic() + 2 + options.clock_grace_sec
        while time.monotonic() < deadline:
            if connector.status().get("status") != "waiting_user":
                return True
            time.sleep(0.25)
        return False
    except CaseSkipped:
        return False
    finally:
        connector.close()
        remove_compiled(str(scripts / f"{case}.yaml"))


# The command ------------------------------------------------------------------------------------


def _command(args: argparse.Namespace) -> int:
    import tempfile

    from turngate.base.arguments import UsageProblem

    models = {}
    for item in args.model or ():
        engine, _, name = item.partition("=")
        if not name:
            raise UsageProblem(f"probe: --model {item!r}: expected ENGINE=NAME")
        models[engine] = name
    if args.slots_most < 0:
        raise UsageProblem(f"probe: --slots-most {args.slots_most}: must be 0 or more")
    if not args.watchdog_wait >= 0:
        raise UsageProblem(f"probe: --watchdog-wait {args.watchdog_wait:g}: must be 0 or more seconds")
    extra: dict[str, Any] = {}
    if args.auth_env:
        extra["auth"] = {"scheme": args.auth_scheme, "env": args.auth_env}
    try:
        with tempfile.TemporaryDirectory(prefix="turngate-probe-") as folder:
            found = probe_server(
                args.target.rstrip("/"),
                scripts=args.scripts,
                call_log=args.call_log,
                workdir=Path(folder),
                models=models,
                engines=tuple(args.engine or ENGINES),
                extra=extra,
                timeout_probe=not args.no_timeout_probe,
                slots_most=args.slots_most,
                watchdog_wait=args.watchdog_wait,
            )
    except (TargetUnreachable, TargetError, TargetProblem) as error:
        raise UsageProblem(f"probe: {error}") from None
    document = yaml.safe_dump(found.target, sort_keys=False, allow_unicode=True)
    if args.out:
        args.out.write_text(document, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(document, end="")
    return 0


def add_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "probe",
        help="find out what a job-API server offers; write its target file",
        description="Run small jobs of turngate's fake engines on a job-API server, print one line"
        " per finding and what each field it could not find costs, and write the target file"
        " (docs/probe.md).",
    )
    command.add_argument("--target", required=True, metavar="URL", help="the server, http://HOST:PORT")
    command.add_argument(
        "--scripts", type=Path, required=True, help="the folder the server's fake engines read scripts from"
    )
    command.add_argument("--call-log", type=Path, help="the fake engines' call log, if they keep one")
    command.add_argument("--model", action="append", metavar="ENGINE=NAME", help="a model the server needs")
    command.add_argument(
        "--auth-env", metavar="VARIABLE", help="the environment variable holding the server's credentials"
    )
    command.add_argument("--auth-scheme", choices=("bearer", "basic"), default="bearer")
    command.add_argument("--engine", action="append", choices=ENGINES, help="probe only these engines")
    command.add_argument(
        "--no-timeout-probe", action="store_true", help="skip the real-time session_timeout_sec probe"
    )
    command.add_argument(
        "--slots-most",
        type=int,
        default=SLOTS_MOST,
        metavar="N",
        help=f"count slots with at most N filler jobs; all N running is 'at least N', not written"
        f" (0: do not count; default {SLOTS_MOST})",
    )
    command.add_argument(
        "--watchdog-wait",
        type=float,
        default=WATCHDOG_WAIT_SEC,
        metavar="SEC",
        help="watch a hung engine's job at most SEC seconds for the server's engine watchdog"
        f" (0: do not probe it; default {WATCHDOG_WAIT_SEC:g})",
    )
    command.add_argument("--out", type=Path, help="write the target file here (default: print it)")
    command.set_defaults(handler=_command)
