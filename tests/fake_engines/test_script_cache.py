"""The compiled-script caches: the engines' own (state folder) and the one a harness writes beside
the scripts for a server's engines, whose state folder it does not know."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from turngate.engines.fake import script

SCRIPT = "case: c1\nturns:\n  - steps:\n      - say: hi\n"


def _without_the_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any compile from here on fails: a load that succeeds came from a cache."""
    monkeypatch.setitem(sys.modules, "turngate.engines.fake.compiler", None)


def _compiled_beside(folder: Path) -> Path:
    """A script written and compiled as a harness does for a server's engines."""
    path = folder / "c1.yaml"
    script.write_compiled(str(path), SCRIPT, None)
    return path


def test_a_script_compiled_beside_it_is_loaded_without_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _compiled_beside(tmp_path)
    assert (tmp_path / script.COMPANION_DIR / "c1.yaml.compiled").is_file()
    expected = script.load(str(path), None)
    _without_the_compiler(monkeypatch)
    assert script.load(str(path), str(tmp_path / "state" / "cache")) == expected


def test_a_changed_script_is_not_served_from_its_stale_companion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _compiled_beside(tmp_path)
    path.write_text(SCRIPT.replace("hi", "hello there"), encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a rewrite within the clock's resolution: the size still differs
    assert "hello there" in repr(script.load(str(path), None))
    _without_the_compiler(monkeypatch)
    with pytest.raises(ImportError):
        script.load(str(path), None)  # the stale companion is not used


def test_a_discarded_companion_is_gone(tmp_path: Path) -> None:
    path = _compiled_beside(tmp_path)
    script.discard_companion(str(path))
    script.discard_companion(str(path))  # twice: nothing to remove is no error
    assert list((tmp_path / script.COMPANION_DIR).iterdir()) == []


def test_a_script_written_into_an_engines_state_is_loaded_there_without_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c1.yaml"
    script.write_compiled(str(path), SCRIPT, str(tmp_path / "state"))
    assert path.read_text(encoding="utf-8") == SCRIPT
    assert not (tmp_path / script.COMPANION_DIR).exists()
    _without_the_compiler(monkeypatch)
    assert script.load(str(path), script.cache_dir_of(str(tmp_path / "state")))["case"] == "c1"


def test_a_removed_script_takes_its_companion_with_it(tmp_path: Path) -> None:
    path = _compiled_beside(tmp_path)
    script.remove_compiled(str(path))
    script.remove_compiled(str(path))  # twice: nothing to remove is no error
    assert not path.exists()
    assert list((tmp_path / script.COMPANION_DIR).iterdir()) == []
