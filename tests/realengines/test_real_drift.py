"""`turngate engines real drift`: two versions of one engine compared by shape, on the saved real
captures (--saved, offline), and an exit status a CI job can act on (--fail-on-drift)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.turngate_cli import in_process as cli
from turngate.engines.real.lock import Pin
from turngate.tools.drift.sources import CORPUS_DIR
from turngate.tools.realengines.captures import WANTED
from turngate.tools.realengines.saved import saved_drift, versions

OLD, NEW = Pin("codex", "", "0.146.1", ""), Pin("codex", "", "0.169.0", "")
DRIFT = ("engines", "real", "drift", "codex@0.146.1", "codex@0.169.0")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The codex real captures of the fidelity set of both versions (which do not differ), in a corpus
    of their own to change."""
    root = tmp_path / "corpus"
    fidelity = {wanted.name for wanted in WANTED if wanted.kind == "fidelity"}
    for folder in sorted((CORPUS_DIR / "codex").glob("real-*")):
        if folder.name.split("-", 2)[2] in fidelity:
            shutil.copytree(folder, root / "codex" / folder.name)
    return root


def test_the_engines_with_captures_of_two_versions_are_the_ones_nox_drifts() -> None:
    assert versions(CORPUS_DIR) == {
        "claude": ["2.1.326", "2.1.331"],
        "codebuddy": ["2.118.2"],
        "codex": ["0.146.1", "0.169.0"],
        "gemini": ["0.61.0"],
        "kilo": ["7.7.2", "7.7.7"],
        "opencode": ["1.18.33"],
        "qwen": ["0.24.4"],
    }


def test_codex_0_169_0_announces_its_retries_of_a_429_where_0_146_1_retries_silently() -> None:
    # The PATH-alias notice names each version's own CODEX_HOME, the request_user_input refusal its
    # time: known notices, not drift. What drifted: a 429 retried twice (request_max_retries 2) is two
    # `error` events "Reconnecting... n/2 (exceeded retry limit, last status: 429 Too Many Requests)"
    # on 0.169.0 (corpus/codex/real-0.169.0-hazard-429/stdout), none on 0.146.1; a 500's retries and a
    # cut stream's were announced by both.
    found = [(d.script, d.turn, d.text) for d in saved_drift(CORPUS_DIR, OLD, NEW)]
    assert found == [("real-0.169.0-hazard-429", 1, "stdout: only in 0.169.0: error")] * 2


def test_a_renamed_event_and_a_new_stderr_line_are_drift(corpus: Path) -> None:
    folder = corpus / "codex" / "real-0.169.0-message"
    events = [json.loads(line) for line in (folder / "stdout").read_text().splitlines()]
    events[-1]["type"] = "turn.done"
    (folder / "stdout").write_text("".join(json.dumps(event) + "\n" for event in events))
    (folder / "stderr").write_text("A new notice.\n" + (folder / "stderr").read_text())
    texts = [d.text for d in saved_drift(corpus, OLD, NEW)]
    assert texts == [
        "stdout: line turn.done in 0.169.0 where 0.146.1 has turn.completed",
        "stderr: line only in 0.169.0: A new notice.",
    ]


def test_a_capture_one_version_lacks_is_drift(corpus: Path) -> None:
    shutil.rmtree(corpus / "codex" / "real-0.169.0-error")
    texts = [d.text for d in saved_drift(corpus, OLD, NEW)]
    assert texts == ["capture error [json]: only in 0.146.1"]


def test_fail_on_drift_exits_1_and_names_each_change_on_one_line(corpus: Path) -> None:
    folder = corpus / "codex" / "real-0.169.0-tool-echo"
    (folder / "stderr").write_text((folder / "stderr").read_text() + "Another notice.\n")
    code, out, _ = cli(*DRIFT, "--saved", str(corpus), "--fail-on-drift")
    assert code == 1
    assert (
        "drift: codex 0.146.1 -> 0.169.0: real-0.169.0-tool-echo [json] turn 1: stderr: line only in 0.169.0:"
        " Another notice." in out.splitlines()
    )
    assert out.splitlines()[-1] == "drift found: codex@0.146.1 -> codex@0.169.0"
    code, out, _ = cli(*DRIFT, "--saved", str(corpus))  # without the flag: exit 0 whatever it finds
    assert code == 0
    assert "1 shape differences" in out.splitlines()[0]


def test_fail_on_drift_exits_0_when_nothing_changed(corpus: Path) -> None:
    code, out, _ = cli(*DRIFT, "--saved", str(corpus), "--fail-on-drift")
    assert code == 0
    assert out.splitlines()[-1] == "no drift: codex@0.146.1 -> codex@0.169.0"


def test_a_version_without_saved_captures_is_bad_input(corpus: Path) -> None:
    code, _, err = cli("engines", "real", "drift", "codex@0.1.0", "codex@0.169.0", "--saved", str(corpus))
    assert code == 2
    assert "no real captures of codex@0.1.0 (there: codex@0.146.1, codex@0.169.0)" in err


def test_fidelity_on_the_saved_captures_exits_0_when_every_difference_is_a_named_variant() -> None:
    code, out, _ = cli("engines", "fidelity", "opencode", "--saved")
    assert code == 0
    assert out.splitlines()[0].startswith("opencode@1.18.33: 5 scripts played, 0 not playable;")
    assert out.splitlines()[0].endswith(", 0 unexplained")


def test_fidelity_on_the_saved_captures_exits_1_on_an_unexplained_difference(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(
        CORPUS_DIR / "opencode" / "real-1.18.33-message", root / "opencode" / "real-1.18.33-message"
    )
    (root / "opencode" / "real-1.18.33-message" / "stderr").write_text("Unknown notice.\n")
    code, out, _ = cli("engines", "fidelity", "--saved", str(root))
    assert code == 1
    assert (
        "UNEXPLAINED (1x, e.g. opencode/real-1.18.33-message [json] turn 1): stderr: line only in real:"
        in out
    )
