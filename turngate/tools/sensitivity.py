"""How much exploration adds: per broken implementation, killed by the catalog alone, by exploration.

A broken implementation is *killed* when a verdict's failing (or non-strict) difference cites one of
the sentences it breaks. For each one this measures the catalog (the cases citing those sentences,
as ``turngate mutants run``) and exploration (``--budget`` generated runs from ``--seed``): whether
each kills it, by which sentence, and how many generated runs exploration needed.

    python -m turngate.tools.sensitivity [--budget 300] [--seed 0] [--mutant NAME ...]
        [--second-orchestrator [--bug NAME ...]] [--jobs 2] [--out sensitivity.json] [--markdown FILE]

``--second-orchestrator``: the bugs of the independent orchestrator
(turngate/implementations/second_orchestrator/, over the command protocol) in place of the
reference's mutants; its catalog verdict is the whole catalog's
(``turngate.implementations.second_orchestrator.bug_score``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from turngate.judge.exploration.explorer import explore
from turngate.judge.exploration.plans import ENGINES
from turngate.judge.targets import Target, parse_target


@dataclass(frozen=True, slots=True)
class Sensitivity:
    name: str
    sentences: tuple[str, ...]
    catalog_killers: tuple[str, ...]  # "scenario [engine]" of cases citing one of its sentences
    explored_runs: int
    explored_seconds: float
    explore_kill: str | None  # the sentence the shrunk finding cites, when it is one of its own
    explore_other: str | None  # a finding citing other sentences only (not a kill)
    first_found_at: int | None
    catalog_other: tuple[str, ...] = ()  # the catalog failed it, citing only other sentences

    @property
    def catalog_killed(self) -> bool:
        return bool(self.catalog_killers)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sentences": list(self.sentences),
            "catalog_killed": self.catalog_killed,
            "catalog_killers": list(self.catalog_killers),
            "catalog_other": list(self.catalog_other),
            "explore_killed": self.explore_kill is not None,
            "explore_sentence": self.explore_kill,
            "explore_other": self.explore_other,
            "first_found_at": self.first_found_at,
            "explored_runs": self.explored_runs,
            "explored_seconds": round(self.explored_seconds, 1),
        }


def measure_mutant(name: str, budget: int, seed_value: int) -> Sensitivity:
    """One spec mutant of the reference: the catalog, then exploration."""
    from turngate.implementations.mutants.registry import mutant_named
    from turngate.judge.catalog import load_catalog
    from turngate.tools.mutation.score import run_mutant

    mutant = mutant_named(name)
    target = replace(parse_target("reference"), mutant=name)
    catalog = run_mutant(mutant, load_catalog(), jobs=1)
    return _explored(
        name, tuple(mutant.sentences), catalog.killers, target, budget, seed_value, mutant.reading
    )


def measure_bug(name: str, budget: int, seed_value: int) -> Sensitivity:
    """One bug of the second orchestrator: the whole catalog over the command protocol, then exploration."""
    import tempfile

    from turngate.implementations.second_orchestrator.bug_score import judge, run_catalog
    from turngate.implementations.second_orchestrator.bugs import BY_NAME

    bug = BY_NAME[name]
    command = f"cmd:{sys.executable} -m turngate.implementations.second_orchestrator --bug {name}"
    with tempfile.TemporaryDirectory(prefix="turngate-sensitivity-") as folder:
        report = Path(folder) / "run.jsonl"
        run_catalog(name, 1, report)
        catalog = judge(bug, report)
    found = _explored(
        name, tuple(bug.sentences), catalog.killing_cases, parse_target(command), budget, seed_value
    )
    return replace(found, catalog_other=tuple(catalog.other_sentences))


def _explored(
    name: str,
    sentences: tuple[str, ...],
    killers: Sequence[str],
    target: Target,
    budget: int,
    seed_value: int,
    reading: str | None = None,
) -> Sensitivity:
    connector = target.connector()
    capabilities = frozenset(connector.capabilities)
    connector.close()
    report = explore(
        target, capabilities, engines=ENGINES, budget=budget, seed_value=seed_value, reading=reading
    )
    found = report.finding
    kill: str | None = None
    other: str | None = None
    if found is not None:
        cited = [
            str(item["authority"])
            for item in found.result.differences
            if item.get("severity") in ("failed", "non-strict")
        ]
        kill = next((sentence for sentence in cited if sentence in sentences), None)
        other = None if kill else (cited[0] if cited else found.result.outcome)
    return Sensitivity(
        name,
        sentences,
        tuple(killers),
        report.runs,
        report.seconds,
        kill,
        other,
        found.first_found_at if found else None,
    )


def markdown(results: Sequence[Sensitivity], *, budget: int, seed_value: int) -> str:
    catalog = sum(result.catalog_killed for result in results)
    explored = sum(result.explore_kill is not None for result in results)
    either = sum(result.catalog_killed or result.explore_kill is not None for result in results)
    lines = [
        f"Exploration budget {budget} runs per implementation, seed {seed_value}.",
        "",
        f"- catalog alone: **{catalog}/{len(results)}** killed",
        f"- exploration alone: **{explored}/{len(results)}** killed",
        f"- catalog + exploration: **{either}/{len(results)}** killed",
        "",
        "| implementation | catalog | exploration (runs to find) | sentence exploration cites |",
        "| --- | --- | --- | --- |",
    ]
    for result in results:
        if result.catalog_killed:
            cat = "killed"
        elif result.catalog_other:
            cat = f"failed, other sentence (`{result.catalog_other[0]}`)"
        else:
            cat = "**survives**"
        if result.explore_kill is not None:
            exp = f"killed ({result.first_found_at})"
            cite = f"`{result.explore_kill}`"
        elif result.explore_other is not None:
            exp = f"found, other sentence ({result.first_found_at})"
            cite = f"`{result.explore_other}`"
        else:
            exp = "**survives**"
            cite = ""
        lines.append(f"| `{result.name}` | {cat} | {exp} | {cite} |")
    return "\n".join(lines) + "\n"


def _one(job: tuple[str, str, int, int]) -> Sensitivity:
    kind, name, budget, seed_value = job
    return (measure_bug if kind == "bug" else measure_mutant)(name, budget, seed_value)


def main(argv: list[str] | None = None) -> int:
    from turngate.implementations.mutants.registry import MUTANTS

    parser = argparse.ArgumentParser(prog="python -m turngate.tools.sensitivity", description=__doc__)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mutant", action="append", metavar="NAME")
    parser.add_argument("--second-orchestrator", action="store_true", help="its bugs, not the mutants")
    parser.add_argument("--bug", action="append", metavar="NAME", help="with --second-orchestrator")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("sensitivity.json"))
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    if args.second_orchestrator:
        from turngate.implementations.second_orchestrator.bugs import BUGS

        jobs = [("bug", name, args.budget, args.seed) for name in args.bug or [bug.name for bug in BUGS]]
    else:
        jobs = [("mutant", name, args.budget, args.seed) for name in args.mutant or sorted(MUTANTS)]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = []
        for result in pool.map(_one, jobs):
            results.append(result)
            verdict = "killed" if result.explore_kill else "-"
            print(f"{result.name}: catalog {'killed' if result.catalog_killed else '-'}, explore {verdict}",
                  file=sys.stderr, flush=True)  # fmt: skip
    table = markdown(results, budget=args.budget, seed_value=args.seed)
    args.out.write_text(json.dumps([item.to_json() for item in results], indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
