"""`turngate drift` on the command line: a header over its rows, a legend under them, and an exit status
a CI job can act on (0 no drift against the spec, 1 drift found, 2 bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.turngate_cli import in_process as cli
from tests.turngate_cli import turngate
from turngate.tools.drift import sweep
from turngate.tools.drift.capture import Capture
from turngate.tools.drift.field_play import PlayError
from turngate.tools.drift.sweep import LEGEND, Seen

# drop-turn-end flips every iflow capture where the spec is silent: reported, never drift found.
SILENT = ("drift", "--source", "corpus", "--engine", "iflow", "--mutator", "drop-turn-end")
# The marker moved into a tool result: the spec calls it irrelevant, so a gate it fools disagrees.
MOVED = ("drift", "--source", "corpus", "--engine", "codex", "--mutator", "marker-in-tool-result")


def naive_gate(capture: Capture) -> Seen:
    """A gate found in the field: the marker text anywhere in the bytes means done."""
    found = b"__SKILL_DONE__" in capture.stdout + capture.stderr
    return Seen("succeeded" if found else "waiting_user", None, found)


def test_the_rows_have_a_header_and_a_legend_and_silent_flips_exit_0() -> None:
    code, out, _ = cli(*SILENT)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "mark",
        "capture",
        "mutator",
        "before",
        "->",
        "after",
        "[change;",
        "spec's",
        "word]",
    ]
    rows = lines[1 : lines.index("legend:")]
    assert rows
    assert all(row.startswith("-  ") for row in rows)  # the spec is silent on every one
    assert all(row.index("drop-turn-end") == lines[0].index("mutator") for row in rows)  # aligned
    assert lines[lines.index("legend:") : lines.index("legend:") + len(LEGEND)] == list(LEGEND)
    assert lines[-1].endswith("flips where the spec is silent: no drift against the spec")


def test_every_mark_a_row_can_carry_is_in_the_legend() -> None:
    legend = "\n".join(LEGEND)
    for mark in sweep.MARKS.values():
        assert f"\n  {mark} " in legend
    for word in ("irrelevant", "flips", "unspecified", "stable", "state/ERROR_CODE", "no-marker"):
        assert word in legend


def test_a_target_that_disagrees_with_the_spec_is_drift_found_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "reference_decider", naive_gate)
    code, out, _ = cli(*MOVED)
    assert code == 1
    assert any(line.startswith("DISAGREES ") for line in out.splitlines())
    assert out.splitlines()[-1].endswith(": drift found")


def test_the_reference_finds_no_drift_on_the_same_mutation() -> None:
    code, out, _ = cli(*MOVED)
    assert code == 0
    assert " 0 disagree with the spec" in out.splitlines()[-1]


def test_a_capture_the_target_cannot_play_is_drift_found_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def cannot_play(capture: Capture) -> Seen:
        raise PlayError(f"{capture.name} on a target: errored: it answered 500")

    monkeypatch.setattr(sweep, "reference_decider", cannot_play)
    code, out, err = cli(*SILENT)
    assert code == 1
    assert "Traceback" not in err
    assert "not played: iflow/auto-prose-no-output on a target: errored: it answered 500" in out
    assert "capture(s) the target could not play" in out.splitlines()[-1]


def test_bad_input_is_exit_2() -> None:
    code, out, err = cli("drift", "--source", "corpus", "--mutator", "no-such-mutator")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1


def test_the_help_gives_the_legend_and_the_exit_status(tmp_path: Path) -> None:
    done = turngate("drift", "--help", cwd=tmp_path)
    assert done.returncode == 0
    text = done.stdout
    assert "\n".join(LEGEND) in text
    assert "exit status:\n  0  no drift against the spec" in text
    assert "\n  1  drift found" in text
    assert "\n  2  bad input" in text


def test_fail_on_drift_exits_1_and_names_each_decision_that_changed_on_one_line() -> None:
    # Without the flag these silent flips exit 0 (above); with it, each is drift.
    code, out, _ = cli(*SILENT, "--fail-on-drift")
    assert code == 1
    named = [line for line in out.splitlines() if line.startswith("drift: ")]
    flips = [line for line in out.splitlines() if line.startswith("-  ")]
    assert len(named) == len(flips) > 0
    assert (
        "drift: iflow/block-drifted-to-stdout: drop-turn-end: succeeded -> failed/ENGINE_TURN_INCOMPLETE"
        " (spec: unspecified)" in named
    )
    assert out.splitlines()[-1] == (
        f"--fail-on-drift: {len(named)} decision(s) changed where the spec does not demand it"
    )


def test_fail_on_drift_exits_0_when_no_decision_changed() -> None:
    code, out, _ = cli(*MOVED, "--fail-on-drift")
    assert code == 0
    assert not [line for line in out.splitlines() if line.startswith("drift: ")]
    assert out.splitlines()[-1] == "--fail-on-drift: 0 decision(s) changed where the spec does not demand it"


def test_fail_on_drift_counts_a_disagreement_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "reference_decider", naive_gate)
    code, out, _ = cli(*MOVED, "--fail-on-drift")
    assert code == 1
    assert any(line.startswith("drift: codex/") and "(spec: irrelevant)" in line for line in out.splitlines())
