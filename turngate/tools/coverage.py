"""`turngate coverage`: where the catalog exercises each MUST and SHOULD sentence, and where it never does.

A sentence's *scope* (``turngate/judge/catalog/scope.yaml``, read from the spec's words)
names the modes, profiles, engines, turn positions and actions under which it
applies. A catalog check *meets* a combination when its authority (through
``Checks.authority``, under every reading, and an ``argv`` line's own ``by``) is
the sentence, in a scenario of that mode and profile, on that engine, at a step
of that position and action. A combination of the scope that no check meets is
a *hole*. This module computes that matrix and renders it (table, JSON,
Markdown) for the subcommand.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any, Final

import jsonschema
import yaml

from turngate.base.data_yaml import load_data
from turngate.judge.catalog import CATALOG_PACKAGE_DIR, ENGINES, Scenario
from turngate.judge.catalog.checks import CONVENTION, REFERENCE
from turngate.judge.catalog.sentences import Sentence, sentences

SCOPE_PATH: Final = CATALOG_PACKAGE_DIR / "scope.yaml"
SCOPE_SCHEMA_PATH: Final = CATALOG_PACKAGE_DIR / "scope.schema.json"
LEVELS: Final = ("MUST", "SHOULD")  # the levels a hole matters for (MAY is informational)
MODES: Final = ("auto", "interactive")
PROFILES: Final = ("resumable", "sticky_process")
ANY: Final = "any"  # a scope's profile that does not matter: one met profile is enough
FIRST_TURN: Final = "first-turn"
AFTER_REPLY: Final = "after-reply"
AFTER_TIMEOUT: Final = "after-timeout"
AFTER_RESTART: Final = "after-restart"
POSITIONS: Final = (FIRST_TURN, AFTER_REPLY, AFTER_TIMEOUT, AFTER_RESTART)
# The action that brings a run to each position. A scope combination pairs a position with this
# action (or with `cancel`, which can end a run at any position): (first-turn, reply) names nothing.
TURN_ACTION: Final[Mapping[str, str]] = {
    FIRST_TURN: "start",
    AFTER_REPLY: "reply",
    AFTER_TIMEOUT: "advance_clock",
    AFTER_RESTART: "restart",
}
# 001: "统一会话超时 `session_timeout_sec`（默认 1200 秒）"; the reference's default for strict is true.
DEFAULT_SESSION_TIMEOUT_SEC: Final = 1200
DEFAULT_REQUIRE_USER_REPLY: Final = True
# A scenario without runtime.profile leaves it to the target's probe; the fake engines look resumable.
DEFAULT_PROFILE: Final = "resumable"
WAITING: Final = "waiting_user"
NOT_SENTENCES: Final = frozenset({CONVENTION, REFERENCE})


class ScopeError(ValueError):
    """A scope file turngate refuses: ``file: entry: field: message``."""


@dataclass(frozen=True, slots=True, order=True)
class Combo:
    """One cell of the product: a mode, a profile (``any`` in a scope), an engine, a position, an action."""

    mode: str
    profile: str
    engine: str
    position: str
    action: str

    def anywise(self) -> Combo:
        """The same cell with the profile left open, as a scope names it where the profile does not matter."""
        return replace(self, profile=ANY)

    def to_json(self) -> dict[str, str]:
        return {
            "mode": self.mode,
            "profile": self.profile,
            "engine": self.engine,
            "position": self.position,
            "action": self.action,
        }


@dataclass(frozen=True, slots=True)
class Exclusion:
    """Combinations a scope's product names but the spec does not reach: those matching every field."""

    fields: tuple[tuple[str, frozenset[str]], ...]  # (Combo field, values)
    why: str

    def matches(self, combo: Combo) -> bool:
        return all(getattr(combo, name) in values for name, values in self.fields)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where one sentence applies, from scope.yaml."""

    sentence: str
    why: str
    observable: bool = True  # False: sentences.yaml says no black-box check can see it (never a hole)
    modes: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    positions: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    exclude: tuple[Exclusion, ...] = ()

    def combinations(self) -> frozenset[Combo]:
        """Every combination the sentence applies to; empty for an unobservable sentence."""
        found = set()
        for mode in self.modes:
            # An auto run has one turn and never waits: no later position, and no profile that matters.
            profiles = (ANY,) if mode == "auto" or self.profiles == (ANY,) else self.profiles
            positions = [p for p in self.positions if mode == "interactive" or p == FIRST_TURN]
            for profile, engine, position, action in product(profiles, self.engines, positions, self.actions):
                if action not in (TURN_ACTION[position], "cancel"):
                    continue
                combo = Combo(mode, profile, engine, position, action)
                if not any(rule.matches(combo) for rule in self.exclude):
                    found.add(combo)
        return frozenset(found)


@dataclass(frozen=True, slots=True)
class Citation:
    """A catalog check backed by a sentence: where it is and the combination it meets."""

    sentence: str
    scenario: str
    step: int
    key: str
    reading: str | None
    combo: Combo


@dataclass(frozen=True, slots=True)
class SentenceCoverage:
    """One row of the matrix."""

    sentence: str
    level: str
    scope: Scope
    citations: tuple[Citation, ...]
    holes: tuple[Combo, ...]  # combinations of the scope no citation meets (none when unobservable)

    @property
    def met(self) -> tuple[Combo, ...]:
        return tuple(sorted({citation.combo for citation in self.citations}))

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(sorted({citation.scenario for citation in self.citations}))

    @property
    def status(self) -> str:
        """``unobservable``, ``never`` (no check cites it), ``holes`` or ``covered``."""
        if not self.scope.observable:
            return "unobservable"
        if not self.citations:
            return "never"
        return "holes" if self.holes else "covered"


@dataclass(frozen=True, slots=True)
class Summary:
    sentences: int
    covered: int
    with_holes: int
    never: int
    unobservable: int
    combinations: int  # in the scopes of the observable sentences
    holes: int
    must_with_holes: int
    must_never: int

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class Matrix:
    rows: tuple[SentenceCoverage, ...]
    scenarios: int = 0
    extra: Mapping[str, tuple[Citation, ...]] = field(default_factory=dict)  # MAY sentences cited

    @property
    def summary(self) -> Summary:
        observable = [row for row in self.rows if row.scope.observable]
        return Summary(
            sentences=len(self.rows),
            covered=sum(row.status == "covered" for row in self.rows),
            with_holes=sum(row.status == "holes" for row in self.rows),
            never=sum(row.status == "never" for row in self.rows),
            unobservable=sum(row.status == "unobservable" for row in self.rows),
            combinations=sum(len(row.scope.combinations()) for row in observable),
            holes=sum(len(row.holes) for row in observable),
            must_with_holes=sum(row.status == "holes" and row.level == "MUST" for row in self.rows),
            must_never=sum(row.status == "never" and row.level == "MUST" for row in self.rows),
        )


# --- the scope file ---------------------------------------------------------------------------


@cache
def _scope_schema() -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads(SCOPE_SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def load_scope(path: Path = SCOPE_PATH, known: Mapping[str, Sentence] | None = None) -> Mapping[str, Scope]:
    """Every MUST/SHOULD sentence's scope by ID: valid by the schema, each exactly once, none unknown,
    unobservable exactly where sentences.yaml says so, and no action without its position (or back)."""
    known = sentences() if known is None else known
    try:
        document = load_data(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ScopeError(f"{path}: {error}") from None
    # best_match looks inside `oneOf` for the branch the entry meant, so the field is named
    problem = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(_scope_schema()).iter_errors(document)
    )
    if problem is not None:
        where = ".".join(str(part) for part in problem.absolute_path) or "(root)"
        raise ScopeError(f"{path}: {where}: {problem.message.splitlines()[0][:200]}")
    wanted = {sid: sentence for sid, sentence in known.items() if sentence.level in LEVELS}
    found: dict[str, Scope] = {}
    for index, entry in enumerate(document):
        sid, where = entry["id"], f"{path}: [{index}] {entry['id']}"
        if sid in found:
            raise ScopeError(f"{where}: listed twice")
        if sid not in wanted:
            raise ScopeError(f"{where}: not a MUST or SHOULD sentence of sentences.yaml")
        scope = _scope(entry)
        if scope.observable != (wanted[sid].observable is None):
            raise ScopeError(
                f"{where}: observable: sentences.yaml says {wanted[sid].observable or 'observable'!r}"
            )
        for position in scope.positions:
            if TURN_ACTION[position] not in scope.actions:
                raise ScopeError(f"{where}: positions: {position} without its action {TURN_ACTION[position]}")
        for action in scope.actions:
            if action != "cancel" and not any(TURN_ACTION[p] == action for p in scope.positions):
                raise ScopeError(f"{where}: actions: {action} without its position")
        found[sid] = scope
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise ScopeError(f"{path}: no entry for {len(missing)} sentence(s): {', '.join(missing[:5])}")
    return found


def _scope(entry: Mapping[str, Any]) -> Scope:
    if entry.get("observable", True) is False:
        return Scope(entry["id"], entry["why"], observable=False)
    exclude = tuple(
        Exclusion(
            tuple(
                (name.removesuffix("s"), frozenset(values))  # the list's name -> Combo's field
                for name, values in rule.items()
                if name != "why"
            ),
            rule["why"],
        )
        for rule in entry.get("exclude", ())
    )
    return Scope(
        entry["id"],
        entry["why"],
        modes=tuple(entry["modes"]),
        profiles=tuple(entry["profiles"]),
        engines=tuple(entry["engines"]),
        positions=tuple(entry["positions"]),
        actions=tuple(entry["actions"]),
        exclude=exclude,
    )


# --- the catalog side ---------------------------------------------------------------------------


def step_positions(scenario: Scenario, reading: str | None = None) -> tuple[str, ...]:
    """Each step's turn position, from the steps before it and the states they expect.

    start -> first-turn; a reply to a waiting run -> after-reply (a reply to a run that is not waiting
    runs no turn: the run stays where it was); an advance_clock that reaches the wait deadline
    (session_timeout_sec after the run last began to wait; the deadline is kept over a restart) ->
    after-timeout; a restart -> after-restart; a cancel leaves the position as it was. A state the
    scenario does not write after a turn is taken to be waiting, since only then can the next step
    be a reply.
    """
    timeout = float(scenario.runtime.get("session_timeout_sec", DEFAULT_SESSION_TIMEOUT_SEC))
    strict = bool(scenario.runtime.get("require_user_reply", DEFAULT_REQUIRE_USER_REPLY))
    state: str | None = None  # what the last step expects; None: not said
    position, clock = FIRST_TURN, 0.0
    waiting_since: float | None = None
    found = []
    for step, expect in zip(scenario.steps, scenario.expectations(reading), strict=True):
        turned = False  # a turn ran at this step: its outcome is a new state
        match step.action:
            case "start":
                position, turned = FIRST_TURN, True
            case "reply" if state in (None, WAITING):
                position = AFTER_REPLY
                reply = expect.get("reply")
                turned = not (isinstance(reply, Mapping) and reply.get("accepted") is False)
            case "advance_clock":
                clock += float(step.argument)
                if waiting_since is not None and clock - waiting_since >= timeout:
                    position = AFTER_TIMEOUT
                    turned = not strict  # the automatic decision's turn; strict: the timeout alone
            case "restart":
                position = AFTER_RESTART
        found.append(position)
        state = expect.get("state", None if turned else state)
        if turned:
            waiting_since = clock if state in (None, WAITING) else None
        elif state is not None and state != WAITING:
            waiting_since = None
    return tuple(found)


def citations(scenario: Scenario) -> Iterator[Citation]:
    """Every (check, engine) of the scenario that a sentence backs, under every reading."""
    checks = scenario.checks()
    mode = str(scenario.runtime["mode"])
    profile = str(scenario.runtime.get("profile", DEFAULT_PROFILE))
    positions = {None: step_positions(scenario)} | {
        name: step_positions(scenario, name) for name in scenario.readings
    }
    for reading, index, key in checks.checked_keys():
        authority = checks.authority(index, key, reading)
        if authority is None or authority in NOT_SENTENCES:
            continue
        where = positions[reading][index]
        action = scenario.steps[index].action
        for engine in scenario.engines:
            yield Citation(
                authority, scenario.id, index, key, reading, Combo(mode, profile, engine, where, action)
            )
    # An argv line may name its own authority, and the engines it is for.
    for reading in (None, *scenario.readings):
        for index, expect in enumerate(scenario.expectations(reading)):
            for line in expect.get("argv", ()) or ():
                if not isinstance(line, Mapping) or line.get("by") in (None, *NOT_SENTENCES):
                    continue
                where = positions[reading][index]
                for engine in line.get("engines") or scenario.engines:
                    if engine in scenario.engines:
                        combo = Combo(mode, profile, engine, where, scenario.steps[index].action)
                        yield Citation(str(line["by"]), scenario.id, index, "argv", reading, combo)


def compute(
    catalog: Iterable[Scenario],
    scope: Mapping[str, Scope] | None = None,
    known: Mapping[str, Sentence] | None = None,
) -> Matrix:
    """The matrix: one row per MUST/SHOULD sentence, in sentences.yaml's order."""
    known = sentences() if known is None else known
    scope = load_scope(known=known) if scope is None else scope
    scenarios = tuple(catalog)
    cited: dict[str, set[Citation]] = defaultdict(set)
    for scenario in scenarios:
        for citation in citations(scenario):
            cited[citation.sentence].add(citation)
    rows = []
    for sid, sentence in known.items():
        if sentence.level not in LEVELS:
            continue
        found = tuple(sorted(cited.get(sid, ()), key=_citation_order))
        met = {citation.combo for citation in found} | {citation.combo.anywise() for citation in found}
        holes = tuple(sorted(scope[sid].combinations() - met)) if scope[sid].observable else ()
        rows.append(SentenceCoverage(sid, sentence.level, scope[sid], found, holes))
    extra = {
        sid: tuple(sorted(found, key=_citation_order))
        for sid, found in cited.items()
        if sid in known and known[sid].level not in LEVELS
    }
    return Matrix(tuple(rows), len(scenarios), extra)


