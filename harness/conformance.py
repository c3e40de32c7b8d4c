"""`turngate run`, `list`, `show`, `catalog check`: the catalog against a target, and the verdict."""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from collections import Counter
from pathlib import Path

from harness.catalog import CATALOG_DIR, ENGINES, CatalogError, Scenario, load_catalog
from harness.catalog.conventions import convention_sets
from harness.runner import CaseResult, cases, default_jobs, run_all
from harness.targets import Target, TargetProblem, parse_target
from harness.verdict import OUTCOMES, Checks, judge

EXIT_USAGE = 2


class UsageProblem(Exception):
    """Bad input from the user: one line, exit code 2, no traceback."""


def _catalog(args: argparse.Namespace) -> tuple[Scenario, ...]:
    try:
        scenarios = load_catalog(args.catalog)
    except CatalogError as error:
        raise UsageProblem(f"bad scenario file: {error}") from None
    patterns = args.k or []
    if patterns:
        scenarios = tuple(s for s in scenarios if any(fnmatch.fnmatchcase(s.id, p) for p in patterns))
        if not scenarios:
            raise UsageProblem(f"-k {' '.join(patterns)}: matches no scenario")
    return scenarios


def run_command(args: argparse.Namespace) -> int:
    scenarios = _catalog(args)
    target = resolve_target(args)
    engines = args.engine or list(ENGINES)
    for engine in engines:
        if engine not in ENGINES:
            raise UsageProblem(f"--engine: {engine!r}: known: {', '.join(ENGINES)}")
    _check_conventions(args.conventions)
    planned = cases(scenarios, engines)
    report = None
    report_file = None
    if args.report_json:
        from harness.report import JsonlReport

        report_file = open(args.report_json, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        report = JsonlReport(report_file, target=target.name, engines=engines, planned=len(planned))
    results: list[CaseResult] = []
    started = time.monotonic()
    progress = _Progress(len(planned), sys.stderr)
    try:
        for result in run_all(
            planned, target=target, jobs=args.jobs, reading=args.reading, conventions=args.conventions
        ):
            results.append(result)
            if report is not None:
                report.case(result)
            progress.tick(result)
        if report is not None:
            report.finish()
    finally:
        progress.done()
        if report_file is not None:
            report_file.close()
    if args.junit:
        from harness.report import write_junit

        write_junit(args.junit, results, target=target.name)
    print(summary(results, time.monotonic() - started))
    return 0 if not any(result.outcome in ("failed", "errored", "unreached") for result in results) else 1


def _check_conventions(name: str | None) -> None:
    if name is not None and name not in convention_sets():
        raise UsageProblem(f"--conventions: {name!r}: known sets: {', '.join(convention_sets())}")


def report_judge_command(args: argparse.Namespace) -> int:
    """The verdicts of a saved run, computed again from what it observed: nothing is run."""
    from harness.report import ReportError, read_report

    _check_conventions(args.conventions)
    try:
        header, lines, _footer = read_report(args.report)
    except (OSError, ValueError, ReportError) as error:
        raise UsageProblem(f"report judge: {error}") from None
    results = [_judged(line, args.reading, args.conventions) for line in lines]
    for result in results:
        if result.outcome in ("failed", "non-strict", "partial", "errored", "unreached"):
            print(
                f"{result.outcome.upper()} {result.scenario_id} [{result.engine}]\n{_indent(result.message)}"
            )
    print(summary(results, 0.0).rsplit(" in ", 1)[0] + f" (judged again from {args.report})")
    if args.output is not None:
        from harness.report import JsonlReport

        with open(args.output, "w", encoding="utf-8") as stream:
            rejudged = JsonlReport(
                stream,
                target=str(header.get("target")),
                engines=header.get("engines", []),
                planned=len(results),
            )
            for result in results:
                rejudged.case(result)
            rejudged.finish()
    return 0 if not any(result.outcome in ("failed", "errored", "unreached") for result in results) else 1


def _judged(line: dict[str, object], reading: str | None, conventions: str | None) -> CaseResult:
    """One report line judged again; lines with nothing observed (skipped, errored) keep their outcome."""
    fields = {name: value for name, value in line.items() if name != "kind"}
    result = CaseResult(**fields)  # type: ignore[arg-type]
    if result.checks is None or not result.observed:
        return result
    checks = Checks.from_json(result.checks)
    chosen = reading if reading in checks.readings else result.reading
    verdict = judge(checks, result.observed, reading=chosen, conventions=conventions)
    record = dict(result.record or {}, outcome=verdict.outcome, reading=chosen)
    return CaseResult(
        result.scenario_id,
        result.engine,
        chosen,
        result.level,
        result.capability,
        verdict.outcome,
        verdict.message,
        result.duration_sec,
        record,
        tuple(item.to_json() for item in verdict.differences),
        result.checks,
        tuple(result.observed),
        conventions,
    )


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def resolve_target(args: argparse.Namespace) -> Target:
    """The target, refused before any case runs when it is unknown, misconfigured or down."""
    try:
        target = parse_target(args.target, args.target_options)
        if target.http is not None:
            from harness.connectors.http import probe

            probe(target.http)
    except TargetProblem as problem:
        raise UsageProblem(str(problem)) from None
    except RuntimeError as error:  # TargetError: down, or not the job API
        raise UsageProblem(f"--target {args.target}: {error}") from None
    return target


class _Progress:
    def __init__(self, total: int, stream: object) -> None:
        self.total, self.done_count, self.stream = total, 0, stream
        self.tty = getattr(stream, "isatty", lambda: False)()

    def tick(self, result: CaseResult) -> None:
        self.done_count += 1
        if result.outcome in ("failed", "errored", "non-strict", "unreached", "partial"):
            # Every difference with the words that back it; an error's traceback stays in the reports.
            shown = result.message if result.differences else result.message.split("\n")[0]
            self._line(f"{result.outcome.upper()} {result.scenario_id} [{result.engine}]\n{_indent(shown)}\n")
        if self.tty:
            width = 30
            filled = width * self.done_count // max(self.total, 1)
            self._write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done_count}/{self.total}")

    def _line(self, text: str) -> None:
        self._write(("\r\033[K" if self.tty else "") + text)

    def _write(self, text: str) -> None:
        self.stream.write(text)  # type: ignore[attr-defined]
        self.stream.flush()  # type: ignore[attr-defined]

    def done(self) -> None:
        if self.tty:
            self._write("\r\033[K")


