"""`turngate list`, `show` and `catalog check`: the catalog itself, nothing run."""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Iterable
from typing import Any

from turngate.base.arguments import UsageProblem
from turngate.base.terminal import visible
from turngate.judge.catalog import Scenario
from turngate.judge.pool import cases
from turngate.judge.selection import add_catalog_arguments, chosen_catalog


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
        # the editions it is written for (empty: the seed's, planned under every edition)
        "editions": list(scenario.editions),
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
        raise UsageProblem(f"show: {args.id!r}: no such scenario{_did_you_mean(args.id, scenarios)}")
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


def _did_you_mean(wanted: str, known: Iterable[str]) -> str:
    """The IDs a user probably meant: those ending with or containing what they typed (the tail of
    a real ID, a word of it), else the closest spellings; otherwise where to look."""
    ids = sorted(known)
    folded = wanted.casefold()
    found = [name for name in ids if name.casefold().endswith(folded)] or [
        name for name in ids if folded in name.casefold()
    ]
    found = found or difflib.get_close_matches(wanted, ids, n=3, cutoff=0.6)
    if not found:
        return " (see `turngate list`)"
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return f"; did you mean {shown}?"


def catalog_check_command(args: argparse.Namespace) -> int:
    from turngate.judge.catalog.sentences import check_quotes

    problems = check_quotes()
    if problems:
        raise UsageProblem(problems[0])
    scenarios = chosen_catalog(args)
    print(f"ok: {len(scenarios)} scenarios, {len(cases(scenarios, None))} cases")
    return 0


def add_list_and_show(commands: argparse._SubParsersAction[Any]) -> None:
    listing = add_catalog_arguments(commands.add_parser("list", help="the scenarios: IDs, levels, tags"))
    listing.add_argument("--json", action="store_true", help="a JSON array, one object per scenario")
    listing.set_defaults(handler=list_command)
    show = add_catalog_arguments(
        commands.add_parser("show", help="one scenario: requirement, script, expectations")
    )
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="the scenario as one JSON object")
    show.set_defaults(handler=show_command)


def add_catalog_check(commands: argparse._SubParsersAction[Any]) -> None:
    catalog = commands.add_parser("catalog", help="the scenario catalog")
    check = add_catalog_arguments(
        catalog.add_subparsers(dest="catalog_command", required=True).add_parser("check")
    )
    check.set_defaults(handler=catalog_check_command)
