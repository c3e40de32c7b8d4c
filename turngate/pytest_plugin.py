"""The catalog as pytest items: ``pytest --turngate-target URL|cmd:...|reference`` in any folder.

An implementer puts turngate's scenarios into their own suite and gets pytest's
own counts, ``--collect-only``, ``-k``, ``-m``, ``-x``, ``--lf``/``--ff``, ``-n``
(pytest-xdist) and ``--junitxml`` (docs/pytest-plugin.md). Each item is one
scenario on one engine, node ID ``turngate::ID[engine]`` (so ``-k 'max-attempt
and codex'`` works, and ``-m "turngate(engine='codex', level='MUST')"``); a
failure shows the spec's words (the scenario's requirement and quote) and every
difference the verdict found.

How pytest sees the catalog: a hookwrapper on the Session's collect report adds
one collector, ``TurngateCatalog`` (node ID ``turngate``), beside what pytest
found on disk, so pytest collects it as its own: a collect report of its own,
its items counted in the header and by ``--collect-only``, narrowed by ``-k``,
``-m`` and ``--lf`` afterwards as any test is, and collected the same way, in
the same order, on each xdist worker. The node IDs are given whole, so they are
the same in every run and on every worker; pytest would show them relative to
the folder it was started in, as paths (``../turngate::…``), so the display of
the catalog's IDs is left as it is (``_shown_as_they_are``). The options are
checked, and the target probed, once per process at session start: a bad one is
one usage error naming the plugin's option, before xdist starts its workers.

What fails an item is ``verdict.fails_run``, the rule of every front end: failed,
errored, unreached, and partial (MUST checks the target could not all show),
unless ``--turngate-allow-partial`` accepts partial. non-strict, ambiguous and an
accepted partial pass with a warning (``TurngateNote``) saying what was not met
or not seen.

Registered through the ``pytest11`` entry point, so it is loaded by every
pytest in an environment where turngate is installed, turngate's own suite
included: without ``--turngate-target`` it adds options and nothing else.

``--turngate-baseline FILE`` (``turngate baseline write``): every case the
baseline lists is a strict xfail. Failing for its known differences only, it
xfails; failing for another as well, it fails; with a known difference gone it
passes, which a strict xfail reports as ``XPASS(strict)``, a failure: the
baseline must drop the entry, as ``turngate run --baseline`` exits 1. Known and
still there but failing nothing (an accepted partial case) is an xfail too.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from turngate.judge.baseline import (
    Baseline,
    BaselineProblem,
    CaseCheck,
    Ran,
    check_case,
    read_baseline,
)
from turngate.judge.case_result import CaseResult
from turngate.judge.case_run import run_case
from turngate.judge.catalog import ENGINES, Scenario
from turngate.judge.targets import Target
from turngate.judge.verdict import fails_run

OPTION: Final = "--turngate-target"
ALLOW_PARTIAL: Final = "--turngate-allow-partial"
# The catalog's node ID; each case's is turngate::ID[engine] (the exploration's turngate::explore[seed=S]).
NODE: Final = "turngate"
# Outcomes that pass with a warning saying what was not met or not seen: a SHOULD-level miss
# (non-strict); holding under one reading of an ambiguous sentence and breaking another (ambiguous, no
# --turngate-reading); and MUST checks the target could not all show (partial), only when the user
# accepts them (--turngate-allow-partial): else a partial case fails, as verdict.fails_run says.
PASSED_WITH_NOTE: Final = frozenset({"non-strict", "partial", "ambiguous"})


class TurngateNote(UserWarning):
    """A case that passed as far as the spec's MUST sentences go, with something to read."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("turngate", "turngate: the scenario catalog against an orchestrator")
    group.addoption(
        OPTION,
        metavar="TARGET",
        help="run turngate's catalog against TARGET: reference, http://HOST:PORT, cmd:COMMAND or a"
        " target options file (YAML); without it the plugin collects nothing",
    )
    group.addoption("--turngate-target-options", metavar="FILE", help="options of an HTTP target (YAML)")
    group.addoption(
        "--turngate-engine", action="append", metavar="ENGINE", help="only these engines (repeatable)"
    )
    group.addoption(
        "--turngate-catalog",
        action="append",
        metavar="DIR",
        help="a folder of your own scenarios, beside the shipped catalog (repeatable)",
    )
    group.addoption("--turngate-reading", metavar="NAME", help="judge ambiguous scenarios by this reading")
    group.addoption(
        ALLOW_PARTIAL,
        action="store_true",
        help="accept partial cases (MUST checks the target could not all show) as passing, with a"
        " warning; by default a partial case fails as a failed one does",
    )
    group.addoption(
        "--turngate-explore",
        type=int,
        metavar="N",
        help="also one item that explores N generated runs, judged by the spec model (turngate explore)",
    )
    group.addoption("--turngate-seed", type=int, default=0, metavar="S", help="the exploration's seed")
    group.addoption(
        "--turngate-baseline",
        metavar="FILE",
        help="known differences (turngate baseline write): the cases it lists are strict xfails",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "turngate(scenario, engine, level, capability): a turngate catalog case"
        """ (-m "turngate(engine='codex')")""",
    )
    if config.getoption(OPTION):
        _shown_as_they_are(config)


