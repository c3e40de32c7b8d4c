"""What a case checks, as plain data: a scenario's expectations, readings and the authority of each check.

Built from a scenario file by the catalog, carried in the JSON Lines report so that a
run can be judged again without the catalog, and read by the verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

# The two authorities that are no spec sentence: a name the spec leaves open, and the reference's own
# behaviour (pinned by the goldens, never a verdict).
CONVENTION: Final = "convention"
REFERENCE: Final = "reference"

# The part of a check that is never the spec's word unless a scenario says so: a warning the
# target adds next to the ones the spec requires is a convention difference.
_IMPLICIT: Final = {"warnings.exact": CONVENTION}


@dataclass(frozen=True, slots=True)
class Checks:
    """What a case checks, as plain data: a scenario's expectations, readings and authorities.

    It travels in the JSONL report so a run can be judged again without the catalog.
    """

    scenario_id: str
    expect: tuple[Mapping[str, Any], ...]  # per step
    actions: tuple[str, ...]
    by: Mapping[str, str]  # scenario-wide: check key -> authority
    step_by: tuple[Mapping[str, str], ...]  # per step overrides
    readings: Mapping[str, Mapping[str, Mapping[str, Any]]]
    default_reading: str | None
    # reading -> step index (as a string) -> check key -> authority, where a reading cites other words
    reading_by: Mapping[str, Mapping[str, Mapping[str, str]]] = dataclasses.field(default_factory=dict)
    # The checks that establish the scenario's GIVEN (the profile it runs under, say): once one
    # breaks, the breaks after it follow from it (the verdict marks them so).
    given: tuple[str, ...] = ()

    def chosen(self, reading: str | None) -> str | None:
        return reading if reading in self.readings else self.default_reading

    def expectations(self, reading: str | None) -> tuple[Mapping[str, Any], ...]:
        chosen = self.chosen(reading)
        overrides = self.readings.get(chosen, {}) if chosen else {}
        return tuple(overrides.get(str(index), expect) for index, expect in enumerate(self.expect))

    def authority(self, step: int, key: str, reading: str | None = None) -> str | None:
        """The authority of a check: a field's own, then its key's; each from the reading's table, the
        step's own, then the scenario's. A field's entry anywhere wins over its key's: a step that
        cites a sentence for its ``pending`` does not make the scenario's literal ``interaction_id``
        (backed by ``reference``) that sentence's value."""
        # warnings.exact is its own check, never backed by the sentence that requires a warning
        names = (key,) if key in _IMPLICIT else (key, key.split(".", 1)[0])
        chosen = self.chosen(reading)
        for_reading = self.reading_by.get(chosen, {}).get(str(step), {}) if chosen else {}
        for name in names:
            for table in (for_reading, self.step_by[step], self.by):
                if name in table:
                    return table[name]
        return _IMPLICIT.get(key)

    def checked_keys(self) -> Iterator[tuple[str | None, int, str]]:
        """Every (reading, step, check key) a reading may check, for the catalog check."""
        for reading in (None, *self.readings):
            for index, key in self._keys(reading):
                yield reading, index, key

    def _keys(self, reading: str | None) -> Iterator[tuple[int, str]]:
        for index, expect in enumerate(self.expectations(reading)):
            for key, value in expect.items():
                yield index, key
                if key in ("pending", "reply") and isinstance(value, Mapping):
                    yield from ((index, f"{key}.{field}") for field in value)
                if key == "patch" and isinstance(value, Mapping):  # the order and the text, each its own
                    if "order" in value:
                        yield index, "patch.order"
                    if "modules" in value:
                        yield index, "patch.modules"
                    if {"contains", "excludes"} & set(value):
                        yield index, "patch.text"
                if key == "argv" and any("resumed" in want for want in value):
                    yield index, "argv.resumed"
                if key == "history" and isinstance(value, list):
                    fields = {field for row in value for field in row}
                    yield from ((index, f"history.{field}") for field in sorted(fields))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Checks:
        return cls(
            data["scenario_id"],
            tuple(data["expect"]),
            tuple(data["actions"]),
            data["by"],
            tuple(data["step_by"]),
            data["readings"],
            data["default_reading"],
            data.get("reading_by", {}),
            tuple(data.get("given", ())),
        )
