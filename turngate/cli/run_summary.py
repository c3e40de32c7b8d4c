"""How a run ends, or a saved one judged again: the table per capability and engine, what a baseline
let through, and whether the run fails (exit 1)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from rich.console import Group
from rich.text import Text

from turngate.base.terminal import visible
from turngate.judge.verdict import FAILING, OUTCOMES, fails_run

if TYPE_CHECKING:
    from rich.console import Console

    from turngate.judge.baseline import Comparison
    from turngate.judge.case_result import CaseResult

_BASELINE_STYLES: Final = {"head": "bold", "new": "bold red", "fixed": "bold yellow", "note": "dim"}


def fails(results: list[CaseResult], comparison: Comparison | None, *, allow_partial: bool = False) -> bool:
    """Exit 1: a case failed, errored or is partial (``verdict.fails_run``); with a baseline, only a
    change from it (new, or fixed)."""
    if comparison is not None:
        return comparison.fails
    return any(fails_run(result.outcome, allow_partial=allow_partial) for result in results)


def print_comparison(human: Console, comparison: Comparison) -> None:
    """After the summary table: what the baseline let through, and what fails the run (new, fixed)."""
    human.print()
    for kind, line in comparison.lines():
        human.print(Text(visible(line), style=_BASELINE_STYLES.get(kind, "")), soft_wrap=True)


def summary(results: list[CaseResult], seconds: float | None, *, allow_partial: bool = False) -> Group:
    """A table per capability and engine (misses, oks, skips apart), the skip reasons, what failed (by
    ``verdict.fails_run``, and the SHOULD misses), the totals."""
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
        table.add_row(
            capability,
            *(_cell(rows[capability].get(engine, Counter()), allow_partial) for engine in engines),
        )
    totals = Counter(result.outcome for result in results)
    outcomes = [*OUTCOMES, *sorted(set(totals) - set(OUTCOMES))]
    line = ", ".join(f"{totals.get(outcome, 0)} {outcome}" for outcome in outcomes)
    line += f" in {seconds:.1f}s" if seconds is not None else ""
    if totals.get("partial") and allow_partial:
        line += " (partial accepted: --allow-partial)"
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
    failing = [
        result
        for result in results
        if fails_run(result.outcome, allow_partial=allow_partial) or result.outcome == "non-strict"
    ]
    if failing:  # what failed, at the end where a person looks: the lines above may have scrolled away
        listed = Table(box=None, pad_edge=False, show_edge=False, show_header=True)
        listed.add_column("what failed")
        listed.add_column("case")
        listed.add_column("first break")
        for result in failing[:_MOST_LISTED]:
            # Text, not markup: "[codex]" would be read as a style
            case = Text(f"{result.scenario_id} [{result.engine}]")
            listed.add_row(result.outcome.upper(), case, Text(_first_break(result)))
        if len(failing) > _MOST_LISTED:
            listed.add_row("", f"... and {len(failing) - _MOST_LISTED} more (the reports list them all)", "")
        parts += ["", listed]
        if not allow_partial and any(result.outcome == "partial" for result in failing):
            parts.append(
                Text(
                    "PARTIAL: MUST checks the target could not show (never a pass; --allow-partial accepts"
                    " them, a baseline can list them)",
                    style="dim",
                )
            )
    parts += ["", Text(line)]
    return Group(*parts)


_MOST_LISTED: Final = 50


def _first_break(result: CaseResult) -> str:
    """The step, check and authority of a case's first break (of a partial case, its first MUST check
    the target could not show); of an error, its first line."""
    breaks = ("unverified",) if result.outcome == "partial" else ("failed", "non-strict")
    for item in result.differences:
        if item.get("severity") in breaks:
            return visible(f"step {item.get('step')} {item.get('key')}: {item.get('authority')}")
    first = result.message.split("\n")[0] if result.message else ""
    return visible(first[:120])


def _cell(counts: Counter[str], allow_partial: bool = False) -> Text:
    """``9/9 ok``, ``2 FAIL/9``, ``3 PARTIAL/9``; partial (``~``) and ambiguous (``?``) counts always
    shown beside, so a failure never hides them; skips apart (``+8 skipped``): neither an ok nor a miss."""
    judged = sum(count for outcome, count in counts.items() if outcome != "skipped")
    bad = sum(counts[outcome] for outcome in FAILING)
    skipped = counts["skipped"]
    if not judged and not skipped:
        return Text("-")
    cell = Text()
    if judged:
        partial_fails = not allow_partial and counts["partial"]
        if bad:
            cell.append(f"{bad} FAIL/{judged}", style="bold red")
        elif partial_fails:
            cell.append(f"{counts['partial']} PARTIAL/{judged}", style="bold cyan")
        else:
            others = judged - counts["passed"]
            cell.append(f"{counts['passed']}/{judged} ok", style="green" if not others else "yellow")
        if counts["partial"] and (bad or not partial_fails):  # MUST checks the target could not all show
            cell.append(f" {counts['partial']}~", style="cyan")
        if counts["ambiguous"]:  # holds under one reading of an ambiguous sentence, breaks another
            cell.append(f" {counts['ambiguous']}?", style="magenta")
    if skipped:
        cell.append((" " if judged else "") + f"+{skipped} skipped", style="dim")
    return cell
