"""`turngate baseline write` and `turngate run --baseline`, as a server's CI runs them: real processes.

The broken target is the reference as the spec mutant ``max-attempt-ignored`` (its gate never fails a
run for its attempts): on two max-attempt scenarios and two engines it fails one scenario on both
engines and passes the other, in about a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from tests.turngate_cli import turngate as _turngate
from turngate.judge.catalog import CATALOG_DIR
from turngate.judge.report import read_report

EXCEEDED = "interactive-run-lifecycle/max-attempt/exceeded-fails"
UNBOUNDED = "interactive-run-lifecycle/max-attempt/unbounded-without-max-attempt"
CASES = ("-k", "max-attempt/exceeded-fails", "-k", "max-attempt/unbounded-without")
ENGINES = ("--engine", "codex", "--engine", "gemini")
BROKEN = ("--mutant", "max-attempt-ignored")


@pytest.fixture(scope="module")
def known(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A broken run's report, and the baseline written from it (the folder holds run.jsonl, known.yaml)."""
    folder = tmp_path_factory.mktemp("baseline")
    run = _turngate("run", *BROKEN, *CASES, *ENGINES, "--report-json", "run.jsonl", cwd=folder)
    assert run.returncode == 1, run.stdout + run.stderr
    written = _turngate("baseline", "write", "run.jsonl", "-o", "known.yaml", cwd=folder)
    assert written.returncode == 0, written.stderr
    assert written.stdout == "wrote known.yaml: 4 known difference(s) of 2 case(s): 4 new\n"
    return folder


def _entries(folder: Path, name: str = "known.yaml") -> list[dict[str, str]]:
    entries: list[dict[str, str]] = yaml.safe_load((folder / name).read_text(encoding="utf-8"))["known"]
    return entries


def _write(folder: Path, entries: list[dict[str, str]], name: str) -> str:
    (folder / name).write_text(yaml.safe_dump({"version": 1, "known": entries}), encoding="utf-8")
    return name


def test_the_written_baseline_lists_each_failing_difference_with_a_reason_to_fill_in(known: Path) -> None:
    text = (known / "known.yaml").read_text(encoding="utf-8")
    assert text.startswith("# turngate baseline: the known differences of a target")
    assert "# From run.jsonl: turngate " in text
    assert " against reference, started " in text
    assert text.count('reason: ""  # fill in: why this is known') == 4
    assert [(entry["engine"], entry["check"], entry["sentence"]) for entry in _entries(known)] == [
        ("codex", "error_code", f"{EXCEEDED}#and1"),
        ("codex", "state", f"{EXCEEDED}#then"),
        ("gemini", "error_code", f"{EXCEEDED}#and1"),
        ("gemini", "state", f"{EXCEEDED}#then"),
    ]
    assert {entry["case"] for entry in _entries(known)} == {EXCEEDED}


def test_the_same_failures_against_their_baseline_exit_0_and_show_apart_in_every_report(known: Path) -> None:
    done = _turngate(
        "run", *BROKEN, *CASES, *ENGINES, "--baseline", "known.yaml",
        "--report-json", "again.jsonl", "--junit", "junit.xml", "--html", "page.html", cwd=known,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "baseline known.yaml: 4 known difference(s) still there (2 failing case(s) let through)"
        in done.stdout
    )
    assert "no change from the baseline" in done.stdout
    _, cases, footer = read_report(known / "again.jsonl")
    assert sorted(
        (case["engine"], case.get("baseline")) for case in cases if case["scenario_id"] == EXCEEDED
    ) == [
        ("codex", "known"),
        ("gemini", "known"),
    ]
    assert all("baseline" not in case for case in cases if case["scenario_id"] == UNBOUNDED)
    assert footer["baseline"] == {
        "file": "known.yaml", "known": 4, "new": [], "fixed": [], "unverified": 0, "not_run": 0,
    }  # fmt: skip
    root = ElementTree.parse(known / "junit.xml").getroot()
    assert (root.get("failures"), root.get("skipped")) == ("0", "2")
    skipped = root.findall(".//testcase/skipped")
    assert len(skipped) == 2
    assert all(
        (item.get("message") or "").startswith("known difference (baseline): error_code") for item in skipped
    )
    page = (known / "page.html").read_text(encoding="utf-8")
    assert page.count('class="cell known"') == 2
    assert "known (baseline)" in page
    # the saved report shows the same, and its footer's count of what the baseline let through
    saved = _turngate("report", "html", "run.jsonl", "again.jsonl", "-o", "both.html", cwd=known)
    assert saved.returncode == 0, saved.stderr
    both = (known / "both.html").read_text(encoding="utf-8")
    assert both.count('class="cell known"') == 2
    assert both.count('class="cell failed fails"') == 2
    assert "baseline known.yaml: 4 known difference(s) let through, 0 new, 0 fixed" in both