def _citation_order(citation: Citation) -> tuple[Any, ...]:
    return (citation.scenario, citation.step, citation.key, citation.reading or "", citation.combo)


# --- views ----------------------------------------------------------------------------------------

_ORDER: Final[Mapping[str, Sequence[str]]] = {
    "mode": MODES,
    "profile": (*PROFILES, ANY),
    "engine": ENGINES,
    "position": POSITIONS,
    "action": ("start", "reply", "advance_clock", "restart", "cancel"),
}


def _ordered(kind: str, values: Iterable[str]) -> tuple[str, ...]:
    order = _ORDER[kind]
    return tuple(
        sorted(set(values), key=lambda value: (order.index(value) if value in order else len(order), value))
    )


def met_dimensions(row: SentenceCoverage) -> dict[str, tuple[str, ...]]:
    """Each dimension's values some citation of the row meets."""
    return {kind: _ordered(kind, (getattr(combo, kind) for combo in row.met)) for kind in _ORDER}


def hole_groups(holes: Iterable[Combo]) -> list[str]:
    """Holes said compactly: one ``mode/profile/position`` per group, the engines when not all four."""
    engines: dict[tuple[str, str, str, str], set[str]] = defaultdict(set)
    for hole in holes:
        engines[(hole.mode, hole.profile, hole.position, hole.action)].add(hole.engine)
    groups = []
    for (mode, profile, position, action), names in sorted(
        engines.items(), key=lambda item: _group_order(*item[0])
    ):
        text = f"{mode}/{profile}/{position}" + ("" if action == TURN_ACTION[position] else f"+{action}")
        groups.append(text if names == set(ENGINES) else f"{text} [{' '.join(_ordered('engine', names))}]")
    return groups


