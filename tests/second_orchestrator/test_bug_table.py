"""The bug table is well formed: unique names, real sentence IDs, a description each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from turngate.implementations.second_orchestrator import bugs
from turngate.implementations.second_orchestrator.bugs import BUGS, BY_NAME

ROOT = Path(__file__).resolve().parents[2]


def sentence_ids() -> set[str]:
    rows = yaml.safe_load(
        (ROOT / "turngate" / "judge" / "catalog" / "sentences.yaml").read_text(encoding="utf-8")
    )
    return {row["id"] for row in rows}


def test_at_least_24_bugs_with_unique_names() -> None:
    assert len(BUGS) >= 24
    assert len(BY_NAME) == len(BUGS)


@pytest.mark.parametrize("entry", BUGS, ids=lambda entry: entry.name)
def test_every_bug_cites_existing_sentences(entry: bugs.Bug) -> None:
    known = sentence_ids()
    assert entry.sentences
    assert all(sentence in known for sentence in entry.sentences), entry.sentences
    assert entry.does.strip()


def test_every_bug_is_used_in_the_code() -> None:
    """A bug in the table that no code asks about would be a no-op build."""
    package = ROOT / "turngate" / "implementations" / "second_orchestrator"
    source = "\n".join(
        path.read_text(encoding="utf-8")
        for path in package.glob("*.py")
        if path.name not in ("bugs.py", "score.py")
    )
    unused = [entry.name for entry in BUGS if f'bug("{entry.name}")' not in source]
    assert not unused


def test_independence_no_harness_imports() -> None:
    package = ROOT / "turngate" / "implementations" / "second_orchestrator"
    forbidden = re.compile(r"^\s*(from|import)\s+turngate(?!\.implementations\.second_orchestrator)\b", re.M)
    for path in package.glob("*.py"):
        assert not forbidden.search(path.read_text(encoding="utf-8")), path
