"""The reports of real Skill-Runner releases in docs/skill-runner/ judged again to what the docs say
they show, so that a change to the judge that moves a published verdict is seen here first (that they
validate: test_report_schema.py, for every report in docs/)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.schemas.schemas import ROOT
from tests.turngate_cli import in_process as cli

SAVED = ROOT / "docs" / "skill-runner"
# release -> (the edition it was judged by, the outcomes docs/skill-runner-releases.md gives)
RELEASES = {
    "v0.4.0": ("skill-runner-v0.4.0", {"passed": 46, "failed": 7, "skipped": 366}),
    "v0.6.0": ("skill-runner-v0.6.0", {"passed": 30, "failed": 8, "skipped": 395}),
    "v0.7.9": ("skill-runner-v0.7.9", {"passed": 28, "failed": 6, "skipped": 399}),
}


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_a_release_s_saved_report_judges_again_to_its_published_counts(tmp_path: Path, release: str) -> None:
    edition, counts = RELEASES[release]
    saved = SAVED / f"{release}.jsonl"
    again = tmp_path / "again.jsonl"
    code, _, err = cli("report", "judge", str(saved), "-o", str(again))
    assert code == 1, err  # it has failed cases
    text = again.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.split("\n") if line.strip()]  # not splitlines: U+2028
    assert lines[0]["edition"] == edition  # the edition it was judged by is kept
    outcomes = Counter(line["outcome"] for line in lines if line["kind"] == "case")
    assert dict(outcomes) == counts
    assert all(line["outcome"] != "errored" for line in lines if line["kind"] == "case")
