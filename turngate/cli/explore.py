"""``turngate explore``: generated runs on a target, judged by the spec model; a failure saved as a scenario.

Exit status: 0 no run broke a MUST or SHOULD sentence, 1 one did (its smallest run is printed, and
saved with ``--save DIR``), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from turngate.base.arguments import at_least_one, positive_seconds

DEFAULT_BUDGET = 200


def explore_command(args: argparse.Namespace) -> int:
    from turngate.base.arguments import UsageProblem
    from turngate.judge.exploration.explorer import Exploration, explore, save
    from turngate.judge.exploration.plans import ENGINES
    from turngate.judge.selection import resolve_target

    engines = tuple(args.engine or ENGINES)
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        raise UsageProblem(f"--engine: {unknown[0]!r}: not one of {', '.join(ENGINES)}")
    if args.save is not None and args.save.exists() and not args.save.is_dir():
        raise UsageProblem(f"--save: {args.save}: not a folder")
    target = resolve_target(args)
    capabilities = _capabilities(target)
    interactive = sys.stderr.isatty()

    def progress(report: Exploration) -> None:
        if interactive:
            counts = " ".join(f"{name} {count}" for name, count in sorted(report.outcomes.items()))
            print(f"\rexplore: {report.runs} runs ({counts})", end="", file=sys.stderr, flush=True)

    report = explore(
        target,
        capabilities,
        engines=engines,
        budget=args.budget,
        time_budget_sec=args.time_budget,
        seed_value=args.seed,
        shrink=not args.no_shrink,
        reading=args.reading,
        progress=progress,
    )
    if interactive:
        print(file=sys.stderr)
    counts = ", ".join(f"{count} {name}" for name, count in sorted(report.outcomes.items())) or "none"
    shown = target.name + "".join(
        f" --{kind} {name}" for kind, name in (("variant", target.variant), ("mutant", target.mutant)) if name
    )
    print(
        f"explored {report.runs} runs on {shown} in {report.seconds:.1f} s (seed {report.seed};"
        f" engines {', '.join(engines)}): {counts}; {report.declined} drawn runs the model declines"
    )
    found = report.finding
    saved: Path | None = None
    if found is not None:
        how = "as found" if args.no_shrink else "shrunk"
        print(f"\nFOUND after {found.first_found_at} runs, {how}: {len(found.plan.steps)} steps"
              f" on {found.plan.engine}: {found.result.outcome}")  # fmt: skip
        print(found.result.message)
        if args.save is not None:
            saved = save(found, args.save)
            print(
                f"\nsaved as {saved} (run it: turngate run --catalog {args.save} -k {found.document['id']})"
            )
        else:
            print("\nthe run as a scenario (--save DIR writes it):")
            print(_yaml(found.document))
    if args.json is not None:
        payload: dict[str, Any] = report.to_json()
        payload["saved"] = str(saved) if saved else None
        Path(args.json).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if found is not None else 0


def _capabilities(target: Any) -> frozenset[str]:
    """What the target offers, asked of a connector once (a command target says it in its handshake)."""
    connector = target.connector()
    try:
        return frozenset(connector.capabilities)
    finally:
        connector.close()


def _yaml(document: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True).rstrip()


def add_command(commands: argparse._SubParsersAction[Any]) -> None:
    from turngate.judge.selection import add_target_arguments

    explore = add_target_arguments(
        commands.add_parser(
            "explore",
            help="generated runs on a target, judged by the spec model (a failure is shrunk and saved)",
        )
    )
    explore.add_argument(
        "--budget",
        type=at_least_one,
        default=DEFAULT_BUDGET,
        help=f"runs to generate (default {DEFAULT_BUDGET})",
    )
    explore.add_argument(
        "--time-budget", type=positive_seconds, metavar="SEC", help="stop generating after SEC seconds"
    )
    explore.add_argument("--seed", type=int, default=0, help="the seed (same seed, same runs; default 0)")
    explore.add_argument(
        "--no-shrink", action="store_true", help="keep the first failing run as found (a slow target)"
    )
    explore.add_argument(
        "--save", type=Path, metavar="DIR", help="write the shrunk failing run as a scenario"
    )
    explore.add_argument("--json", metavar="FILE", help="the exploration's figures and finding as JSON")
    explore.add_argument(
        "--reading", metavar="NAME", help="judge runs that depend on an ambiguous sentence by this reading"
    )
    explore.add_argument("--variant", metavar="NAME", help="the reference as a conforming variant")
    explore.add_argument("--mutant", metavar="NAME", help="the reference as a spec mutant")
    explore.set_defaults(handler=explore_command)
