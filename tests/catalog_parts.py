"""The catalog in parts, one per top-level folder (a spec file, or a family of engine hazards).

A test that runs the whole catalog is parametrized by part: pytest-xdist then
spreads the parts over its workers, where one long test could only start on
one worker and, stolen late, run on alone at the end of the suite. Together the
parts are the whole catalog: PARTS is every top-level folder the catalog has.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from turngate.judge.catalog import Scenario, load_catalog

S = TypeVar("S", bound=Scenario)


def part_of(scenario: Scenario) -> str:
    return scenario.id.split("/", 1)[0]


PARTS: tuple[str, ...] = tuple(sorted({part_of(scenario) for scenario in load_catalog()}))


def in_part(scenarios: Iterable[S], part: str) -> tuple[S, ...]:
    return tuple(scenario for scenario in scenarios if part_of(scenario) == part)
