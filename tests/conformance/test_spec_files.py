"""The spec's text ships with the package, identical to the spec beside the repository, and the
quotes every check cites are checked against it; without a spec the check fails, never passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from turngate.judge.catalog.sentences import check_quotes
from turngate.judge.catalog.spec import SHARED_SPEC_DIR, SPEC_DIR


def test_the_shipped_spec_is_the_spec_beside_the_repository() -> None:
    if not SHARED_SPEC_DIR.is_dir():
        pytest.skip(f"no spec beside the repository ({SHARED_SPEC_DIR})")
    shipped = {path.name: path.read_bytes() for path in SPEC_DIR.iterdir()}
    upstream = {path.name: path.read_bytes() for path in SHARED_SPEC_DIR.iterdir() if path.is_file()}
    assert sorted(shipped) == sorted(upstream)
    changed = [name for name in upstream if shipped[name] != upstream[name]]
    assert changed == [], "copy the spec again: cp ../shared/spec/* turngate/judge/catalog/spec_files/"


def test_every_quote_is_verbatim_in_the_shipped_spec() -> None:
    assert check_quotes() == []


def test_without_a_spec_the_quote_check_fails_naming_the_folder(tmp_path: Path) -> None:
    problems = check_quotes(tmp_path / "nowhere")
    assert len(problems) == 1
    assert str(tmp_path / "nowhere") in problems[0]
    assert "no spec folder" in problems[0]


def test_a_spec_missing_a_file_fails_naming_the_file(tmp_path: Path) -> None:
    for path in SPEC_DIR.iterdir():
        if not path.name.startswith("003"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    problems = check_quotes(tmp_path)
    assert problems
    assert all("003_" in problem and "not in" in problem for problem in problems)
