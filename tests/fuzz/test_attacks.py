"""Issue #24's attack table (turngate/tools/attacks.py): its plumbing on three cheap attacks, never
its times or resident sets (those are the tool's figures, not asserted here).

Each attack is measured as the tool measures it, in a child process of its own: the alias bomb
through the whole gate, a lone surrogate through the output check, and one malformed package
through a real `turngate serve`.
"""

from __future__ import annotations

from collections import Counter

import pytest

from turngate.tools import attacks

COLUMNS = {"key", "attack", "where", "sec", "peak_rss_mb", "rss_of", "outcome", "before", "notes"}


def test_every_attack_has_one_key_and_the_issue_s_six_points_are_there() -> None:
    keys = Counter(attack.key for attack in attacks.attack_list())
    assert [key for key, count in keys.items() if count > 1] == []
    assert {key[0] for key in keys} == set("123456")


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("1a", "ASK_USER_HINT_MALFORMED"),
        ("6a", "OUTPUT_TEXT_ESCAPED: greeting"),
        ("4a", "400 "),
    ],
)
def test_a_cheap_attack_measured_in_a_child_gives_a_whole_row(key: str, words: str) -> None:
    row = attacks.measure(key)
    assert set(row) >= COLUMNS, row
    assert row["child_exit"] == 0, row.get("stderr_tail")
    # Misbehaviour, but not the figures: a child forked from a busy test worker inherits its peak RSS,
    # and a hold depends on the machine's load.
    figures = ("peak RSS", " held ")
    assert [note for note in row["notes"] if not any(figure in note for figure in figures)] == []
    assert words in row["outcome"], row["outcome"]
    assert row["sec"] >= 0 and row["peak_rss_mb"] > 0
    assert f"| {key} |" in attacks.render([row])
