"""Fidelity and drift on the saved real captures (``corpus/<engine>/real-*/``): no npm, no network.

Each real capture (``turngate engines real capture``) is one turn of a fidelity script played by a
pinned real CLI. Here the fake engine plays the same script (the fake codex emulating that
version), and that turn is compared with the capture exactly as a live fidelity run compares it
(fidelity.compare_script: the same shapes, the same named variants). Two versions of one engine
are compared capture by capture (the same script, turn and document format) for drift.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import yaml

from turngate.base.data_yaml import load_data
from turngate.engines.fake.install import install as install_fakes
from turngate.engines.fake.script import precompile
from turngate.engines.real.lock import Pin
from turngate.tools.realengines.captures import CAPTURE_SCRIPTS, WANTED, Wanted, all_scripts
from turngate.tools.realengines.fidelity import (
    FIDELITY_ENGINES,
    FIDELITY_SCRIPTS,
    NO_VARIANTS,
    NOT_COMPARABLE,
    Difference,
    EngineReport,
    Script,
    TurnOutput,
    compare_script,
    drift_compare,
    fake_environment,
    keep_turns,
    play,
    script_retries,
)
from turngate.tools.realengines.variants import VARIANTS, Variant

# real-<version>-[<format>-]<name>, as captures.capture_all names the folders.

CAPTURE_FOLDER: Final = re.compile(
    r"real-(?P<version>\d+(?:\.\d+)+)-(?:(?P<mode>stream-json|json)-)?(?P<name>[a-z][a-z0-9-]*)"
)
DEFAULT_MODE: Final = "json"  # codex and opencode print JSON Lines; the folder names no format


@dataclass(frozen=True, slots=True)
class SavedCapture:
    """One saved real turn: which engine, version, format, fidelity script and turn, and its bytes."""

    folder: Path
    engine: str
    version: str
    mode: str
    wanted: Wanted
    output: TurnOutput
    killed: str | None = None  # how the recorder ended a turn that did not end (recorded.killed)

    @property
    def name(self) -> str:
        return f"{self.engine}/{self.folder.name}"

    @property
    def pin(self) -> str:
        return f"{self.engine}@{self.version}"


def saved_captures(
    corpus: Path, engines: Iterable[str] | None = None, kinds: Iterable[str] | None = ("fidelity",)
) -> list[SavedCapture]:
    """The real captures in ``corpus`` (``ENGINE`` or ``ENGINE@VERSION`` in ``engines`` chooses) of
    the wanted ``kinds`` (None: every kind). Fidelity holds the fakes to the fidelity captures; the
    hazard and exploration captures are drift's, and the fakes' next fidelity round's."""
    sets = None if kinds is None else set(kinds)
    wanted_by_name = {wanted.name: wanted for wanted in WANTED if sets is None or wanted.kind in sets}
    chosen = list(engines or ())
    found: list[SavedCapture] = []
    for meta in sorted(corpus.glob("*/real-*/capture.yaml")):
        folder = meta.parent
        match = CAPTURE_FOLDER.fullmatch(folder.name)
        if match is None or match["name"] not in wanted_by_name:
            continue
        engine = folder.parent.name
        if chosen and engine not in chosen and f"{engine}@{match['version']}" not in chosen:
            continue
        document = load_data(meta.read_text(encoding="utf-8")) or {}
        stderr = folder / "stderr"
        output = TurnOutput(
            (folder / "stdout").read_bytes(),
            stderr.read_bytes() if stderr.exists() else b"",
            document.get("exit_code"),
        )
        mode = match["mode"] or DEFAULT_MODE
        recorded = document.get("recorded")
        killed = recorded.get("killed") if isinstance(recorded, dict) else None
        wanted = wanted_by_name[match["name"]]
        found.append(SavedCapture(folder, engine, match["version"], mode, wanted, output, killed))
    return found


def versions(corpus: Path) -> dict[str, list[str]]:
    """Per engine, the versions its real captures were recorded from (oldest first)."""
    seen: dict[str, set[str]] = {}
    for capture in saved_captures(corpus, kinds=None):
        seen.setdefault(capture.engine, set()).add(capture.version)

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    return {engine: sorted(found, key=key) for engine, found in sorted(seen.items())}


def fidelity_script(name: str) -> Script:
    """The script a saved capture was played from (a fidelity or a capture script), by its case."""
    return _scripts()[name]


