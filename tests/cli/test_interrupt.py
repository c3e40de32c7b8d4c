"""Ctrl-C keeps the verdict: the report's footer marked interrupted, the JUnit, the summary, exit 130.

A terminal sends SIGINT to the whole foreground process group (the run and its
pool workers and engines), so the test does the same to a run in a session of
its own, once a few cases have finished. It starts the run with Ctrl-C's default handling, as a
terminal's foreground job has it: a shell that starts the suite in the background (``cmd &`` without
job control, as some CI runners do) makes every process below it ignore SIGINT.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from turngate.judge.report import read_report


def _as_a_terminal_would() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Python then installs its KeyboardInterrupt handler


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_writes_the_footer_the_junit_and_the_summary(tmp_path: Path, jobs: str) -> None:
    report, junit = tmp_path / "run.jsonl", tmp_path / "junit.xml"
    command = ["run", "--jobs", jobs, "--report-json", str(report), "--junit", str(junit)]
    process = subprocess.Popen(
        [sys.executable, "-m", "turngate", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
        start_new_session=True,
        preexec_fn=_as_a_terminal_would,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    finished = 0
    seen = []  # the progress lines: on standard output, beside the table
    for line in process.stdout:
        seen.append(line)
        finished += line.startswith("[")
        if finished == 3:
            os.killpg(process.pid, signal.SIGINT)
            break
    out = "".join(seen) + process.stdout.read()
    errors = process.stderr.read()
    assert process.wait(timeout=120) == 130, out + errors
    assert "Traceback" not in errors + out
    header, cases, footer = read_report(report)
    assert footer["interrupted"] is True
    assert 3 <= len(cases) < header["planned"]
    assert f"interrupted: {len(cases)} of {header['planned']} cases finished" in out
    assert f"{len(cases)} passed, 0 partial, 0 failed" in out
    root = ElementTree.parse(junit).getroot()
    assert root.get("tests") == str(len(cases))
    assert {item.get("name"): item.get("value") for item in root.iter("property")}["interrupted"] == "true"


def test_a_ctrl_c_inside_a_held_block_lands_after_it() -> None:
    """The footer counted a case its file did not hold: a SIGINT between the count and the write."""
    from turngate.base.interrupts import interrupts_held

    done = []
    # This process may have been started ignoring SIGINT (see the module's docstring): handle it here.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("counted")
            done.append("written")
        assert done == ["counted", "written"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
