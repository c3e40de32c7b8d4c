"""The saved-fidelity player bounds every fake turn: a fake that never ends is killed and named.

No clock is asserted: the fake plays a script that hangs for ever, so the player's bound always expires
first; what is checked is what the player makes of that (a named, unexplained difference), not when.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turngate.tools.drift.sources import CORPUS_DIR
from turngate.tools.realengines import saved
from turngate.tools.realengines.fidelity import Script
from turngate.tools.realengines.saved import FakePlayer, saved_captures, saved_fidelity

HANGS = {"case": "hangs-for-ever", "turns": [{"steps": [{"say": "thinking hard"}, {"hang": True}]}]}


def test_a_fake_turn_that_never_ends_is_killed_at_the_bound(tmp_path: Path) -> None:
    player = FakePlayer(tmp_path, turn_timeout=0.5)
    script = Script("hangs-for-ever", "fidelity", HANGS, ("codebuddy",))
    [turn] = player.turns("codebuddy", "2.118.2", "json", script)
    assert turn.exit_code is None and turn.timeout_sec == 0.5
    assert b"thinking hard" in turn.stdout  # what it printed before it hung is kept
    assert (tmp_path / "runs/codebuddy@2.118.2/json/hangs-for-ever/turn1.exit").read_text() == "killed\n"


def test_saved_fidelity_names_a_fake_turn_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hazards = saved_captures(CORPUS_DIR, ["codebuddy"], kinds=("hazard",))
    [capture] = [c for c in hazards if c.folder.name.endswith("-cut")]
    hangs = Script("hangs-for-ever", "fidelity", HANGS, ())
    monkeypatch.setattr(saved, "played_script", lambda wanted: hangs)
    [report] = saved_fidelity([capture], FakePlayer(tmp_path, turn_timeout=0.5))
    texts = [d.text for d in report.unexplained()]
    assert texts[0] == "the fake did not end within 0.5 s (killed by the player); the real CLI exited 0"
    assert not any(text.startswith("exit code: ") for text in texts)  # the named outcome replaces it
    assert report.played == [capture.name]
