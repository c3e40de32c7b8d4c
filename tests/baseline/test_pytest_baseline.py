"""``pytest --turngate-target T --turngate-baseline known.yaml``: a case the baseline lists is a strict xfail.

A real pytest in a temporary folder, as in tests/cli/test_pytest_plugin.py; the broken target is the
reference with its gate ignoring ``max_attempt``, behind the command protocol.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import BROKEN, implementer_pytest
from tests.cli.test_pytest_plugin import PARTIAL, PARTIAL_CASE

EXCEEDED = "interactive-run-lifecycle/max-attempt/exceeded-fails"
ONE = "max-attempt/exceeded-fails and codex"
STATE = {"case": EXCEEDED, "engine": "codex", "check": "state", "sentence": f"{EXCEEDED}#then"}
ERROR_CODE = {"case": EXCEEDED, "engine": "codex", "check": "error_code", "sentence": f"{EXCEEDED}#and1"}


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return implementer_pytest(folder, "-p", "no:cacheprovider", "-rxXs", *args)


def _baseline(folder: Path, *entries: dict[str, str]) -> str:
    (folder / "known.yaml").write_text(yaml.safe_dump({"version": 1, "known": list(entries)}), "utf-8")
    return "--turngate-baseline=known.yaml"


def test_a_case_failing_for_its_known_differences_is_an_xfail(tmp_path: Path) -> None:
    ticket = {**STATE, "reason": "ticket 7"}
    done = _pytest(tmp_path, "--turngate-target", BROKEN, _baseline(tmp_path, ticket, ERROR_CODE), "-k", ONE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 xfailed" in done.stdout
    assert f"XFAIL turngate::{EXCEEDED}[codex] - known difference (baseline known.yaml): state" in done.stdout
    assert "ticket 7" in done.stdout


def test_a_known_difference_gone_is_xpass_strict_a_failure(tmp_path: Path) -> None:
    done = _pytest(
        tmp_path, "--turngate-target", "reference", _baseline(tmp_path, STATE, ERROR_CODE), "-k", ONE
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[XPASS(strict)] known difference (baseline known.yaml)" in done.stdout
    assert "1 failed" in done.stdout


def test_a_new_difference_beside_a_known_one_fails_naming_it(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--turngate-target", BROKEN, _baseline(tmp_path, STATE), "-k", ONE)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "xfailed" not in done.stdout
    assert f"new, not in the baseline: error_code ({EXCEEDED}#and1)" in done.stdout


def test_a_partial_case_the_baseline_lists_by_its_outcome_is_an_xfail_else_new(tmp_path: Path) -> None:
    """A partial case fails (verdict.fails_run), so a baseline lists it by its outcome; accepted
    (--turngate-allow-partial), it fails nothing, and the entry is still there, not gone."""
    chosen = ("--turngate-target", PARTIAL, "-k", f"{PARTIAL_CASE} and codex")
    listed = _baseline(tmp_path, {"case": PARTIAL_CASE, "engine": "codex", "outcome": "partial"})
    for accepted in ((), ("--turngate-allow-partial",)):
        done = _pytest(tmp_path, *chosen, listed, *accepted)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 xfailed" in done.stdout
        xfail = (
            f"XFAIL turngate::{PARTIAL_CASE}[codex] - known difference (baseline known.yaml): outcome partial"
        )
        assert xfail in done.stdout, done.stdout
    done = _pytest(tmp_path, *chosen, _baseline(tmp_path, STATE))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "new, not in the baseline: outcome partial\nPARTIAL: " in done.stdout


@pytest.mark.parametrize(
    "content", ["version: 1\nknown: [\n", "version: 1\nknown:\n  - {case: x, engine: codx}\n"]
)
def test_a_bad_baseline_is_a_usage_error(tmp_path: Path, content: str) -> None:
    (tmp_path / "known.yaml").write_text(content, encoding="utf-8")
    done = _pytest(tmp_path, "--turngate-target", "reference", "--turngate-baseline", "known.yaml", "-k", ONE)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "turngate: --turngate-baseline: known.yaml: " in done.stderr
    assert "Traceback" not in done.stderr
