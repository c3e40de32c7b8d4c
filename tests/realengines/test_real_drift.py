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
from turngate.tools.realengines.drift_baseline import judge, load
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
        " Another notice. (not in the baseline)" in out.splitlines()
    )
    assert out.splitlines()[-1].startswith("drift found: codex@0.146.1 -> codex@0.169.0: 1 change(s) not in")
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


BASELINE = CORPUS_DIR / "real-drift-baseline.yaml"
PAIRS = [("codex", "0.146.1", "0.169.0"), ("claude", "2.1.326", "2.1.331"), ("kilo", "7.7.2", "7.7.7")]


@pytest.mark.parametrize(("engine", "old", "new"), PAIRS)
def test_the_shipped_baseline_names_exactly_the_saved_drift_of_each_pair(
    engine: str, old: str, new: str
) -> None:
    # What `nox -s real-drift` runs: every change known, every entry of the pair seen.
    found = saved_drift(CORPUS_DIR, Pin(engine, "", old, ""), Pin(engine, "", new, ""))
    judged = judge(found, load(BASELINE), engine, old, new)
    assert found and not judged.unknown, [(d.script, d.text) for d in judged.unknown]
    assert not judged.unseen


@pytest.mark.parametrize(("engine", "old", "new"), PAIRS)
def test_fail_on_drift_passes_the_shipped_corpus_on_its_baseline(engine: str, old: str, new: str) -> None:
    code, out, _ = cli(
        "engines", "real", "drift", f"{engine}@{old}", f"{engine}@{new}", "--saved", "--fail-on-drift"
    )
    assert code == 0, out
    assert out.splitlines()[-1].startswith(
        f"no drift beyond the baseline: {engine}@{old} -> {engine}@{new} ("
    )
    assert not [line for line in out.splitlines() if line.startswith("drift: ")]
    code, out, _ = cli(
        "engines",
        "real",
        "drift",
        f"{engine}@{old}",
        f"{engine}@{new}",
        "--saved",
        "--fail-on-drift",
        "--no-baseline",
    )
    assert code == 1
    assert not [line for line in out.splitlines() if line.startswith("known drift")]


def test_timing_dependent_drift_is_named_as_such() -> None:
    code, out, _ = cli("engines", "real", "drift", "kilo@7.7.2", "kilo@7.7.7", "--saved", "--fail-on-drift")
    timing = [line for line in out.splitlines() if line.startswith("known drift (timing-dependent): ")]
    assert code == 0 and timing
    assert all("real-7.7.7-hazard-drop-retried" in line for line in timing)
    assert all(line.endswith("(baseline kilo-drop-retried-by-timing, cause: timing)") for line in timing)


def test_a_change_beside_a_known_one_fails_and_is_named(corpus: Path) -> None:
    for version in ("0.146.1", "0.169.0"):
        name = f"real-{version}-hazard-429"
        shutil.copytree(CORPUS_DIR / "codex" / name, corpus / "codex" / name)
    folder = corpus / "codex" / "real-0.169.0-hazard-429"
    lines = (folder / "stdout").read_text().splitlines(keepends=True)
    (folder / "stdout").write_text("".join([*lines[:2], lines[2], *lines[2:]]))  # a third Reconnecting
    code, out, _ = cli(*DRIFT, "--saved", str(corpus), "--fail-on-drift")
    assert code == 1
    where = "codex 0.146.1 -> 0.169.0: real-0.169.0-hazard-429 [json] turn 1: stdout: only in 0.169.0: error"
    assert [line for line in out.splitlines() if line.startswith(f"known drift: {where}")] == [
        f"known drift: {where} (baseline codex-429-retries-announced, cause: build)"
    ] * 2
    assert f"drift: {where} (not in the baseline)" in out.splitlines()
    assert out.splitlines()[-1].startswith(
        "drift found: codex@0.146.1 -> codex@0.169.0: 1 change(s) not in the baseline"
    )


ENTRY = (
    "- {{id: x, engine: codex, old: {old}, new: '2', capture: '*', changes: {changes}, cause: {cause},"
    " what: w, why: y}}"
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[: not yaml", "not YAML (line 1)"),
        ("{id: x}", "a list of entries, not dict"),
        ("- 7", "entry 1: a mapping of id, engine"),
        ("- {id: x, engine: codex}", "entry 1: old: missing"),
        ("- {id: x, engin: codex}", "entry 1: 'engin': not a field"),
        (
            ENTRY.format(old="'1'", changes="[a]", cause="luck"),
            "entry 'x': cause: 'luck': one of build, timing, recording",
        ),
        (
            ENTRY.format(old="1.0", changes="[a]", cause="build"),
            "entry 1: old: a non-empty text, not 1.0",
        ),
        (
            ENTRY.format(old="'1'", changes="[]", cause="build"),
            "entry 'x': changes: a non-empty list of difference texts, not []",
        ),
    ],
)
def test_a_bad_baseline_is_one_line_and_exit_2(corpus: Path, tmp_path: Path, text: str, error: str) -> None:
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(text, encoding="utf-8")
    code, _, err = cli(*DRIFT, "--saved", str(corpus), "--fail-on-drift", "--baseline", str(baseline))
    assert code == 2
    assert error in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_fidelity_on_the_saved_hazard_captures_names_the_ones_it_cannot_compare() -> None:
    code, out, _ = cli("engines", "fidelity", "opencode", "--saved", "--set", "hazard")
    assert code == 0, out
    assert out.splitlines()[0].endswith(", 0 unexplained")
    assert (
        "  opencode/real-1.18.33-hazard-cut: not comparable: the real CLI never ended the turn and was killed"
        " by the recorder after its 10 s timeout: how much it printed is the timeout's, and the fake never"
        " ends it either" in out.splitlines()
    )
