"""-k takes pytest's expressions, `show` suggests the ID a user meant, and the pytest plugin's
errors name the plugin's own options."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import implementer_pytest
from tests.turngate_cli import turngate
from turngate.base.arguments import UsageProblem
from turngate.judge.selection import keyword_test

IDS = [
    "design/decision-6/limit-zero-refused",
    "design/decision-6/repeated-hint-id-still-stops",
    "interactive-run-lifecycle/max-attempt/exceeded-fails",
]


@pytest.mark.parametrize(
    ("expression", "kept"),
    [
        ("decision-6", [0, 1]),
        ("decision-6 and not limit", [1]),
        ("limit or exceeded", [0, 2]),
        ("not (decision-6 or nothing)", [2]),
        ("design/* and REPEATED", [1]),  # a glob matches the whole ID; a word, case ignored
        ("not not limit", [0]),
    ],
)
def test_k_takes_words_and_or_not_and_parentheses(expression: str, kept: list[int]) -> None:
    test = keyword_test(expression)
    assert [index for index, name in enumerate(IDS) if test(name)] == kept


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("limit and", "ends where a word was expected"),
        ("(limit or zero", "a '(' is not closed"),
        ("or limit", "'or' where a word was expected"),
        ("limit zero", "'zero' after a complete expression"),
    ],
)
def test_a_broken_k_expression_is_one_line_saying_where(expression: str, says: str) -> None:
    with pytest.raises(UsageProblem) as raised:
        keyword_test(expression)
    assert str(raised.value).startswith(f"-k {expression!r}: ")
    assert says in str(raised.value)


def test_show_suggests_the_id_whose_tail_was_typed(tmp_path: Path) -> None:
    done = turngate("show", "exceeded-fails", cwd=tmp_path)
    assert done.returncode == 2
    assert "did you mean interactive-run-lifecycle/max-attempt/exceeded-fails?" in done.stderr
    unknown = turngate("show", "no-such-words-at-all-zzz", cwd=tmp_path)
    assert "(see `turngate list`)" in unknown.stderr


def test_the_plugins_errors_name_the_plugins_options(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "--turngate-target", "cmd:/no/such/program-here", "-q")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "--turngate-target cmd:/no/such/program-here: /no/such/program-here: no such file" in said
