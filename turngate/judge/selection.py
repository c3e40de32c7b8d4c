"""What a command runs: the scenarios chosen (shipped catalog, --catalog folders, -k), the engines,
and the target resolved, refused before any case runs when it is unknown, misconfigured or down.

Shared by `turngate run`, `explore`, `coverage`, `probe` and the pytest plugin.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from turngate.base.arguments import UsageProblem
from turngate.judge.catalog import CATALOG_DIR, ENGINES, CatalogError, Scenario, load_catalog
from turngate.judge.connectors.http_options import TargetProblem
from turngate.judge.targets import Target, parse_target

if TYPE_CHECKING:
    from turngate.engines.real.caseengines import RealEngines


GLOB_CHARACTERS: Final = frozenset("*?[")


def chosen_catalog(args: argparse.Namespace) -> tuple[Scenario, ...]:
    """The shipped catalog plus each ``--catalog`` folder (or only those, with ``--no-shipped``),
    narrowed by ``-k``; an ID defined twice is refused naming both files."""
    roots = ([] if getattr(args, "no_shipped", False) else [CATALOG_DIR]) + list(args.catalog or [])
    if not roots:
        raise UsageProblem("--no-shipped: no --catalog folder given: there would be no scenario to run")
    scenarios: dict[str, Scenario] = {}
    for root in roots:
        if not root.is_dir():
            raise UsageProblem(f"--catalog: {root}: not a folder")
        try:
            loaded = load_catalog(root)
        except CatalogError as error:
            raise UsageProblem(f"bad scenario file: {error}") from None
        for scenario in loaded:
            if scenario.id in scenarios:
                raise UsageProblem(
                    f"bad scenario file: {scenario.path}: id: {scenario.id!r}: already used by"
                    f" {scenarios[scenario.id].path} (use --no-shipped to replace the shipped catalog)"
                )
            scenarios[scenario.id] = scenario
    chosen = tuple(sorted(scenarios.values(), key=lambda scenario: scenario.id))
    patterns = args.k or []
    if patterns:
        tests = [keyword_test(pattern) for pattern in patterns]
        chosen = tuple(s for s in chosen if any(test(s.id) for test in tests))
        if not chosen:
            raise UsageProblem(
                f"-k {' '.join(patterns)}: matches no scenario (a word matches anywhere in an ID, case"
                " ignored; a pattern with * ? [ must match the whole ID, e.g. 'design/*';"
                " see `turngate list`)"
            )
    return chosen


def matches(pattern: str, scenario_id: str) -> bool:
    """``-k``: a glob (``*``, ``?``, ``[``) matches the whole ID; anything else is a substring, case
    ignored, as pytest's ``-k`` takes a word."""
    if GLOB_CHARACTERS & set(pattern):
        return fnmatch.fnmatchcase(scenario_id, pattern)
    return pattern.casefold() in scenario_id.casefold()


def keyword_test(expression: str) -> Callable[[str], bool]:
    """``-k`` as pytest takes it: words (or globs, see `matches`) joined by ``and``, ``or``, ``not``
    and parentheses; a bad expression is a usage problem naming where it stops making sense."""
    tokens = _KEYWORD_TOKENS.findall(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        token = peek()
        if token is None:
            raise UsageProblem(f"-k {expression!r}: ends where a word was expected")
        position += 1
        return token

    def either() -> Callable[[str], bool]:
        parts = [both()]
        while peek() == "or":
            take()
            parts.append(both())
        return lambda scenario_id: any(part(scenario_id) for part in parts)

    def both() -> Callable[[str], bool]:
        parts = [negated()]
        while peek() == "and":
            take()
            parts.append(negated())
        return lambda scenario_id: all(part(scenario_id) for part in parts)

    def negated() -> Callable[[str], bool]:
        token = take()
        if token == "not":
            inner = negated()
            return lambda scenario_id: not inner(scenario_id)
        if token == "(":
            inner = either()
            if peek() != ")":
                raise UsageProblem(f"-k {expression!r}: a '(' is not closed")
            take()
            return inner
        if token in _KEYWORD_OPERATORS:
            raise UsageProblem(f"-k {expression!r}: {token!r} where a word was expected")
        return lambda scenario_id: matches(token, scenario_id)

    test = either()
    if peek() is not None:
        raise UsageProblem(f"-k {expression!r}: {peek()!r} after a complete expression")
    return test


# A parenthesis alone, or a run of anything else up to a space or a parenthesis.
_KEYWORD_TOKENS: Final = re.compile(r"[()]|[^\s()]+")
_KEYWORD_OPERATORS: Final = frozenset({"and", "or", "not", ")"})


def chosen_engines(args: argparse.Namespace) -> list[str]:
    engines: list[str] = args.engine or list(ENGINES)
    for engine in engines:
        if engine not in ENGINES:
            raise UsageProblem(f"--engine: {engine!r}: known: {', '.join(ENGINES)}")
    return engines


def check_reading(reading: str | None, scenarios: tuple[Scenario, ...]) -> None:
    if reading is None:
        return
    known = sorted({name for scenario in scenarios for name in scenario.readings})
    if reading not in known:
        offered = (
            f"the chosen scenarios know: {', '.join(known)}" if known else "no chosen scenario has readings"
        )
        raise UsageProblem(f"--reading: {reading!r}: {offered} (see `turngate show ID`)")


def real_engines(args: argparse.Namespace, target: Target) -> RealEngines | None:
    """`--engines real`: the pinned real CLIs in place of the fakes (docs/real-engines.md)."""
    if getattr(args, "engines", "fake") != "real":
        return None
    from turngate.engines.real.caseengines import RealEngines
    from turngate.engines.real.lock import LockProblem, default_cache, read_lock, select

    if target.http is not None:
        raise UsageProblem(
            "--engines real: an HTTP target runs its own engines: install real launchers for it with"
            " `turngate engines real launchers DIR --model-url URL` (docs/real-engines.md)"
        )
    try:
        pins = read_lock()
        # An engine alone: its first pin. Only the engines this run plays: a pinned engine the catalog
        # has no scenario for (claude, qwen, kilo, codebuddy) need not be installed to run the others.
        playing = set(chosen_engines(args))
        wanted = args.real or sorted({pin.engine for pin in pins if pin.engine in playing})
        real = RealEngines(select(pins, wanted), default_cache())
    except LockProblem as problem:
        raise UsageProblem(f"--real: {problem}") from None
    if len({pin.engine for pin in real.pins}) != len(real.pins):
        raise UsageProblem("--real: one version per engine in a run")
    missing = real.missing()
    if missing:
        names = " ".join(pin.name for pin in missing)
        raise UsageProblem(
            f"--engines real: not installed: {names}: run `turngate engines real install {names}`"
        )
    return real


def resolve_target(
    args: argparse.Namespace, *, option: str = "--target", options_option: str = "--target-options"
) -> Target:
    """The target, refused before any case runs when it is unknown, misconfigured, down, or (a
    command) cannot be found or does not shake hands. ``option``, ``options_option``: the options the
    user gave the target with, as the messages name them (the pytest plugin's ``--turngate-target``)."""
    named = f"{option} {args.target}"
    try:
        target = parse_target(args.target, args.target_options, option=option, options_option=options_option)
        target = _built_as(target, getattr(args, "variant", None), getattr(args, "mutant", None))
        if target.http is not None:
            from turngate.judge.connectors.http_transport import check_job_api

            check_job_api(target.http)
        if target.command is not None:
            _check_program(named, target.command)
            from turngate.judge.connectors.command import handshake

            handshake(target.command, timeout_sec=target.command_timeout_sec)
    except TargetProblem as problem:
        raise UsageProblem(str(problem)) from None
    except RuntimeError as error:  # TargetUnreachable (down), TargetError, CommandProtocolError
        first = str(error).strip().split("\n")[0]
        raise UsageProblem(f"{named}: {first}") from None
    return target


def _built_as(target: Target, variant: str | None, mutant: str | None) -> Target:
    """The in-process reference as a conforming variant or a spec mutant (--variant, --mutant)."""
    if variant is None and mutant is None:
        return target
    if target.kind != "reference":
        raise UsageProblem(
            f"--variant/--mutant: only for --target reference; a server takes them itself"
            f" (turngate serve --variant NAME / --mutant NAME), not {target.name!r}"
        )
    from dataclasses import replace

    from turngate.implementations.conforming_variants import UnknownVariant, variant_named
    from turngate.implementations.mutants.registry import UnknownMutant, mutant_named

    try:
        variant_named(variant or target.variant)
        if mutant is not None:
            mutant_named(mutant)
    except (UnknownVariant, UnknownMutant) as problem:
        raise UsageProblem(str(problem)) from None
    return replace(target, variant=variant or target.variant, mutant=mutant)


def _check_program(named: str, command: str) -> None:
    """The program a ``cmd:`` line starts exists (the shell would only say so once per case); ``named``
    is the option and its value, as a message starts."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise UsageProblem(f"{named}: {error}") from None
    # Leading NAME=value words are environment for the program, as in a shell.
    program = next((word for word in words if not _ASSIGNMENT.fullmatch(word)), None)
    if program is None or program in _SHELL_WORDS:
        return  # a shell construct: the handshake will tell
    if "/" in program:
        path = Path(program).expanduser()
        if not path.is_file():
            raise UsageProblem(f"{named}: {program}: no such file")
        if not os.access(path, os.X_OK):
            raise UsageProblem(f"{named}: {program}: not executable")
    elif shutil.which(program) is None:
        raise UsageProblem(f"{named}: {program}: not found on PATH")


_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")


_SHELL_WORDS: Final = frozenset({"exec", "env", "(", "{", "!", "time", "nice", "nohup", "command", "."})


def add_catalog_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "--catalog",
        type=Path,
        action="append",
        metavar="DIR",
        help="a folder of your own scenarios, added beside the shipped catalog (repeatable)",
    )
    parser.add_argument(
        "--no-shipped", action="store_true", help="leave the shipped catalog out: only the --catalog folders"
    )
    parser.add_argument(
        "-k",
        action="append",
        metavar="WORD|GLOB",
        help="only scenarios whose ID contains WORD (case ignored), or matches GLOB whole (repeatable)",
    )
    return parser


def add_target_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--target, --target-options and --engine: what runs, and on which engines (run, explore)."""
    parser.add_argument(
        "--target",
        default="reference",
        help="reference (default), http://HOST:PORT, cmd:COMMAND, or a target options file (YAML)",
    )
    parser.add_argument(
        "--target-options", type=Path, metavar="FILE", help="options of an HTTP target (YAML; see the README)"
    )
    parser.add_argument("--engine", action="append", metavar="ENGINE", help="only these engines (repeatable)")
    return parser
