"""`turngate editions`: the editions of the spec a run can be judged by, and where each text is from."""

from __future__ import annotations

import argparse
import json
from typing import Any

from turngate.base.terminal import visible
from turngate.judge.catalog import CATALOG_DIR, load_catalog
from turngate.judge.catalog.contracts import contract
from turngate.judge.catalog.editions import Edition, default_edition, editions
from turngate.judge.catalog.sentences import sentences

SHOWN = 10  # sentences listed one per line; more are counted


def edition_summary(edition: Edition) -> dict[str, Any]:
    """What ``editions --json`` gives per edition."""
    seed = default_edition()
    every = sentences().values()
    catalog = load_catalog(CATALOG_DIR)
    read = contract(edition.name)
    return {
        "name": edition.name,
        "default": edition.default,
        "title": edition.title,
        "summary": edition.summary,
        "texts": {
            prefix: {"source": text.source, "commit": text.commit, "md5": text.md5, "shipped": text.shipped}
            for prefix, text in sorted(edition.texts.items())
        },
        # Skill-Runner's machine-readable invariants (v0.4.0 on), and how many of their rules are checked
        "contracts": {
            name: {"source": text.source, "commit": text.commit, "md5": text.md5, "shipped": text.shipped}
            for name, text in sorted(edition.contracts.items())
        },
        "contract_rules": {
            "checked": len(read.checked()) if read is not None else 0,
            "all": len(read.rules) if read is not None else 0,
        },
        "sentences": sum(1 for sentence in every if edition.has(sentence)),
        # the scenarios a run judged by it plans and does not skip as out of edition
        "scenarios": sum(
            1
            for scenario in catalog
            if scenario.planned_under(edition.name)
            and not (edition.missing_source(scenario.source) or edition.missing_premise(scenario.checks()))
        ),
        "catalog_scenarios": len(catalog),
        # the catalog's sentences (written from the default edition) this one does not say
        "not_in_edition": [
            sentence.id for sentence in every if seed.has(sentence) and not edition.has(sentence)
        ],
    }


def editions_command(args: argparse.Namespace) -> int:
    summaries = [edition_summary(edition) for edition in editions().values()]
    if args.json:
        print(json.dumps(summaries, ensure_ascii=False, indent=2))
        return 0
    total = len(sentences())
    for summary in summaries:
        mark = " (default)" if summary["default"] else ""
        print(visible(f"{summary['name']}{mark}: {summary['title']}"))
        for prefix, text in summary["texts"].items():
            print(visible(f"  {prefix}  {text['source']}"))
        for name, text in summary["contracts"].items():
            print(visible(f"  {name}  {text['source']}"))
        if summary["contracts"]:
            rules = summary["contract_rules"]
            print(f"  contract rules: {rules['checked']} of {rules['all']} checked (docs/invariants.md)")
        print(f"  sentences: {summary['sentences']} of the catalog's {total}")
        print(f"  scenarios: {summary['scenarios']} of the catalog's {summary['catalog_scenarios']}")
        lacking = summary["not_in_edition"]
        if len(lacking) > SHOWN:  # a release that rewrote a capability: the list is in --json
            print(
                f"  not in this edition: {len(lacking)} of the seed's sentences (editions --json lists them)"
            )
        for sentence_id in lacking if len(lacking) <= SHOWN else ():
            print(visible(f"  not in this edition: {sentence_id}"))
    return 0


def add_command(commands: argparse._SubParsersAction[Any]) -> None:
    listing = commands.add_parser(
        "editions", help="the editions of the spec a run can be judged by (run --edition NAME)"
    )
    listing.add_argument("--json", action="store_true", help="a JSON array, one object per edition")
    listing.set_defaults(handler=editions_command)