def test_a_difference_the_baseline_does_not_list_is_new_and_fails_naming_it(known: Path) -> None:
    entries = [entry for entry in _entries(known) if (entry["engine"], entry["check"]) != ("gemini", "state")]
    name = _write(known, entries, "missing-one.yaml")
    done = _turngate("run", *BROKEN, *CASES, *ENGINES, "--baseline", name, "--junit", "new.xml", cwd=known)
    assert done.returncode == 1, done.stdout + done.stderr
    tail = done.stdout.split("baseline missing-one.yaml:", 1)[1]
    assert "3 known difference(s) still there" in tail
    assert "1 new, 0 fixed" in tail
    assert (
        f"new, not in the baseline (each fails the run):\n  {EXCEEDED} [gemini]: state ({EXCEEDED}#then)"
        in tail
    )
    (failure,) = ElementTree.parse(known / "new.xml").getroot().findall(".//testcase/failure")
    assert failure.get("message") == f"new, not in the baseline: state ({EXCEEDED}#then)"


def test_a_known_difference_gone_from_a_case_that_ran_fails_saying_remove_it(known: Path) -> None:
    extra = {"case": UNBOUNDED, "engine": "codex", "check": "state", "sentence": f"{EXCEEDED}#then"}
    name = _write(known, [*_entries(known), extra], "extra.yaml")
    done = _turngate("run", *BROKEN, *CASES, *ENGINES, "--baseline", name, cwd=known)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "fixed: remove it from the baseline (each fails the run until then):\n"
        f"  {UNBOUNDED} [codex]: state ({EXCEEDED}#then)\n"
    ) in done.stdout
    # a fixed server: every entry is gone
    fixed = _turngate("run", *CASES, *ENGINES, "--baseline", "known.yaml", cwd=known)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "0 new, 4 fixed" in fixed.stdout, fixed.stdout + fixed.stderr
    assert fixed.stdout.split("fixed: remove it")[-1].count(f"  {EXCEEDED} [") == 4


def test_entries_of_cases_the_run_left_out_are_neither_fixed_nor_new(known: Path) -> None:
    done = _turngate("run", *BROKEN, *CASES, "--engine", "codex", "--baseline", "known.yaml", cwd=known)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not run: 2 entries of cases this run left out" in done.stdout
    only_the_other = _turngate(
        "run", "-k", "max-attempt/unbounded-without", "--baseline", "known.yaml", cwd=known
    )
    assert only_the_other.returncode == 0
    assert "not run: 4 entries" in only_the_other.stdout


def test_report_judge_takes_the_baseline_too(known: Path) -> None:
    assert _turngate("report", "judge", "run.jsonl", "--baseline", "known.yaml", cwd=known).returncode == 0
    name = _write(known, _entries(known)[1:], "judge-missing.yaml")
    judged = _turngate("report", "judge", "run.jsonl", "--baseline", name, "-o", "judged.jsonl", cwd=known)
    assert judged.returncode == 1, judged.stdout + judged.stderr
    assert "1 new, 0 fixed" in judged.stdout, judged.stdout + judged.stderr
    _, cases, footer = read_report(known / "judged.jsonl")
    assert sorted(case.get("baseline", "-") for case in cases) == ["-", "-", "known", "new"]
    assert [entry["engine"] for entry in footer["baseline"]["new"]] == ["codex"]


