"""The built wheel, installed into a clean venv, runs from a folder outside the checkout.

Offline: the wheel is built without build isolation (hatchling comes with the
test extras) and installed with ``--no-index --no-deps``; the dependencies
come from the environment running this test, reached through a ``.pth`` line
(a plain path entry: the checkout's editable-install hook in there is not run,
so nothing of the checkout can leak in; the test checks where the code and
data were found).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.cli.conftest import ONE
from turngate.judge.catalog import ENGINES

CHECKOUT = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, timeout=600, check=False, cwd=cwd, env=env
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with only the turngate wheel installed in it; returns its bin folder."""
    root = tmp_path_factory.mktemp("wheel-install")
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-w", root / "dist", CHECKOUT, cwd=root,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("turngate-*.whl")
    venv = root / "venv"
    assert _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root).returncode == 0
    python = venv / "bin" / "python"
    done = _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=root
    )
    assert done.returncode == 0, done.stderr
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root)
    deps = Path(sysconfig.get_path("purelib"))
    (Path(purelib.stdout.strip()) / "_turngate_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return venv / "bin"


def _env() -> dict[str, str]:
    # Nothing may point back into the checkout: no PYTHONPATH, no inherited virtualenv.
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "NO_COLOR": "1"}


def test_the_installed_command_runs_the_shipped_catalog_from_outside_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    where = _run(
        installed / "python",
        "-c",
        "import turngate, turngate.judge.catalog as c, turngate.tools.drift.sources as s;"
        "print(turngate.__file__); print(c.CATALOG_DIR); print(s.CORPUS_DIR)",
        cwd=tmp_path,
        env=_env(),
    )
    assert where.returncode == 0, where.stderr
    venv = installed.parent
    assert all(Path(line).is_relative_to(venv) for line in where.stdout.split()), where.stdout
    assert not any(Path(line).is_relative_to(CHECKOUT) for line in where.stdout.split())

    report = tmp_path / "run.jsonl"
    done = _run(
        installed / "turngate", "run", "-k", ONE, "-k", "design/decision-1/*", "--report-json", report,
        cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    every = 2 * len(ENGINES)  # two scenarios, each on every engine
    assert f"{every} passed, 0 partial, 0 failed" in done.stdout
    assert json.loads(report.read_text(encoding="utf-8").splitlines()[-1])["counts"]["passed"] == every


def test_python_m_turngate_and_the_shipped_corpus_work_installed(installed: Path, tmp_path: Path) -> None:
    listed = _run(installed / "python", "-m", "turngate", "list", "--json", cwd=tmp_path, env=_env())
    assert listed.returncode == 0, listed.stderr
    assert ONE in {item["id"] for item in json.loads(listed.stdout)}
    drift = _run(
        installed / "turngate", "drift", "--source", "corpus", "--engine", "codex", "--mutator", "glue-noise",
        cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert "Traceback" not in drift.stderr
    # the spec the checks quote and the real engines' pins ship in the wheel too
    checked = _run(installed / "turngate", "catalog", "check", cwd=tmp_path, env=_env())
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("ok: ")
    pins = _run(
        installed / "python", "-c",
        "from turngate.engines.real.lock import read_lock; print(len(read_lock()))",
        cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert pins.returncode == 0, pins.stderr
    assert int(pins.stdout) > 0