@pytest.hookimpl(tryfirst=True)  # a bad option is refused before anything starts (xdist's workers)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if config.getoption(OPTION):
        baseline = _baseline(config)  # read before the target is started
        target, scenarios, engines = _resolve(config)
        state = _RunState(
            target, config.getoption("--turngate-reading"), baseline, config.getoption(ALLOW_PARTIAL)
        )
        config.stash[_PLAN] = _Plan(state, scenarios, engines)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, pytest.CollectReport, Any]:
    """The catalog as one more collector of the session, beside what pytest finds on disk: pytest
    collects it as its own (a collect report, its items counted, listed by ``--collect-only``, seen by
    ``--lf``, collected alike on each xdist worker)."""
    report = yield
    if isinstance(collector, pytest.Session) and _PLAN in collector.config.stash and report.passed:
        report.result.append(TurngateCatalog.from_parent(collector, name=NODE, nodeid=NODE))
    return report


def _shown_as_they_are(config: pytest.Config) -> None:
    """pytest shows a node ID relative to the folder it was started in, as a path (``../turngate::ID``
    from a subfolder of the rootdir); the catalog's IDs name no file, so they are shown as they are,
    the IDs ``--lf``, JUnit and xdist use. No hook decides it: the config's own method is wrapped."""
    relative = config.cwd_relative_nodeid

    def cwd_relative_nodeid(nodeid: Any) -> Any:
        return nodeid if str(nodeid).partition("::")[0] == NODE else relative(nodeid)

    config.cwd_relative_nodeid = cwd_relative_nodeid  # type: ignore[method-assign]


def _resolve(config: pytest.Config) -> tuple[Target, tuple[Scenario, ...], tuple[str, ...]]:
    """The target (probed, as ``turngate run`` does), the catalog and the engines, or a usage error
    naming the plugin's option it is about: the plugin checks its engines and catalog folders itself
    (the shared checks would name ``turngate run``'s options); the shared code, told the plugin's option
    names, loads the catalog, then reads and probes the target."""
    import argparse

    from turngate.base.arguments import UsageProblem
    from turngate.judge.selection import chosen_catalog, resolve_target

    value: str = config.getoption(OPTION)
    options = _path(config.getoption("--turngate-target-options"))
    folders = [Path(folder) for folder in config.getoption("--turngate-catalog") or ()]
    engines = tuple(config.getoption("--turngate-engine") or ENGINES)
    problem = _engines_problem(engines) or _catalog_problem(folders)
    if problem is not None:
        raise pytest.UsageError(f"turngate: {problem}")
    arguments = argparse.Namespace(
        target=value, target_options=options, catalog=folders, no_shipped=False, k=None
    )
    try:
        scenarios = chosen_catalog(arguments)
    except UsageProblem as problem:  # a bad scenario file: in a --turngate-catalog folder (ours are checked)
        raise pytest.UsageError(f"turngate: --turngate-catalog: {problem}") from None
    unknown = _reading_problem(config.getoption("--turngate-reading"), scenarios)
    if unknown is not None:
        raise pytest.UsageError(f"turngate: {unknown}")
    try:
        target = resolve_target(arguments, option=OPTION, options_option="--turngate-target-options")
    except UsageProblem as problem:  # its form, down, not shaking hands, a bad options file (named)
        raise pytest.UsageError(f"turngate: {problem}") from None
    return target, scenarios, engines


def _engines_problem(engines: Sequence[str]) -> str | None:
    unknown = [engine for engine in engines if engine not in ENGINES]
    return f"--turngate-engine: {unknown[0]!r}: known: {', '.join(ENGINES)}" if unknown else None


