"""Fidelity: the real CLI and our fake play the same script; their streams are compared by shape.

For each script a real engine can play (the fidelity set in
``fidelity_scripts/``, the fake engines' examples, every catalog scenario's
script), both engines are run with the same command lines, turn after turn
(a resume for each later turn), and per turn the stdout shapes
(turngate/engines/real/shapes.py), stderr (its JSON by shape, its text lines
one by one) and the exit code are compared. Ids, timestamps and token counts
never count.

Each difference is either explained by a named variant (variants.py: where
the real CLI does something the fake does not model, exactly what that is,
and why it is acceptable) or reported as unexplained; the command exits 1
when any is. saved.py does the same on the saved real captures, offline.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.base.data_yaml import load_data
from turngate.engines.fake.compiler import check, normalise
from turngate.engines.fake.install import install as install_fakes
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.fake.script import write_compiled
from turngate.engines.modelserver.endpoint import ModelServer
from turngate.engines.modelserver.rounds import playable, retry_limit
from turngate.engines.real.launch import RETRIES_VARIABLE
from turngate.engines.real.lock import REAL_ENGINES, Pin, default_cache, read_lock, select
from turngate.engines.real.npm_install import write_launchers
from turngate.engines.real.shapes import events
from turngate.tools.realengines.commands import command_line, prepare_run
from turngate.tools.realengines.variants import (
    VARIANTS,
    TurnContext,
    Variant,
    explain,
    stderr_notice,
    stderr_parts,
    turn_facts,
)

FIDELITY_SCRIPTS: Final = Path(__file__).with_name("fidelity_scripts")
EXAMPLES: Final = Path(__file__).resolve().parents[2] / "engines" / "fake" / "examples"
TURN_TIMEOUT_SEC: Final = 240.0
FIRST_PROMPT: Final = "Run the skill greet (instructions: SKILL.md).\nInputs:\n- case: tg-case-{case}"
REPLY: Final = "Formal, please"
_SESSION: Final = re.compile(rb'"(?:thread_id|session_id|sessionID)"\s*:\s*"([^"]+)"')
# gemini prints in two document formats; both are compared. Every other engine has one ("json": its
# JSON Lines, whatever the CLI calls them).
MODES: Final[Mapping[str, tuple[str, ...]]] = {"gemini": ("stream-json", "json")}
DEFAULT_MODES: Final = ("json",)


def modes_of(engine: str) -> tuple[str, ...]:
    return MODES.get(engine, DEFAULT_MODES)


# The engines whose fakes have fidelity variants (variants.py). The later four have fakes held to their
# real captures by their own tests, but no variants yet: every difference would be unexplained.
FIDELITY_ENGINES: Final = ("codex", "gemini", "opencode", "claude", "qwen", "codebuddy", "kilo")
NOT_COMPARABLE: Final = "not comparable: "
NO_VARIANTS: Final = (
    "no fidelity variants for {engine} yet: its fake is held to its captures by its own tests"
)


@dataclass(frozen=True, slots=True)
class Difference:
    engine: str
    version: str
    script: str
    mode: str
    turn: int
    text: str
    variant: str | None = None


@dataclass(frozen=True, slots=True)
class TurnOutput:
    stdout: bytes
    stderr: bytes
    exit_code: int | None  # None: killed after the turn's timeout
    argv: tuple[str, ...] = ()  # the command line as played (argv[0] the engine's name)
    duration_sec: float | None = None
    timeout_sec: float | None = None  # the timeout it was played under


@dataclass(frozen=True, slots=True)
class Script:
    case: str
    source: str  # fidelity, example, catalog
    document: Mapping[str, Any]
    engines: tuple[str, ...]  # engines it is meant for


@dataclass
class EngineReport:
    pin: str
    played: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    not_compared: str | None = None  # why nothing was (no fake of this engine yet)

    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if d.variant is None]


def classify(
    differences: Sequence[Difference], context: TurnContext | None, variants: Iterable[Variant] = VARIANTS
) -> list[Difference]:
    """One turn's differences, each with the variant that explains it (or none): see variants.py."""
    names = explain([d.text for d in differences], context, variants)
    return [replace(d, variant=name) for d, name in zip(differences, names, strict=True)]


def classify_all(
    found: Iterable[tuple[int, str]],
    make: Callable[[int, str], Difference],
    context_of: Callable[[int], TurnContext | None],
    variants: Iterable[Variant] = VARIANTS,
) -> list[Difference]:
    """compare()'s (turn, text) pairs as classified Differences, turn by turn."""
    by_turn: dict[int, list[Difference]] = {}
    for number, text in found:
        by_turn.setdefault(number, []).append(make(number, text))
    result: list[Difference] = []
    for number, differences in by_turn.items():
        result += classify(differences, context_of(number) if number > 0 else None, variants)
    return result


