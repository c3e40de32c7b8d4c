"""`turngate run`: the catalog against a target, as it goes (progress, reports), then the verdict."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from turngate.base.arguments import EXIT_INTERRUPTED, UsageProblem, at_least_one
from turngate.base.interrupts import interrupts_held
from turngate.base.progress import Progress
from turngate.base.terminal import Output
from turngate.cli.judging_options import (
    add_allow_partial,
    add_edition,
    check_against,
    check_conventions,
    check_edition,
    compare_with,
    read_baseline_option,
)
from turngate.cli.output_files import checked_outputs, open_output
from turngate.cli.run_summary import fails, print_comparison, summary
from turngate.judge.case_result import CaseResult
from turngate.judge.pool import cases, default_jobs, run_all
from turngate.judge.selection import (
    add_catalog_arguments,
    add_target_arguments,
    check_reading,
    chosen_catalog,
    chosen_engines,
    real_engines,
    resolve_target,
)

if TYPE_CHECKING:
    from turngate.judge.baseline import CaseCheck, Comparison

EXIT_NOTHING_VERIFIED: Final = 5  # pytest's "no tests ran"
# Outcomes that mean the target was not checked at all (a run of only these verified nothing).
NOT_VERIFIED: Final = frozenset({"skipped", "unreached"})


def run_command(args: argparse.Namespace) -> int:
    from turngate.base.terminal import console
    from turngate.judge.report import JsonlReport, run_properties, write_junit

    scenarios = chosen_catalog(args)
    engines = chosen_engines(args)
    check_reading(args.reading, scenarios)
    check_conventions(args.conventions)
    edition = check_edition(args.edition)
    outputs = checked_outputs(report_json=args.report_json, junit=args.junit, html=args.html)
    known = read_baseline_option(args.baseline)
    target = resolve_target(args)
    real = real_engines(args, target)
    if real is not None and target.kind == "reference":
        from turngate.engines.real.caseengines import REAL_TURN_TIMEOUT_SEC

        # A real CLI takes seconds a turn (kilo 10-15 s, more on a loaded machine), not the fakes'
        # milliseconds: a case that sets no turn budget gets the reference's own default, not 30 s.
        target = dataclasses.replace(target, turn_timeout_sec=REAL_TURN_TIMEOUT_SEC)
    planned = cases(scenarios, engines, edition)
    if scenarios and not any(scenario.planned_under(edition) for scenario in scenarios):
        # as -k matching nothing: the scenarios chosen are all written for other editions
        others = ", ".join(sorted({name for scenario in scenarios for name in scenario.editions}))
        raise UsageProblem(f"--edition {edition}: the scenarios chosen belong to other editions: {others}")
    # A report on standard output keeps it to itself; the table then goes to standard error.
    human = console(sys.stderr if any(output.is_stdout for output in outputs.values()) else None)
    allow_partial = args.allow_partial
    properties = run_properties(
        target=target.name,
        engines=engines,
        reading=args.reading,
        jobs=args.jobs,
        allow_partial=allow_partial,
        edition=edition,
    )
    results: list[CaseResult] = []
    checked: dict[tuple[str, str], CaseCheck] = {}  # each case against the baseline, with --baseline
    started, started_at = time.monotonic(), time.time()
    interrupted = False
    with contextlib.ExitStack() as stack:
        report = None
        if "report_json" in outputs:
            stream = stack.enter_context(open_output(outputs["report_json"]))
            report = JsonlReport(
                stream,
                target=target.name,
                engines=engines,
                planned=len(planned),
                allow_partial=allow_partial,
                edition=edition,
            )
        # beside the table: a pipe (`| head`) sees each case as it finishes, not only the end
        progress = Progress(len(planned), "cases", human.file)
        try:
            for result in run_all(
                planned,
                target=target,
                jobs=args.jobs,
                reading=args.reading,
                conventions=args.conventions,
                real=real,
                edition=edition,
            ):
                with interrupts_held():  # a Ctrl-C here lands after the case is in every record
                    results.append(result)
                    check = check_against(known, result, checked, allow_partial=allow_partial)
                    if report is not None:
                        report.case(result, baseline=check)
                    shown = _shown(result)
                    if check is not None and check.status == "known":
                        shown = f"known, in the baseline: {shown}"
                    progress.advance(result.outcome, f"{result.scenario_id} [{result.engine}]", shown)
        except KeyboardInterrupt:
            interrupted = True  # the pool has stopped its workers; keep what finished
        finally:
            progress.close()
        comparison = compare_with(known, results, allow_partial=allow_partial)
        if report is not None:
            report.finish(interrupted=interrupted, baseline=comparison)
    problems = []
    if "junit" in outputs:
        try:
            with open_output(outputs["junit"]) as stream:
                write_junit(
                    stream,
                    results,
                    properties=properties,
                    started_at=started_at,
                    interrupted=interrupted,
                    baseline=checked if known is not None else None,
                    wall_sec=time.monotonic() - started,
                    allow_partial=allow_partial,
                )
        except UsageProblem as problem:  # checked up front; the disk can still fill or vanish
            problems.append(str(problem))
    if "html" in outputs:
        try:
            _write_html(outputs["html"], results, properties, started_at, interrupted, comparison)
        except UsageProblem as problem:
            problems.append(str(problem))
    human.print(summary(results, time.monotonic() - started, allow_partial=allow_partial), soft_wrap=True)
    if comparison is not None:
        print_comparison(human, comparison)
    verified = [result for result in results if result.outcome not in NOT_VERIFIED]
    for unwritten in problems:
        print(f"turngate: {unwritten}", file=sys.stderr)
    if interrupted:
        human.print(f"[bold yellow]interrupted[/]: {len(results)} of {len(planned)} cases finished")
        return EXIT_INTERRUPTED
    if problems or fails(results, comparison, allow_partial=allow_partial):
        return 1
    if not verified:
        human.print(
            f"[bold yellow]nothing verified[/]: all {len(results)} cases were skipped"
            f" (target {target.name}; the reasons are above)"
        )
        return EXIT_NOTHING_VERIFIED
    return 0


def _shown(result: CaseResult) -> str:
    """What a progress line shows of a result: every difference with the words that back it; of an
    error, its first line (the traceback stays in the reports)."""
    if result.outcome == "passed":
        return ""
    return result.message if result.differences else result.message.split("\n")[0]


def _write_html(
    output: Output,
    results: list[CaseResult],
    properties: dict[str, str],
    started_at: float,
    interrupted: bool,
    comparison: Comparison | None = None,
) -> None:
    from turngate.judge.html_report import from_results, render

    header = {**properties, "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started_at))}
    page = render(
        [from_results(results, header, interrupted=interrupted, baseline=comparison)],
        title=f"turngate: {header['target']}",
    )
    with open_output(output) as stream:
        stream.write(page)


def add_command(commands: argparse._SubParsersAction[Any]) -> None:
    run = add_target_arguments(
        add_catalog_arguments(commands.add_parser("run", help="run the catalog against a target"))
    )
    run.add_argument(
        "--jobs",
        type=at_least_one,
        default=default_jobs(),
        help="parallel cases, at least 1 (default: twice the cores)",
    )
    run.add_argument(
        "--reading",
        metavar="NAME",
        help="for ambiguous scenarios: judge by this reading (see `turngate show`)",
    )
    run.add_argument(
        "--conventions",
        metavar="NAME",
        help="enforce a convention set (names the spec leaves open): its differences fail; "
        "without it they are informational",
    )
    run.add_argument(
        "--engines",
        choices=("fake", "real"),
        default="fake",
        help="real: the pinned real CLIs against turngate's model server (iflow stays fake)",
    )
    run.add_argument(
        "--real",
        action="append",
        metavar="ENGINE[@VERSION]",
        help="with --engines real: only these real builds (default: each engine's first pin)",
    )
    run.add_argument(
        "--variant", metavar="NAME", help="the reference as a conforming variant (docs/variants.md)"
    )
    run.add_argument("--mutant", metavar="NAME", help="the reference as a spec mutant (docs/mutants.md)")
    run.add_argument("--report-json", metavar="F", help="JSON Lines report (- for standard output)")
    run.add_argument("--junit", metavar="F", help="JUnit XML report (- for standard output)")
    run.add_argument("--html", metavar="F", help="a self-contained HTML report (- for standard output)")
    add_allow_partial(run)
    add_edition(run)
    run.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="known differences (turngate baseline write): exit 1 only on a new one, or a known one gone",
    )
    run.set_defaults(handler=run_command)
