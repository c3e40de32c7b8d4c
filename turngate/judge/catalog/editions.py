"""Editions of the spec: named sets of spec texts, each text with its source (file and commit).

The catalog was written from one edition, the seed of ``../shared/spec/``; the one implementation
of the spec moved on, and the seed itself mixes two of its commits. An edition names the text of
each spec file it holds (``editions.yaml``: the path at a Skill-Runner commit, its md5, and the copy
shipped with turngate), and a sentence of ``sentences.yaml`` belongs to the editions whose text of
its file holds its quote verbatim. A check citing a sentence the chosen edition does not have is
reported (``informational``, naming the edition), never failed: that edition does not say it.
From v0.4.0 on an edition also names Skill-Runner's machine-readable invariants (``contracts:``),
shipped and checked the same way; ``contracts.py`` reads them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from turngate.base.data_yaml import load_data
from turngate.judge.catalog.checks import Checks
from turngate.judge.catalog.sentences import Sentence, sentences

EDITIONS_PATH: Final = Path(__file__).with_name("editions.yaml")
CATALOG_DIR: Final = Path(__file__).parent
UPSTREAM: Final = "leike0813/Skill-Runner"


@dataclass(frozen=True, slots=True)
class SpecText:
    """One spec file of an edition: where upstream keeps it, at which commit, and the copy shipped."""

    path: str
    commit: str
    md5: str
    shipped: str  # relative to this folder

    @property
    def source(self) -> str:
        return f"{UPSTREAM}@{self.commit[:7]}:{self.path}"

    def text(self) -> str:
        return _read(CATALOG_DIR / self.shipped)

    def lines(self) -> frozenset[str]:
        """Its lines, stripped: what a scenario's quoted lines are matched against."""
        return _stripped_lines(CATALOG_DIR / self.shipped)


@dataclass(frozen=True, slots=True)
class Edition:
    name: str
    title: str
    summary: str
    texts: Mapping[str, SpecText]  # spec file prefix ("000" ... "004") -> its text in this edition
    default: bool = False
    # Skill-Runner's machine-readable invariants from v0.4.0 on (file name -> its source): the rules
    # turngate/judge/invariants.py checks on every case judged by this edition; none before.
    contracts: Mapping[str, SpecText] = dataclasses.field(default_factory=dict)

    def has(self, sentence: Sentence) -> bool:
        """Whether this edition says ``sentence``: its quote is verbatim in this edition's text of its
        file, under its heading (a heading line ends with it)."""
        return _holds(self.name, sentence.id)

    def missing_source(self, source: Mapping[str, str]) -> str | None:
        """Why a scenario written from ``source`` (its spec file, heading and quoted lines) is not a
        scenario of this edition, or None when it is. It is when this edition has the heading and every
        quoted line (as the catalog checks its quotes: a line of the text, or a part of one), or when
        the source is not a spec file (ENGINE_FORMATS.md: no edition words it); a spec file the
        edition has no text of (a later release has no design of the dual gate's change) has none of
        it. Where an edition rewords a scenario's lines, its checks would hold a target to a rule that
        edition does not state, or reverses: the case is not run under it."""
        file = str(source.get("file", ""))
        prefix = file.split("_", 1)[0]
        text = self.texts.get(prefix)
        if text is None:
            if prefix not in default_edition().texts:
                return None  # not a spec file (ENGINE_FORMATS.md): no edition words it
            return f"not in edition {self.name}: it has no {file} (its spec is {self.title})"
        content, lines = text.text(), text.lines()  # read once per process, not once per case
        quoted = [line.strip() for line in str(source.get("quote", "")).strip().splitlines()]
        if str(source.get("heading", "")) in content and all(
            line in lines or line in content for line in quoted
        ):
            return None
        heading = source.get("heading")
        return f"not in edition {self.name}: its {file} words {heading!r} otherwise ({text.source})"

    def missing_premise(self, checks: Checks) -> str | None:
        """Why a scenario's decisions are not this edition's rule, or None: the ``state`` check of a
        step cites a sentence this edition does not have (a tool echo that is no evidence in one
        edition is evidence in another: what the scenario expects next follows from that)."""
        for step in range(len(checks.expectations(None))):
            authority = checks.authority(step, "state")
            sentence = sentences().get(authority or "")
            if sentence is not None and not self.has(sentence):
                return f"not in edition {self.name}: its step {step} decision rests on {sentence.id}"
        return None


