"""Running the installed command as a user does: a real process, its exit status, its two streams."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.turngate_cli import turngate as run_turngate

ONE = "interactive-run-lifecycle/max-attempt/exceeded-fails"

Turngate = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def turngate(tmp_path: Path) -> Turngate:
    """``turngate ARGS`` as ``python -m turngate`` (the shim an installed copy has too), in a folder of
    its own so that a stray output file (one named ``-``) would be seen there."""

    def run(
        *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run_turngate(*args, cwd=cwd or tmp_path, env=env)

    return run
