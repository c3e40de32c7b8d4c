"""Running the installed command as a user does: a real process, its exit status, its two streams;
and a real pytest with turngate's plugin, as an implementer runs it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.turngate_cli import turngate as run_turngate

HERE = Path(__file__).resolve().parent
ONE = "interactive-run-lifecycle/max-attempt/exceeded-fails"
# The reference with its gate ignoring ``max_attempt``, behind the command protocol.
BROKEN = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'ignores_max_attempt.py'))}"

# Plugins this suite's environment has and an implementer's need not: not part of what is tested.
WITHOUT_OUR_PLUGINS = ("-p", "no:randomly", "-p", "no:hypothesispytest", "-p", "no:anyio")

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


def implementer_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pytest ARGS`` as a real process in ``folder`` (a folder with no tests of its own)."""
    # Nothing of this suite's own pytest run (xdist worker, addopts) may reach the implementer's pytest.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    # Its temporary folders under its own folder: in the shared /tmp/pytest-of-<user> its start would
    # remove the oldest runs' folders there, another test run's among them (a few seconds of CPU).
    env["PYTEST_DEBUG_TEMPROOT"] = str(folder)
    return subprocess.run(
        # hypothesis' and anyio's plugins come with this suite's dependencies, not the implementer's,
        # and are most of pytest's start here (anyio's imports trio: 0.58 s -> 0.43 s of CPU for a
        # pytest with nothing to run); none of these runs uses them.
        [sys.executable, "-m", "pytest", *WITHOUT_OUR_PLUGINS, *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=folder,
        env=env,
    )


@dataclass(frozen=True)
class UsageRun:
    status: int
    stdout: str
    stderr: str


def implementer_pytest_here(folder: Path, capsys: pytest.CaptureFixture[str], *args: str) -> UsageRun:
    """``pytest ARGS`` run in this process, in ``folder``, for a run that ends before any case does (a
    usage error), where a fresh interpreter's start is nearly all of the time. Not through pytester:
    it takes the modules a run imports out of ``sys.modules`` afterwards, and a later test's
    ``except`` then meets an exception class imported anew (httpx's, the connectors')."""
    with pytest.MonkeyPatch.context() as patch:
        for key in [key for key in os.environ if key.startswith("PYTEST_")]:
            patch.delenv(key)
        patch.chdir(folder)
        capsys.readouterr()
        status = pytest.main([*WITHOUT_OUR_PLUGINS, *args])
        said = capsys.readouterr()
    return UsageRun(int(status), said.out, said.err)
