"""The real CLIs against the scripted model server, and against the fakes (needs npm installs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests_real.conftest import PINS, installed
from turngate.engines.fake.install import install as install_fakes
from turngate.engines.fake.invocation import ENGINES as FAKE_ENGINES
from turngate.engines.modelserver.endpoint import ModelServer
from turngate.engines.real.lock import REAL_ENGINES, Pin, select
from turngate.engines.real.npm_install import write_launchers
from turngate.implementations.reference.commands import ENGINES as REFERENCE_ENGINES
from turngate.tools.realengines.fidelity import (
    FIDELITY_SCRIPTS,
    Script,
    load_script_yaml,
    play,
)

FIDELITY = [
    Script(doc["case"], "fidelity", doc, REAL_ENGINES)
    for doc in (load_script_yaml(path) for path in sorted(FIDELITY_SCRIPTS.glob("*.yaml")))
]
# Every pinned engine has a fake to compare with (FIDELITY_ENGINES); each also plays alone below.
FAKED = [pin for pin in PINS if pin.engine in FAKE_ENGINES]


@pytest.mark.parametrize("pin", PINS, ids=[pin.name for pin in PINS])
@pytest.mark.parametrize("script", FIDELITY, ids=[s.case for s in FIDELITY])
def test_every_real_engine_plays_every_fidelity_script_offline_to_its_end(
    pin: Pin, script: Script, tmp_path: Path, cache: Path
) -> None:
    installed(pin)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / f"{script.case}.yaml").write_text(
        (FIDELITY_SCRIPTS / f"{script.case}.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    log = tmp_path / "requests.jsonl"
    with ModelServer(scripts, log, tmp_path / "data") as server:
        write_launchers(tmp_path / "real", [pin], cache, model_url=server.url)
        cwd = tmp_path / "run"
        cwd.mkdir()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TURNGATE_STATE": str(tmp_path)}
        turns = play(pin.engine, "json", script, tmp_path / "real", cwd, env)
    assert len(turns) == len(script.document["turns"])
    assert all(turn.exit_code is not None for turn in turns)  # none had to be killed
    refused = [
        line for line in log.read_text(encoding="utf-8").splitlines() if "turngate model server:" in line
    ]
    assert not refused, refused[0][:500]  # the server placed every request the CLI made


@pytest.mark.parametrize("pin", FAKED, ids=[pin.name for pin in FAKED])
@pytest.mark.parametrize("script", FIDELITY, ids=[s.case for s in FIDELITY])
def test_every_difference_from_the_fake_is_a_named_variant(
    pin: Pin, script: Script, tmp_path: Path, cache: Path
) -> None:
    from turngate.tools.realengines.fidelity import compare_script, fake_environment, script_retries

    installed(pin)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / f"{script.case}.yaml").write_text(
        (FIDELITY_SCRIPTS / f"{script.case}.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with ModelServer(scripts, tmp_path / "requests.jsonl", tmp_path / "data") as server:
        write_launchers(tmp_path / "real", [pin], cache, model_url=server.url)
        install_fakes(tmp_path / "fake")
        mode = "stream-json" if pin.engine == "gemini" else "json"
        sides = {}
        for side in ("real", "fake"):
            cwd = tmp_path / side / "run"
            cwd.mkdir(parents=True)
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path / side),
                "TURNGATE_STATE": str(tmp_path / side),
            }
            if side == "fake":
                env["TURNGATE_SCRIPTS"] = str(scripts)
                env.update(fake_environment(pin.engine, pin.version, tmp_path / side, script_retries(script)))
            sides[side] = play(pin.engine, mode, script, tmp_path / side, cwd, env)
    found = compare_script(pin.engine, pin.version, mode, script, sides["real"], sides["fake"])
    unexplained = [difference.text for difference in found if difference.variant is None]
    assert not unexplained, unexplained
    assert len(sides["real"]) == len(script.document["turns"])


def test_codex_0_169_refuses_full_auto_as_the_emulating_fake_does(tmp_path: Path, cache: Path) -> None:
    (pin,) = select(PINS, ["codex@0.169.0"])
    installed(pin)
    install_fakes(tmp_path / "fake")
    argv = ["exec", "--json", "--skip-git-repo-check", "--full-auto", "tg-case-x"]
    real = subprocess.run([str(pin.executable(cache)), *argv], capture_output=True, check=False)
    fake = subprocess.run(
        [str(tmp_path / "fake" / "codex"), *argv],
        capture_output=True,
        env={"TURNGATE_EMULATE": "codex@0.169.0", "TURNGATE_STATE": str(tmp_path)},
        check=False,
    )
    assert (real.returncode, real.stderr) == (fake.returncode, fake.stderr) == (2, fake.stderr)
    assert b"unexpected argument '--full-auto' found" in real.stderr


@pytest.mark.parametrize("version", ["0.146.1", "0.169.0"])
def test_codex_version_lines_match_the_emulation(version: str, tmp_path: Path, cache: Path) -> None:
    (pin,) = select(PINS, [f"codex@{version}"])
    installed(pin)
    install_fakes(tmp_path / "fake")
    real = subprocess.run([str(pin.executable(cache)), "--version"], capture_output=True, check=False)
    fake = subprocess.run(
        [str(tmp_path / "fake" / "codex"), "--version"],
        capture_output=True,
        env={"TURNGATE_EMULATE": pin.name, "TURNGATE_STATE": str(tmp_path)},
        check=False,
    )
    assert real.stdout == fake.stdout == f"codex-cli {version}\n".encode()


@pytest.mark.parametrize(
    "pin",
    [p for p in PINS if p.engine in REFERENCE_ENGINES and (p.engine != "codex" or p.version == "0.169.0")],
    ids=lambda p: p.name,
)
def test_the_reference_runs_a_resumed_interactive_run_on_the_real_cli(
    pin: Pin, tmp_path: Path, cache: Path
) -> None:
    from turngate.engines.real.caseengines import RealEngines
    from turngate.implementations.reference_connector import ReferenceConnector
    from turngate.judge.case_run import run_case
    from turngate.judge.catalog import load_catalog

    installed(pin)
    (scenario,) = [s for s in load_catalog() if s.id == "design/decision-5/backend-pending-baseline"]
    connector = ReferenceConnector(turn_timeout_sec=240.0)
    result = run_case(scenario, pin.engine, connector, root=tmp_path, real=RealEngines((pin,), cache))
    assert result.outcome == "passed", result.message
