"""Fidelity: the real CLI and our fake play the same script; their streams are compared by shape.

For each script a real engine can play (the fidelity set in
``fidelity_scripts/``, the fake engines' examples, every catalog scenario's
script), both engines are run with the same command lines, turn after turn
(a resume for each later turn), and per turn the stdout shapes
(turngate/engines/real/shapes.py), whether stderr is silent, and the exit
code are compared. Ids, timestamps and token counts never count.

Each difference is either explained by a named variant (``VARIANTS``: where
the real CLI does something the fake does not model, and why that is
acceptable) or reported as unexplained; the command exits 1 when any is.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.engines.fake.compiler import check, normalise
from turngate.engines.fake.install import install as install_fakes
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.modelserver.endpoint import ModelServer
from turngate.engines.modelserver.rounds import playable
from turngate.engines.real.lock import Pin, default_cache, read_lock, select
from turngate.engines.real.npm_install import write_launchers
from turngate.engines.real.shapes import events
from turngate.implementations.reference.commands import CommandOptions, build_command

FIDELITY_SCRIPTS: Final = Path(__file__).with_name("fidelity_scripts")
EXAMPLES: Final = Path(__file__).resolve().parents[2] / "engines" / "fake" / "examples"
TURN_TIMEOUT_SEC: Final = 240.0
FIRST_PROMPT: Final = "Run the skill greet (instructions: SKILL.md).\nInputs:\n- case: tg-case-{case}"
REPLY: Final = "Formal, please"
_SESSION: Final = re.compile(rb'"(?:thread_id|session_id|sessionID)"\s*:\s*"([^"]+)"')
# gemini prints in two document formats; both are compared.
MODES: Final[Mapping[str, tuple[str, ...]]] = {
    "codex": ("json",),
    "gemini": ("stream-json", "json"),
    "opencode": ("json",),
}


@dataclass(frozen=True, slots=True)
class Variant:
    """A known, accepted difference between a real CLI and the fake: matched on the difference text."""

    name: str
    engines: tuple[str, ...]
    pattern: str  # a regular expression searched in Difference.text
    reason: str

    def explains(self, difference: Difference) -> bool:
        return difference.engine in self.engines and re.search(self.pattern, difference.text) is not None


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
    exit_code: int | None  # None: killed after TURN_TIMEOUT_SEC


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

    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if d.variant is None]


# The named variants: what the real CLIs do that the fakes do not model, and why that is acceptable.
ALL: Final = ("codex", "gemini", "opencode")
VARIANTS: Final[tuple[Variant, ...]] = (
    Variant(
        "stderr-notices",
        ALL,
        r"^stderr: real (text|document\+text), fake silent$",
        "the real CLIs write notices on stderr (codex: 'Reading additional input from stdin...' and a"
        " PATH-alias warning; gemini: 'YOLO mode is enabled…', colour and ripgrep warnings, startup"
        " metrics, API error stack traces); the fake writes stderr only where a script asks for noise."
        " Gates read stdout; stderr noise hazards are scripted explicitly (corpus, catalog)",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ALL,
        r"command_execution in real where fake has item\.\w+:mcp_tool_call"
        r"|keys only in (real|fake): (parameters|part\.state\.input)\.",
        "the model server plays every scripted tool as a call of the CLI's own shell tool, with the"
        " arguments that tool declares (command, description) and a command that prints the scripted"
        " output; the fake shows the script's tool name and input as given (an MCP tool in codex)."
        " MCP servers are not configured for the real CLIs",
    ),
    Variant(
        "failed-command-is-a-completed-call",
        ("gemini", "opencode"),
        r'tool_result: status: real "success", fake "error"'
        r'|part\.state\.status: real "completed", fake "error"'
        r"|tool_use:tool: keys only in real: part\.state\.metadata, part\.state\.output"
        r"|tool_use:tool: keys only in fake: part\.state\.error",
        "a shell command that exits non-zero is a successful tool call for gemini and opencode (the exit"
        " code is in the output); the fake's `status: error` is a tool that itself failed, which a"
        " model cannot make a real CLI do",
    ),
    Variant(
        "codex-api-error-event",
        ("codex",),
        r"line error in real where fake has item\.completed:error",
        "codex reports a model API error (a 4xx) as a top-level `error` event carrying the provider's"
        " body, then `turn.failed`; the fake's non-transient `error` step is an `error` item, the kind"
        " codex uses for its own errors (unknown model metadata). Both end in turn.failed, exit 1",
    ),
    Variant(
        "gemini-api-error-in-result",
        ("gemini",),
        r'only in fake: error$|result: error\.type: real "unknown", fake "Error"',
        "gemini ends a turn whose model request failed with `result` status error, error.type"
        ' "unknown", and no `error` event; the fake writes an `error` event first and error.type "Error"',
    ),
    Variant(
        "gemini-exit-is-http-status",
        ("gemini",),
        r"exit code: real 144, fake 1",
        "gemini exits with the API error's HTTP status modulo 256 (400 → 144) and names it as the"
        " document's code; the fake exits 1 with code 1 unless the script's error step gives a code",
    ),
    Variant(
        "gemini-json-error-on-stderr",
        ("gemini",),
        r"only in fake: document$",
        "in json mode gemini writes an error document on stderr (after a stack trace); the fake writes"
        " it where `document_stream` says (stdout by default; `document_stream: stderr` is the real"
        " placement, which the corpus capture json-document-on-stderr covers)",
    ),
    Variant(
        "opencode-error-before-any-step",
        ("opencode",),
        r"only in fake: step_start:step-start$",
        "when the first model request fails, opencode prints the `error` alone, with no step_start; the"
        " fake starts every turn with step_start",
    ),
    Variant(
        "opencode-api-error-http-details",
        ("opencode",),
        r"error: keys only in real: error\.data\.(metadata|responseBody|responseHeaders)",
        "opencode's APIError carries the HTTP response (responseHeaders, responseBody, metadata) of a"
        " provider the fake does not have",
    ),
    Variant(
        "opencode-reasoning-needs-thinking",
        ("opencode",),
        r"only in fake: reasoning:reasoning$",
        "opencode 1.18.33 prints reasoning parts only with --thinking, which the documented command line"
        " does not pass; the fake always prints them, so reasoning echoes of the marker stay testable",
    ),
    Variant(
        "opencode-one-text-part-per-answer",
        ("opencode",),
        r"only in fake: text:text$",
        "opencode makes one text part of one model answer; the fake writes one text event per say step"
        " (the reply, their concatenation, is the same)",
    ),
)


def classify(difference: Difference, variants: Iterable[Variant] = VARIANTS) -> Difference:
    for variant in variants:
        if variant.explains(difference):
            return Difference(**{**asdict(difference), "variant": variant.name})
    return difference


# Scripts -------------------------------------------------------------------------------------------


def scripts(patterns: list[str] | None = None) -> list[Script]:
    from turngate.judge.case_folder import case_id
    from turngate.judge.catalog import load_catalog

    found: list[Script] = []
    for path in sorted(FIDELITY_SCRIPTS.glob("*.yaml")):
        document = load_script_yaml(path)
        found.append(Script(document["case"], "fidelity", document, ("codex", "gemini", "opencode")))
    for path in sorted(EXAMPLES.glob("*.yaml")):
        document = load_script_yaml(path)
        found.append(Script(document["case"], "example", document, ("codex", "gemini", "opencode")))
    for scenario in load_catalog():
        for engine in scenario.engines:
            name = case_id(scenario, engine)
            found.append(Script(name, "catalog", {"case": name, **scenario.engine_script}, (engine,)))
    if patterns:
        found = [s for s in found if any(fnmatch.fnmatchcase(s.case, p) for p in patterns)]
    return found


def load_script_yaml(path: Path) -> Any:
    # The fake engines' loader (libyaml when present), which some examples rely on (`Which style?`).
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def unplayable_reason(script: Script) -> str | None:
    try:
        check(dict(script.document), script.case)
    except ScriptProblem as problem:
        return problem.message
    return playable(normalise(dict(script.document), script.case))


# Playing -------------------------------------------------------------------------------------------


def play(
    engine: str, mode: str, script: Script, bin_dir: Path, cwd: Path, env: Mapping[str, str]
) -> list[TurnOutput]:
    """Every turn of ``script`` on one engine; stops after a turn that exits non-zero."""
    outputs: list[TurnOutput] = []
    session: str | None = None
    output_format = {"json": "json", "stream-json": "stream-json"}.get(mode) if engine == "gemini" else None
    options = CommandOptions(codex_auto_flag="--yolo", gemini_output_format=output_format)  # type: ignore[arg-type]
    for number in range(len(script.document["turns"])):
        prompt = FIRST_PROMPT.format(case=script.case) if number == 0 else REPLY
        if number > 0 and session is None:
            break
        argv = build_command(engine, "interactive", prompt=prompt, resume_id=session, options=options)
        try:
            done = subprocess.run(
                [str(bin_dir / engine), *argv[1:]],
                cwd=cwd,
                env=dict(env),
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=TURN_TIMEOUT_SEC,
                check=False,
            )
            output = TurnOutput(done.stdout, done.stderr, done.returncode)
        except subprocess.TimeoutExpired as expired:
            output = TurnOutput(expired.stdout or b"", expired.stderr or b"", None)
        outputs.append(output)
        if output.exit_code != 0:
            break
        found = _SESSION.search(output.stdout)
        session = session or (found.group(1).decode() if found else None)
    return outputs


# Comparing -----------------------------------------------------------------------------------------


def compare(real: list[TurnOutput], fake: list[TurnOutput]) -> Iterator[tuple[int, str]]:
    """(turn number, difference text) for every shape difference, turn by turn."""
    if len(real) != len(fake):
        yield 0, f"turns played: real {len(real)}, fake {len(fake)}"
    for number, (mine, theirs) in enumerate(zip(real, fake, strict=False), 1):
        if mine.exit_code != theirs.exit_code:
            yield number, f"exit code: real {mine.exit_code}, fake {theirs.exit_code}"
        for text in _compare_stream(mine.stdout, theirs.stdout):
            yield number, f"stdout: {text}"
        real_err, fake_err = _stderr_kind(mine.stderr), _stderr_kind(theirs.stderr)
        if real_err != fake_err:
            yield number, f"stderr: real {real_err}, fake {fake_err}"


def _stderr_kind(data: bytes) -> str:
    found = events(data)
    if not found:
        return "silent"
    kinds = sorted({label if label in ("text", "document") else "json" for label, _ in found})
    return "+".join(kinds)


def _compare_stream(real: bytes, fake: bytes) -> Iterator[str]:
    mine, theirs = events(real), events(fake)
    labels_real = [label for label, _ in mine]
    labels_fake = [label for label, _ in theirs]
    matcher = difflib.SequenceMatcher(a=labels_real, b=labels_fake, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or op == "replace":
            pairs = list(zip(range(a0, a1), range(b0, b1), strict=False))
            for i, j in pairs:
                if mine[i][0] != theirs[j][0]:
                    yield f"line {mine[i][0]} in real where fake has {theirs[j][0]}"
                else:
                    yield from _compare_event(mine[i], theirs[j])
            for i in range(a0 + len(pairs), a1):
                yield f"only in real: {mine[i][0]}"
            for j in range(b0 + len(pairs), b1):
                yield f"only in fake: {theirs[j][0]}"
        elif op == "delete":
            for i in range(a0, a1):
                yield f"only in real: {mine[i][0]}"
        elif op == "insert":
            for j in range(b0, b1):
                yield f"only in fake: {theirs[j][0]}"


def _compare_event(real: tuple[str, dict[str, str]], fake: tuple[str, dict[str, str]]) -> Iterator[str]:
    label, mine = real
    _, theirs = fake
    only_real = sorted(set(mine) - set(theirs))
    only_fake = sorted(set(theirs) - set(mine))
    changed = sorted(key for key in set(mine) & set(theirs) if mine[key] != theirs[key])
    if only_real:
        yield f"{label}: keys only in real: {', '.join(only_real)}"
    if only_fake:
        yield f"{label}: keys only in fake: {', '.join(only_fake)}"
    for key in changed:
        yield f"{label}: {key}: real {mine[key]}, fake {theirs[key]}"


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
            (scripts_dir / f"{script.case}.yaml").write_text(
                yaml.safe_dump(dict(script.document), sort_keys=False), encoding="utf-8"
            )
        with ModelServer(scripts_dir, root / "model-requests.jsonl", root / "model-data") as server:
            for pin in pins:
                reports.append(_run_pin(pin, cache, chosen, root, server.url, progress))
    return reports


def _run_pin(
    pin: Pin, cache: Path, chosen: list[Script], root: Path, url: str, progress: Any
) -> EngineReport:
    from turngate.engines.fake.argv.codex import EMULATED_VERSIONS

    report = EngineReport(pin.name)
    base = root / pin.name
    real_bin, fake_bin = base / "real-bin", base / "fake-bin"
    write_launchers(real_bin, [pin], cache, model_url=url)
    install_fakes(fake_bin)
    path = os.environ.get("PATH", "/usr/bin:/bin")
    for script in chosen:
        if pin.engine not in script.engines:
            continue
        reason = unplayable_reason(script)
        if reason is not None:
            report.skipped[script.case] = reason
            continue
        for mode in MODES[pin.engine]:
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
                    if pin.engine == "codex" and pin.version in EMULATED_VERSIONS:
                        env["TURNGATE_EMULATE"] = pin.name
                outputs = play(pin.engine, mode, script, real_bin if side == "real" else fake_bin, cwd, env)
                sides[side] = outputs
                for number, output in enumerate(outputs, 1):
                    (where / side / f"turn{number}.stdout").write_bytes(output.stdout)
                    (where / side / f"turn{number}.stderr").write_bytes(output.stderr)
            for number, text in compare(sides["real"], sides["fake"]):
                report.differences.append(
                    classify(Difference(pin.engine, pin.version, script.case, mode, number, text))
                )
        report.played.append(script.case)
        if progress is not None:
            progress(pin, script)
    return report


def render(reports: list[EngineReport]) -> str:
    lines = []
    for report in reports:
        counted = Counter(d.variant for d in report.differences if d.variant)
        unexplained = report.unexplained()
        lines.append(
            f"{report.pin}: {len(report.played)} scripts played, {len(report.skipped)} not playable;"
            f" {len(report.differences)} differences: {len(report.differences) - len(unexplained)} explained"
            f" by {len(counted)} named variants, {len(unexplained)} unexplained"
        )
        for name, count in sorted(counted.items()):
            variant = next(v for v in VARIANTS if v.name == name)
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
        document = [
            {
                "pin": r.pin,
                "played": r.played,
                "skipped": r.skipped,
                "differences": [asdict(d) for d in r.differences],
                "variants": {v.name: v.reason for v in VARIANTS},
            }
            for r in reports
        ]
        args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if any(r.unexplained() for r in reports) else 0


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
                for mode in MODES[new.engine]:
                    sides = {}
                    for pin in (old, new):
                        where = root / pin.name / script.case / mode
                        cwd = where / "run"
                        cwd.mkdir(parents=True)
                        (cwd / "SKILL.md").write_text("# Greet\n", encoding="utf-8")
                        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TURNGATE_STATE": str(where)}
                        sides[pin.name] = play(new.engine, mode, script, root / pin.name / "bin", cwd, env)
                    for number, text in compare(sides[new.name], sides[old.name]):
                        text = text.replace("real", new.version).replace("fake", old.version)
                        found.append(Difference(new.engine, new.version, script.case, mode, number, text))
    return found