def _group_order(mode: str, profile: str, position: str, action: str) -> tuple[int, ...]:
    return (
        MODES.index(mode),
        _ORDER["profile"].index(profile),
        POSITIONS.index(position),
        _ORDER["action"].index(action),
    )


def _dims(row: SentenceCoverage) -> str:
    if not row.citations:
        return "-"
    met = met_dimensions(row)
    return " / ".join(
        "all" if kind == "engine" and set(values) == set(ENGINES) else " ".join(values)
        for kind, values in met.items()
    )


def summary_lines(summary: Summary, scenarios: int) -> list[str]:
    return [
        f"{summary.sentences} MUST/SHOULD sentences, {scenarios} scenarios:"
        f" {summary.covered} fully covered, {summary.with_holes} with holes,"
        f" {summary.never} never exercised, {summary.unobservable} unobservable (not counted)",
        f"MUST: {summary.must_with_holes} with holes, {summary.must_never} never exercised;"
        f" combinations in scope {summary.combinations}, met {summary.combinations - summary.holes},"
        f" holes {summary.holes}",
    ]


def render_text(matrix: Matrix) -> str:
    """The table a person reads: per sentence its level, what is met, and its holes."""
    lines = [
        "level   status        sentence",
        "        met: modes / profiles / engines / positions / actions",
    ]
    for row in matrix.rows:
        lines.append(f"{row.level:<7} {row.status:<13} {row.sentence}")
        lines.append(f"        met: {_dims(row)}")
        if row.holes:
            lines.append(f"        holes ({len(row.holes)}): {'; '.join(hole_groups(row.holes))}")
    lines.append("")
    lines.extend(summary_lines(matrix.summary, matrix.scenarios))
    return "\n".join(lines)


