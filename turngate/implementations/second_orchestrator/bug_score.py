"""Measure the bugs: run the whole catalog against each ``--bug`` build and tabulate.

``python -m turngate.implementations.second_orchestrator.bug_score [--jobs 2] [--markdown FILE]
[--bug NAME ...]``

A bug is *killed* when some failed or non-strict case cites one of the bug's sentences
(a difference of severity failed/non-strict whose authority is in bugs.py), *other* when cases
fail but cite only other sentences, *survived* when nothing fails. Runs turngate's CLI as a
subprocess, one catalog run per bug, reports in /tmp/so-NAME.jsonl.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .bugs import BUGS, BY_NAME, Bug

ROOT: Final = Path(__file__).resolve().parents[3]
FAILING: Final = ("failed", "non-strict")


@dataclass(frozen=True)
class Score:
    bug: Bug
    verdict: str  # killed | other | survived | errored
    killing_sentences: tuple[str, ...]
    killing_cases: tuple[str, ...]
    other_sentences: tuple[str, ...]
    outcomes: dict[str, int]


def run_catalog(name: str | None, jobs: int, report: Path, extra: tuple[str, ...] = ()) -> None:
    target = f"cmd:{sys.executable} -m turngate.implementations.second_orchestrator" + (
        f" --bug {name}" if name else ""
    )
    turngate = Path(sys.executable).parent / "turngate"
    command = [
        str(turngate),
        "run",
        "--target",
        target,
        "--jobs",
        str(jobs),
        "--report-json",
        str(report),
        *extra,
    ]
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def judge(entry: Bug, report: Path) -> Score:
    outcomes: Counter[str] = Counter()
    killing: set[str] = set()
    cases: set[str] = set()
    other: set[str] = set()
    # JSON Lines end at "\n" only: str.splitlines() would also cut at U+2028, U+0085, … in a case's text
    for line in report.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("kind") == "header" or "outcome" not in row:
            continue
        outcomes[row["outcome"]] += 1
        if row["outcome"] not in FAILING:
            continue
        for diff in row.get("differences") or ():
            if diff.get("severity") not in FAILING:
                continue
            authority = str(diff.get("authority"))
            if authority in entry.sentences:
                killing.add(authority)
                cases.add(f"{row['scenario_id']} [{row['engine']}]")
            else:
                other.add(authority)
    if killing:
        verdict = "killed"
    elif other:
        verdict = "other"
    elif outcomes.get("errored"):
        verdict = "errored"
    else:
        verdict = "survived"
    return Score(
        entry, verdict, tuple(sorted(killing)), tuple(sorted(cases)), tuple(sorted(other)), dict(outcomes)
    )


def markdown(scores: list[Score], command: str) -> str:
    lines = [
        f"Measured with `{command}`.",
        "",
        "| bug | breaks (sentence IDs) | what it does | verdict | cited by the catalog | failing cases |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for score in scores:
        cited = ", ".join(f"`{s}`" for s in score.killing_sentences) or (
            "only other sentences: " + ", ".join(f"`{s}`" for s in score.other_sentences)
            if score.other_sentences
            else "—"
        )
        failing = score.outcomes.get("failed", 0) + score.outcomes.get("non-strict", 0)
        breaks = "<br>".join(f"`{s}`" for s in score.bug.sentences)
        name = f"`{score.bug.name}`"
        lines.append(f"| {name} | {breaks} | {score.bug.does} | **{score.verdict}** | {cited} | {failing} |")
    tally = Counter(score.verdict for score in scores)
    lines += [
        "",
        "Totals: "
        + ", ".join(f"{n} {verdict}" for verdict, n in sorted(tally.items()))
        + f" of {len(scores)}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m turngate.implementations.second_orchestrator.bug_score")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", type=Path, help="write the table here")
    parser.add_argument("--bug", action="append", default=[], help="only these bugs (default: all)")
    parser.add_argument("--reuse", action="store_true", help="judge existing /tmp/so-NAME.jsonl reports")
    args = parser.parse_args(argv)
    entries = [BY_NAME[name] for name in args.bug] if args.bug else list(BUGS)
    scores: list[Score] = []
    for entry in entries:
        report = Path(f"/tmp/so-{entry.name}.jsonl")
        if not (args.reuse and report.exists()):
            run_catalog(entry.name, args.jobs, report)
        score = judge(entry, report)
        scores.append(score)
        print(
            f"{entry.name:40} {score.verdict:9} {', '.join(score.killing_sentences)}",
            file=sys.stderr,
            flush=True,
        )
    command = f"python -m turngate.implementations.second_orchestrator.bug_score --jobs {args.jobs}"
    table = markdown(scores, command)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    else:
        print(table)


if __name__ == "__main__":
    main()