def summary(results: list[CaseResult], seconds: float) -> str:
    """A table per capability and engine, then the totals."""
    engines = sorted({result.engine for result in results})
    rows: dict[str, dict[str, Counter[str]]] = {}
    for result in results:
        rows.setdefault(result.capability, {}).setdefault(result.engine, Counter())[result.outcome] += 1
    width = max([len("capability"), *(len(name) for name in rows)])
    lines = [f"{'capability':<{width}}  " + "  ".join(f"{engine:<14}" for engine in engines)]
    for capability in sorted(rows):
        cells = []
        for engine in engines:
            counts = rows[capability].get(engine, Counter())
            total = sum(counts.values())
            bad = counts["failed"] + counts["errored"] + counts["unreached"]
            partial = f" {counts['partial']}~" if counts["partial"] else ""
            cell = (
                "-"
                if not total
                else (f"{counts['passed']}/{total} ok{partial}" if not bad else f"{bad} FAIL/{total}")
            )
            cells.append(f"{cell:<14}")
        lines.append(f"{capability:<{width}}  " + "  ".join(cells))
    totals = Counter(result.outcome for result in results)
    lines.append(
        ", ".join(f"{totals.get(outcome, 0)} {outcome}" for outcome in OUTCOMES) + f" in {seconds:.1f}s"
    )
    return "\n".join(lines)


def list_command(args: argparse.Namespace) -> int:
    for scenario in _catalog(args):
        tags = ",".join(sorted(scenario.capabilities)) or "-"
        print(f"{scenario.id}  {scenario.level}  engines={','.join(scenario.engines)}  needs={tags}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    scenarios = {scenario.id: scenario for scenario in _catalog(args)}
    scenario = scenarios.get(args.id)
    if scenario is None:
        raise UsageProblem(f"show: {args.id!r}: no such scenario (see `turngate list`)")
    print(f"{scenario.id}  ({scenario.level}, {scenario.kind})\n{scenario.title}\n")
    source = scenario.source
    print(f"{source['file']}: {source.get('requirement', '')} / {source['heading']}")
    print(f"{source['quote'].rstrip()}\n")
    print(scenario.path.read_text(encoding="utf-8"))
    return 0


def catalog_check_command(args: argparse.Namespace) -> int:
    from harness.catalog.sentences import check_quotes

    problems = check_quotes()
    if problems:
        raise UsageProblem(problems[0])
    scenarios = _catalog(args)
    print(f"ok: {len(scenarios)} scenarios, {len(cases(scenarios, None))} cases")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    def with_catalog(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--catalog", type=Path, default=CATALOG_DIR, help="the scenarios folder")
        parser.add_argument("-k", action="append", metavar="ID-GLOB", help="only scenarios whose ID matches")
        return parser

    run = with_catalog(commands.add_parser("run", help="run the catalog against a target"))
    run.add_argument(
        "--target",
        default="reference",
        help="reference (default), http://HOST:PORT, cmd:COMMAND, or a target options file (YAML)",
    )
    run.add_argument(
        "--target-options", type=Path, metavar="FILE", help="options of an HTTP target (YAML; see the README)"
    )
    run.add_argument("--engine", action="append", metavar="ENGINE", help="only these engines (repeatable)")
    run.add_argument("--jobs", type=int, default=default_jobs(), help="parallel cases (default: the cores)")
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
    run.add_argument("--report-json", type=Path, metavar="F", help="JSON Lines report")
    run.add_argument("--junit", type=Path, metavar="F", help="JUnit XML report")
    run.set_defaults(handler=run_command)
    listing = with_catalog(commands.add_parser("list", help="the scenarios: IDs, levels, tags"))
    listing.set_defaults(handler=list_command)
    show = with_catalog(commands.add_parser("show", help="one scenario: requirement, script, expectations"))
    show.add_argument("id")
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
    rejudge.set_defaults(handler=report_judge_command)
    catalog = commands.add_parser("catalog", help="the scenario catalog")
    check = with_catalog(catalog.add_subparsers(dest="catalog_command", required=True).add_parser("check"))
    check.set_defaults(handler=catalog_check_command)


__all__ = ["EXIT_USAGE", "UsageProblem", "add_commands"]