def _catalog_problem(folders: Sequence[Path]) -> str | None:
    """Each ``--turngate-catalog`` a folder, none reusing a scenario ID: a scenario's ID is its file's
    path in its folder (``catalog.load_scenario`` refuses any other), so a file at the same path as
    another folder's, the shipped catalog's included, would be given the same ID. The plugin always
    runs the shipped catalog (``turngate run`` offers ``--no-shipped``, the plugin does not)."""
    for folder in folders:
        if not folder.is_dir():
            return f"--turngate-catalog: {folder}: not a folder"
    if not folders:
        return None
    from turngate.judge.catalog import CATALOG_DIR

    seen: dict[str, Path] = {}
    for root in (CATALOG_DIR, *folders):
        for path in sorted(root.rglob("*.yaml")):
            scenario_id = path.relative_to(root).with_suffix("").as_posix()
            if scenario_id in seen:
                return (
                    f"--turngate-catalog: {path}: id {scenario_id!r}: already used by {seen[scenario_id]}"
                    " (the shipped catalog always runs beside yours: give yours an ID of its own)"
                )
            seen[scenario_id] = path
    return None


def _reading_problem(reading: str | None, scenarios: Sequence[Scenario]) -> str | None:
    """A reading no scenario has would judge nothing by it (``selection.check_reading`` says so for
    ``turngate run``, naming its ``--reading``)."""
    known = sorted({name for scenario in scenarios for name in scenario.readings})
    if reading is None or reading in known:
        return None
    said = ", ".join(known)
    return f"--turngate-reading: {reading!r}: the catalog's scenarios know: {said} (turngate show ID)"


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _baseline(config: pytest.Config) -> Baseline | None:
    path = _path(config.getoption("--turngate-baseline"))
    if path is None:
        return None
    try:
        return read_baseline(path)
    except BaselineProblem as problem:
        raise pytest.UsageError(f"turngate: --turngate-baseline: {problem}") from None


class TurngateCatalog(pytest.Collector):
    """The shipped catalog (and any ``--turngate-catalog`` folders) × the engines."""

    def collect(self) -> list[pytest.Item]:
        plan = self.config.stash[_PLAN]
        # Each ID given whole, the same in every run, on every xdist worker and wherever pytest was
        # started: "turngate::ID[engine]", which pytest parses as it parses the IDs --lf saved.
        explored: list[pytest.Item] = []
        budget = self.config.getoption("--turngate-explore")
        if budget:
            seed = self.config.getoption("--turngate-seed")
            explored.append(
                TurngateExploration.from_parent(
                    self,
                    name=f"explore[seed={seed}]",
                    nodeid=f"{NODE}::explore[seed={seed}]",
                    target=plan.state.target,
                    engines=plan.engines,
                    budget=budget,
                    seed=seed,
                )
            )
        return explored + [
            TurngateCase.from_parent(
                self,
                name=f"{scenario.id}[{engine}]",
                nodeid=f"{NODE}::{scenario.id}[{engine}]",
                scenario=scenario,
                engine=engine,
                state=plan.state,
            )
            for scenario in plan.scenarios
            for engine in scenario.engines
            if engine in plan.engines
        ]


class _RunState:
    """What the items of one pytest process share: the target, how cases are judged, and the first case
    that found the target down (the cases after it are failed at once, as ``turngate run`` reports them
    unreached)."""

    def __init__(
        self,
        target: Target,
        reading: str | None,
        baseline: Baseline | None = None,
        allow_partial: bool = False,
    ) -> None:
        self.target, self.reading, self.baseline = target, reading, baseline
        self.allow_partial = allow_partial
        self.down: CaseResult | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    """What ``--turngate-target`` and its options resolved to, once per pytest process (each xdist
    worker resolves them again, the same way): the state the cases share, the scenarios, the engines."""

    state: _RunState
    scenarios: tuple[Scenario, ...]
    engines: tuple[str, ...]


_PLAN: Final = pytest.StashKey[_Plan]()


class CaseFailure(Exception):
    def __init__(self, result: CaseResult, check: CaseCheck | None = None) -> None:
        super().__init__(result.message)
        self.result, self.check = result, check


class KnownDifference(Exception):
    """A case failing for its known differences only: the strict xfail of a baselined case expects it."""

    def __init__(self, result: CaseResult, check: CaseCheck) -> None:
        super().__init__(check.note)
        self.result, self.check = result, check


