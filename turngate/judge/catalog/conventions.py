"""Convention sets: the names one implementation family gives to what the spec leaves unnamed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from turngate.base.data_yaml import load_data

CONVENTIONS_PATH: Final = Path(__file__).with_name("conventions.yaml")
DEFAULT_SET: Final = "turngate"


@dataclass(frozen=True, slots=True)
class ConventionSet:
    name: str
    description: str
    names: Mapping[str, str]  # turngate's name -> this family's

    def translate(self, value: Any) -> Any:
        """An expected value written in turngate's names, in this family's names."""
        match value:
            case str():
                return self.names.get(value, value)
            case Mapping():
                return {self.translate(key): self.translate(item) for key, item in value.items()}
            case list() | tuple():
                return [self.translate(item) for item in value]
        return value


@cache
def convention_sets(path: Path = CONVENTIONS_PATH) -> Mapping[str, ConventionSet]:
    document = load_data(path.read_text(encoding="utf-8"))
    return {
        name: ConventionSet(name, entry.get("description", ""), dict(entry.get("names") or {}))
        for name, entry in document.items()
    }
