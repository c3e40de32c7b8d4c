"""An edition's machine-readable invariants: Skill-Runner's contract files and turngate's reading of them.

From v0.4.0 on, Skill-Runner ships its session statechart, its FCMP mapping and its ordering rules as
YAML (``server/contracts/invariants/``); an edition names those files (``editions.yaml``
``contracts:``) and turngate ships them verbatim. Their rules are names only: ``invariants.yaml``
beside this module says, for every rule of every edition's files, which check of
``turngate/judge/invariants.py`` decides it, or why a client of the server cannot
(``invariants.contract_problems`` checks both against each other). A rule belongs to
an edition only when that edition's file has it, under the id that file gives it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.base.data_yaml import load_data
from turngate.judge.catalog.editions import CATALOG_DIR, UPSTREAM, Edition, SpecText, editions

READINGS_PATH: Final = Path(__file__).with_name("invariants.yaml")
KINDS: Final = ("check", "covered", "read", "not_checkable")
# The sections whose rows one check reads together (a break names the row it can pin).
ROW_SECTIONS: Final = (
    "transitions",
    "fcmp_mapping.state_changed",
    "fcmp_mapping.supplementary_public_events",
    "fcmp_mapping.paired_events",
)


class ContractProblem(ValueError):
    """A contract file or invariants.yaml that turngate cannot read: one line naming file, field, value."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What turngate makes of one rule (an entry of invariants.yaml)."""

    kind: str  # check | covered | read | not_checkable
    check: str | None = None  # the check's name (kind check)
    meaning: str = ""  # the rule in one sentence (kind check)
    upstream: str = ""  # where upstream says what it means (kind check)
    why: str = ""  # not_checkable: why; covered: by which evidence; read: what reads it
    covered_by: str | None = None  # kind covered
    options: Mapping[str, Any] | None = None  # the check's own data (a waiting state and its event)


@dataclass(frozen=True, slots=True)
class Row:
    """A row of a section one check reads whole: a transition, a mapped state change, a pair."""

    id: str
    source: str
    target: str
    trigger: str  # a transition's event, a mapping's trigger, a pair's trigger
    event_type: str = ""  # a pair's event

    @property
    def name(self) -> str:
        change = f"{self.source} -> {self.target} on {self.trigger}"
        return f"{self.event_type} pairs {change}" if self.event_type else change


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of one contract file of an edition, with turngate's reading of it."""

    file: str  # session_fcmp_invariants.yaml, ...
    id: str  # its id in this edition's file (OR-04, PR-03), or its section (transitions, repair_loop)
    name: str  # an ordering rule's name, a precedence's `before -> after`, else the id
    key: str  # its key in invariants.yaml
    reading: Reading
    rows: tuple[Row, ...] = ()  # a section read whole
    before: str = ""  # a precedence rule's, or a gating rule's requirement
    after: str = ""  # a precedence rule's, or a gating rule's gated event
    row_of: str = ""  # a row of a list of rules (ordering_rules, precedence_rules): that list

    @property
    def authority(self) -> str:
        return f"{self.file}#{self.id}"

    def quote(self, row: Row | None = None) -> str:
        """The rule's id, name and meaning: what a difference quotes (a row's break names the row)."""
        if row is not None:
            return f"{row.id} {row.name}: {self.reading.meaning}"
        named = f"{self.id} {self.name}" if self.name != self.id else self.id
        return f"{named}: {self.reading.meaning}"


@dataclass(frozen=True, slots=True)
class Contract:
    """An edition's contract files, read: the states, the rows, and every rule with its reading."""

    edition: str
    sources: Mapping[str, SpecText]
    initial_state: str
    terminal_states: frozenset[str]
    rules: tuple[Rule, ...]
    removed_lifecycle: frozenset[str]  # lifecycle_normalization_rules.remove

    def source(self, file: str) -> str:
        text = self.sources[file]
        return f"{UPSTREAM}@{text.commit[:7]}:{text.path}"

    def checked(self) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.reading.kind == "check")


