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


# The hazards (429, 500, a cut ended or dropped, a file change) and codex's explorations
# (request_user_input, an MCP call) of the three engines the fakes were first modelled on.
HAZARDS = saved_captures(CORPUS_DIR, ["codex", "gemini", "opencode"], kinds=("hazard", "exploration"))


def test_the_hazard_captures_show_no_unexplained_difference_where_a_fake_can_play_them(
    player: FakePlayer,
) -> None:
    reports = {report.pin: report for report in saved_fidelity(HAZARDS, player)}
    assert sorted(reports) == ["codex@0.146.1", "codex@0.169.0", "gemini@0.61.0", "opencode@1.18.33"]
    for report in reports.values():
        assert not report.unexplained(), [(d.script, d.text) for d in report.unexplained()]
    # opencode never ends a cut answer (it asks again, ~130 times a second): the recorder killed it
    # after 10 s, so what it printed is the timeout's; those two are named, never compared.
    opencode = reports["opencode@1.18.33"]
    assert sorted(opencode.skipped) == [
        "opencode/real-1.18.33-hazard-cut",
        "opencode/real-1.18.33-hazard-cut-retried",
    ]
    assert all(reason.startswith("not comparable: ") for reason in opencode.skipped.values())
    assert len(opencode.played) == 5
    assert [len(reports[pin].played) for pin in ("codex@0.146.1", "codex@0.169.0", "gemini@0.61.0")] == [
        9,
        9,
        14,
    ]


@pytest.mark.parametrize("change", ["unknown-stderr-line", "renamed-event-type", "extra-key", "dropped-text"])
def test_no_variant_explains_a_deliberate_format_change_to_a_hazard_capture(
    change: str, player: FakePlayer
) -> None:
    # The hazard variants name whole stderr report lines by pattern (gemini's retries and drops) and
    # whole key lists (opencode's APIError): a line, event or key they do not name stays flagged.
    missed = [
        f"{capture.name}: {mutant.what}"
        for capture in HAZARDS
        if capture.killed is None
        for mutant in CHANGES[change](capture)
        if not flagged(capture, mutant, player)
    ]
    assert not missed, missed
