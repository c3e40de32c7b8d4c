"""What a `turngate serve` serves: the reference, a conforming variant of it, a spec mutant of it.

Said once on start (after the listening line) and in ``GET /v1/health``, so nobody points a
tool at a mutant believing it is the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from turngate.implementations.conforming_variants import REFERENCE, Variant
from turngate.implementations.mutants.model import Mutant
from turngate.implementations.reference.gate import READING_BODY


@dataclass(frozen=True, slots=True)
class Served:
    variant: Variant = REFERENCE
    mutant: Mutant | None = None
    reading: str = READING_BODY  # the reading of Decision 4.1 (soft completion) the gate applies

    def description(self) -> str:
        """One sentence: ``the reference with spec mutant X: breaks A, B (what it does); ...``."""
        if self.variant is REFERENCE and self.mutant is None and self.reading == READING_BODY:
            return "the reference orchestrator"
        text = "the reference"
        if self.variant is not REFERENCE:
            text += f" as conforming variant {self.variant.name} ({self.variant.summary})"
        if self.reading != READING_BODY:
            text += f", under the soft-completion reading {self.reading}"
        if self.mutant is not None:
            text += "," if text != "the reference" else ""
            text += (
                f" with spec mutant {self.mutant.name}: breaks {', '.join(self.mutant.sentences)}"
                f" ({self.mutant.summary}); it does not conform to the spec, on purpose"
            )
        return text

    def to_json(self) -> Mapping[str, Any]:
        mutant = self.mutant
        return {
            "description": self.description(),
            "variant": None
            if self.variant is REFERENCE
            else {"name": self.variant.name, "summary": self.variant.summary},
            "mutant": None
            if mutant is None
            else {"name": mutant.name, "summary": mutant.summary, "breaks": list(mutant.sentences)},
            "reading": self.reading,
        }
