"""A case's own folder: fake engines, the engine script, engine state, home, the skill, the call log.

Each case gets a temporary folder of its own, so that cases can run in parallel across processes and
never see each other; a target whose engines are not ours to configure per case (an HTTP server)
reads every case's script from one shared folder instead, and this case's is removed after it.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Final

import yaml

from turngate.engines.fake.engine import NON_RESUMABLE_FILE
from turngate.engines.fake.install import install
from turngate.engines.fake.script import remove_compiled, write_compiled
from turngate.judge.catalog import Scenario
from turngate.judge.skill_writer import skill_id, write_skill
from turngate.protocol.connector import CaseSetup

FIXED_EPOCH_MS: Final = 1_763_812_800_000  # deterministic engine timestamps
_SHM: Final = "/dev/shm"


def case_id(scenario: Scenario, engine: str) -> str:
    """The fake engines' case name: the scenario ID made file-safe, plus the engine."""
    return scenario.id.replace("/", "__").replace(".", "_") + "__" + engine


def wants_sticky(scenario: Scenario) -> bool:
    return "sticky" in scenario.capabilities or scenario.runtime.get("profile") == "sticky_process"


def temporary_folder(root: Path | None) -> tempfile.TemporaryDirectory[str]:
    """A new case folder under ``root``, or where case folders go unless told (see ``case_root``)."""
    return tempfile.TemporaryDirectory(prefix="turngate-case-", dir=root or case_root())


@functools.cache
def case_root() -> str | None:
    """Where case folders go unless told: memory (/dev/shm) when it may hold executables, and TMPDIR is unset.

    A case writes and removes a few dozen small files; on a busy disk removing them
    alone took 60-75 ms a case, a third of the in-process catalog's time (0.6 ms in memory).
    """
    if os.environ.get("TMPDIR"):
        return None
    try:
        noexec = bool(os.statvfs(_SHM).f_flag & os.ST_NOEXEC)
    except OSError:
        return None
    return None if noexec or not os.access(_SHM, os.W_OK | os.X_OK) else _SHM


def prepare(
    scenario: Scenario,
    engine: str,
    reading: str | None,
    workdir: Path,
    shared_scripts: Path | None,
    *,
    sticky_knob: bool = True,
) -> CaseSetup:
    """Fill ``workdir`` for the case: what the target is given to start it with (``CaseSetup``)."""
    for name in ("scripts", "state", "home", "skills"):
        (workdir / name).mkdir()
    install(workdir / "bin")
    name = case_id(scenario, engine)
    script = {"case": name, **scenario.engine_script}
    (shared_scripts or workdir / "scripts").mkdir(parents=True, exist_ok=True)
    script_path = (shared_scripts or workdir / "scripts").joinpath(f"{name}.yaml")
    # Compiled once for every engine process of the case: into the engines' state folder when it is
    # the case's, else beside the script (a server's engines, whose state folder is the server's).
    state = str(workdir / "state") if shared_scripts is None else None
    write_compiled(str(script_path), yaml.safe_dump(script, sort_keys=False), state)
    skill_dir = write_skill(workdir / "skills", scenario.skill, name=skill_id(name))
    env = {
        "HOME": str(workdir / "home"),
        "TURNGATE_SCRIPTS": str(workdir / "scripts"),
        "TURNGATE_STATE": str(workdir / "state"),
        "TURNGATE_CALL_LOG": str(workdir / "calls.jsonl"),
        "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
    }
    if wants_sticky(scenario):
        env["TURNGATE_NON_RESUMABLE"] = engine  # what a probing orchestrator needs to choose sticky_process
        if shared_scripts is not None and sticky_knob:  # a server's engines: the knob as a file they read
            (shared_scripts / NON_RESUMABLE_FILE).write_text(engine, encoding="utf-8")
    return CaseSetup(
        name,
        engine,
        skill_dir,
        scenario.runtime,
        reading,
        workdir,
        env,
        workdir / "bin",
        scenario.gemini_output_format,
        uses_clock=any(step.action == "advance_clock" for step in scenario.steps),
        observes_slots="slots" in scenario.capabilities,
    )


def remove_shared_script(
    scenario: Scenario, engine: str, shared_scripts: Path, *, sticky_knob: bool = True
) -> None:
    """After the case: its script (and what was compiled beside it) out of the shared folder, and the
    non-resumable knob a sticky case set there, so that the next case starts from a clean folder."""
    script_path = shared_scripts / f"{case_id(scenario, engine)}.yaml"
    remove_compiled(str(script_path))
    if wants_sticky(scenario) and sticky_knob:
        (shared_scripts / NON_RESUMABLE_FILE).unlink(missing_ok=True)
