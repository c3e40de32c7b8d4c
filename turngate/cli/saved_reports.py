"""`turngate report judge`, `report html` and `baseline write`: saved JSON Lines reports worked on again,
nothing run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turngate.base.arguments import EXIT_INTERRUPTED, UsageProblem
from turngate.base.terminal import visible
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
from turngate.judge.catalog.checks import Checks
from turngate.judge.catalog.editions import edition_named
from turngate.judge.verdict import judge

if TYPE_CHECKING:
    from turngate.judge.baseline import CaseCheck


def report_judge_command(args: argparse.Namespace) -> int:
    """The verdicts of a saved run, computed again from what it observed: nothing is run."""
    from turngate.judge.report import ReportError, read_report

    check_conventions(args.conventions)
    known = read_baseline_option(args.baseline)
    try:
        header, lines, footer = read_report(args.report)
    except (OSError, ValueError, ReportError) as error:
        raise UsageProblem(f"report judge: {error}") from None
    # the edition the run was judged by, unless another is asked for (before editions: the seed)
    edition = check_edition(args.edition or _str_or_none(header.get("edition")))
    results = [_judged(line, args.reading, args.conventions, edition) for line in lines]
    checked: dict[tuple[str, str], CaseCheck] = {}
    for result in results:
        check = check_against(known, result, checked, allow_partial=args.allow_partial)
        if result.outcome in ("failed", "non-strict", "partial", "ambiguous", "errored", "unreached"):
            case = f"{result.outcome.upper()} {result.scenario_id} [{result.engine}]"
            if check is not None and check.status == "known":
                case += " (known, in the baseline)"
            print(visible(f"{case}\n{_indent(result.message)}"))
    from turngate.base.terminal import console

    console().print(summary(results, None, allow_partial=args.allow_partial), soft_wrap=True)
    comparison = compare_with(known, results, allow_partial=args.allow_partial)
    if comparison is not None:
        print_comparison(console(), comparison)
    print(f"(judged again from {args.report}, by edition {edition})")
    interrupted = bool(footer.get("interrupted"))
    if interrupted:  # judged again, it is still a run someone stopped: its verdict is incomplete
        print(
            "note: the run was interrupted (Ctrl-C): the cases it did not finish are not in it",
            file=sys.stderr,
        )
    if args.output is not None:
        from turngate.judge.report import JsonlReport

        with open(args.output, "w", encoding="utf-8") as stream:
            rejudged = JsonlReport(
                stream,
                target=str(header.get("target")),
                engines=header.get("engines", []),
                planned=len(results),
                allow_partial=args.allow_partial,
                edition=edition,
            )
            for result in results:
                rejudged.case(result, baseline=checked.get((result.scenario_id, result.engine)))
            rejudged.finish(interrupted=interrupted, baseline=comparison)
    if fails(results, comparison, allow_partial=args.allow_partial):
        return 1
    return EXIT_INTERRUPTED if interrupted else 0


def _judged(
    line: dict[str, object], reading: str | None, conventions: str | None, edition: str
) -> CaseResult:
    """One report line judged again; lines with nothing observed (skipped, errored) keep their outcome."""
    result = CaseResult.from_report(line)
    if result.checks is None or not result.observed:
        return result
    checks = Checks.from_json(result.checks)
    out_of_edition = edition_named(edition).missing_premise(checks)
    if out_of_edition is not None:  # as a run under this edition would have skipped it
        return result.out_of_edition(out_of_edition)
    # --reading judges strictly by that reading; else the reading the run chose (reports from before
    # readings were judged together: each case's own), else every reading (verdict.judge).
    strict = reading if reading in checks.readings else (result.reading if result.reading_chosen else None)
    verdict = judge(checks, result.observed, reading=strict, conventions=conventions, edition=edition)
    return result.judged_again(
        verdict, reading=strict or result.reading, reading_chosen=strict is not None, conventions=conventions
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def report_html_command(args: argparse.Namespace) -> int:
    """Saved JSON Lines reports as one HTML page, side by side."""
    from turngate.judge.html_report import from_file, render
    from turngate.judge.report import ReportError

    outputs = checked_outputs(output=args.output)
    reports = []
    for path in args.reports:
        try:
            reports.append(from_file(path))
        except OSError as error:
            raise UsageProblem(f"report html: {path}: {error.strerror}") from None
        except (ValueError, ReportError, KeyError) as error:
            raise UsageProblem(f"report html: {error}") from None
    with open_output(outputs["output"]) as stream:
        stream.write(render(reports, title=args.title))
    if not outputs["output"].is_stdout:
        print(f"wrote {args.output}: {len(reports)} report(s), {sum(len(r.cases) for r in reports)} cases")
    return 0


def baseline_write_command(args: argparse.Namespace) -> int:
    """A saved run's failing differences as a baseline file. Over an existing baseline it is that file
    brought up to date: what the run fixed is dropped, what is new added, and every other entry kept
    with its reason (entries of cases the run did not run, or could not show, included)."""
    from turngate.judge.baseline import (
        Baseline,
        BaselineProblem,
        Ran,
        compare,
        read_baseline,
        render_baseline,
    )
    from turngate.judge.report import ReportError, read_report

    output = checked_outputs(output=args.output)["output"]
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
    comparison = compare(earlier, [Ran.of(line) for line in lines], allow_partial=args.allow_partial)
    entries = comparison.updated()
    with open_output(output) as stream:
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


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
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
    add_allow_partial(rejudge)
    add_edition(rejudge)
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
    write.add_argument(
        "--allow-partial",
        action="store_true",
        help="leave partial cases out (for runs judged with --allow-partial); by default each is an entry",
    )
    write.set_defaults(handler=baseline_write_command)
