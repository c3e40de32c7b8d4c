"""The fake claude against the hazard captures of claude 2.1.326 and 2.1.331 (corpus/claude/real-*-hazard-*).

Every capture played offline by the fake (a cut that ends, a cut whose connection drops, 429 and 500
refused, the CLI's own file tool) shows no unexplained difference, and the variant naming claude's
run-to-run handling of a dropped connection (`claude-drop-taken-for-a-cut`) hides none of the
deliberate format changes the other engines' hazard captures are held to.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from turngate.tools.drift.sources import CORPUS_DIR
from turngate.tools.realengines.format_changes import CHANGES, flagged
from turngate.tools.realengines.saved import FakePlayer, saved_captures, saved_fidelity

CLAUDE_HAZARDS = saved_captures(CORPUS_DIR, ["claude"], kinds=("hazard",))


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[FakePlayer]:
    shared = tmp_path_factory.getbasetemp().parent / "fake-turns" if worker_id != "master" else None
    yield FakePlayer(tmp_path_factory.mktemp("fakes"), shared)


def test_the_claude_hazard_captures_show_no_unexplained_difference(player: FakePlayer) -> None:
    reports = {report.pin: report for report in saved_fidelity(CLAUDE_HAZARDS, player)}
    assert sorted(reports) == ["claude@2.1.326", "claude@2.1.331"]
    for report in reports.values():
        assert len(report.played) == 7 and not report.skipped
        assert not report.unexplained(), [(d.script, d.text) for d in report.unexplained()]
        # the ended cuts, the 429s, the 500s, the file change and the drops the fake plays as the
        # real CLI printed them show nothing at all: only the other drop form is a variant's
        named = {d.variant for d in report.differences}
        assert named == {"claude-drop-taken-for-a-cut"}, named
        drops = {d.script for d in report.differences}
        assert (
            drops
            == {
                "claude@2.1.326": {"claude/real-2.1.326-hazard-drop-retried"},
                "claude@2.1.331": {"claude/real-2.1.331-hazard-drop"},
            }[report.pin]
        )


@pytest.mark.parametrize(
    "change", ["unknown-stderr-line", "renamed-event-type", "extra-key", "dropped-text", "moved-field"]
)
def test_no_variant_explains_a_deliberate_format_change_to_a_claude_hazard_capture(
    change: str, player: FakePlayer
) -> None:
    mutants = 0
    missed = []
    for capture in CLAUDE_HAZARDS:
        for mutant in CHANGES[change](capture):
            mutants += 1
            if not flagged(capture, mutant, player):
                missed.append(f"{capture.name}: {mutant.what}")
    assert mutants
    assert not missed, missed