class TurngateCase(pytest.Item):
    """One scenario on one engine against the target."""

    def __init__(self, *, scenario: Scenario, engine: str, state: _RunState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario, self.engine, self.state = scenario, engine, state
        self.user_properties.append(("spec", f"{scenario.source['file']} / {scenario.source['heading']}"))
        # -m "turngate(engine='codex', level='MUST')"; -k matches the level too (the name has the rest).
        self.add_marker(
            pytest.mark.turngate(
                scenario=scenario.id, engine=engine, level=scenario.level, capability=scenario.capability
            )
        )
        self.extra_keyword_matches.add(scenario.level)
        baseline = state.baseline
        known = baseline.of(scenario.id, engine) if baseline is not None else ()
        if baseline is not None and known:
            listed = "; ".join(
                f"{entry.what}: {entry.reason}" if entry.reason else entry.what for entry in known
            )
            reason = (
                f"known difference (baseline {baseline.source}): {listed}"
                " (a pass means it is fixed: remove it from the baseline)"
            )
            # raises: only the known differences are expected; a new one fails as any failure does
            self.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=KnownDifference))

    def runtest(self) -> None:
        if self.state.down is not None:
            cause = self.state.down
            pytest.fail(
                f"not run: the target stopped answering in {cause.scenario_id} [{cause.engine}]:"
                f" {cause.message.splitlines()[0]}",
                pytrace=False,
            )
        target = self.state.target
        result = run_case(
            self.scenario,
            self.engine,
            target.connector(),
            reading=self.state.reading,
            shared=target.shared,
        )
        self.user_properties.append(("turngate_outcome", result.outcome))
        if result.outcome == "unreached":
            self.state.down = result
        if result.outcome == "skipped":
            pytest.skip(result.message)
        fails = fails_run(result.outcome, allow_partial=self.state.allow_partial)
        check = self._check(result)
        if check is not None and (check.known or check.fixed or check.unverified):  # the baseline lists it
            self._against_baseline(result, check, fails)
        if fails:
            raise CaseFailure(result, check)
        if result.outcome in PASSED_WITH_NOTE:
            accepted = f" (accepted: {ALLOW_PARTIAL})" if result.outcome == "partial" else ""
            warnings.warn(
                TurngateNote(f"{self.name}: {result.outcome}{accepted}: {_first(result)}"), stacklevel=1
            )

    def _check(self, result: CaseResult) -> CaseCheck | None:
        """The case against the baseline, judged as the item is (partial accepted or not)."""
        baseline = self.state.baseline
        if baseline is None:
            return None
        return check_case(baseline, Ran.of(result), allow_partial=self.state.allow_partial)

    def _against_baseline(self, result: CaseResult, check: CaseCheck, fails: bool) -> None:
        """A case the baseline lists (a strict xfail): returns only when a known difference is gone and
        nothing fails, so that the strict xfail reports XPASS(strict)."""
        self.user_properties.append(("turngate_baseline", str(check.status)))
        match check.status:
            case "known":
                raise KnownDifference(result, check)  # the xfail expects exactly this
            case "new":
                raise CaseFailure(result, check)
            case "fixed" if fails:  # still failing for another known difference
                raise CaseFailure(result, check)
            case "fixed":
                return
        if check.known:  # still there, failing nothing (a partial case accepted): known, not gone
            raise KnownDifference(result, check)
        # Neither there nor gone: the run could not show the known difference (a check unverified).
        pytest.skip(f"baseline: not shown by this run, neither fixed nor new: {check.note or _listed(check)}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, CaseFailure):
            text = failure_text(self.scenario, excinfo.value.result)
            check = excinfo.value.check
            return f"{check.note}\n{text}" if check is not None and check.status is not None else text
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.scenario.path, None, f"turngate {self.scenario.id} [{self.engine}]"


class TurngateExploration(pytest.Item):
    """``--turngate-explore N``: N generated runs on the target, each judged by the spec model; fails
    with the smallest failing run, as a scenario to keep (``turngate explore --save`` writes it)."""

    def __init__(
        self, *, target: Target, engines: tuple[str, ...], budget: int, seed: int, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.target, self.engines, self.budget, self.seed = target, engines, budget, seed
        self.add_marker(pytest.mark.turngate)

    def runtest(self) -> None:
        import yaml

        from turngate.judge.exploration.explorer import explore

        connector = self.target.connector()
        capabilities = frozenset(connector.capabilities)
        connector.close()
        report = explore(
            self.target, capabilities, engines=self.engines, budget=self.budget, seed_value=self.seed
        )
        self.user_properties.append(("turngate_explored_runs", report.runs))
        found = report.finding
        if found is not None:
            document = yaml.safe_dump(found.document, sort_keys=False, allow_unicode=True)
            pytest.fail(
                f"explored {report.runs} runs (seed {self.seed}); found after {found.first_found_at}:\n"
                f"{found.result.message}\n\nthe smallest run, as a scenario:\n{document}",
                pytrace=False,
            )

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return "turngate", None, f"turngate explore (seed {self.seed}, {self.budget} runs)"


def _listed(check: CaseCheck) -> str:
    return "; ".join(entry.what for entry in (*check.known, *check.unverified))


def _first(result: CaseResult) -> str:
    return (result.message.splitlines() or [""])[0]


def failure_text(scenario: Scenario, result: CaseResult) -> str:
    """What the spec says (its words), then every difference the verdict found, each with its authority."""
    source = scenario.source
    differences = _differences(result)
    lines = [f"{result.outcome.upper()}: {scenario.id} [{result.engine}] ({scenario.level})"]
    if result.outcome == "partial":
        lines.append(_unseen(differences))
    spec = f"spec: {source['file']} / {source.get('requirement', '')} / {source['heading']}"
    lines.append(spec.replace(" /  /", " /"))
    lines += [f"  > {line}" for line in str(source.get("quote", "")).rstrip().splitlines()]
    if differences:
        lines.append(f"{len(differences)} difference(s):")
        for number, difference in enumerate(differences, 1):
            lines += _difference_lines(number, difference)
    else:
        lines += ["", *result.message.splitlines()]
    return "\n".join(lines)


def _unseen(differences: Sequence[Mapping[str, Any]]) -> str:
    """Why a partial case fails: the MUST checks the target could not show, each named (the list of
    differences below says why), and the option that accepts them."""
    unverified = [item for item in differences if item.get("severity") == "unverified"]
    must = [item for item in unverified if item.get("level") == "MUST"] or unverified
    named = ", ".join(dict.fromkeys(f"step {item.get('step')} {item.get('key')}" for item in must))
    return (
        f"never a pass: MUST checks the target could not show: {named or 'see below'} (unverified: why"
        f" below); {ALLOW_PARTIAL} accepts them"
    )


def _differences(result: CaseResult) -> Sequence[Mapping[str, Any]]:
    """The verdict's differences as plain mappings, whatever their exact shape (a list of dataclasses
    or of dicts on the result); empty when the result carries only its message."""
    from dataclasses import asdict, is_dataclass

    found = getattr(result, "differences", None) or ()
    plain = []
    for difference in found:
        if is_dataclass(difference) and not isinstance(difference, type):
            plain.append(asdict(difference))
        elif isinstance(difference, Mapping):
            plain.append(dict(difference))
    return plain


def _difference_lines(number: int, difference: Mapping[str, Any]) -> Iterator[str]:
    """One difference, generically: where, what was expected and seen, how bad, and whose word it is
    (a spec sentence with its level, source and quote; a convention; the reference; unverified)."""
    step = difference.get("step")
    where = f"step {step}" + (f" ({difference['action']})" if difference.get("action") else "")
    severity = f"[{difference['severity']}] " if difference.get("severity") else ""
    yield f"  {number}. {severity}{where}: {difference.get('key')}"
    yield f"     expected: {difference.get('expected')!r}"
    if difference.get("severity") == "unverified":
        yield f"     unverified: {difference.get('note') or 'the target cannot show it'}"
    else:
        yield f"     actual:   {difference.get('actual')!r}"
    authority = difference.get("authority")
    if isinstance(authority, Mapping):  # a nested authority object: show what it has
        difference = {**difference, **authority}
        authority = authority.get("id") or authority.get("kind") or authority.get("name")
    backed = " ".join(str(part) for part in (difference.get("level"), authority) if part)
    if difference.get("source"):
        backed += f" ({difference['source']})"
    if backed:
        yield f"     backed by: {backed}"
    for line in str(difference.get("quote") or "").strip().splitlines():
        yield f"       > {line}"
    if difference.get("note") and difference.get("severity") != "unverified":
        yield f"     note: {difference['note']}"
