"""Real engine tests: they need the pinned CLIs installed (`turngate engines real install`, npm).

Run by `nox -s real-engines` only; never part of the default `pytest` run
(testpaths is tests/). A pin that is not installed fails the test that needs
it, with the command that installs it: this folder is run on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turngate.engines.real.lock import Pin, default_cache, read_lock


def installed(pin: Pin) -> Pin:
    if not pin.executable(default_cache()).exists():
        pytest.fail(f"{pin.name} is not installed: run `turngate engines real install {pin.name}`")
    return pin


PINS = read_lock()


@pytest.fixture
def cache() -> Path:
    return default_cache()