@cache
def readings(path: Path = READINGS_PATH) -> Mapping[str, Mapping[str, Reading]]:
    """invariants.yaml: contract file -> rule key -> turngate's reading of it."""
    document = _load(str(path), path.read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise ContractProblem(f"{path}: must map contract files to their rules")
    found: dict[str, dict[str, Reading]] = {}
    for file, entries in document.items():
        found[file] = dict(_readings(f"{path}: {file}", entries))
    return found


def _readings(where: str, entries: Any) -> Iterator[tuple[str, Reading]]:
    if not isinstance(entries, dict):
        raise ContractProblem(f"{where}: {entries!r}: must map rule keys to readings")
    for key, entry in entries.items():
        if isinstance(entry, dict) and not any(kind in entry for kind in KINDS):
            yield from _readings(f"{where}.{key}", entry)  # a section of rules
            continue
        yield str(key), _reading(f"{where}.{key}", entry)


def _reading(where: str, entry: Any) -> Reading:
    kinds = [kind for kind in KINDS if isinstance(entry, dict) and kind in entry]
    if len(kinds) != 1:
        raise ContractProblem(f"{where}: {entry!r}: needs exactly one of {', '.join(KINDS)}")
    kind = kinds[0]
    value = entry[kind]
    if not isinstance(value, str) or not value.strip():
        raise ContractProblem(f"{where}.{kind}: {value!r}: must be a non-empty string")
    if kind == "check":
        for field in ("meaning", "upstream"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise ContractProblem(f"{where}.{field}: {entry.get(field)!r}: must be a non-empty string")
        options = {name: item for name, item in entry.items() if name not in ("check", "meaning", "upstream")}
        return Reading(
            "check", value, _words(entry["meaning"]), _words(entry["upstream"]), options=options or None
        )
    if kind == "covered":
        return Reading("covered", why=_words(str(entry.get("why", ""))), covered_by=value)
    return Reading(kind, why=_words(value))


def _words(text: str) -> str:
    return " ".join(text.split())


@cache
def contract(edition_name: str) -> Contract | None:
    """The edition's contract files, read; None for an edition without them (the seed, 7d8914d)."""
    edition = editions()[edition_name]
    if not edition.contracts:
        return None
    return _contract(edition)


def _contract(edition: Edition) -> Contract:
    documents = {file: _document(text) for file, text in edition.contracts.items()}
    session = documents.get("session_fcmp_invariants.yaml")
    if session is None:
        raise ContractProblem(f"{edition.name}: contracts: session_fcmp_invariants.yaml: missing")
    where = f"{edition.contracts['session_fcmp_invariants.yaml'].shipped}: canonical"
    canonical = _mapping(where, session.get("canonical"))
    initial = _text(f"{where}.initial_state", canonical.get("initial_state"))
    terminals = frozenset(
        _text(f"{where}.terminal_states[{index}]", state)
        for index, state in enumerate(_list(f"{where}.terminal_states", canonical.get("terminal_states")))
    )
    rules = tuple(
        rule
        for file, document in documents.items()
        for rule in _rules(file, edition.contracts[file].shipped, document)
    )
    ordering = documents.get("runtime_event_ordering_contract.yaml", {})
    normalization = ordering.get("lifecycle_normalization_rules") or {}
    removed = normalization.get("remove", []) if isinstance(normalization, dict) else []
    where = f"{edition.name}: runtime_event_ordering_contract.yaml: lifecycle_normalization_rules.remove"
    return Contract(
        edition.name,
        edition.contracts,
        initial,
        terminals,
        rules,
        frozenset(_text(f"{where}[{index}]", item) for index, item in enumerate(_list(where, removed))),
    )


def _document(text: SpecText) -> Mapping[str, Any]:
    document = _load(text.shipped, (CATALOG_DIR / text.shipped).read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise ContractProblem(f"{text.shipped}: {type(document).__name__}: must be a mapping")
    return document


def _rules(file: str, shipped: str, document: Mapping[str, Any]) -> Iterator[Rule]:
    """Every rule of one contract file: a row of a list of rows, each section read whole, every other
    top-level section; each with its reading (a ContractProblem when invariants.yaml has none)."""
    known = readings().get(file)
    if known is None:
        raise ContractProblem(f"{READINGS_PATH.name}: {file}: no readings for this contract file")
    for section, value in _sections(document):
        where = f"{shipped}: {section}"
        if section in ROW_SECTIONS or not _is_rows(value):
            reading = _known(known, section, f"{where}: no reading in {READINGS_PATH.name}")
            rows = (
                [_row(f"{where}[{index}]", item) for index, item in enumerate(value)]
                if _is_rows(value)
                else []
            )
            yield Rule(file, section, section, section, reading, tuple(rows))
            continue
        for index, row in enumerate(value):
            rule_id = _text(f"{where}[{index}].id", row.get("id"))
            name = _row_name(row)
            reading = _known(known, name, f"{where}[{index}]: {name!r}: no reading in {READINGS_PATH.name}")
            before, after = _order(row)
            yield Rule(file, rule_id, name, name, reading, before=before, after=after, row_of=section)


def _order(row: Mapping[str, Any]) -> tuple[str, str]:
    """What a precedence rule orders (before, after); a gating rule's one requirement and the event it
    gates (an event published only once what it requires was). Else nothing."""
    if "before" in row and "after" in row:
        return str(row["before"]), str(row["after"])
    required = row.get("requires")
    if isinstance(required, list) and len(required) == 1 and isinstance(row.get("event_kind"), str):
        return str(required[0]), str(row["event_kind"])
    return "", ""


def _sections(document: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Top-level sections; a mapping of row lists (fcmp_mapping) is read one level down."""
    for name, value in document.items():
        if isinstance(value, dict) and value and all(_is_rows(item) for item in value.values()):
            for sub, rows in value.items():
                yield f"{name}.{sub}", rows
        else:
            yield str(name), value


def _load(where: str, text: str) -> Any:
    try:
        return load_data(text)
    except yaml.YAMLError as error:
        raise ContractProblem(f"{where}: not YAML: {' '.join(str(error).split())}") from None


def _is_rows(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(row, dict) and "id" in row for row in value)
    )


def _row_name(row: Mapping[str, Any]) -> str:
    """An ordering rule's name; a precedence's `before -> after` (ids moved: PR-05 changed meaning at
    abe8626); any other row's id."""
    if isinstance(row.get("rule"), str):
        return str(row["rule"])
    if "before" in row and "after" in row:
        return f"{row['before']} -> {row['after']}"
    return str(row["id"])


def _row(where: str, item: Any) -> Row:
    row = _mapping(where, item)
    rule_id = _text(f"{where}.id", row.get("id"))
    if "required_state_change" in row:  # a pair: its event and the change it requires
        change = _mapping(f"{where}.required_state_change", row["required_state_change"])
        return Row(
            rule_id,
            _text(f"{where}.required_state_change.source", change.get("source")),
            _text(f"{where}.required_state_change.target", change.get("target")),
            _text(f"{where}.required_state_change.trigger", change.get("trigger")),
            _text(f"{where}.event_type", row.get("event_type")),
        )
    if "event_type" in row:  # a supplementary event: no state change of its own
        return Row(rule_id, "", "", "", _text(f"{where}.event_type", row.get("event_type")))
    trigger = row.get("event") if "event" in row else row.get("trigger")
    field = "event" if "event" in row else "trigger"
    return Row(
        rule_id,
        _text(f"{where}.source", row.get("source")),
        _text(f"{where}.target", row.get("target")),
        _text(f"{where}.{field}", trigger),
    )


def _known(known: Mapping[str, Reading], key: str, problem: str) -> Reading:
    if key not in known:
        raise ContractProblem(problem)
    return known[key]


def _mapping(where: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ContractProblem(f"{where}: {value!r}: must be a mapping")
    return value


def _list(where: str, value: Any) -> Sequence[Any]:
    if not isinstance(value, list):
        raise ContractProblem(f"{where}: {value!r}: must be a list")
    return value


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContractProblem(f"{where}: {value!r}: must be a non-empty string")
    return value


def rules_table() -> str:
    """Every rule of every edition's contract files as a Markdown table: its id in each edition, and
    what turngate makes of it (docs/invariants.md holds this table; a test keeps them equal)."""
    read = {name: found for name in editions() if (found := contract(name)) is not None}
    names = {name: name.removeprefix("skill-runner-") for name in read}
    seen: dict[tuple[str, str], Rule] = {}
    ids: dict[tuple[str, str], dict[str, str]] = {}
    for name, found in read.items():
        for rule in found.rules:
            key = (rule.file, rule.key)
            seen.setdefault(key, rule)
            ids.setdefault(key, {})[name] = _ids(rule)
    head = ["file", "rule", *names.values(), "turngate"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for key, rule in seen.items():
        shown = rule.name if rule.name != rule.id else rule.key
        cells = [key[0].removesuffix(".yaml"), f"`{shown}`"]
        cells += [ids[key].get(name, "-") for name in names]
        cells.append(_said(rule.reading))
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _ids(rule: Rule) -> str:
    if rule.rows:
        return f"{rule.rows[0].id}..{rule.rows[-1].id}" if len(rule.rows) > 1 else rule.rows[0].id
    return rule.id if rule.row_of else "yes"  # a section without an id is there or not


def _said(reading: Reading) -> str:
    match reading.kind:
        case "check":
            return f"checked ({reading.check}): {reading.meaning}"
        case "covered":
            return f"checked with `{reading.covered_by}`: {reading.why}"
        case "read":
            return f"data: {reading.why}"
        case _:
            return f"not checkable: {reading.why}"
