"""The spec's normative sentences: what a check may cite as its authority.

``sentences.yaml`` beside this module lists every MUST, SHOULD and MAY sentence
of the five spec files, each with a stable ID, its level and its verbatim
quote, so a report can quote the words a case broke without the spec at hand.
``check_quotes`` verifies the quotes against the spec files (shipped with the package).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from turngate.base.data_yaml import load_data
from turngate.judge.catalog.spec import SPEC_DIR

SENTENCES_PATH: Final = Path(__file__).with_name("sentences.yaml")
LEVELS: Final = ("MUST", "SHOULD", "MAY")


@dataclass(frozen=True, slots=True)
class Sentence:
    id: str
    file: str
    heading: str
    level: str  # MUST | SHOULD | MAY
    quote: str
    observable: str | None = None  # None: a black-box check exists; else why none can
    edition: str | None = None  # quoted from this edition's text (editions.yaml); None: from the seed

    @property
    def spec_file(self) -> str:
        """The spec file's prefix (000 design, 001 lifecycle, 002 proposal, 003 protocol, 004 policy)."""
        return self.file.split("_", 1)[0]


class SentenceError(ValueError):
    pass


@cache
def sentences(path: Path = SENTENCES_PATH) -> Mapping[str, Sentence]:
    """Every sentence by ID; a malformed registry is one error naming the entry and the field."""
    document = load_data(path.read_text(encoding="utf-8"))
    found: dict[str, Sentence] = {}
    for index, entry in enumerate(document):
        where = f"{path}: [{index}]"
        for field in ("id", "file", "heading", "level", "quote"):
            if not isinstance(entry.get(field), str) or not entry[field]:
                raise SentenceError(f"{where}: {field}: {entry.get(field)!r}: must be a non-empty string")
        if entry["level"] not in LEVELS:
            raise SentenceError(f"{where}: level: {entry['level']!r}: must be one of {', '.join(LEVELS)}")
        if entry["id"] in found:
            raise SentenceError(f"{where}: id: {entry['id']!r}: used twice")
        observable = entry.get("observable", True)
        found[entry["id"]] = Sentence(
            entry["id"],
            entry["file"],
            entry["heading"],
            entry["level"],
            entry["quote"],
            None if observable is True else str(observable),
            entry.get("edition"),
        )
    return found


def check_quotes(spec_dir: Path = SPEC_DIR) -> list[str]:
    """Problems: quotes that are not verbatim in their spec file, or no spec to check them against."""
    if not spec_dir.is_dir():
        return [f"{spec_dir}: no spec folder: the quotes of {SENTENCES_PATH.name} cannot be checked"]
    texts: dict[str, str] = {}
    problems = []
    for sentence in sentences().values():
        if sentence.edition is not None:
            continue  # quoted from a later edition's text: editions.sentence_problems checks it
        if sentence.file not in texts:
            path = spec_dir / sentence.file
            if not path.is_file():
                where = f"{SENTENCES_PATH}: {sentence.id}: file: {sentence.file!r}"
                problems.append(f"{where}: not in {spec_dir}")
            texts[sentence.file] = path.read_text(encoding="utf-8") if path.is_file() else ""
        if texts[sentence.file] and sentence.quote not in texts[sentence.file]:
            problems.append(f"{SENTENCES_PATH}: {sentence.id}: quote: not verbatim in {sentence.file}")
    return problems
