"""`turngate run / list / show / catalog check`: verdicts, reports, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.turngate_cli import turngate
from turngate.cli.main import main
from turngate.judge.catalog import CATALOG_DIR, ENGINES
from turngate.judge.report import ReportError, read_report

ONE = "interactive-run-lifecycle/max-attempt/exceeded-fails"


def test_run_writes_a_complete_report_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, junit = tmp_path / "r.jsonl", tmp_path / "j.xml"
    code = main(["run", "-k", ONE, "--jobs", "2", "--report-json", str(report), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 0, out
    every = len(ENGINES)  # the scenario runs on every engine
    assert f"{every} passed, 0 partial, 0 failed, 0 non-strict, 0 skipped, 0 errored" in out
    header, cases, footer = read_report(report)
    assert (header["target"], header["planned"]) == ("reference", every)
    assert sorted(case["engine"] for case in cases) == sorted(ENGINES)
    assert footer["counts"]["passed"] == every
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(every), "0")


def test_a_report_without_its_footer_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "r.jsonl"
    assert main(["run", "-k", ONE, "--engine", "codex", "--jobs", "1", "--report-json", str(report)]) == 0
    lines = report.read_text(encoding="utf-8").splitlines()
    report.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # the run "died" before its footer
    with pytest.raises(ReportError, match="did not finish"):
        read_report(report)
    report.write_text("\n".join([lines[0], lines[-1]]) + "\n", encoding="utf-8")  # cases lost
    with pytest.raises(ReportError, match="footer counts 1 cases, the file holds 0"):
        read_report(report)


def test_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "-k", ONE]) == 0
    assert capsys.readouterr().out.startswith(f"{ONE}  MUST")
    assert main(["show", ONE]) == 0
    shown = capsys.readouterr().out
    assert "超过最大回合数触发失败" in shown
    assert "INTERACTIVE_MAX_ATTEMPT_EXCEEDED" in shown


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--target", "ftp://nowhere"], "--target"),
        (["run", "-k", "no/such/*"], "matches no scenario"),
        (["run", "--engine", "aider"], "'aider'"),
        (["show", "no/such/id"], "no such scenario"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], words: str, tmp_path: Path) -> None:
    done = turngate(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert words in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_scenario_file_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    bad.parent.mkdir(parents=True)
    good = (CATALOG_DIR / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml").read_text(
        encoding="utf-8"
    )
    bad.write_text(good.replace("profile: resumable", "profile: sometimes"), encoding="utf-8")
    done = turngate("run", "--no-shipped", "--catalog", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(bad) in done.stderr
    assert "runtime.profile" in done.stderr
    assert ": 'sometimes':" in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_failing_case_makes_the_run_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = tmp_path / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    wrong.parent.mkdir(parents=True)
    good = (CATALOG_DIR / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml").read_text(
        encoding="utf-8"
    )
    wrong.write_text(
        good.replace("error_code: INTERACTIVE_MAX_ATTEMPT_EXCEEDED", "error_code: NOPE"), encoding="utf-8"
    )
    report = tmp_path / "r.jsonl"
    only_mine = ["--no-shipped", "--catalog", str(tmp_path)]
    code = main(["run", *only_mine, "--engine", "iflow", "--jobs", "1", "--report-json", str(report)])
    assert code == 1
    _, (case,), footer = read_report(report)
    assert case["outcome"] == "failed"
    assert footer["counts"]["failed"] == 1
    # The difference, and the spec's words that make it a failure.
    assert case["message"] == (
        "[failed] step 1 (reply): error_code: expected 'NOPE', got 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED'\n"
        "    backed by MUST interactive-run-lifecycle/max-attempt/exceeded-fails#and1 "
        "(001_af4670374c42ecdf.txt: 超过最大回合数触发失败): "
        "- **AND** 失败原因 MUST 包含 `INTERACTIVE_MAX_ATTEMPT_EXCEEDED`"
    )
    assert json.loads(json.dumps(case["record"]))["steps"][1]["observation"]["state"] == "failed"
