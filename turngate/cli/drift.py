"""`turngate replay` and `turngate drift`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from turngate.base.progress import Progress
from turngate.base.terminal import OutputProblem, check_outputs, visible
from turngate.tools.drift.capture import ENGINES, Capture, CaptureProblem, load_capture
from turngate.tools.drift.sweep import LEGEND, Decider, DriftResult, Seen

# turngate drift: 0 the target agrees with the spec on every mutation (a flip where the spec is silent is
# reported, not judged), 1 drift found (a mutation on which it disagrees with the spec, or a capture it
# could not play), 2 bad input (base.arguments.EXIT_USAGE). --fail-on-drift: 1 also for a silent flip.
EXIT_DRIFT = 1
DRIFT_EPILOG = (
    "Each row: a mark, the capture, the mutator, the decision before -> after, [change; spec's word].\n"
    "Only the mutations that flip or disagree are listed (--all: every one); the legend and a summary\n"
    "follow the rows.\n\n"
    + "\n".join(LEGEND)
    + """

exit status:
  0  no drift against the spec (flips where the spec is silent do not count)
  1  drift found: the target disagrees with the spec on a mutation, or could not play a capture
  2  bad input (an unknown engine or mutator, a missing corpus, no captures)
with --fail-on-drift, 1 when anything changed: a decision moved where the spec does not demand it
(a DISAGREES row, or a flip where the spec is silent), each named on a `drift:` line; 0 when nothing did
"""
)


def _usage(message: str) -> Exception:
    from turngate.base.arguments import UsageProblem

    return UsageProblem(message)


CORPUS_PREFIX = "corpus:"


def capture_path(given: Path) -> Path:
    """What ``replay FILE`` names: a file or folder here, or a capture shipped with turngate (its corpus,
    inside the package when installed): ``corpus:ENGINE/NAME`` always, and ``ENGINE/NAME`` or
    ``corpus/ENGINE/NAME`` (as the README writes it) when no such path exists here. Anything else that
    does not exist is one line naming it, with the nearest names."""
    from turngate.tools.drift.sources import CORPUS_DIR, shipped_capture

    text = str(given)
    if text.startswith(CORPUS_PREFIX):
        name = text[len(CORPUS_PREFIX) :].strip("/")
        found = shipped_capture(name)
        if found is None:
            near = (
                _did_you_mean(given, name)
                or f" (the shipped captures: the ENGINE/NAME folders of {CORPUS_DIR})"
            )
            raise _usage(f"replay {text}: no shipped capture of that name{near}")
        return found
    if given.exists():
        return given
    name = text.removeprefix("corpus/")
    found = shipped_capture(name)
    if found is not None:
        print(visible(f"replay: no {text} here: the shipped capture {CORPUS_PREFIX}{name}"), file=sys.stderr)
        return found
    raise _usage(f"replay {text}: no such file or folder{_did_you_mean(given, name)}")


def _did_you_mean(given: Path, name: str) -> str:
    """``; did you mean X?``: a near file beside ``given``, or a near shipped capture; else nothing."""
    import difflib

    from turngate.tools.drift.sources import shipped_names

    near: list[str] = []
    folder = given.parent
    if not str(given).startswith(CORPUS_PREFIX) and folder.is_dir():
        try:
            here = [entry.name for entry in folder.iterdir()]
        except OSError:
            here = []
        near += [
            str(folder / found) for found in difflib.get_close_matches(given.name, here, n=2, cutoff=0.7)
        ]
    shipped = shipped_names()
    by_name = {entry.rsplit("/", 1)[-1]: entry for entry in shipped}
    close = difflib.get_close_matches(name, shipped, n=2, cutoff=0.7)
    close += [by_name[found] for found in difflib.get_close_matches(name, list(by_name), n=2, cutoff=0.7)]
    near += [CORPUS_PREFIX + entry for entry in dict.fromkeys(close)]
    return f"; did you mean {' or '.join(near[:3])}?" if near else ""


def capture_from_args(args: argparse.Namespace) -> Capture:
    """A capture folder, or raw output files with the context given as options."""
    path = capture_path(args.file)
    if path.is_dir():
        try:
            capture = load_capture(path)
        except CaptureProblem as problem:
            raise _usage(str(problem)) from None
        if args.engine and args.engine != capture.engine:
            raise _usage(f"--engine {args.engine}: the capture {path} is {capture.engine}")
        return capture
    call = _call_log_line(path, args.call)
    if call is not None:
        return _capture_from_call(path, call, args)
    if not args.engine:
        raise _usage(
            f"replay {path}: --engine is required for a raw output file (one of {', '.join(ENGINES)})"
        )
    try:
        stdout = path.read_bytes()
        stderr = args.stderr.read_bytes() if args.stderr else b""
    except OSError as error:
        raise _usage(f"replay: {error.filename}: {error.strerror}") from None
    schema: str | dict[str, object] = "greeting"
    max_attempt = None
    if args.skill:
        from turngate.implementations.reference.skill import SkillPackageError, load_skill

        try:
            skill = load_skill(args.skill)
        except SkillPackageError as problem:
            raise _usage(f"--skill: {problem}") from None
        max_attempt = skill.max_attempt
        schema = "none" if skill.output_schema is None else dict(skill.output_schema)
    try:
        return Capture(
            engine=args.engine,
            stdout=stdout,
            stderr=stderr,
            mode=args.mode,
            exit_code=None if args.signal is not None else args.exit_code,
            signal=args.signal,
            attempt_number=args.attempt,
            max_attempt=max_attempt,
            output_schema=schema,
            reader_options={"mode": args.gemini_mode} if args.engine == "gemini" and args.gemini_mode else {},
            name=path.name,
        )
    except CaptureProblem as problem:
        raise _usage(str(problem)) from None


def _call_log_line(path: Path, number: int | None) -> tuple[int, dict[str, object]] | None:
    """(line number, record) when ``path`` is a fake-engine call log; None for raw engine output."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        records = [json.loads(line) for line in lines]
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not records or not all(isinstance(r, dict) and "argv" in r and "engine" in r for r in records):
        return None
    chosen = number if number is not None else len(records)
    if not 1 <= chosen <= len(records):
        raise _usage(f"--call {chosen}: {path} has {len(records)} call(s)")
    return chosen, records[chosen - 1]