# Scripts -------------------------------------------------------------------------------------------


def scripts(patterns: list[str] | None = None) -> list[Script]:
    from turngate.judge.case_folder import case_id
    from turngate.judge.catalog import load_catalog

    found: list[Script] = []
    for path in sorted(FIDELITY_SCRIPTS.glob("*.yaml")):
        document = load_script_yaml(path)
        found.append(Script(document["case"], "fidelity", document, REAL_ENGINES))
    for path in sorted(EXAMPLES.glob("*.yaml")):
        document = load_script_yaml(path)
        found.append(Script(document["case"], "example", document, REAL_ENGINES))
    for scenario in load_catalog():
        for engine in scenario.engines:
            name = case_id(scenario, engine)
            found.append(Script(name, "catalog", {"case": name, **scenario.engine_script}, (engine,)))
    if patterns:
        found = [s for s in found if any(fnmatch.fnmatchcase(s.case, p) for p in patterns)]
    return found


def load_script_yaml(path: Path) -> Any:
    # The fake engines' loader (libyaml when present), which some examples rely on (`Which style?`).
    return load_data(path.read_text(encoding="utf-8"))


def unplayable_reason(script: Script) -> str | None:
    try:
        check(dict(script.document), script.case)
    except ScriptProblem as problem:
        return problem.message
    return playable(normalise(dict(script.document), script.case))


# Playing -------------------------------------------------------------------------------------------


def fake_environment(engine: str, version: str, home: Path, retries: int | None = None) -> dict[str, str]:
    """What the fake of ``engine`` gets so that it plays the pinned build under the configuration the
    real launcher gives the real CLI (turngate/engines/real/launch.py): the build emulated
    (TURNGATE_EMULATE, where the fake knows it), claude's user settings (the launcher's
    `permissions.defaultMode: bypassPermissions`, which claude's stream shows), and qwen's user
    settings (the launcher's retry limit and delays, which qwen's retry lines show). ``retries`` is
    the retry limit the launcher gets (``script_retries``; None: the launcher's default)."""
    from turngate.engines.fake.argv import claude, codex
    from turngate.engines.real.launch import DEFAULT_RETRIES, claude_settings, qwen_settings

    env: dict[str, str] = {}
    known = {"codex": tuple(codex.EMULATED_VERSIONS), "claude": tuple(claude.EMULATED_VERSIONS)}
    if version in known.get(engine, ()):
        env["TURNGATE_EMULATE"] = f"{engine}@{version}"
    if engine == "claude":
        folder = home / ".claude"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(claude_settings(), indent=2), encoding="utf-8")
        env["CLAUDE_CONFIG_DIR"] = str(folder)
    if engine == "qwen":
        folder = home / ".qwen"
        folder.mkdir(parents=True, exist_ok=True)
        limit = DEFAULT_RETRIES["qwen"] if retries is None else retries
        (folder / "settings.json").write_text(json.dumps(qwen_settings(limit), indent=2), encoding="utf-8")
    return env


def script_retries(script: Script) -> int:
    """The retry limit a real CLI's launcher gets to play ``script`` (its model_error `retries`)."""
    try:
        return retry_limit(normalise(dict(script.document), script.case))
    except ScriptProblem:
        return 0


def play(
    engine: str,
    mode: str,
    script: Script,
    bin_dir: Path,
    cwd: Path,
    env: Mapping[str, str],
    *,
    timeout: float = TURN_TIMEOUT_SEC,
    options: Sequence[str] = (),
) -> list[TurnOutput]:
    """Every turn of ``script`` on one engine; stops after a turn that exits non-zero. A real engine's
    launcher gets the script's retry limit (its model_error `retries`); ``options`` go right after the
    CLI's name (codex's ``-c key=value``)."""
    outputs: list[TurnOutput] = []
    session: str | None = None
    env = {**env, RETRIES_VARIABLE: str(script_retries(script))}
    prepare_run(engine, cwd)
    for number in range(len(script.document["turns"])):
        prompt = FIRST_PROMPT.format(case=script.case) if number == 0 else REPLY
        if number > 0 and session is None:
            break
        argv = command_line(engine, mode, prompt, session, cwd)
        argv[1:1] = options
        started = time.monotonic()
        try:
            done = subprocess.run(
                [str(bin_dir / engine), *argv[1:]],
                cwd=cwd,
                env=env,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            )
            stdout, stderr, code = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as expired:
            stdout, stderr, code = expired.stdout or b"", expired.stderr or b"", None
        seconds = round(time.monotonic() - started, 3)
        output = TurnOutput(stdout, stderr, code, tuple(argv), seconds, timeout)
        outputs.append(output)
        if output.exit_code != 0:
            break
        found = _SESSION.search(output.stdout)
        session = session or (found.group(1).decode() if found else None)
    return outputs