def to_json(matrix: Matrix) -> dict[str, Any]:
    return {
        "summary": matrix.summary.to_json(),
        "scenarios": matrix.scenarios,
        "sentences": [
            {
                "id": row.sentence,
                "level": row.level,
                "status": row.status,
                "why": row.scope.why,
                "met": [combo.to_json() for combo in row.met],
                "holes": [combo.to_json() for combo in row.holes],
                "scenarios": list(row.scenarios),
            }
            for row in matrix.rows
        ],
    }


KEPT_START: Final = "<!-- coverage:kept -->"
KEPT_END: Final = "<!-- /coverage:kept -->"
_KEPT: Final = re.compile(re.escape(KEPT_START) + r"\n(.*?)" + re.escape(KEPT_END), re.DOTALL)
_DEFAULT_KEPT: Final = (
    "## Before and after\n\n(Figures written by hand, carried over when the file is regenerated.)\n"
)
_INTRO: Final = """\
Generated by `turngate coverage --markdown docs/coverage.md` (`turngate/tools/coverage.py`); do not edit
outside the marked block, which a regeneration carries over.

How to read it. Each MUST and SHOULD sentence of `turngate/judge/catalog/sentences.yaml` has a *scope* in
`turngate/judge/catalog/scope.yaml`, read from the spec's own words: the modes, profiles, engines, turn
positions and actions under which it applies. Positions: `first-turn` (the start's turn),
`after-reply` (a turn resumed by a user reply), `after-timeout` (the wait timeout itself, or the turn
the automatic decision runs after it), `after-restart` (the orchestrator restarted on its store). A
catalog check *meets* a combination when the sentence is its authority (`by`, under any reading) in a
scenario of that mode and profile, on that engine, at a step of that position and action. A *hole* is
a combination of the scope no check meets; holes are grouped `mode/profile/position`, with the
engines listed when not all four. `profile any` means the profile does not matter (an auto run has
no profile that matters). Status: `covered` (no hole), `holes`, `never` (no check cites the
sentence), `unobservable` (sentences.yaml says no black-box check can see it; never counted).
"""