def _capture_from_call(path: Path, call: tuple[int, dict[str, object]], args: argparse.Namespace) -> Capture:
    import base64

    number, record = call
    output = record.get("output")
    if not isinstance(output, dict):
        raise _usage(
            f"{path}: call {number}: output: missing (the fake engines log what they write"
            " when TURNGATE_CALL_LOG_OUTPUT=1)"
        )
    # How the call log says the process ended (docs/fake-engines.md, the call log).
    end = record.get("outcome")
    code = record.get("exit_code")
    exit_code, signal = (code if isinstance(code, int) else None), None
    if end == "signal" and isinstance(code, int):
        exit_code, signal = None, -code
    elif end == "killed" and isinstance(code, int):
        exit_code, signal = None, code - 128
    elif end == "hang":
        exit_code, signal = None, 9  # it only ever ends by being killed
    return Capture(
        engine=str(record["engine"]),
        stdout=base64.b64decode(str(output.get("stdout_b64", ""))),
        stderr=base64.b64decode(str(output.get("stderr_b64", ""))),
        mode=args.mode,
        exit_code=exit_code,
        signal=signal,
        attempt_number=args.attempt,
        reader_options={"mode": args.gemini_mode}
        if record["engine"] == "gemini" and args.gemini_mode
        else {},
        name=f"{path.name}#{number} ({record.get('case')})",
    )


def _target_decider(args: argparse.Namespace) -> tuple[str, Decider] | None:
    """The decider for ``--target`` and its name; None without one (the reference's replay judges)."""
    if not args.target:
        return None
    from turngate.judge.selection import resolve_target
    from turngate.tools.drift.field_play import target_decider

    target = resolve_target(args)
    return target.name, target_decider(target)


def _expected(text: str) -> Seen:
    state, _, code = text.partition("/")
    if state not in ("succeeded", "failed", "waiting_user"):
        raise _usage(
            f"--expect: {text!r}: STATE or STATE/ERROR_CODE, STATE one of succeeded, failed, waiting_user"
        )
    return Seen(state, code or None, None)