# Comparing -----------------------------------------------------------------------------------------


def compare(
    real: Sequence[TurnOutput],
    fake: Sequence[TurnOutput],
    line: Callable[[str], str] = str,
    sides: tuple[str, str] = ("real", "fake"),
) -> Iterator[tuple[int, str]]:
    """(turn number, difference text) for every shape difference, turn by turn.

    stdout by shape (compare_stream); stderr's JSON lines or document by shape too, and its text
    lines one by one (``line`` maps each before the comparison: drift names known notices by their
    variant, so a path in them does not count). ``sides`` names the two in the texts (drift: versions)."""
    a, b = sides
    if len(real) != len(fake):
        yield 0, f"turns played: {a} {len(real)}, {b} {len(fake)}"
    for number, (mine, theirs) in enumerate(zip(real, fake, strict=False), 1):
        if mine.exit_code != theirs.exit_code:
            yield number, f"exit code: {a} {mine.exit_code}, {b} {theirs.exit_code}"
        for text in _compare_stream(mine.stdout, theirs.stdout, sides):
            yield number, f"stdout: {text}"
        for text in compare_stderr(mine.stderr, theirs.stderr, line, sides):
            yield number, f"stderr: {text}"


def compare_stderr(
    real: bytes, fake: bytes, line: Callable[[str], str] = str, sides: tuple[str, str] = ("real", "fake")
) -> Iterator[str]:
    a, b = sides
    real_lines, real_structured = stderr_parts(real)
    fake_lines, fake_structured = stderr_parts(fake)
    yield from _compare_stream(real_structured, fake_structured, sides)
    mine = list(dict.fromkeys(line(text) for text in real_lines))
    theirs = list(dict.fromkeys(line(text) for text in fake_lines))
    for text in mine:
        if text not in theirs:
            yield f"line only in {a}: {text}"
    for text in theirs:
        if text not in mine:
            yield f"line only in {b}: {text}"


@functools.lru_cache(maxsize=64)
def _shapes(data: bytes) -> list[tuple[str, dict[str, str]]]:
    # One stream is often compared many times (the fake's turn against every format-change mutant).
    return events(data)


