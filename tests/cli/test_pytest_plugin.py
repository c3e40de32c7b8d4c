"""``pytest --turngate-target ...`` in a folder with no tests of its own: the catalog as pytest items.

Each run is a real pytest in a temporary folder, as an implementer would type
it; the broken target is the reference with its gate ignoring ``max_attempt``,
behind the command protocol (tests/cli/ignores_max_attempt.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from tests.cli.conftest import BROKEN, ONE, implementer_pytest

# The four max-attempt scenarios this file was written for (the catalog has more that say max-attempt).
FOUR = "max-attempt and not sticky and not limit-one and not automatic-decision"
CAUGHT_BY = (  # the scenarios that catch the bug, each on four engines
    ONE,
    "design/decision-6/max-attempt-interactive-only",
    "interactive-decision-policy/max-attempt-stop/exceeded-without-evidence",
)


def test_the_reference_passes_its_cases_by_scenario_id_and_engine(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "--turngate-target", "reference", "-k", "exceeded-fails", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    for engine in ("codex", "gemini", "iflow", "opencode"):
        assert f"turngate::{ONE}[{engine}] PASSED" in done.stdout
    assert "4 passed" in done.stdout


def test_a_broken_target_fails_with_the_specs_words_and_every_difference(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "-k", f"{FOUR} and codex", "-n", "2",
                   f"--junitxml={junit}")  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "3 failed, 1 passed" in out  # unbounded-without-max-attempt does not touch the bug
    assert f"FAILED: {ONE} [codex] (MUST)" in out
    assert "spec: 001_" in out
    assert "> - **AND** 失败原因 MUST 包含 `INTERACTIVE_MAX_ATTEMPT_EXCEEDED`" in out
    # every difference, each with its severity and the sentence behind it
    assert "[failed] step 1 (reply): state\n     expected: 'failed'\n     actual:   'waiting_user'" in out
    assert "[failed] step 1 (reply): error_code" in out
    assert "backed by: MUST " in out
    assert "       > - **THEN** run MUST 进入 `failed`" in out
    failures = ElementTree.parse(junit).getroot().findall(".//testcase/failure")
    assert len(failures) == 3
    assert all("INTERACTIVE_MAX_ATTEMPT_EXCEEDED" in (f.text or "") for f in failures)


def test_x_stops_at_the_first_failure_and_lf_reruns_only_the_failures(tmp_path: Path) -> None:
    first = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "-k", FOUR)
    assert first.returncode == 1, first.stdout
    assert "12 failed, 4 passed" in first.stdout, first.stdout
    again = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "--lf", "-q")
    # --lf reruns the 12 failures and deselects every other case of the catalog, whatever its size
    assert again.returncode == 1, again.stdout
    assert re.search(r"12 failed, \d+ deselected", again.stdout), again.stdout
    assert {line.split("[")[0] for line in again.stdout.splitlines() if line.startswith("FAILED ")} == {
        f"FAILED turngate::{scenario}" for scenario in CAUGHT_BY
    }
    stopped = implementer_pytest(
        tmp_path, "--turngate-target", BROKEN, "-k", FOUR, "-x", "-p", "no:cacheprovider"
    )
    assert stopped.returncode == 1
    assert "1 failed" in stopped.stdout
    assert "stopping after 1 failures" in stopped.stdout


def test_without_the_option_nothing_is_collected(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "-p", "no:cacheprovider")
    assert done.returncode == 5
    assert "no tests ran" in done.stdout


def test_a_target_that_cannot_be_reached_is_a_usage_error(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "--turngate-target", "cmd:/nonexistent", "-p", "no:cacheprovider")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "turngate: --turngate-target cmd:/nonexistent: /nonexistent: no such file" in done.stderr
    assert "Traceback" not in done.stderr