def test_writing_over_a_baseline_keeps_its_reasons_and_the_entries_this_run_did_not_run(known: Path) -> None:
    entries = [{**entry, "reason": f"ticket {number}"} for number, entry in enumerate(_entries(known))]
    _write(known, entries, "reasons.yaml")
    codex = _turngate(
        "run", "-k", "max-attempt/exceeded-fails", "--engine", "codex", "--report-json", "-", cwd=known
    )
    assert codex.returncode == 0, codex.stderr  # the reference: the codex entries are fixed
    updated = _turngate("baseline", "write", "-", "-o", "reasons.yaml", cwd=known, stdin=codex.stdout)
    assert updated.returncode == 0, updated.stderr
    assert (
        updated.stdout
        == "wrote reasons.yaml: 2 known difference(s) of 1 case(s): 0 new, 2 kept, 2 fixed removed\n"
    )
    assert [(entry["engine"], entry["reason"]) for entry in _entries(known, "reasons.yaml")] == [
        ("gemini", "ticket 2"),
        ("gemini", "ticket 3"),
    ]
    # -o -: the file on standard output, what was done on standard error
    shown = _turngate("baseline", "write", "run.jsonl", "-o", "-", cwd=known)
    assert shown.returncode == 0
    assert yaml.safe_load(shown.stdout)["version"] == 1
    assert shown.stderr.startswith("wrote -: 4 known difference(s)")


def test_an_errored_case_is_known_by_its_outcome(tmp_path: Path) -> None:
    """A package the target refuses though the scenario thinks it valid errs the case (max_attempt 0)."""
    source = CATALOG_DIR / f"{EXCEEDED}.yaml"
    scenario = tmp_path / "mine" / f"{EXCEEDED}.yaml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(
        source.read_text(encoding="utf-8").replace("max_attempt: 2", "max_attempt: 0"), "utf-8"
    )
    only = ("--no-shipped", "--catalog", "mine", "--engine", "codex")
    run = _turngate("run", *only, "--report-json", "run.jsonl", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 errored" in run.stdout, run.stdout + run.stderr
    assert _turngate("baseline", "write", "run.jsonl", "-o", "known.yaml", cwd=tmp_path).returncode == 0
    assert _entries(tmp_path) == [{"case": EXCEEDED, "engine": "codex", "outcome": "errored", "reason": ""}]
    again = _turngate("run", *only, "--baseline", "known.yaml", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no change from the baseline" in again.stdout, again.stdout + again.stderr


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            "version: 1\nknown:\n  - {case: x, engine: codx, outcome: errored}\n",
            "known[0].engine: 'codx': must be",
        ),
        (
            "version: 1\nknown:\n  - {case: x, engine: codex, check: state, sentence: nope}\n",
            "'nope': no such sentence",
        ),
        ("version: 1\nknown: [\n", "bad.yaml: not YAML"),
        ("known: []\n", "bad.yaml: version: missing"),
    ],
)
def test_a_bad_baseline_is_one_line_and_exit_2_before_any_case_runs(
    tmp_path: Path, content: str, said: str
) -> None:
    (tmp_path / "bad.yaml").write_text(content, encoding="utf-8")
    done = _turngate("run", *CASES, "--baseline", "bad.yaml", "--report-json", "r.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith("turngate: --baseline: bad.yaml: ")
    assert done.stderr.count("\n") == 1
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_baseline_write_never_overwrites_a_file_that_is_not_a_baseline(known: Path) -> None:
    before = (known / "run.jsonl").read_text(encoding="utf-8")
    done = _turngate("baseline", "write", "run.jsonl", "-o", "run.jsonl", cwd=known)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "an existing file must be a baseline to update" in done.stderr
    assert (known / "run.jsonl").read_text(encoding="utf-8") == before
    assert json.loads(before.splitlines()[0])["kind"] == "header"