def replay_command(args: argparse.Namespace) -> int:
    from turngate.tools.drift.gate_replay import as_json, printable, printable_json, render, replay
    from turngate.tools.drift.minimise import lines_of, minimise, scenario_document, write_scenario
    from turngate.tools.drift.sweep import reference_decider, seen_in

    capture = capture_from_args(args)
    result = replay(capture)
    if args.json:
        print(printable_json(as_json(result)))  # C1, bidi controls, lone surrogates escaped too
    else:
        print(visible(render(result)))  # a capture's escape sequences must not reach the terminal
    reference = seen_in(result)
    judged = _target_decider(args)
    name, decider = judged or ("reference replay", reference_decider)
    seen = decider(capture) if judged else reference
    if judged:
        print(f"\n{name} decided: {printable(seen.label())}")  # a target's own words
    if args.expect is None:
        return 0
    expected = _expected(args.expect)
    if seen.satisfies(expected):
        print(f"as expected: {args.expect}")
        return 0
    print(f"NOT as expected: {args.expect}")
    if args.minimise:
        # The reference keeps the shrunk capture honest where it is not the one judged and agrees.
        right = reference_decider if judged and reference.satisfies(expected) else None
        small, observed = minimise(capture, decider, expected=expected, right=right)
        document = scenario_document(
            small,
            expected=expected,
            observed=observed,
            mutator=None,
            decider_name=name,
            original_lines=len(lines_of(capture)),
            user_expectation=args.expect,  # the user's, never cited as a spec sentence
        )
        written = write_scenario(document, args.minimise)
        print(f"minimised to {len(lines_of(small))} of {len(lines_of(capture))} lines: {written}")
    return 1


def drift_command(args: argparse.Namespace) -> int:
    from turngate.tools.drift import sweep as drifting
    from turngate.tools.drift.mutators import BY_NAME, MUTATORS
    from turngate.tools.drift.sources import CORPUS_DIR, catalog_captures, corpus_captures

    for name in args.mutator or ():
        if name not in BY_NAME:
            raise _usage(f"--mutator: {name!r}: known: {', '.join(BY_NAME)}")
    for engine in args.engine or ():
        if engine not in ENGINES:
            raise _usage(f"--engine: {engine!r}: known: {', '.join(ENGINES)}")
    mutators = [BY_NAME[name] for name in args.mutator] if args.mutator else list(MUTATORS)
    try:
        outputs = check_outputs(json=args.json)
    except OutputProblem as problem:
        raise _usage(str(problem)) from None
    if args.minimise is not None and args.minimise.exists() and not args.minimise.is_dir():
        raise _usage(f"--minimise: {args.minimise}: is a file, not a folder")
    corpus = args.corpus or CORPUS_DIR
    if args.source in ("corpus", "both") and not corpus.is_dir():
        raise _usage(f"--corpus: {corpus}: not a folder")
    captures: list[Capture] = []
    if args.source in ("corpus", "both"):
        try:
            captures += corpus_captures(corpus, args.engine)
        except CaptureProblem as problem:
            raise _usage(str(problem)) from None
    if args.source in ("catalog", "both"):
        from turngate.judge.pool import cases
        from turngate.judge.selection import chosen_catalog

        captures += list(catalog_captures(cases(chosen_catalog(args), args.engine)))
    if not captures:
        where = {"corpus": f"the corpus {corpus}", "catalog": "the catalog"}.get(args.source, f"{corpus}")
        raise _usage(
            f"drift --source {args.source}: no captures to mutate in {where}"
            f"{' for ' + ', '.join(args.engine) if args.engine else ''}"
            " (a capture is a folder ENGINE/NAME/ holding capture.yaml)"
        )
    name, decider = _target_decider(args) or ("reference replay", drifting.reference_decider)
    from turngate.tools.drift.field_play import PlayError

    results: list[DriftResult] = []
    unplayed: list[str] = []  # captures the target could not run: nothing to compare, the drift unjudged
    # One capture at a time, so that a long drift (minutes against a live target) shows progress.
    progress = Progress(len(captures), "captures")
    try:
        for capture in captures:
            try:
                found = drifting.drift([capture], mutators=mutators, decider=decider)
            except PlayError as problem:
                unplayed.append(str(problem))
                progress.advance("errored", capture.name, "the target could not play it")
                continue
            results += found
            wrong = sum(1 for result in found if result.agrees is False)
            flips = sum(1 for result in found if result.flipped)
            progress.advance(
                "failed" if wrong else "passed",
                capture.name,  # a corpus capture's name is ENGINE/NAME, a catalog one's "ID [ENGINE]"
                f"{len(found)} mutations, {flips} flip(s){f', {wrong} against the spec' if wrong else ''}",
            )
    finally:
        progress.close()
    if args.minimise:
        _minimise_disagreements(results, captures, decider, name, args.minimise)
    if "json" in outputs:
        with outputs["json"].open() as out:
            for result in results:
                out.write(json.dumps(drifting.as_json(result), ensure_ascii=False) + "\n")
    shown = results if args.all else [r for r in results if r.flipped or r.agrees is False]
    # With the JSON on standard output, the human summary goes to standard error.
    human = sys.stderr if "json" in outputs and outputs["json"].is_stdout else sys.stdout
    if shown:
        print(visible(drifting.render(shown)), file=human)
        print("\n".join(LEGEND), file=human)
    else:
        print("no flips" + ("" if args.all else " (--all lists the stable mutations too)"), file=human)
    for why in unplayed:
        print(visible(f"not played: {why}"), file=human)
    said = drifting.summary(results)
    if unplayed:
        said += f", {len(unplayed)} capture(s) the target could not play"
    found_drift = drifting.drift_found(results)
    verdict = "drift found" if found_drift else "no drift against the spec"
    print(f"{said}: {verdict}", file=human)
    if args.fail_on_drift:
        changed = drifting.changed(results)
        for result in changed:
            print(visible(f"drift: {drifting.one_line(result)}"), file=human)
        print(
            f"--fail-on-drift: {len(changed)} decision(s) changed where the spec does not demand it",
            file=human,
        )
        return EXIT_DRIFT if changed or unplayed else 0
    return EXIT_DRIFT if found_drift or unplayed else 0


