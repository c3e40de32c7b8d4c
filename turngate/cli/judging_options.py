"""The options of `turngate run` and `turngate report judge` that say how to judge: ``--conventions``
(a known convention set), ``--baseline`` (known differences: read before any case, each case
checked against it as it finishes, the run compared with it at the end) and ``--allow-partial``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from turngate.base.arguments import UsageProblem
from turngate.judge.catalog.conventions import convention_sets

if TYPE_CHECKING:
    from turngate.judge.baseline import Baseline, CaseCheck, Comparison
    from turngate.judge.case_result import CaseResult


def add_allow_partial(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="accept partial cases (MUST checks the target could not all show) as passing; by default"
        " a partial case fails the run as a failed one does",
    )


def add_edition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--edition",
        metavar="NAME",
        help="judge by this edition of the spec (`turngate editions`; default: the seed of ../shared/spec/);"
        " a check citing a sentence the edition does not have is reported, never failed",
    )


def check_edition(name: str | None) -> str:
    """The edition's name (the default's when None); an unknown one is one line, exit 2."""
    from turngate.judge.catalog.editions import EditionProblem, edition_named

    try:
        return edition_named(name).name
    except EditionProblem as problem:
        raise UsageProblem(f"--edition: {problem}") from None


def check_conventions(name: str | None) -> None:
    if name is not None and name not in convention_sets():
        raise UsageProblem(f"--conventions: {name!r}: known sets: {', '.join(convention_sets())}")


def read_baseline_option(path: Path | None) -> Baseline | None:
    """``--baseline FILE``, checked before any case runs: a bad file is one line, exit 2."""
    if path is None:
        return None
    from turngate.judge.baseline import BaselineProblem, read_baseline

    try:
        return read_baseline(path)
    except BaselineProblem as problem:
        raise UsageProblem(f"--baseline: {problem}") from None


def check_against(
    known: Baseline | None,
    result: CaseResult,
    checked: dict[tuple[str, str], CaseCheck],
    *,
    allow_partial: bool = False,
) -> CaseCheck | None:
    """One finished case against the baseline (kept in ``checked`` for JUnit); None without one."""
    if known is None:
        return None
    from turngate.judge.baseline import Ran, check_case

    check = check_case(known, Ran.of(result), allow_partial=allow_partial)
    checked[(result.scenario_id, result.engine)] = check
    return check


def compare_with(
    known: Baseline | None, results: list[CaseResult], *, allow_partial: bool = False
) -> Comparison | None:
    """The whole run against the baseline: what it let through, what is new, what is fixed."""
    if known is None:
        return None
    from turngate.judge.baseline import Ran, compare

    return compare(known, [Ran.of(result) for result in results], allow_partial=allow_partial)