class EditionProblem(ValueError):
    """A malformed ``editions.yaml`` or an edition name turngate does not know: one line."""


@cache
def editions(path: Path = EDITIONS_PATH) -> Mapping[str, Edition]:
    document = load_data(path.read_text(encoding="utf-8"))
    found: dict[str, Edition] = {}
    for index, entry in enumerate(document):
        where = f"{path}: [{index}]"
        for field in ("name", "title", "summary"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise EditionProblem(f"{where}: {field}: {entry.get(field)!r}: must be a non-empty string")
        texts = entry.get("texts")
        if not isinstance(texts, dict) or not texts:
            raise EditionProblem(f"{where}: texts: must map spec files to their source")
        contracts = entry.get("contracts", {})
        if not isinstance(contracts, dict):
            raise EditionProblem(
                f"{where}: contracts: {contracts!r}: must map contract files to their source"
            )
        if entry["name"] in found:
            raise EditionProblem(f"{where}: name: {entry['name']!r}: used twice")
        found[entry["name"]] = Edition(
            entry["name"],
            entry["title"],
            " ".join(entry["summary"].split()),
            _sources(f"{where}: texts", texts),
            bool(entry.get("default")),
            _sources(f"{where}: contracts", contracts),
        )
    defaults = [edition.name for edition in found.values() if edition.default]
    if len(defaults) != 1:
        raise EditionProblem(f"{path}: exactly one edition must be the default, not {defaults}")
    return found


def _sources(where: str, listed: Mapping[str, object]) -> dict[str, SpecText]:
    """Each listed file's source (path, commit, md5, shipped copy), or a one-line refusal."""
    fields = ("path", "commit", "md5", "shipped")
    parsed: dict[str, SpecText] = {}
    for name, text in listed.items():
        if not isinstance(text, dict) or any(not isinstance(text.get(field), str) for field in fields):
            raise EditionProblem(f"{where}.{name}: needs {', '.join(fields)}")
        parsed[str(name)] = SpecText(*(text[field] for field in fields))
    return parsed


def default_edition() -> Edition:
    return next(edition for edition in editions().values() if edition.default)


def edition_named(name: str | None) -> Edition:
    """The edition called ``name`` (the default for None)."""
    if name is None:
        return default_edition()
    known = editions()
    if name not in known:
        raise EditionProblem(f"{name!r}: known editions: {', '.join(known)}")
    return known[name]


def text_problems() -> list[str]:
    """Shipped texts and contract files that are missing or are not the upstream file their md5 names."""
    problems = []
    for edition in editions().values():
        for prefix, text in [*edition.texts.items(), *edition.contracts.items()]:
            path = CATALOG_DIR / text.shipped
            if not path.is_file():
                problems.append(f"{edition.name}: {prefix}: {text.shipped}: not shipped")
            elif hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest() != text.md5:
                problems.append(f"{edition.name}: {prefix}: {text.shipped}: is not {text.source} (md5)")
    return problems


def sentence_problems() -> list[str]:
    """Sentences quoted from a later edition (``edition:`` in sentences.yaml) that are not verbatim in
    that edition's text under their heading, or that name an edition turngate does not know."""
    problems = []
    for sentence in sentences().values():
        if sentence.edition is None:
            continue
        if sentence.edition not in editions():
            problems.append(f"{sentence.id}: edition: {sentence.edition!r}: not in editions.yaml")
        elif not editions()[sentence.edition].has(sentence):
            problems.append(f"{sentence.id}: quote: not verbatim in {sentence.edition}'s {sentence.file}")
    return problems


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _stripped_lines(path: Path) -> frozenset[str]:
    return frozenset(line.strip() for line in _read(path).splitlines())


@cache
def _holds(edition_name: str, sentence_id: str) -> bool:
    edition, sentence = editions()[edition_name], sentences()[sentence_id]
    text = edition.texts.get(sentence.spec_file)
    if text is None:
        return False
    content = text.text()
    heading = next((line for line in content.splitlines() if line.endswith(sentence.heading)), None)
    if heading is None:
        return False
    return sentence.quote in content[content.index(heading) :]
