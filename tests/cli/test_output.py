"""What a run leaves behind: reports on files or standard output, tables that keep skips apart, JUnit a
CI server reads, JSON from list and show, progress in a pipe, colour only when wanted, escaped captures.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pexpect
import pytest
from rich.console import Console
from rich.text import Text

from tests.cli.conftest import ONE, Turngate
from turngate.base.progress import Progress
from turngate.cli.run_summary import summary
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import CATALOG_DIR, ENGINES

HERE = Path(__file__).resolve().parent


def _result(capability: str, outcome: str, message: str = "", engine: str = "codex") -> CaseResult:
    return CaseResult(
        scenario_id=f"{capability}/x/{outcome}",
        engine=engine,
        reading=None,
        level="MUST",
        capability=capability,
        outcome=outcome,
        message=message,
        duration_sec=0.1,
        record=None,
        differences=(),
        checks=None,
        observed=(),
        conventions=None,
        reading_chosen=False,
        readings={},
    )


def _text(results: list[CaseResult]) -> str:
    out = io.StringIO()
    Console(file=out, width=200, no_color=True).print(summary(results, 1.0))
    return out.getvalue()


def test_skips_are_neither_oks_nor_misses_and_their_reasons_are_listed() -> None:
    results = [_result("lifecycle", "passed") for _ in range(9)]
    results += [_result("lifecycle", "skipped", "target http lacks: clock") for _ in range(6)]
    results += [_result("lifecycle", "skipped", "target http lacks: restart") for _ in range(2)]
    results += [
        _result("design", "failed", "step 1 (start): state: expected 'waiting_user', got 'succeeded'")
    ]
    text = _text(results)
    assert "9/9 ok +8 skipped" in text
    assert "9/17" not in text
    assert "1 FAIL/1" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["6", "target", "http", "lacks:", "clock"] in lines
    assert ["2", "target", "http", "lacks:", "restart"] in lines
    assert (
        "9 passed, 0 partial, 1 failed, 0 non-strict, 8 skipped, 0 errored, 0 unreached, 0 ambiguous in 1.0s"
        in text
    )


def test_the_end_of_a_run_lists_what_failed_with_its_first_break() -> None:
    """The failures scroll past above the table: the table's end names each failing case, its engine
    and the check and sentence it first broke (an error: its first line)."""
    broken = _result("design", "failed", engine="gemini")
    broken = CaseResult(
        **{
            **{name: getattr(broken, name) for name in CaseResult.__dataclass_fields__},
            "differences": (
                {"step": 0, "key": "events", "severity": "informational", "authority": "convention"},
                {"step": 1, "key": "pending_id", "severity": "failed", "authority": "design/decision-5#2"},
            ),
        }
    )
    errored = _result("lifecycle", "errored", "TargetError: job 7 did not settle within 300 s\ntraceback")
    text = _text([_result("design", "passed"), broken, errored])
    assert "what failed" in text
    listed = [" ".join(line.split()) for line in text.splitlines()]
    assert "FAILED design/x/failed [gemini] step 1 pending_id: design/decision-5#2" in listed
    assert "ERRORED lifecycle/x/errored [codex] TargetError: job 7 did not settle within 300 s" in listed
    assert "design/x/passed" not in text


def test_a_run_that_verified_nothing_says_so_and_exits_5(turngate: Turngate) -> None:
    target = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'declares_nothing.py'))}"
    done = turngate("run", "--target", target, "-k", "design/decision-1/", "--engine", "codex")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "nothing verified: all 1 cases were skipped" in done.stdout
    assert "+1 skipped" in done.stdout
    assert "lacks: events" in done.stdout


def test_report_json_dash_is_standard_output_and_the_table_moves_to_stderr(
    turngate: Turngate, tmp_path: Path
) -> None:
    done = turngate("run", "-k", ONE, "--engine", "codex", "--report-json", "-", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["kind"] for line in lines] == ["header", "case", "footer"]
    assert "1 passed" in done.stderr
    assert not (tmp_path / "-").exists()


def test_junit_has_time_timestamp_totals_and_the_runs_properties(turngate: Turngate, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = turngate("run", "-k", ONE, "--junit", str(junit), "--jobs", "1", "--engine", "iflow")
    assert done.returncode == 0, done.stderr
    root = ElementTree.parse(junit).getroot()
    assert root.get("tests") == str(len(root.findall(".//testcase")))
    assert root.get("failures") == "0"
    assert root.get("timestamp")
    assert float(root.get("time", "-1")) >= 0
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("timestamp")
    assert suite.get("time") is not None
    properties = {item.get("name"): item.get("value") for item in suite.iter("property")}
    assert properties["target"] == "reference"
    assert properties["engines"] == "iflow"
    assert properties["interrupted"] == "false"
    assert properties["turngate_version"]


def test_junits_run_time_is_the_wall_time_not_the_sum_of_cases_run_side_by_side() -> None:
    from turngate.judge.report import write_junit

    results = [_result("design", "passed") for _ in range(3)]  # 0.1 s each
    out = io.StringIO()
    write_junit(out, results, properties={"target": "reference"}, started_at=0.0, wall_sec=0.125)
    root = ElementTree.fromstring(out.getvalue().split("\n", 1)[1])
    assert root.get("time") == "0.125"
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("time") == "0.300"  # a suite's cases, each timed


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    for args in (["list"], ["list", "--json"], ["show", ONE]):
        process = subprocess.Popen(
            [sys.executable, "-m", "turngate", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()  # `| head` that has read enough: no reader is left
        errors = process.stderr.read().decode()
        assert process.wait(timeout=60) == 141, errors
        assert errors == ""


def test_list_and_show_as_json(turngate: Turngate) -> None:
    listed = json.loads(turngate("list", "--json").stdout)
    assert len(listed) == len(list(CATALOG_DIR.rglob("*.yaml")))
    first = next(item for item in listed if item["id"] == ONE)
    assert first["level"] == "MUST"
    assert "codex" in first["engines"]
    assert first["source"]["quote"]
    shown = json.loads(turngate("show", ONE, "--json").stdout)
    assert shown["id"] == ONE
    assert shown["scenario"]["id"] == ONE
    assert shown["scenario"]["steps"]


def test_catalog_adds_a_users_folder_beside_the_shipped_one(turngate: Turngate, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    text = (CATALOG_DIR / f"{ONE}.yaml").read_text(encoding="utf-8")
    copy = mine / "my-team/max-attempt/copy.yaml"
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(f"id: {ONE}", "id: my-team/max-attempt/copy"), encoding="utf-8")
    listed = [item["id"] for item in json.loads(turngate("list", "--json", "--catalog", str(mine)).stdout)]
    assert "my-team/max-attempt/copy" in listed
    assert ONE in listed
    alone = turngate("list", "--catalog", str(mine), "--no-shipped").stdout.split()
    assert alone[0] == "my-team/max-attempt/copy"
    assert ONE not in alone
    twice = mine / f"{ONE}.yaml"
    twice.parent.mkdir(parents=True)
    twice.write_text(text, encoding="utf-8")
    done = turngate("list", "--catalog", str(mine))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert str(twice) in done.stderr
    assert "already used by" in done.stderr
    assert "--no-shipped" in done.stderr


def test_progress_is_a_line_per_case_off_a_terminal_beside_the_table(turngate: Turngate) -> None:
    """On standard output with the table, so a pipe (``| head``) sees each case as it finishes; on
    standard error when a report takes standard output."""
    done = turngate("run", "-k", ONE, "--jobs", "2")
    progress = [line for line in done.stdout.splitlines() if line.startswith("[")]
    every = len(ENGINES)  # the scenario runs on every engine
    assert len(progress) == every, done.stdout
    assert progress[-1].startswith(f"[{every}/{every}] passed  " + ONE), done.stdout
    assert done.stdout.index(progress[-1]) < done.stdout.index("capability")
    assert "\x1b" not in done.stderr + done.stdout
    reported = turngate("run", "-k", ONE, "--jobs", "2", "--report-json", "-")
    assert sum(line.startswith("[") for line in reported.stderr.splitlines()) == every, reported.stderr
    assert all(line.startswith("{") for line in reported.stdout.splitlines())


def test_the_bar_counts_outcomes_and_shows_the_time_left_with_one_line_per_miss(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "160", "NO_COLOR": "1"})
    child = pexpect.spawn(
        sys.executable,
        ["-m", "turngate", "run", "--target", PARTIAL_TARGET, "-k", "free-text-reply/", "--engine", "codex"],
        cwd=str(tmp_path),
        env=env,
    )
    child.expect(pexpect.EOF, timeout=120)
    child.close()
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", child.before.decode())  # each redraw a line
    assert child.exitstatus == 1, screen
    assert "eta" in screen, screen
    above = [line for line in screen.splitlines() if line.lstrip("\r").startswith("partial  ")]
    assert len(above) == 1, screen  # one line: the differences are in the reports and the list
    assert "backed by" not in screen.split("what failed")[0], screen


def test_the_tally_puts_what_fails_first() -> None:
    progress = Progress(3, "cases", io.StringIO())
    for outcome in ("passed", "failed", "partial"):
        progress.advance(outcome, "x")
    assert Text.from_markup(progress.tally()).plain == "1 failed, 1 partial, 1 passed"


def test_drift_shows_progress_per_capture(turngate: Turngate) -> None:
    done = turngate("drift", "--source", "corpus", "--engine", "iflow", "--mutator", "glue-noise")
    captures = len(list((CATALOG_DIR.parent / "corpus" / "iflow").glob("*/capture.yaml")))
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == captures
    assert progress[-1].startswith(f"[{captures}/{captures}] ")
    assert "mutations" in progress[0]


@pytest.mark.pty
@pytest.mark.parametrize("no_color", [False, True])
def test_colour_on_a_terminal_unless_no_color(tmp_path: Path, no_color: bool) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"TERM": "xterm-256color", "COLUMNS": "160", **({"NO_COLOR": "1"} if no_color else {})})
    child = pexpect.spawn(
        sys.executable, ["-m", "turngate", "run", "-k", ONE, "--engine", "codex"], cwd=str(tmp_path), env=env
    )
    child.expect(pexpect.EOF, timeout=120)
    child.close()
    screen = child.before.decode()
    assert child.exitstatus == 0, screen
    green = "\x1b[32m"  # rich's style for an all-ok cell
    assert (green in screen) is not no_color, screen
    if no_color:  # no added styling at all, bold and dim included (no-color.org)
        assert "\x1b[1m" not in screen, screen
        assert "\x1b[2m" not in screen, screen


def test_a_captures_control_characters_are_escaped_when_printed(turngate: Turngate, tmp_path: Path) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred"
    lines = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": hostile}},
        {"type": "turn.completed", "usage": {}},
    ]
    stdout = tmp_path / "out.ndjson"
    stdout.write_bytes(
        ("\n".join(json.dumps(line) for line in lines) + "\n" + hostile + " raw noise\n").encode()
    )
    done = turngate("replay", str(stdout), "--engine", "codex")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "\x07" not in done.stdout
    assert "\\x1b]0;pwned\\x07" in done.stdout
    assert "\\x1b[31mred" in done.stdout


PARTIAL_TARGET = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'hides_history.py'))}"
PARTIAL_CASE = "interactive-decision-policy/free-text-reply/any-kind-free-text"


def test_partial_fails_a_run_everywhere_unless_the_user_accepts_it(
    turngate: Turngate, tmp_path: Path
) -> None:
    """One rule (verdict.fails_run): exit 1, a JUnit failure, a red cell and the "what failed" list; with
    --allow-partial exit 0, JUnit system-out, and the report's header says how the run was judged."""
    for accepted in (False, True):
        junit, report = tmp_path / f"junit-{accepted}.xml", tmp_path / f"run-{accepted}.jsonl"
        chosen = ("-k", PARTIAL_CASE, "--engine", "codex", "--jobs", "1")
        extra = ("--allow-partial",) if accepted else ()
        done = turngate(
            "run",
            "--target",
            PARTIAL_TARGET,
            *chosen,
            *extra,
            "--junit",
            str(junit),
            "--report-json",
            str(report),
        )
        assert "1 partial" in done.stdout, done.stdout + done.stderr
        case = ElementTree.parse(junit).getroot().find(".//testcase")
        assert case is not None
        header = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
        assert header["allow_partial"] is accepted
        if accepted:
            assert done.returncode == 0, done.stdout + done.stderr
            assert case.find("failure") is None
            assert "accepted: --allow-partial" in (case.findtext("system-out") or "")
            assert "what failed" not in done.stdout
        else:
            assert done.returncode == 1, done.stdout + done.stderr
            failure = case.find("failure")
            assert failure is not None
            assert "MUST checks the target could not show" in failure.get("message", "")
            listed = [" ".join(line.split()) for line in done.stdout.splitlines()]
            assert any(line.startswith("PARTIAL interactive-decision-policy/") for line in listed), listed
            assert "1 PARTIAL/1" in done.stdout
        # judged again, the same rule, chosen again by the judge's own option
        again = turngate("report", "judge", str(report), *extra)
        assert again.returncode == (0 if accepted else 1), again.stdout + again.stderr


def test_a_cell_never_hides_partial_cases_behind_failures() -> None:
    results = [
        _result("design", "failed"),
        _result("design", "partial"),
        _result("design", "partial"),
        _result("design", "passed"),
    ]
    text = " ".join(_text(results).split())
    assert "1 FAIL/4 2~" in text
    only_partial = " ".join(_text(results[1:]).split())
    assert "2 PARTIAL/3" in only_partial
