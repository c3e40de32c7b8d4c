"""No named variant can explain a deliberate format change to a real capture: fidelity flags each one.

The saved real captures (corpus/<engine>/real-*/) against the fakes' same turns, offline: first as
they are (every difference explained by a named variant), then changed as a new build of the CLI
could change them (turngate/tools/realengines/format_changes.py): a renamed event type, the reply's
text dropped, the document moved to stderr, an extra key, a moved field, an unknown stderr line.
Every mutant of every change must leave at least one unexplained difference, on every engine with
captures.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from turngate.tools.drift.sources import CORPUS_DIR
from turngate.tools.realengines.fidelity import FIDELITY_ENGINES, TurnOutput
from turngate.tools.realengines.format_changes import CHANGES, flagged, matrix
from turngate.tools.realengines.saved import FakePlayer, SavedCapture, saved_captures, saved_fidelity

# Every engine with real captures has a fake and fidelity variants to hold them against.
CAPTURES = [capture for capture in saved_captures(CORPUS_DIR) if capture.engine in FIDELITY_ENGINES]
ENGINES = sorted({capture.engine for capture in CAPTURES})


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[FakePlayer]:
    # Under pytest-xdist the workers share one folder of played fake turns (this session's: the
    # workers' temporary folders are inside it), so each script is played once, not once per worker.
    shared = tmp_path_factory.getbasetemp().parent / "fake-turns" if worker_id != "master" else None
    yield FakePlayer(tmp_path_factory.mktemp("fakes"), shared)


def test_the_corpus_has_real_captures_of_every_engine_turngate_runs_for_real() -> None:
    assert ENGINES == sorted(PINS) == ["claude", "codebuddy", "codex", "gemini", "kilo", "opencode", "qwen"]
    assert len(CAPTURES) == len(saved_captures(CORPUS_DIR)) == 73


PINS = {
    "claude": ["claude@2.1.326", "claude@2.1.331"],
    "codebuddy": ["codebuddy@2.118.2"],
    "codex": ["codex@0.146.1", "codex@0.169.0"],
    "gemini": ["gemini@0.61.0"],
    "kilo": ["kilo@7.7.2", "kilo@7.7.7"],
    "opencode": ["opencode@1.18.33"],
    "qwen": ["qwen@0.24.4"],
}


@pytest.mark.parametrize("engine", ENGINES)  # one test per engine: xdist's workers share them
def test_the_saved_real_captures_show_no_unexplained_difference(engine: str, player: FakePlayer) -> None:
    reports = saved_fidelity([capture for capture in CAPTURES if capture.engine == engine], player)
    assert sorted(report.pin for report in reports) == PINS[engine]
    for report in reports:
        assert report.differences, f"{report.pin}: the fakes differ from the real CLIs somewhere"
        assert not report.unexplained(), [(d.script, d.text) for d in report.unexplained()]


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("engine", ENGINES)
def test_no_variant_explains_a_deliberate_format_change(engine: str, change: str, player: FakePlayer) -> None:
    mutants = hidden = 0
    missed: list[str] = []
    for capture in (c for c in CAPTURES if c.engine == engine):
        for mutant in CHANGES[change](capture):
            mutants += 1
            if not flagged(capture, mutant, player):
                hidden += 1
                missed.append(f"{capture.name}: {mutant.what}")
    assert mutants, f"{change} applies to no {engine} capture"
    assert not missed, f"{hidden} of {mutants} mutants explained away: {missed}"


def _capture(name: str) -> SavedCapture:
    return next(capture for capture in CAPTURES if capture.name == name)


def _unexplained(capture: SavedCapture, stdout: bytes, stderr: bytes, player: FakePlayer) -> list[str]:
    changed = TurnOutput(stdout, stderr, capture.output.exit_code)
    reports = saved_fidelity([capture], player, change=lambda _: changed)
    return [d.text for report in reports for d in report.unexplained()]


def test_an_opencode_build_that_prints_no_text_event_is_flagged(player: FakePlayer) -> None:
    # The case: 0 unexplained differences while the decision flipped to waiting_user.
    capture = _capture("opencode/real-1.18.33-message")
    kept = [line for line in capture.output.stdout.splitlines() if json.loads(line)["type"] != "text"]
    stdout = b"".join(line + b"\n" for line in kept)
    assert _unexplained(capture, stdout, capture.output.stderr, player) == ["stdout: only in fake: text:text"]


@pytest.mark.parametrize("name", ["message", "tool-echo", "ask-user", "resume"])
def test_a_gemini_build_that_moves_its_json_document_to_stderr_is_flagged(
    name: str, player: FakePlayer
) -> None:
    # The case: hidden on every single-turn script by a variant meant for error turns.
    capture = _capture(f"gemini/real-0.61.0-json-{name}")
    stderr = capture.output.stderr + capture.output.stdout
    found = _unexplained(capture, b"", stderr, player)
    assert "stdout: only in fake: document" in found
    assert "stderr: only in real: document" in found


def test_captures_of_an_engine_without_variants_are_not_compared_and_say_why(
    player: FakePlayer, tmp_path: Path
) -> None:
    capture = _capture("codex/real-0.169.0-message")
    stranger = replace(capture, engine="iflow", version="0.5.0")  # a fake, no real pin, no variants
    (report,) = saved_fidelity([stranger], player)
    assert (report.pin, report.played, report.differences) == ("iflow@0.5.0", [], [])
    assert (
        report.not_compared
        == "no fidelity variants for iflow yet: its fake is held to its captures by its own tests"
    )
    assert not report.unexplained()


def test_the_matrix_command_prints_every_change_for_every_engine(player: FakePlayer, tmp_path: Path) -> None:
    # The message turns (every pin and format): the whole matrix is the parametrized test above.
    for capture in (c for c in CAPTURES if c.wanted.name == "message"):
        shutil.copytree(capture.folder, tmp_path / capture.engine / capture.folder.name)
    cells = matrix(tmp_path, player)
    assert {(cell.engine, cell.change) for cell in cells} == {(e, c) for e in ENGINES for c in CHANGES}
    assert all(cell.flagged == cell.mutants for cell in cells)
    assert all(cell.mutants for cell in cells), [c for c in cells if not c.mutants]


# The hazards (429, 500, a cut ended or dropped, a file change) of every engine with real captures, and
# codex's explorations (request_user_input, an MCP call).
HAZARDS = saved_captures(CORPUS_DIR, ENGINES, kinds=("hazard", "exploration"))
# Per pin: the captures played, those named not comparable, and the only variants the differences may
# name (each one names a run-to-run form or a detail the fake cannot know; see docs/real-engines.md).
HAZARD_PINS: dict[str, tuple[int, tuple[str, ...], set[str]]] = {
    "claude@2.1.326": (7, (), {"claude-drop-taken-for-a-cut"}),
    "claude@2.1.331": (7, (), {"claude-drop-taken-for-a-cut"}),
    # codebuddy never ends a dropped connection's turn: the recorder killed it after 120 s
    "codebuddy@2.118.2": (
        5,
        ("codebuddy/real-2.118.2-hazard-drop", "codebuddy/real-2.118.2-hazard-drop-retried"),
        {"codebuddy-reply-only-in-result", "codebuddy-request-id-by-timing"},
    ),
    "codex@0.146.1": (9, (), {"codex-request-user-input-refused", "codex-stderr-notices"}),
    "codex@0.169.0": (9, (), {"codex-request-user-input-refused", "codex-stderr-notices"}),
    "gemini@0.61.0": (
        14,
        (),
        {"gemini-drop-report-on-stderr", "gemini-retry-report-on-stderr", "gemini-stderr-notices"},
    ),
    "kilo@7.7.2": (7, (), set()),
    "kilo@7.7.7": (7, (), {"kilo-drop-retried-error-alone"}),
    # opencode never ends a cut answer (it asks again, ~130 times a second): the recorder killed it
    # after 10 s, so what it printed is the timeout's
    "opencode@1.18.33": (
        5,
        ("opencode/real-1.18.33-hazard-cut", "opencode/real-1.18.33-hazard-cut-retried"),
        {"opencode-error-before-any-step", "opencode-fault-http-details"},
    ),
    "qwen@0.24.4": (7, (), {"qwen-stderr-notices"}),
}


def test_every_engine_s_hazard_captures_are_held_to_its_fake() -> None:
    assert sorted({pin.split("@")[0] for pin in HAZARD_PINS}) == ENGINES
    assert sorted(HAZARD_PINS) == sorted(pin for pins in PINS.values() for pin in pins)


@pytest.mark.parametrize("engine", ENGINES)  # one test per engine: xdist's workers share them
def test_the_hazard_captures_show_no_unexplained_difference_where_a_fake_can_play_them(
    engine: str, player: FakePlayer
) -> None:
    reports = {
        report.pin: report
        for report in saved_fidelity([capture for capture in HAZARDS if capture.engine == engine], player)
    }
    assert sorted(reports) == PINS[engine]
    for pin, report in reports.items():
        played, skipped, variants = HAZARD_PINS[pin]
        assert not report.unexplained(), [(d.script, d.text) for d in report.unexplained()]
        assert (len(report.played), tuple(sorted(report.skipped))) == (played, skipped), pin
        assert all(reason.startswith("not comparable: ") for reason in report.skipped.values())
        assert {difference.variant for difference in report.differences} == variants, pin


@pytest.mark.parametrize(
    "change", ["unknown-stderr-line", "renamed-event-type", "extra-key", "dropped-text", "moved-field"]
)
def test_no_variant_explains_a_deliberate_format_change_to_a_hazard_capture(
    change: str, player: FakePlayer
) -> None:
    # The hazard variants name whole stderr report lines by pattern (gemini's retries and drops), whole
    # key lists (opencode's APIError) and whole line sequences (claude's and kilo's drop forms): a line,
    # event or key they do not name stays flagged.
    mutants = [
        (capture, mutant)
        for capture in HAZARDS
        if capture.killed is None
        for mutant in CHANGES[change](capture)
    ]
    missed = [
        f"{capture.name}: {mutant.what}"
        for capture, mutant in mutants
        if not flagged(capture, mutant, player)
    ]
    assert {capture.engine for capture, _ in mutants} == set(ENGINES)  # every engine's hazards changed
    assert not missed, missed
