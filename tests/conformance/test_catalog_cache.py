"""The catalog kept on disk between processes (turngate/judge/catalog/cache.py): taken when nothing it
depends on changed, read again from the YAML otherwise, never the reason a command fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from turngate.judge import catalog as catalog_module
from turngate.judge.catalog import CATALOG_DIR, CatalogError, cache, load_catalog

ONE = "interactive-run-lifecycle/max-attempt/exceeded-fails"


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, and no catalog read before in this process."""
    folder = tmp_path / "kept"
    monkeypatch.setenv("TURNGATE_CATALOG_CACHE", str(folder))
    monkeypatch.setattr(catalog_module, "_READ", {})
    return folder


def _mine(tmp_path: Path) -> Path:
    """A user's catalog: one scenario copied from the shipped one."""
    root = tmp_path / "mine"
    target = root / f"{ONE}.yaml"
    target.parent.mkdir(parents=True)
    shutil.copy(CATALOG_DIR / f"{ONE}.yaml", target)
    return root


def test_a_second_process_takes_the_kept_catalog(kept: Path, tmp_path: Path) -> None:
    root = _mine(tmp_path)
    first = load_catalog(root)
    (stored,) = kept.glob("*.pickle")
    # another process, with the same cache folder: the same scenarios, read from the kept file
    script = (
        "import sys; from pathlib import Path; from unittest import mock\n"
        "from turngate.judge import catalog as c\n"
        "with mock.patch.object(c, '_read_catalog', side_effect=AssertionError('read from YAML')):\n"
        "    print([s.id for s in c.load_catalog(Path(sys.argv[1]))])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TURNGATE_CATALOG_CACHE": str(kept)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([scenario.id for scenario in first])
    assert list(kept.glob("*.pickle")) == [stored]


def test_a_changed_file_is_read_again(kept: Path, tmp_path: Path) -> None:
    root = _mine(tmp_path)
    assert not load_catalog(root)[0].title.startswith("changed - ")
    path = root / f"{ONE}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("title: ", "title: changed - ", 1), encoding="utf-8")
    catalog_module._READ.clear()
    assert load_catalog(root)[0].title.startswith("changed - ")


def test_an_unreadable_kept_file_is_read_again_and_replaced(kept: Path, tmp_path: Path) -> None:
    root = _mine(tmp_path)
    expected = load_catalog(root)
    (stored,) = kept.glob("*.pickle")
    stored.write_bytes(b"\x80\x05 cut short")
    catalog_module._READ.clear()
    assert load_catalog(root) == expected
    assert stored.read_bytes() != b"\x80\x05 cut short"


def test_a_bad_scenario_keeps_nothing_and_says_so_every_time(kept: Path, tmp_path: Path) -> None:
    root = _mine(tmp_path)
    path = root / f"{ONE}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("level: MUST", "level: OFTEN"), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(CatalogError, match="OFTEN"):
            load_catalog(root)
    assert not list(kept.glob("*.pickle"))


def test_off_reads_the_yaml_and_a_folder_that_cannot_be_written_is_no_failure(
    kept: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _mine(tmp_path)
    monkeypatch.setenv("TURNGATE_CATALOG_CACHE", "off")
    assert cache.folder() is None
    assert [scenario.id for scenario in load_catalog(root)] == [ONE]
    assert not kept.exists()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("TURNGATE_CATALOG_CACHE", str(blocked / "kept"))
    catalog_module._READ.clear()
    assert [scenario.id for scenario in load_catalog(root)] == [ONE]


def test_the_folder_keeps_only_the_newest_catalogs(kept: Path, tmp_path: Path) -> None:
    root = _mine(tmp_path)
    path = root / f"{ONE}.yaml"
    text = path.read_text(encoding="utf-8")
    for index in range(cache.KEPT + 3):
        path.write_text(text.replace("title: ", f"title: {index} ", 1), encoding="utf-8")
        catalog_module._READ.clear()
        load_catalog(root)
    assert len(list(kept.glob("*.pickle"))) == cache.KEPT
    assert not list(kept.glob("*.part"))
