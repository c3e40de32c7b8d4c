"""Known differences (a baseline): what a target is known to break, so that CI fails only on a change.

A server with known departures from the spec gets exit 1 from every ``turngate run``. A baseline
file lists them (``turngate baseline write run.jsonl -o known.yaml``), each with a reason its user
fills in, and ``turngate run --baseline known.yaml`` fails only when a run departs from it: a
failing difference the file does not list (*new*), or one it lists that is gone from a case that
ran (*fixed*: the file must drop it, else the difference could come back unnoticed). An entry whose
case did not run (``-k``, ``--engine``), or ran without showing its check (skipped, errored, the
check unverified), says nothing either way.

An entry is matched by (case, engine, check, sentence): one check failing at two steps is one
entry, and a case failing for a known difference and a new one fails as new. What a baseline lists
is exactly what makes a run exit 1 (``verdict.fails_run``): the MUST differences (and an enforced
convention's) of failed cases, errored cases by their outcome, and partial cases by theirs (unless the
user accepts partial with ``--allow-partial``); a SHOULD miss never fails a run, so it is never listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import yaml

from turngate import __version__
from turngate.base.optionsfile import read_mapping
from turngate.judge.verdict import fails_run

FORMAT_VERSION: Final = 1
SCHEMA_PATH: Final = Path(__file__).with_name("baseline.schema.json")
CONVENTION: Final = "convention"
# Cases that did not run their checks: a known difference of theirs is neither there nor gone.
NOT_RUN: Final = frozenset({"skipped", "unreached"})
# Never known: a target that stops answering leaves every case after it unreached, in whatever order
# the cases happened to run; that is the run's condition, not a case's difference.
NEVER_KNOWN: Final = frozenset({"unreached"})
Status = Literal["known", "new", "fixed"]


class BaselineProblem(ValueError):
    """A baseline file that cannot be used: one line naming the file, the field and the value."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One known difference: a check of a case on an engine, and the sentence behind it; or a case
    known by its outcome (an errored case has no differences to list)."""

    case: str
    engine: str
    check: str | None = None
    sentence: str | None = None
    outcome: str | None = None
    reason: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What a run's difference is matched by; an outcome stands where a check would."""
        if self.outcome is not None:
            return (self.case, self.engine, f"({self.outcome})", "")
        return (self.case, self.engine, self.check or "", self.sentence or "")

    @property
    def what(self) -> str:
        return f"outcome {self.outcome}" if self.outcome is not None else f"{self.check} ({self.sentence})"

    def __str__(self) -> str:
        return f"{self.case} [{self.engine}]: {self.what}"

    def to_json(self) -> dict[str, str]:
        shown = {"case": self.case, "engine": self.engine}
        if self.outcome is not None:
            shown["outcome"] = self.outcome
        else:
            shown.update(check=self.check or "", sentence=self.sentence or "")
        return {**shown, "reason": self.reason} if self.reason else shown


