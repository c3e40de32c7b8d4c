"""`turngate mutants list` and `turngate mutants run`: the spec mutants and the mutation score."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _list(args: argparse.Namespace) -> int:
    from turngate.implementations.mutants.registry import MUTANTS

    for mutant in MUTANTS.values():
        reading = f"  (reading {mutant.reading})" if mutant.reading else ""
        print(f"{mutant.name}: {mutant.summary}{reading}")
        for sentence in mutant.sentences:
            print(f"    breaks {sentence}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from turngate.base.arguments import UsageProblem
    from turngate.implementations.mutants.registry import MUTANTS, UnknownMutant, mutant_named
    from turngate.judge.catalog import load_catalog
    from turngate.tools.mutation.score import run_mutant, score, sentence_registry, write_score

    try:
        chosen = [mutant_named(name) for name in args.mutant] if args.mutant else list(MUTANTS.values())
    except UnknownMutant as problem:
        raise UsageProblem(str(problem)) from None
    scenarios = load_catalog(args.catalog) if args.catalog else load_catalog()
    results = []
    for mutant in chosen:
        result = run_mutant(mutant, scenarios, jobs=args.jobs, every_case=args.every_case)
        state = "killed" if result.killed else "SURVIVED"
        first = f" by {result.killers[0]}" if result.killers else ""
        print(f"{state} {mutant.name} ({result.cases_run} cases){first}", file=sys.stderr, flush=True)
        results.append(result)
    registry = sentence_registry()
    document = score(results, registry)
    write_score(args.out, document)
    if args.markdown is not None:
        from turngate.tools.mutation.score import markdown_table, write_markdown

        write_markdown(args.markdown, markdown_table(document, registry))
    total = document["score"]
    print(f"mutation score: {total['killed']}/{total['total']} killed; written to {args.out}")
    return 0 if total["killed"] == total["total"] else 1


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    from turngate.judge.pool import default_jobs

    mutants = commands.add_parser("mutants", help="spec mutants of the reference and the mutation score")
    sub = mutants.add_subparsers(dest="mutants_command", required=True)
    listing = sub.add_parser("list", help="every mutant and the spec sentences it breaks")
    listing.set_defaults(handler=_list)
    run = sub.add_parser("run", help="run each mutant against the cases citing its sentences")
    run.add_argument("--mutant", action="append", metavar="NAME", help="only these mutants (repeatable)")
    run.add_argument(
        "--out", type=Path, default=Path("mutants.json"), help="the score (default mutants.json)"
    )
    run.add_argument(
        "--jobs", type=int, default=default_jobs(), help="parallel cases (default: twice the cores)"
    )
    run.add_argument(
        "--every-case", action="store_true", help="run every citing case, not only until the first kill"
    )
    run.add_argument("--markdown", type=Path, metavar="FILE", help="also write the table into FILE")
    run.add_argument("--catalog", type=Path, help="the scenarios folder (default: the shipped catalog)")
    run.set_defaults(handler=_run)