def _compare_stream(real: bytes, fake: bytes, sides: tuple[str, str] = ("real", "fake")) -> Iterator[str]:
    a, b = sides
    mine, theirs = _shapes(real), _shapes(fake)
    labels_real = [label for label, _ in mine]
    labels_fake = [label for label, _ in theirs]
    matcher = difflib.SequenceMatcher(a=labels_real, b=labels_fake, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or op == "replace":
            pairs = list(zip(range(a0, a1), range(b0, b1), strict=False))
            for i, j in pairs:
                if mine[i][0] != theirs[j][0]:
                    yield f"line {mine[i][0]} in {a} where {b} has {theirs[j][0]}"
                else:
                    yield from _compare_event(mine[i], theirs[j], sides)
            for i in range(a0 + len(pairs), a1):
                yield f"only in {a}: {mine[i][0]}"
            for j in range(b0 + len(pairs), b1):
                yield f"only in {b}: {theirs[j][0]}"
        elif op == "delete":
            for i in range(a0, a1):
                yield f"only in {a}: {mine[i][0]}"
        elif op == "insert":
            for j in range(b0, b1):
                yield f"only in {b}: {theirs[j][0]}"


def _compare_event(
    real: tuple[str, dict[str, str]], fake: tuple[str, dict[str, str]], sides: tuple[str, str]
) -> Iterator[str]:
    a, b = sides
    label, mine = real
    _, theirs = fake
    only_real = sorted(set(mine) - set(theirs))
    only_fake = sorted(set(theirs) - set(mine))
    changed = sorted(key for key in set(mine) & set(theirs) if mine[key] != theirs[key])
    if only_real:
        yield f"{label}: keys only in {a}: {', '.join(only_real)}"
    if only_fake:
        yield f"{label}: keys only in {b}: {', '.join(only_fake)}"
    for key in changed:
        yield f"{label}: {key}: {a} {mine[key]}, {b} {theirs[key]}"


# Running ---------------------------------------------------------------------------------------------


def run_fidelity(
    pins: Iterable[Pin], cache: Path, chosen: list[Script], keep: Path | None = None, progress: Any = None
) -> list[EngineReport]:
    reports = []
    with tempfile.TemporaryDirectory(prefix="turngate-fidelity-") as folder:
        root = keep or Path(folder)
        scripts_dir = root / "scripts"
        scripts_dir.mkdir(parents=True, exist_ok=True)
        for script in chosen:
            text = yaml.safe_dump(dict(script.document), sort_keys=False)
            write_compiled(str(scripts_dir / f"{script.case}.yaml"), text, None)  # for the fakes
        with ModelServer(scripts_dir, root / "model-requests.jsonl", root / "model-data") as server:
            for pin in pins:
                reports.append(_run_pin(pin, cache, chosen, root, server.url, progress))
    return reports


def _run_pin(
    pin: Pin, cache: Path, chosen: list[Script], root: Path, url: str, progress: Any
) -> EngineReport:
    report = EngineReport(pin.name)
    base = root / pin.name
    real_bin, fake_bin = base / "real-bin", base / "fake-bin"
    write_launchers(real_bin, [pin], cache, model_url=url)
    install_fakes(fake_bin)
    if not (fake_bin / pin.engine).exists():
        report.not_compared = f"no fake {pin.engine} in this build: its fidelity waits for one"
        return report
    if pin.engine not in FIDELITY_ENGINES:
        report.not_compared = NO_VARIANTS.format(engine=pin.engine)
        return report
    path = os.environ.get("PATH", "/usr/bin:/bin")
    for script in chosen:
        if pin.engine not in script.engines:
            continue
        reason = unplayable_reason(script)
        if reason is not None:
            report.skipped[script.case] = reason
            continue
        for mode in modes_of(pin.engine):
            where = base / script.case / mode
            sides = {}
            for side in ("real", "fake"):
                cwd = where / side / "run"
                cwd.mkdir(parents=True, exist_ok=True)
                (cwd / "SKILL.md").write_text(
                    "---\nname: greet\n---\n\n# Greet\n\nGreet the user.\n", encoding="utf-8"
                )
                env = {
                    "PATH": path,
                    "HOME": str(where / side / "home"),
                    "TURNGATE_STATE": str(where / side / "state"),
                }
                if side == "fake":
                    env["TURNGATE_SCRIPTS"] = str(root / "scripts")
                    home = where / side / "home"
                    env.update(fake_environment(pin.engine, pin.version, home, script_retries(script)))
                outputs = play(pin.engine, mode, script, real_bin if side == "real" else fake_bin, cwd, env)
                sides[side] = outputs
                keep_turns(where / side, outputs)
            report.differences += compare_script(
                pin.engine, pin.version, mode, script, sides["real"], sides["fake"]
            )
        report.played.append(script.case)
        if progress is not None:
            progress(pin, script)
    return report


def keep_turns(folder: Path, outputs: Sequence[TurnOutput]) -> None:
    """turnN.stdout, turnN.stderr and turnN.exit (the exit code, or "killed") per turn, for --keep."""
    for number, output in enumerate(outputs, 1):
        (folder / f"turn{number}.stdout").write_bytes(output.stdout)
        (folder / f"turn{number}.stderr").write_bytes(output.stderr)
        code = "killed" if output.exit_code is None else str(output.exit_code)
        (folder / f"turn{number}.exit").write_text(code + "\n", encoding="utf-8")


def compare_script(
    engine: str,
    version: str,
    mode: str,
    script: Script,
    real: Sequence[TurnOutput],
    fake: Sequence[TurnOutput],
    *,
    first_turn: int = 1,
    variants: Iterable[Variant] = VARIANTS,
) -> list[Difference]:
    """The classified differences of one script's turns (``real[0]`` is turn ``first_turn``)."""
    compiled = normalise(dict(script.document), script.case)

    def context(number: int) -> TurnContext:
        turn = number + first_turn - 1
        output = real[number - 1] if number <= len(real) else TurnOutput(b"", b"", None)
        return TurnContext(engine, mode, turn_facts(compiled, turn), output.stdout, output.stderr)

    def difference(number: int, text: str) -> Difference:
        turn = number + first_turn - 1 if number > 0 else 0
        return Difference(engine, version, script.case, mode, turn, text)

    return classify_all(compare(real, fake), difference, context, variants)


def render(reports: list[EngineReport]) -> str:
    lines = []
    for report in reports:
        if report.not_compared:
            lines.append(f"{report.pin}: not compared: {report.not_compared}")
            continue
        counted = Counter(d.variant for d in report.differences if d.variant)
        unexplained = report.unexplained()
        lines.append(
            f"{report.pin}: {len(report.played)} scripts played, {len(report.skipped)} not playable;"
            f" {len(report.differences)} differences: {len(report.differences) - len(unexplained)} explained"
            f" by {len(counted)} named variants, {len(unexplained)} unexplained"
        )
        engine = report.pin.split("@")[0]
        for name, reason in report.skipped.items():
            if reason.startswith(NOT_COMPARABLE):  # a saved capture (playable ones are many, and say so)
                lines.append(f"  {name}: {reason}")
        for name, count in sorted(counted.items()):
            variant = next(v for v in VARIANTS if v.name == name and engine in v.engines)
            lines.append(f"  variant {name} ({count}): {variant.reason}")
        seen: set[tuple[str, str]] = set()
        for difference in unexplained:
            key = (difference.mode, difference.text)
            if key in seen:
                continue
            seen.add(key)
            count = sum(1 for d in unexplained if (d.mode, d.text) == key)
            lines.append(
                f"  UNEXPLAINED ({count}x, e.g. {difference.script} [{difference.mode}]"
                f" turn {difference.turn}): {difference.text}"
            )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    pins = select(read_lock(), args.engines or None)
    cache = args.cache or default_cache()
    missing = [pin.name for pin in pins if not pin.executable(cache).exists()]
    if missing:
        print(
            f"turngate: not installed: {' '.join(missing)}: run `turngate engines real install`",
            file=sys.stderr,
        )
        return 2
    chosen = scripts(args.k)

    def progress(pin: Pin, script: Script) -> None:
        print(f"  {pin.name} {script.case}", file=sys.stderr, flush=True)

    reports = run_fidelity(pins, cache, chosen, args.keep, progress)
    print(render(reports))
    if args.json:
        write_json(reports, args.json)
    return 1 if any(r.unexplained() for r in reports) else 0


def write_json(reports: list[EngineReport], path: Path) -> None:
    document = [
        {
            "pin": r.pin,
            "played": r.played,
            "skipped": r.skipped,
            "differences": [asdict(d) for d in r.differences],
            "variants": {v.name: v.reason for v in VARIANTS if r.pin.split("@")[0] in v.engines},
        }
        for r in reports
    ]
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# Version drift: two real builds of one engine, the same scripts ------------------------------------


def run_drift(old: Pin, new: Pin, cache: Path, chosen: list[Script]) -> list[Difference]:
    """Shape differences between two real builds of one engine (``real`` is ``new``, ``fake`` is ``old``)."""
    if old.engine != new.engine:
        raise ValueError(f"drift: {old.name} and {new.name}: not the same engine")
    found: list[Difference] = []
    with tempfile.TemporaryDirectory(prefix="turngate-drift-") as folder:
        root = Path(folder)
        scripts_dir = root / "scripts"
        scripts_dir.mkdir()
        for script in chosen:
            (scripts_dir / f"{script.case}.yaml").write_text(
                yaml.safe_dump(dict(script.document), sort_keys=False), encoding="utf-8"
            )
        with ModelServer(scripts_dir, root / "model-requests.jsonl", root / "model-data") as server:
            for pin in (old, new):
                write_launchers(root / pin.name / "bin", [pin], cache, model_url=server.url)
            for script in chosen:
                if new.engine not in script.engines or unplayable_reason(script) is not None:
                    continue
                for mode in modes_of(new.engine):
                    sides = {}
                    for pin in (old, new):
                        where = root / pin.name / script.case / mode
                        cwd = where / "run"
                        cwd.mkdir(parents=True)
                        (cwd / "SKILL.md").write_text("# Greet\n", encoding="utf-8")
                        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TURNGATE_STATE": str(where)}
                        sides[pin.name] = play(new.engine, mode, script, root / pin.name / "bin", cwd, env)
                    for number, text in drift_compare(new, old, sides[new.name], sides[old.name]):
                        found.append(Difference(new.engine, new.version, script.case, mode, number, text))
    return found


def notice_line(engine: str) -> Callable[[str], str]:
    """A stderr line as drift compares it: a notice a variant names is that variant's quoted example
    (its paths, times and ports do not count); any other line as it is."""

    def canonical(line: str) -> str:
        known = stderr_notice(engine, line)
        return f"{known[1]} [{known[0]}]" if known else line

    return canonical


def drift_compare(
    new: Pin, old: Pin, new_turns: Sequence[TurnOutput], old_turns: Sequence[TurnOutput]
) -> Iterator[tuple[int, str]]:
    """compare() of two builds' turns, the texts naming the versions (``new`` first)."""
    sides = (new.version, old.version) if new.version != old.version else (new.name + " (new)", old.name)
    return compare(new_turns, old_turns, notice_line(new.engine), sides)
