"""Bad input to every command (a folder that is not there, a bad number, a target that never starts,
a pattern that matches nothing): one line on stderr naming the option and value, exit 2, before any case.

Each bad input is one parameter here.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import ONE, Turngate
from tests.turngate_cli import in_process

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--junit", "no-such-folder/junit.xml"], "--junit: no-such-folder/junit.xml: the folder"),
        (["run", "--report-json", "no-such-folder/r.jsonl"], "--report-json: no-such-folder/r.jsonl"),
        (["run", "--report-json", ".", "-k", ONE], "--report-json: .: is a folder"),
        (["run", "--html", "no-such-folder/r.html"], "--html: no-such-folder/r.html: the folder"),
        (["report", "html", "missing.jsonl", "-o", "r.html"], "report html: missing.jsonl: No such file"),
        (["run", "--report-json", "-", "--junit", "-"], "only one report can go to standard output"),
        (["run", "--reading", "bogus"], "--reading: 'bogus': the chosen scenarios know: "),
        (["run", "--reading", "codex-yolo", "-k", ONE], "no chosen scenario has readings"),
        (["run", "--jobs", "0"], "--jobs: 0: must be at least 1"),
        (["run", "--jobs", "-3"], "--jobs: -3: must be at least 1"),
        (["run", "--jobs", "two"], "--jobs: two: not a whole number"),
        (["run", "--target", "cmd:/nonexistent"], "--target cmd:/nonexistent: /nonexistent: no such file"),
        (["run", "--target", "cmd:no-such-program-tg14 --x"], "no-such-program-tg14: not found on PATH"),
        (["run", "--target", "cmd:true"], "--target cmd:true: "),  # starts, but never shakes hands
        (["run", "-k", "no/such/*"], "matches no scenario (a word matches anywhere"),
        (["run", "--catalog", "no-such-folder"], "--catalog: no-such-folder: not a folder"),
        (["run", "--no-shipped"], "--no-shipped: no --catalog folder given"),
        (["serve", "--port", "-1"], "--port: -1: a port is 0 (any free port) to 65535"),
        (["serve", "--port", "65536"], "--port: 65536: a port is 0"),
        (["serve", "--slots", "0"], "--slots: 0: must be at least 1"),
        (["serve", "--turn-timeout", "0"], "--turn-timeout: 0: must be more than 0 seconds"),
        (["drift", "--source", "corpus", "--corpus", "."], "no captures to mutate in the corpus"),
        (
            ["drift", "--source", "corpus", "--corpus", "no-such-folder"],
            "--corpus: no-such-folder: not a folder",
        ),
        (["drift", "--json", "no-such-folder/d.jsonl"], "--json: no-such-folder/d.jsonl: the folder"),
        (["run", "--baseline", "missing.yaml"], "--baseline: missing.yaml: cannot read: No such file"),
        (
            ["report", "judge", "r.jsonl", "--baseline", "missing.yaml"],
            "--baseline: missing.yaml: cannot read",
        ),
        (
            ["baseline", "write", "missing.jsonl", "-o", "k.yaml"],
            "baseline write: missing.jsonl: No such file",
        ),
        (["baseline", "write", "missing.jsonl"], "the following arguments are required: -o/--output"),
        (
            ["baseline", "write", "r.jsonl", "-o", "no-such-folder/k.yaml"],
            "--output: no-such-folder/k.yaml: the",
        ),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], words: str
) -> None:
    """By the command's ``main`` in this process: a fresh interpreter's start was nearly all of each
    (0.3 s of CPU apiece); the test below holds a real process to the same words."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = in_process(*args)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert words in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("args", [["run", "--jobs", "0"], ["serve", "--slots", "0"]], ids=" ".join)
def test_a_bad_input_is_the_same_in_a_process_of_its_own(
    turngate: Turngate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    done = turngate(*args)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    assert (done.returncode, done.stdout, done.stderr) == in_process(*args)


def test_a_command_target_that_cannot_start_is_one_line_not_a_line_per_case(turngate: Turngate) -> None:
    crashing = f"cmd:{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'"
    done = turngate("run", "--target", crashing)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "UNREACHED" not in done.stderr.upper()
    assert "exit" in done.stderr


def test_a_word_matches_like_pytest_k_and_a_glob_matches_the_whole_id(turngate: Turngate) -> None:
    by_word = turngate("list", "-k", "interactive-run-lifecycle").stdout.splitlines()
    assert by_word
    assert all(line.startswith("interactive-run-lifecycle/") for line in by_word)
    assert turngate("list", "-k", "MAX-ATTEMPT/EXCEEDED-FAILS").stdout.startswith(ONE)  # case ignored
    by_glob = turngate("list", "-k", "design/*").stdout.splitlines()
    assert by_glob
    assert all(line.startswith("design/") for line in by_glob)
    assert turngate("list", "-k", "max-attempt/*").returncode == 2  # a glob is anchored: no ID starts so
