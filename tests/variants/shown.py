"""The conforming variants that only rename and hide what the reference shows: one run of the
reference per scenario, shown through each of them (`variant_observation`, their connector's own
function) and judged, is the run a target built as that variant gives.

The golden test judges them on its own runs (tests/conformance/test_golden.py): one engine per
scenario, the spec's four in turn, so that the variants meet every engine across the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from turngate.implementations.conforming_variants import REFERENCE, VARIANTS, Variant, variant_observation
from turngate.judge.catalog import Scenario
from turngate.protocol.connector import Observation

CONFORMING = sorted(name for name in VARIANTS if name != REFERENCE.name)
# The variant whose numbering changes what a client sends back (a reply names the shown id): it runs
# live, through the connector that maps ids both ways (tests/variants/test_variants.py).
LIVE = ("ids-from-101",)
SHOWN_THROUGH = tuple(name for name in CONFORMING if name not in LIVE)
SPEC_ENGINES = ("codex", "gemini", "iflow", "opencode")
# Outcomes no case of a conforming variant may have (the live variant's runs, tests/variants).
WRONG = ("failed", "non-strict", "errored", "unreached")


def one_engine_each(catalog: Iterable[Scenario]) -> list[tuple[Scenario, str]]:
    """Every scenario once, on one of its engines: the spec's four in turn (the engine it has, for a
    scenario of one engine), so that the variants meet every engine across the catalog."""
    planned = []
    for index, scenario in enumerate(catalog):
        mine = [engine for engine in SPEC_ENGINES if engine in scenario.engines] or list(scenario.engines)
        planned.append((scenario, mine[index % len(mine)]))
    return planned


_SHOWN = (
    "state",
    "error_code",
    "warnings",
    "reason_code",
    "data",
    "pending",
    "attempts",
    "history",
    "events",
)


def shown_step(
    variant: Variant, step: Mapping[str, Any], engine: str, gemini_format: str | None
) -> dict[str, Any]:
    """An observed step (``decision_record.observed_step``) as a target built as ``variant`` shows it."""
    seen = step["observation"]
    observation = Observation(
        **{name: tuple(seen[name]) if isinstance(seen[name], list) else seen[name] for name in _SHOWN},
        extra={"decisions": seen.get("decisions", []), "unobservable": seen.get("unobservable", [])},
    )
    shown = variant_observation(variant, observation, engine=engine, gemini_format=gemini_format)
    observed = {**seen, **json.loads(json.dumps({name: getattr(shown, name) for name in _SHOWN}))}
    observed["decisions"] = json.loads(json.dumps(shown.extra["decisions"]))
    if shown.extra["unobservable"]:
        observed["unobservable"] = list(shown.extra["unobservable"])
    reply = step["reply"] and {**step["reply"], "code": variant.code(step["reply"]["code"])}
    return {**step, "observation": observed, "reply": reply}