@dataclass(frozen=True, slots=True)
class Baseline:
    """A baseline file's entries, in its order; ``source`` names it in messages."""

    source: str
    entries: tuple[Entry, ...] = ()
    _by_case: Mapping[tuple[str, str], tuple[Entry, ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        index: dict[tuple[str, str], list[Entry]] = {}
        for entry in self.entries:
            index.setdefault((entry.case, entry.engine), []).append(entry)
        object.__setattr__(self, "_by_case", {key: tuple(found) for key, found in index.items()})

    def of(self, case: str, engine: str) -> tuple[Entry, ...]:
        return self._by_case.get((case, engine), ())


class Result(Protocol):
    """What the baseline reads of a case's result (``case_result.CaseResult``)."""

    @property
    def scenario_id(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def differences(self) -> Sequence[Mapping[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Ran:
    """One case of a run, as the baseline sees it: which, its outcome and its differences."""

    case: str
    engine: str
    outcome: str
    differences: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def of(cls, result: Result | Mapping[str, Any]) -> Ran:
        """From a ``CaseResult`` or a JSON Lines report's case line."""
        if isinstance(result, Mapping):
            differences = result.get("differences") or ()
            return cls(
                str(result["scenario_id"]), str(result["engine"]), str(result["outcome"]), tuple(differences)
            )
        return cls(result.scenario_id, result.engine, result.outcome, tuple(result.differences))


def failing(ran: Ran, *, allow_partial: bool = False) -> tuple[Entry, ...]:
    """What makes this case fail a run, as entries: the differences that failed it (a MUST sentence, or
    an enforced convention), one per (check, sentence); a case that erred, was unreached or is partial
    (MUST checks it could not show: the same ones each run, as long as the target shows the same), its
    outcome."""
    if not fails_run(ran.outcome, allow_partial=allow_partial):
        return ()
    found = {
        (str(item.get("key")), str(item.get("authority"))): None
        for item in ran.differences
        if ran.outcome == "failed" and item.get("severity") == "failed"
    }
    if not found:  # errored, unreached, partial; or a failed case whose report kept no difference
        return (Entry(ran.case, ran.engine, outcome=ran.outcome),)
    return tuple(
        sorted((Entry(ran.case, ran.engine, check, sentence) for check, sentence in found), key=_order)
    )


Fate = Literal["known", "fixed", "unverified"]


def fate(entry: Entry, ran: Ran) -> Fate:
    """A known entry of a case that ran: still there, gone, or not shown by this run."""
    if ran.outcome in NOT_RUN:
        return "unverified"
    if entry.outcome is not None:
        if ran.outcome == entry.outcome:
            return "known"
        return "unverified" if ran.outcome == "errored" else "fixed"  # an error shows no difference
    if ran.outcome == "errored":
        return "unverified"
    severities = {
        item.get("severity")
        for item in ran.differences
        if item.get("key") == entry.check and item.get("authority") == entry.sentence
    }
    # Still seen in any form (a convention not enforced this time, a reading that holds) is not gone.
    if severities - {"unverified"}:
        return "known"
    return "unverified" if severities else "fixed"


@dataclass(frozen=True, slots=True)
class CaseCheck:
    """One case of a run against the baseline."""

    case: str
    engine: str
    outcome: str
    fails: bool = False  # the case fails a run by itself (verdict.fails_run), whatever the baseline says
    known: tuple[Entry, ...] = ()
    new: tuple[Entry, ...] = ()
    fixed: tuple[Entry, ...] = ()
    unverified: tuple[Entry, ...] = ()

    @property
    def status(self) -> Status | None:
        """new: it fails for something the baseline does not list; fixed: something listed is gone;
        known: it fails, for listed differences only; None: the baseline has nothing to say."""
        if self.new:
            return "new"
        if self.fixed:
            return "fixed"
        return "known" if self.fails else None

    @property
    def note(self) -> str:
        """One line for a report (JUnit, HTML, pytest), the entries named."""
        match self.status:
            case "new":
                gone = f"; fixed: remove it from the baseline: {_whats(self.fixed)}" if self.fixed else ""
                return f"new, not in the baseline: {_whats(self.new)}{gone}"
            case "fixed":
                return f"fixed: remove it from the baseline: {_whats(self.fixed)}"
            case "known":
                return f"known difference (baseline): {_whats(self.known, reasons=True)}"
        return ""


def _whats(entries: Iterable[Entry], *, reasons: bool = False) -> str:
    return "; ".join(f"{e.what}: {e.reason}" if reasons and e.reason else e.what for e in entries)


def check_case(baseline: Baseline, ran: Ran, *, allow_partial: bool = False) -> CaseCheck:
    listed = baseline.of(ran.case, ran.engine)
    keys = {entry.key for entry in listed}
    fates: dict[Fate, list[Entry]] = {"known": [], "fixed": [], "unverified": []}
    for entry in listed:
        fates[fate(entry, ran)].append(entry)
    return CaseCheck(
        ran.case,
        ran.engine,
        ran.outcome,
        fails=fails_run(ran.outcome, allow_partial=allow_partial),
        known=tuple(fates["known"]),
        new=tuple(entry for entry in failing(ran, allow_partial=allow_partial) if entry.key not in keys),
        fixed=tuple(fates["fixed"]),
        unverified=tuple(fates["unverified"]),
    )


@dataclass(frozen=True, slots=True)
class Comparison:
    """A run against a baseline: each case, and the entries of cases it did not run."""

    baseline: Baseline
    cases: tuple[CaseCheck, ...]
    not_run: tuple[Entry, ...]

    @property
    def known(self) -> tuple[Entry, ...]:
        return tuple(entry for case in self.cases for entry in case.known)

    @property
    def new(self) -> tuple[Entry, ...]:
        return tuple(sorted((entry for case in self.cases for entry in case.new), key=_order))

    @property
    def fixed(self) -> tuple[Entry, ...]:
        return tuple(sorted((entry for case in self.cases for entry in case.fixed), key=_order))

    @property
    def unverified(self) -> tuple[Entry, ...]:
        return tuple(entry for case in self.cases for entry in case.unverified)

    @property
    def fails(self) -> bool:
        """Exit 1: a new failing difference, or a known one gone (the file must say so too)."""
        return bool(self.new or self.fixed)

    def updated(self) -> tuple[Entry, ...]:
        """The baseline this run makes: fixed entries dropped, new ones added (their reason empty),
        the rest kept as they were; never an unreached case."""
        kept = [*self.known, *self.unverified, *self.not_run]
        added = [entry for entry in self.new if entry.outcome not in NEVER_KNOWN]
        return tuple(sorted(kept + added, key=_order))

    def summary(self) -> dict[str, Any]:
        """The JSON Lines footer's ``baseline``: counts, and the entries that fail the run."""
        return {
            "file": self.baseline.source,
            "known": len(self.known),
            "new": [entry.to_json() for entry in self.new],
            "fixed": [entry.to_json() for entry in self.fixed],
            "unverified": len(self.unverified),
            "not_run": len(self.not_run),
        }

    def lines(self) -> list[tuple[str, str]]:
        """What a person reads after the summary table, each line with its kind (head, new, fixed,
        note) for the caller's colours."""
        known_cases = sum(1 for case in self.cases if case.status == "known")
        said = [
            (
                "head",
                f"baseline {self.baseline.source}: {len(self.known)} known difference(s) still there"
                f" ({known_cases} failing case(s) let through), {len(self.new)} new,"
                f" {len(self.fixed)} fixed{'' if self.fails else ': no change from the baseline'}",
            )
        ]
        if self.new:
            said.append(("new", "new, not in the baseline (each fails the run):"))
            said += [("new", f"  {entry}") for entry in self.new]
        if self.fixed:
            said.append(("fixed", "fixed: remove it from the baseline (each fails the run until then):"))
            said += [("fixed", f"  {entry}") for entry in self.fixed]
        if self.unverified:
            said.append(
                (
                    "note",
                    f"not shown by this run: {_entries(self.unverified)} (the case was skipped, errored, or"
                    " could not show the check): neither fixed nor new",
                )
            )
        if self.not_run:
            said.append(
                (
                    "note",
                    f"not run: {_entries(self.not_run)} of cases this run left out (-k, --engine, or a"
                    " scenario no longer in the catalog): neither fixed nor new",
                )
            )
        return said


def compare(baseline: Baseline, ran: Iterable[Ran], *, allow_partial: bool = False) -> Comparison:
    checked = tuple(check_case(baseline, case, allow_partial=allow_partial) for case in ran)
    seen = {(case.case, case.engine) for case in checked}
    not_run = tuple(entry for entry in baseline.entries if (entry.case, entry.engine) not in seen)
    return Comparison(baseline, checked, not_run)


def _entries(entries: Sequence[Entry]) -> str:
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"


def _order(entry: Entry) -> tuple[str, str, str, str]:
    return entry.key


# The file --------------------------------------------------------------------------------------------


@cache
def _schema() -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def read_baseline(path: Path) -> Baseline:
    """A baseline file, checked; any problem is one ``BaselineProblem`` naming the file, field and value."""
    import jsonschema

    from turngate.judge.catalog.sentences import sentences

    document = read_mapping(path, BaselineProblem)
    errors = jsonschema.Draft202012Validator(_schema()).iter_errors(document)
    first = min(errors, key=lambda error: [str(part) for part in error.absolute_path], default=None)
    if first is not None:
        raise BaselineProblem(f"{path}: {_said(first)}")
    entries: list[Entry] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    known = sentences()
    for index, raw in enumerate(document["known"]):
        where = f"{path}: known[{index}]"
        _check_shape(where, raw)
        sentence = raw.get("sentence")
        if sentence is not None and sentence != CONVENTION and sentence not in known:
            raise BaselineProblem(
                f"{where}.sentence: {sentence!r}: no such sentence"
                f" (turngate/judge/catalog/sentences.yaml), nor {CONVENTION!r}"
            )
        entry = Entry(
            raw["case"],
            raw["engine"],
            raw.get("check"),
            sentence,
            raw.get("outcome"),
            raw.get("reason") or "",
        )
        if entry.key in seen:
            raise BaselineProblem(f"{where}: {entry}: listed twice (first as known[{seen[entry.key]}])")
        seen[entry.key] = index
        entries.append(entry)
    return Baseline(str(path), tuple(entries))


def _check_shape(where: str, raw: Mapping[str, Any]) -> None:
    """An entry is a difference (check and sentence) or a case known by its outcome, never both."""
    match ("check" in raw, "sentence" in raw, "outcome" in raw):
        case (True, True, False) | (False, False, True):
            return
        case (_, _, True):
            raise BaselineProblem(
                f"{where}.outcome: {raw['outcome']!r}: with a check or sentence: an entry is a difference"
                " (check and sentence) or an outcome, not both"
            )
        case (True, False, False):
            raise BaselineProblem(f"{where}.sentence: missing (the sentence behind check {raw['check']!r})")
        case (False, True, False):
            raise BaselineProblem(f"{where}.check: missing (the check sentence {raw['sentence']!r} backs)")
    raise BaselineProblem(f"{where}: needs check and sentence (a difference), or outcome (errored)")


def _said(error: Any) -> str:
    """A schema error as ``field: value: what is wrong``."""
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    where = where.lstrip(".") or "(file)"
    value, rule = error.instance, error.validator_value
    match error.validator:
        case "required":
            missing = next(name for name in rule if name not in value)
            return f"{where}.{missing}: missing" if where != "(file)" else f"{missing}: missing"
        case "additionalProperties":
            allowed = error.schema.get("properties", {})
            extra = next(name for name in value if name not in allowed)
            field_name = f"{where}.{extra}" if where != "(file)" else str(extra)
            return f"{field_name}: unknown field (known: {', '.join(allowed)})"
        case "enum":
            return f"{where}: {value!r}: must be one of {', '.join(map(str, rule))}"
        case "const":
            return f"{where}: {value!r}: must be {rule!r}"
        case "type":
            wanted = " or ".join(rule) if isinstance(rule, list) else rule
            return f"{where}: {_short(value)}: must be of type {wanted}"
        case "minLength":
            return f"{where}: {value!r}: must not be empty"
    return f"{where}: {_short(value)}: {error.message.splitlines()[0]}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def render_baseline(entries: Iterable[Entry], *, source: str, header: Mapping[str, Any]) -> str:
    """The YAML a person reviews and commits: a header saying where it came from, then the entries in
    a stable order (a regenerated file diffs by what changed), each ``reason`` for them to fill in."""
    ordered = sorted(entries, key=_order)
    run = (
        f"turngate {header.get('turngate_version', '?')} (catalog {header.get('catalog_version', '?')})"
        f" against {header.get('target', '?')}, started {header.get('started_at', '?')}"
    )
    lines = [
        "# turngate baseline: the known differences of a target (docs/ci-baseline.md).",
        "# `turngate run --baseline FILE` exits 0 while a run fails only for these, and 1 on a new",
        "# difference or when a known one is gone (then remove it here).",
        f"# From {_comment(source)}: {_comment(run)};",
        f"# written by turngate {__version__}. Regenerate: turngate baseline write RUN.jsonl -o FILE",
        "# (the reasons of the entries still there are kept).",
        "# Fill in each `reason`: why it is known (a ticket, a decision).",
        f"version: {FORMAT_VERSION}",
    ]
    if not ordered:
        return "\n".join([*lines, "known: []", ""])
    lines.append("known:")
    for entry in ordered:
        lines.append(f"  - case: {_scalar(entry.case)}")
        lines.append(f"    engine: {_scalar(entry.engine)}")
        if entry.outcome is not None:
            lines.append(f"    outcome: {_scalar(entry.outcome)}")
        else:
            lines.append(f"    check: {_scalar(entry.check or '')}")
            lines.append(f"    sentence: {_scalar(entry.sentence or '')}")
        if entry.reason:
            lines.append(f"    reason: {_scalar(entry.reason)}")
        else:
            lines.append('    reason: ""  # fill in: why this is known')
    return "\n".join([*lines, ""])


def _scalar(text: str) -> str:
    """``text`` as one YAML scalar on one line: plain where that reads back the same, else quoted."""
    dumped = yaml.safe_dump([text], default_flow_style=True, allow_unicode=True, width=2**31 - 1).strip()
    if "\n" in dumped:  # YAML folds a line break into a second line; JSON's string is YAML, escaped
        return json.dumps(text, ensure_ascii=False)
    return dumped[1:-1]  # "[value]" -> value


def _comment(text: str) -> str:
    return " ".join(text.split())  # a newline in a target's name would end the comment
