"""`turngate run`, `list`, `show`, `catalog check`: the catalog against a target, and the verdict."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from rich.console import Group
from rich.text import Text

from turngate.base.arguments import EXIT_USAGE as EXIT_USAGE_CODE
from turngate.base.arguments import UsageProblem, at_least_one
from turngate.base.progress import Progress
from turngate.base.terminal import Output, visible
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import Scenario
from turngate.judge.catalog.checks import Checks
from turngate.judge.catalog.conventions import convention_sets
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
from turngate.judge.verdict import OUTCOMES, judge

if TYPE_CHECKING:
    from rich.console import Console

    from turngate.judge.baseline import Baseline, CaseCheck, Comparison

EXIT_USAGE: Final = EXIT_USAGE_CODE
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
EXIT_NOTHING_VERIFIED: Final = 5  # pytest's "no tests ran"
# Outcomes that mean the target was not checked at all (a run of only these verified nothing).
NOT_VERIFIED: Final = frozenset({"skipped", "unreached"})
BAD: Final = frozenset({"failed", "errored", "unreached"})


def run_command(args: argparse.Namespace) -> int:
    from turngate.base.terminal import OutputProblem, check_outputs, console
    from turngate.judge.report import JsonlReport, run_properties, write_junit

    scenarios = chosen_catalog(args)
    engines = chosen_engines(args)
    check_reading(args.reading, scenarios)
    _check_conventions(args.conventions)
    try:
        outputs = check_outputs(report_json=args.report_json, junit=args.junit, html=args.html)
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None
    known = _read_baseline(args.baseline)
    target = resolve_target(args)
    real = real_engines(args, target)
    planned = cases(scenarios, engines)
    # A report on standard output keeps it to itself; the table then goes to standard error.
    human = console(sys.stderr if any(output.is_stdout for output in outputs.values()) else None)
    properties = run_properties(target=target.name, engines=engines, reading=args.reading, jobs=args.jobs)
    results: list[CaseResult] = []
    checked: dict[tuple[str, str], CaseCheck] = {}  # each case against the baseline, with --baseline
    started, started_at = time.monotonic(), time.time()
    interrupted = False
    with contextlib.ExitStack() as stack:
        report = None
        if "report_json" in outputs:
            stream = stack.enter_context(_open(outputs["report_json"]))
            report = JsonlReport(stream, target=target.name, engines=engines, planned=len(planned))
        progress = Progress(len(planned), "cases")
        try:
            for result in run_all(
                planned,
                target=target,
                jobs=args.jobs,
                reading=args.reading,
                conventions=args.conventions,
                real=real,
            ):
                results.append(result)
                check = _checked(known, result, checked)
                if report is not None:
                    report.case(result, baseline=check)
                shown = _shown(result)
                if check is not None and check.status == "known":
                    shown = f"known, in the baseline: {shown}"
                progress.advance(result.outcome, f"{result.scenario_id} [{result.engine}]", shown)
        except KeyboardInterrupt:
            interrupted = True  # the runner has stopped its workers; keep what finished
        finally:
            progress.close()
        comparison = _comparison(known, results)
        if report is not None:
            report.finish(interrupted=interrupted, baseline=comparison)
    problems = []
    if "junit" in outputs:
        try:
            with _open(outputs["junit"]) as stream:
                write_junit(
                    stream,
                    results,
                    properties=properties,
                    started_at=started_at,
                    interrupted=interrupted,
                    baseline=checked if known is not None else None,
                )
        except UsageProblem as problem:  # checked up front; the disk can still fill or vanish
            problems.append(str(problem))
    if "html" in outputs:
        try:
            _write_html(outputs["html"], results, properties, started_at, interrupted, comparison)
        except UsageProblem as problem:
            problems.append(str(problem))
    human.print(summary(results, time.monotonic() - started), soft_wrap=True)
    if comparison is not None:
        _print_comparison(human, comparison)
    verified = [result for result in results if result.outcome not in NOT_VERIFIED]
    for unwritten in problems:
        print(f"turngate: {unwritten}", file=sys.stderr)
    if interrupted:
        human.print(f"[bold yellow]interrupted[/]: {len(results)} of {len(planned)} cases finished")
        return EXIT_INTERRUPTED
    if problems or _fails(results, comparison):
        return 1
    if not verified:
        human.print(
            f"[bold yellow]nothing verified[/]: all {len(results)} cases were skipped"
            f" (target {target.name}; the reasons are above)"
        )
        return EXIT_NOTHING_VERIFIED
    return 0


def _fails(results: list[CaseResult], comparison: Comparison | None) -> bool:
    """Exit 1: a case failed or errored; with a baseline, only a change from it (new, or fixed)."""
    if comparison is not None:
        return comparison.fails
    return any(result.outcome in BAD for result in results)


def _read_baseline(path: Path | None) -> Baseline | None:
    """``--baseline FILE``, checked before any case runs: a bad file is one line, exit 2."""
    if path is None:
        return None
    from turngate.judge.baseline import BaselineProblem, read_baseline

    try:
        return read_baseline(path)
    except BaselineProblem as problem:
        raise UsageProblem(f"--baseline: {problem}") from None


def _checked(
    known: Baseline | None, result: CaseResult, checked: dict[tuple[str, str], CaseCheck]
) -> CaseCheck | None:
    """One finished case against the baseline (kept in ``checked`` for JUnit); None without one."""
    if known is None:
        return None
    from turngate.judge.baseline import Ran, check_case

    check = check_case(known, Ran.of(result))
    checked[(result.scenario_id, result.engine)] = check
    return check


def _comparison(known: Baseline | None, results: list[CaseResult]) -> Comparison | None:
    if known is None:
        return None
    from turngate.judge.baseline import Ran, compare

    return compare(known, [Ran.of(result) for result in results])


_BASELINE_STYLES: Final = {"head": "bold", "new": "bold red", "fixed": "bold yellow", "note": "dim"}


def _print_comparison(human: Console, comparison: Comparison) -> None:
    """After the summary table: what the baseline let through, and what fails the run (new, fixed)."""
    human.print()
    for kind, line in comparison.lines():
        human.print(Text(visible(line), style=_BASELINE_STYLES.get(kind, "")), soft_wrap=True)


@contextlib.contextmanager
def _open(output: Output) -> Iterator[IO[str]]:
    from turngate.base.terminal import OutputProblem

    try:
        with output.open() as stream:
            yield stream
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None


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
    with _open(output) as stream:
        stream.write(page)


def report_html_command(args: argparse.Namespace) -> int:
    """Saved JSON Lines reports as one HTML page, side by side."""
    from turngate.base.terminal import OutputProblem, check_outputs
    from turngate.judge.html_report import from_file, render
    from turngate.judge.report import ReportError

    try:
        outputs = check_outputs(output=args.output)
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None
    reports = []
    for path in args.reports:
        try:
            reports.append(from_file(path))
        except OSError as error:
            raise UsageProblem(f"report html: {path}: {error.strerror}") from None
        except (ValueError, ReportError, KeyError) as error:
            raise UsageProblem(f"report html: {error}") from None
    with _open(outputs["output"]) as stream:
        stream.write(render(reports, title=args.title))
    if not outputs["output"].is_stdout:
        print(f"wrote {args.output}: {len(reports)} report(s), {sum(len(r.cases) for r in reports)} cases")
    return 0


def baseline_write_command(args: argparse.Namespace) -> int:
    """A saved run's failing differences as a baseline file. Over an existing baseline it is that file
    brought up to date: what the run fixed is dropped, what is new added, and every other entry kept
    with its reason (entries of cases the run did not run, or could not show, included)."""
    from turngate.base.terminal import OutputProblem, check_outputs
    from turngate.judge.baseline import (
        Baseline,
        BaselineProblem,
        Ran,
        compare,
        read_baseline,
        render_baseline,
    )
    from turngate.judge.report import ReportError, read_report

    try:
        output = check_outputs(output=args.output)["output"]
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None
    try:
        header, lines, footer = read_report(args.report)
    except OSError as error:
        raise UsageProblem(f"baseline write: {args.report}: {error.strerror}") from None
    except (ValueError, ReportError, KeyError) as error:
        raise UsageProblem(f"baseline write: {error}") from None
    earlier = Baseline(output.value)
    if not output.is_stdout and output.path.exists():
        try:
            earlier = read_baseline(output.path)
        except BaselineProblem as problem:  # never overwrite what may be another file given by mistake
            raise UsageProblem(
                f"baseline write: -o: {problem} (an existing file must be a baseline to update; remove it"
                " to write a new one)"
            ) from None
    comparison = compare(earlier, [Ran.of(line) for line in lines])
    entries = comparison.updated()
    with _open(output) as stream:
        stream.write(render_baseline(entries, source=str(args.report), header=header))
    said = sys.stderr if output.is_stdout else sys.stdout  # the file itself may be on standard output
    cases_known = len({(entry.case, entry.engine) for entry in entries})
    added = [entry for entry in comparison.new if entry in entries]
    done = f"{len(entries)} known difference(s) of {cases_known} case(s): {len(added)} new"
    if earlier.entries:
        done += f", {len(entries) - len(added)} kept, {len(comparison.fixed)} fixed removed"
    print(f"wrote {output.value}: {done}", file=said)
    unreached = [entry for entry in comparison.new if entry not in entries]
    if unreached:
        print(
            f"not recorded: {len(unreached)} unreached case(s): a target that stopped answering is never a"
            " known difference (a run with --baseline fails on them)",
            file=said,
        )
    if footer.get("interrupted"):
        print("note: the run was interrupted: the cases it did not finish are not in the baseline", file=said)
    return 0


def _shown(result: CaseResult) -> str:
    """What a progress line shows of a result: every difference with the words that back it; of an
    error, its first line (the traceback stays in the reports)."""
    if result.outcome == "passed":
        return ""
    return result.message if result.differences else result.message.split("\n")[0]


def _check_conventions(name: str | None) -> None:
    if name is not None and name not in convention_sets():
        raise UsageProblem(f"--conventions: {name!r}: known sets: {', '.join(convention_sets())}")


def report_judge_command(args: argparse.Namespace) -> int:
    """The verdicts of a saved run, computed again from what it observed: nothing is run."""
    from turngate.judge.report import ReportError, read_report

    _check_conventions(args.conventions)
    known = _read_baseline(args.baseline)
    try:
        header, lines, _footer = read_report(args.report)
    except (OSError, ValueError, ReportError) as error:
        raise UsageProblem(f"report judge: {error}") from None
    results = [_judged(line, args.reading, args.conventions) for line in lines]
    checked: dict[tuple[str, str], CaseCheck] = {}
    for result in results:
        check = _checked(known, result, checked)
        if result.outcome in ("failed", "non-strict", "partial", "ambiguous", "errored", "unreached"):
            case = f"{result.outcome.upper()} {result.scenario_id} [{result.engine}]"
            if check is not None and check.status == "known":
                case += " (known, in the baseline)"
            print(visible(f"{case}\n{_indent(result.message)}"))
    from turngate.base.terminal import console

    console().print(summary(results, None), soft_wrap=True)
    comparison = _comparison(known, results)
    if comparison is not None:
        _print_comparison(console(), comparison)
    print(f"(judged again from {args.report})")
    if args.output is not None:
        from turngate.judge.report import JsonlReport

        with open(args.output, "w", encoding="utf-8") as stream:
            rejudged = JsonlReport(
                stream,
                target=str(header.get("target")),
                engines=header.get("engines", []),
                planned=len(results),
            )
            for result in results:
                rejudged.case(result, baseline=checked.get((result.scenario_id, result.engine)))
            rejudged.finish(baseline=comparison)
    return 1 if _fails(results, comparison) else 0


def _judged(line: dict[str, object], reading: str | None, conventions: str | None) -> CaseResult:
    """One report line judged again; lines with nothing observed (skipped, errored) keep their outcome."""
    result = CaseResult.from_report(line)
    if result.checks is None or not result.observed:
        return result
    checks = Checks.from_json(result.checks)
    # --reading judges strictly by that reading; else the reading the run chose (reports from before
    # readings were judged together: each case's own), else every reading (verdict.judge).
    strict = reading if reading in checks.readings else (result.reading if result.reading_chosen else None)
    verdict = judge(checks, result.observed, reading=strict, conventions=conventions)
    return result.judged_again(
        verdict, reading=strict or result.reading, reading_chosen=strict is not None, conventions=conventions
    )


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def summary(results: list[CaseResult], seconds: float | None) -> Group:
    """A table per capability and engine (misses, oks, skips apart), the skip reasons, the totals."""
    from rich.table import Table

    engines = sorted({result.engine for result in results})
    rows: dict[str, dict[str, Counter[str]]] = {}
    for result in results:
        rows.setdefault(result.capability, {}).setdefault(result.engine, Counter())[result.outcome] += 1
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("capability")
    for engine in engines:
        table.add_column(engine)
    for capability in sorted(rows):
        table.add_row(capability, *(_cell(rows[capability].get(engine, Counter())) for engine in engines))
    totals = Counter(result.outcome for result in results)
    outcomes = [*OUTCOMES, *sorted(set(totals) - set(OUTCOMES))]
    line = ", ".join(f"{totals.get(outcome, 0)} {outcome}" for outcome in outcomes)
    line += f" in {seconds:.1f}s" if seconds is not None else ""
    parts: list[Any] = [table] if rows else []
    reasons = Counter(
        visible(result.message.split("\n")[0]) for result in results if result.outcome == "skipped"
    )
    if reasons:
        skips = Table(box=None, pad_edge=False, show_edge=False, show_header=True)
        skips.add_column("skipped", justify="right")
        skips.add_column("because")
        for reason, count in reasons.most_common():
            skips.add_row(str(count), reason)
        parts += ["", skips]
    parts += ["", Text(line)]
    return Group(*parts)


def _cell(counts: Counter[str]) -> Text:
    """``9/9 ok``, ``2 FAIL/9``; skips apart (``+8 skipped``): a skip is neither an ok nor a miss."""
    judged = sum(count for outcome, count in counts.items() if outcome != "skipped")
    bad = sum(counts[outcome] for outcome in BAD)
    skipped = counts["skipped"]
    if not judged and not skipped:
        return Text("-")
    cell = Text()
    if judged:
        if bad:
            cell.append(f"{bad} FAIL/{judged}", style="bold red")
        else:
            others = judged - counts["passed"]
            cell.append(f"{counts['passed']}/{judged} ok", style="green" if not others else "yellow")
            if counts["partial"]:  # MUST checks the target could not all show
                cell.append(f" {counts['partial']}~", style="cyan")
            if counts["ambiguous"]:  # holds under one reading of an ambiguous sentence, breaks another
                cell.append(f" {counts['ambiguous']}?", style="magenta")
    if skipped:
        cell.append((" " if judged else "") + f"+{skipped} skipped", style="dim")
    return cell


def scenario_summary(scenario: Scenario) -> dict[str, Any]:
    """What ``list --json`` gives per scenario (``show --json`` adds the scenario file's content)."""
    return {
        "id": scenario.id,
        "title": scenario.title,
        "level": scenario.level,
        "kind": scenario.kind,
        "engines": list(scenario.engines),
        "capabilities": sorted(scenario.capabilities),
        "readings": sorted(scenario.readings),
        "default_reading": scenario.default_reading,
        "source": dict(scenario.source),
        "path": str(scenario.path),
    }


def list_command(args: argparse.Namespace) -> int:
    scenarios = chosen_catalog(args)
    if args.json:
        print(
            json.dumps([scenario_summary(scenario) for scenario in scenarios], ensure_ascii=False, indent=2)
        )
        return 0
    for scenario in scenarios:
        tags = ",".join(sorted(scenario.capabilities)) or "-"
        print(f"{scenario.id}  {scenario.level}  engines={','.join(scenario.engines)}  needs={tags}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    scenarios = {scenario.id: scenario for scenario in chosen_catalog(args)}
    scenario = scenarios.get(args.id)
    if scenario is None:
        raise UsageProblem(f"show: {args.id!r}: no such scenario (see `turngate list`)")
    text = scenario.path.read_text(encoding="utf-8")
    if args.json:
        import yaml

        document = {**scenario_summary(scenario), "scenario": yaml.safe_load(text)}
        print(json.dumps(document, ensure_ascii=False, indent=2, default=str))
        return 0
    print(visible(f"{scenario.id}  ({scenario.level}, {scenario.kind})\n{scenario.title}\n"))
    source = scenario.source
    print(visible(f"{source['file']}: {source.get('requirement', '')} / {source['heading']}"))
    print(visible(f"{source['quote'].rstrip()}\n"))
    print(visible(text))
    return 0


def catalog_check_command(args: argparse.Namespace) -> int:
    from turngate.judge.catalog.sentences import check_quotes

    problems = check_quotes()
    if problems:
        raise UsageProblem(problems[0])
    scenarios = chosen_catalog(args)
    print(f"ok: {len(scenarios)} scenarios, {len(cases(scenarios, None))} cases")
    return 0


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    with_catalog = add_catalog_arguments
    run = add_target_arguments(
        with_catalog(commands.add_parser("run", help="run the catalog against a target"))
    )
    run.add_argument(
        "--jobs",
        type=at_least_one,
        default=default_jobs(),
        help="parallel cases, at least 1 (default: the cores)",
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
    run.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="known differences (turngate baseline write): exit 1 only on a new one, or a known one gone",
    )
    run.set_defaults(handler=run_command)
    listing = with_catalog(commands.add_parser("list", help="the scenarios: IDs, levels, tags"))
    listing.add_argument("--json", action="store_true", help="a JSON array, one object per scenario")
    listing.set_defaults(handler=list_command)
    show = with_catalog(commands.add_parser("show", help="one scenario: requirement, script, expectations"))
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="the scenario as one JSON object")
    show.set_defaults(handler=show_command)
    report = commands.add_parser("report", help="work on saved reports")
    report_commands = report.add_subparsers(dest="report_command", required=True)
    rejudge = report_commands.add_parser(
        "judge", help="the verdicts of a saved JSONL report, again (or under another reading / conventions)"
    )
    rejudge.add_argument("report", type=Path, metavar="RUN.jsonl")
    rejudge.add_argument("--reading", metavar="NAME", help="judge ambiguous scenarios by this reading")
    rejudge.add_argument("--conventions", metavar="NAME", help="enforce this convention set")
    rejudge.add_argument("-o", "--output", type=Path, metavar="F", help="write the judged report (JSONL)")
    rejudge.add_argument(
        "--baseline", type=Path, metavar="FILE", help="known differences: exit 1 only on a change from them"
    )
    rejudge.set_defaults(handler=report_judge_command)
    page = report_commands.add_parser(
        "html", help="saved JSONL reports as one HTML page: scenario x engine, one column set per report"
    )
    page.add_argument("reports", type=Path, nargs="+", metavar="RUN.jsonl")
    page.add_argument(
        "-o", "--output", required=True, metavar="F", help="the HTML file (- for standard output)"
    )
    page.add_argument("--title", default="turngate report", help="the page's title")
    page.set_defaults(handler=report_html_command)
    baseline = commands.add_parser("baseline", help="known differences, so that CI fails only on a change")
    baseline_commands = baseline.add_subparsers(dest="baseline_command", required=True)
    write = baseline_commands.add_parser(
        "write",
        help="a saved run's failing differences as a baseline file (YAML), each with a reason to fill in",
    )
    write.add_argument(
        "report", type=Path, metavar="RUN.jsonl", help="a JSON Lines report (- for standard input)"
    )
    write.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="F",
        help="the baseline (- for standard output); an existing one is updated, keeping its reasons",
    )
    write.set_defaults(handler=baseline_write_command)
    catalog = commands.add_parser("catalog", help="the scenario catalog")
    check = with_catalog(catalog.add_subparsers(dest="catalog_command", required=True).add_parser("check"))
    check.set_defaults(handler=catalog_check_command)


__all__ = ["EXIT_USAGE", "add_commands"]