DROPPED_SUFFIX: Final = "-dropped"
# A fake turn ends in well under a second; one still running after this is killed and named (it hangs
# where the real CLI ended, e.g. a cut the fake plays as a dropped connection), never waited on longer.
FAKE_TURN_TIMEOUT_SEC: Final = 30.0
FAKE_DID_NOT_END: Final = (
    "the fake did not end within {timeout:g} s (killed by the player); the real CLI exited {code}"
)


def played_script(wanted: Wanted) -> Script:
    """The script the fake plays for a wanted capture: its own, or, for a capture the model server cut
    by dropping the connection (``cut_style: dropped``), the same with each cut ``dropped`` (the step's
    own way of saying so; turngate/engines/fake/script.schema.json), under a case of its own."""
    script = fidelity_script(wanted.script)
    if wanted.cut_style != "dropped":
        return script
    case = script.case + DROPPED_SUFFIX
    turns = []
    for turn in script.document["turns"]:
        steps = [
            {"model_error": {**step["model_error"], "dropped": True}}
            if isinstance(step, dict)
            and isinstance(step.get("model_error"), dict)
            and step["model_error"].get("cut")
            else step
            for step in turn["steps"]
        ]
        turns.append({**turn, "steps": steps})
    return Script(case, script.source, {**script.document, "case": case, "turns": turns}, script.engines)


@functools.cache
def _scripts() -> dict[str, Script]:
    # Read once: the format-change matrix asks for a script per mutant (thousands).
    return all_scripts()


class FakePlayer:
    """The fake engines, installed under ``root``, playing the fidelity scripts (each once per
    engine, version and format: its turns are kept). With ``shared``, a folder several processes
    use (the test suite's workers), each script's turns are played once among all of them: the first
    plays and writes them there under a lock, the others read them. A fake turn still running after
    ``turn_timeout`` seconds is killed (exit code None), which saved_fidelity names; each played turn
    is kept as turnN.stdout, turnN.stderr and turnN.exit in its run folder (``--keep``)."""

    def __init__(
        self, root: Path, shared: Path | None = None, turn_timeout: float = FAKE_TURN_TIMEOUT_SEC
    ) -> None:
        self.root = root
        self.shared = shared
        self.turn_timeout = turn_timeout
        install_fakes(root / "bin")
        scripts = root / "scripts"
        scripts.mkdir(parents=True, exist_ok=True)
        for folder in (FIDELITY_SCRIPTS, CAPTURE_SCRIPTS):
            for path in folder.glob("*.yaml"):
                (scripts / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        self._played: dict[tuple[str, str, str, str], list[TurnOutput]] = {}

    def has(self, engine: str) -> bool:
        """Whether this build has a fake of ``engine`` (the new engines' fakes come later)."""
        return (self.root / "bin" / engine).exists()

    def turns(self, engine: str, version: str, mode: str, script: Script) -> list[TurnOutput]:
        key = (engine, version, mode, script.case)
        if key not in self._played:
            if self.shared is None:
                self._played[key] = self._play(engine, version, mode, script)
            else:
                self._played[key] = self._shared_turns(engine, version, mode, script)
        return self._played[key]

    def _play(self, engine: str, version: str, mode: str, script: Script) -> list[TurnOutput]:
        written = self.root / "scripts" / f"{script.case}.yaml"
        if not written.exists():  # a script made here (played_script), not one of the shipped folders
            written.write_text(yaml.safe_dump(dict(script.document), sort_keys=False), encoding="utf-8")
        # Compiled beside it once, for every play's state folder: each play would compile it again.
        precompile(str(written), None)
        where = self.root / "runs" / f"{engine}@{version}" / mode / script.case
        cwd = where / "run"
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd / "SKILL.md").write_text(
            "---\nname: greet\n---\n\n# Greet\n\nGreet the user.\n", encoding="utf-8"
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(where / "home"),
            "TURNGATE_STATE": str(where / "state"),
            "TURNGATE_SCRIPTS": str(self.root / "scripts"),
        }
        env.update(fake_environment(engine, version, where / "home", script_retries(script)))
        played = play(engine, mode, script, self.root / "bin", cwd, env, timeout=self.turn_timeout)
        keep_turns(where, played)  # turnN.stdout, .stderr, .exit: the fake's side of each pair (--keep)
        return played

    def _shared_turns(self, engine: str, version: str, mode: str, script: Script) -> list[TurnOutput]:
        import fcntl

        assert self.shared is not None
        folder = self.shared / f"{engine}@{version}" / mode / script.case
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "lock", "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            done = folder / "turns.json"
            if done.exists():
                rows = json.loads(done.read_text(encoding="utf-8"))
                return [TurnOutput(bytes.fromhex(out), bytes.fromhex(err), code) for out, err, code in rows]
            played = self._play(engine, version, mode, script)
            rows = [[turn.stdout.hex(), turn.stderr.hex(), turn.exit_code] for turn in played]
            done.write_text(json.dumps(rows), encoding="utf-8")
            return played