def render_markdown(matrix: Matrix, previous: str | None = None) -> str:
    """The Markdown page; the marked block of ``previous`` (the file being replaced) is kept."""
    found = _KEPT.search(previous or "")
    kept = found.group(1) if found else _DEFAULT_KEPT
    summary = matrix.summary
    lines = [
        "# Coverage: where the catalog exercises the spec",
        "",
        _INTRO,
        KEPT_START,
        kept.rstrip("\n"),
        "",
        KEPT_END,
        "",
        "## Now",
        "",
        "| sentences | fully covered | with holes | never exercised | unobservable | MUST with holes"
        " | MUST never | combinations | met | holes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {summary.sentences} | {summary.covered} | {summary.with_holes} | {summary.never}"
        f" | {summary.unobservable} | {summary.must_with_holes} | {summary.must_never}"
        f" | {summary.combinations} | {summary.combinations - summary.holes} | {summary.holes} |",
        "",
        f"From {matrix.scenarios} scenarios.",
        "",
        "## Per sentence",
        "",
        "| sentence | level | status | met: modes / profiles / engines / positions / actions | holes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in matrix.rows:
        holes = "<br>".join(hole_groups(row.holes)) or "-"
        count = f"{len(row.holes)}: " if row.holes else ""
        lines.append(f"| `{row.sentence}` | {row.level} | {row.status} | {_dims(row)} | {count}{holes} |")
    return "\n".join(lines) + "\n"


# --- the subcommand -------------------------------------------------------------------------------


def _coverage(args: argparse.Namespace) -> int:
    from turngate.base.arguments import UsageProblem
    from turngate.judge.selection import chosen_catalog

    try:
        matrix = compute(chosen_catalog(args))
    except ScopeError as problem:
        raise UsageProblem(f"coverage: {problem}") from None
    if args.markdown is not None:
        previous = args.markdown.read_text(encoding="utf-8") if args.markdown.is_file() else None
        try:
            args.markdown.write_text(render_markdown(matrix, previous), encoding="utf-8")
        except OSError as problem:
            raise UsageProblem(f"--markdown: {args.markdown}: {problem.strerror or problem}") from None
    print(json.dumps(to_json(matrix), indent=2, ensure_ascii=False) if args.json else render_text(matrix))
    return 0


def add_command(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "coverage",
        help="where the catalog exercises each MUST/SHOULD sentence, and the holes in its scope",
    )
    parser.add_argument("--json", action="store_true", help="the matrix as JSON on standard output")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the matrix as Markdown")
    from turngate.judge.selection import add_catalog_arguments

    add_catalog_arguments(parser)  # --catalog, --no-shipped, -k: the scenarios whose coverage it is
    parser.set_defaults(handler=_coverage)