def _minimise_disagreements(
    results: list[DriftResult], captures: list[Capture], decider: Decider, name: str, folder: Path
) -> None:
    """Each mutation the target got wrong, shrunk and written as a scenario expecting the spec's decision."""
    from turngate.tools.drift.minimise import lines_of, minimise, scenario_document, write_scenario
    from turngate.tools.drift.mutators import BY_NAME
    from turngate.tools.drift.sweep import reference_decider

    by_name = {capture.name: capture for capture in captures}
    for result in results:
        if result.agrees is not False or result.aspect != "decision" or result.verdict != "irrelevant":
            continue  # only "must not change" has a known right answer: the decision before the drift
        mutator = BY_NAME[result.mutator]
        mutated = mutator.apply(by_name[result.capture])
        assert mutated is not None
        expected = Seen(result.before.state, result.before.error_code, None)
        small, observed = minimise(mutated, decider, expected=expected, right=reference_decider)
        document = scenario_document(
            small,
            expected=expected,
            observed=observed,
            mutator=mutator,
            decider_name=name,
            original_lines=len(lines_of(mutated)),
        )
        print(f"minimised {result.capture} + {result.mutator}: {write_scenario(document, folder)}")


def record_command(args: argparse.Namespace) -> int:
    from turngate.tools.drift.engine_recording import run_and_tee, save, version_of
    from turngate.tools.drift.gate_replay import render, replay

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise _usage("record: no command line after --: turngate record --engine codex -- codex exec ...")
    try:
        recording = run_and_tee(command, tee=not args.quiet, timeout=args.timeout)
    except OSError as error:
        raise _usage(f"record: {command[0]}: {error.strerror}") from None
    # The version the capture keeps: the one given, else what `ENGINE --version` says (asked after the
    # turn, so a slow probe never delays the engine's own start).
    version = args.engine_version or version_of(command[0])
    folder = args.out or Path(f"capture-{args.engine}-{time.strftime('%Y%m%d-%H%M%S')}")
    clean = save(replace(recording, version=version), folder, engine=args.engine, mode=args.mode)
    print(f"\nrecorded {len(clean.stdout)} + {len(clean.stderr)} bytes into {folder}/", file=sys.stderr)
    print(visible(render(replay(load_capture(folder)))), file=sys.stderr)
    return 0