Change = Callable[[SavedCapture], TurnOutput | None]


def saved_fidelity(
    captures: Sequence[SavedCapture],
    player: FakePlayer,
    *,
    change: Change | None = None,
    variants: Iterable[Variant] = VARIANTS,
) -> list[EngineReport]:
    """Per pin: each capture's turn against the fake's same turn, classified. ``change`` (the tests'
    deliberate format changes) replaces a capture's real output first; None from it skips the capture."""
    reports: dict[str, EngineReport] = {}
    chosen = tuple(variants)
    for capture in captures:
        report = reports.setdefault(capture.pin, EngineReport(capture.pin))
        if not player.has(capture.engine):
            report.not_compared = f"no fake {capture.engine} in this build: its fidelity waits for one"
            continue
        if capture.engine not in FIDELITY_ENGINES:
            report.not_compared = NO_VARIANTS.format(engine=capture.engine)
            continue
        if capture.killed is not None:
            report.skipped[capture.name] = (
                f"{NOT_COMPARABLE}the real CLI never ended the turn and was killed {capture.killed}: how"
                " much it printed is the timeout's, and the fake never ends it either"
            )
            continue
        real = capture.output if change is None else change(capture)
        if real is None:
            report.skipped[capture.name] = "the change does not apply"
            continue
        script = played_script(capture.wanted)
        fake = player.turns(capture.engine, capture.version, capture.mode, script)
        turn = capture.wanted.turn
        found = compare_script(
            capture.engine,
            capture.version,
            capture.mode,
            script,
            [real],
            fake[turn - 1 : turn],
            first_turn=turn,
            variants=chosen,
        )
        played = fake[turn - 1 : turn]
        if played and played[0].exit_code is None:  # killed at the player's bound: named, never explained
            killed = FAKE_DID_NOT_END.format(timeout=player.turn_timeout, code=real.exit_code)
            found = [d for d in found if not d.text.startswith("exit code: ")]
            named = Difference(capture.engine, capture.version, capture.name, capture.mode, turn, killed)
            found.insert(0, named)
        report.differences += [replace(d, script=capture.name) for d in found]
        report.played.append(capture.name)
    return list(reports.values())


def saved_drift(corpus: Path, old: Pin, new: Pin) -> list[Difference]:
    """Shape differences between the saved captures of two versions of one engine, pair by pair (the
    same script, turn and format); a capture one version has and the other lacks is one too."""
    if old.engine != new.engine:
        raise ValueError(f"drift: {old.name} and {new.name}: not the same engine")
    captures = saved_captures(corpus, [old.engine], kinds=None)
    by_version = {
        pin.version: {(c.mode, c.wanted.name): c for c in captures if c.version == pin.version}
        for pin in (old, new)
    }
    found: list[Difference] = []
    for key in sorted(set(by_version[old.version]) | set(by_version[new.version])):
        mode, name = key
        mine, theirs = by_version[new.version].get(key), by_version[old.version].get(key)
        if mine is None or theirs is None:
            have = new if mine is not None else old
            text = f"capture {name} [{mode}]: only in {have.version}"
            found.append(Difference(new.engine, new.version, name, mode, 0, text))
            continue
        for number, text in drift_compare(new, old, [mine.output], [theirs.output]):
            turn = mine.wanted.turn if number else 0
            found.append(Difference(new.engine, new.version, mine.folder.name, mode, turn, text))
    return found


def main(args: argparse.Namespace) -> int:
    """`turngate engines fidelity --saved [CORPUS]`: exit 1 when a difference is unexplained."""
    from turngate.tools.realengines.fidelity import render, write_json

    corpus: Path = args.saved
    captures = saved_captures(corpus, args.engines or None, kinds=args.set or ("fidelity",))
    if args.k:
        captures = [
            c
            for c in captures
            if any(
                fnmatch.fnmatchcase(c.folder.name, p) or fnmatch.fnmatchcase(c.wanted.script, p)
                for p in args.k
            )
        ]
    if not captures:
        print(
            f"turngate: fidelity --saved {corpus}: no real captures (ENGINE/real-VERSION-*/) chosen",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="turngate-fidelity-saved-") as folder:
        reports = saved_fidelity(captures, FakePlayer(args.keep or Path(folder)))
    print(render(reports))
    if args.json:
        write_json(reports, args.json)
    return 1 if any(r.unexplained() for r in reports) else 0