def _target_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--target", help=what)
    parser.add_argument("--target-options", type=Path, metavar="FILE", help="options of an HTTP target")


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from turngate.judge.selection import add_catalog_arguments

    replay = commands.add_parser(
        "replay", help="a captured engine stream through the reference readers, detector and gate"
    )
    replay.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="the engine's stdout, a capture folder, or a capture shipped with turngate:"
        " corpus:ENGINE/NAME (corpus:codex/marker-echo-in-tool-output)",
    )
    replay.add_argument("--engine", choices=ENGINES)
    replay.add_argument(
        "--call", type=int, metavar="N", help="for a fake-engine call log: the N-th call (default last)"
    )
    replay.add_argument("--stderr", type=Path, metavar="FILE2", help="the engine's stderr")
    replay.add_argument("--mode", choices=("auto", "interactive"), default="interactive")
    replay.add_argument("--exit-code", type=int, default=0)
    replay.add_argument("--signal", type=int, help="the process was killed by this signal")
    replay.add_argument("--attempt", type=int, default=1, help="the turn's attempt number")
    replay.add_argument("--skill", type=Path, metavar="DIR", help="the skill (output schema, max_attempt)")
    replay.add_argument("--gemini-mode", choices=("json", "stream-json"), help="default: detected")
    replay.add_argument("--json", action="store_true", help="everything the replay saw, as JSON")
    _target_arguments(replay, "also play the capture through a fake engine against this target")
    replay.add_argument(
        "--expect",
        metavar="STATE[/CODE]",
        help="the decision you expect here: exit 1 when not; with --minimise the scenario cites it as"
        " your expectation (backed by convention), not as a spec sentence",
    )
    replay.add_argument(
        "--minimise",
        type=Path,
        metavar="DIR",
        help="when not as expected: shrink and write a scenario into DIR",
    )
    replay.set_defaults(handler=replay_command)

    drift = commands.add_parser(
        "drift",
        help="drift mutators on captures: which flip the decision, per the spec",
        description="Drift mutators on captures: which flip the decision, and does the target agree with"
        " the spec on each (docs/drift.md).",
        epilog=DRIFT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    drift.add_argument("--engine", action="append", metavar="ENGINE")
    drift.add_argument("--mutator", action="append", metavar="NAME")
    drift.add_argument(
        "--source", choices=("corpus", "catalog", "both"), default="both", help="captures to mutate"
    )
    drift.add_argument("--corpus", type=Path, metavar="DIR", help="capture folders (default: corpus/)")
    add_catalog_arguments(drift)
    drift.add_argument("--all", action="store_true", help="list stable mutations too")
    drift.add_argument("--json", metavar="F", help="JSON Lines, one per mutation (- for standard output)")
    _target_arguments(drift, "judge this target (captures played by the fake engines), not the reference")
    drift.add_argument(
        "--minimise",
        type=Path,
        metavar="DIR",
        help="shrink each disagreement and write it as a scenario into DIR",
    )
    drift.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="exit 1 when any decision changed where the spec does not demand it (flips where the spec is"
        " silent count too), each on one `drift:` line; 0 when none did",
    )
    drift.set_defaults(handler=drift_command)

    record = commands.add_parser(
        "record", help="run a real engine, keep its streams (scrubbed) as a capture and a fake-engine script"
    )
    record.add_argument("--engine", choices=ENGINES, required=True)
    record.add_argument("--mode", choices=("auto", "interactive"), default="interactive")
    record.add_argument(
        "--out", type=Path, metavar="DIR", help="the capture folder (default: capture-ENGINE-TIME)"
    )
    record.add_argument("--timeout", type=float, help="kill the engine after this many seconds")
    record.add_argument(
        "--engine-version",
        metavar="V",
        help="the engine's version, kept in capture.yaml (default: the first line of `COMMAND --version`)",
    )
    record.add_argument(
        "--quiet", action="store_true", help="do not copy the engine's output to the terminal"
    )
    record.add_argument("command", nargs=argparse.REMAINDER, help="-- the engine's command line")
    record.set_defaults(handler=record_command)
