"""A lab for the reference orchestrator: fake engines installed, a skill, a store, a manual clock."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from turngate.engines.fake.install import install
from turngate.engines.fake.script import write_compiled
from turngate.implementations.reference.clock import ManualClock
from turngate.implementations.reference.lifecycle import EngineSetup, Orchestrator, RunRequest
from turngate.implementations.reference.skill import Skill, load_skill
from turngate.implementations.reference.store import RunRecord, Store
from turngate.judge.case_folder import FIXED_EPOCH_MS
from turngate.judge.skill_writer import GREETING_SCHEMA
from turngate.judge.skill_writer import write_skill as runner_write_skill

# The ask-user hints the fake engines write: the four forms, and the defects a script can give one
# (turngate/engines/fake/script.schema.json).
FORMS = ("yaml_block", "yaml_fenced", "yaml_flow", "legacy_json")
DEFECTS = ("missing_prompt", "non_numeric_interaction_id", "wrong_types", "broken_syntax", "truncated")


def write_skill(
    folder: Path,
    name: str = "greet",
    *,
    output_schema: Mapping[str, Any] | None = GREETING_SCHEMA,
    max_attempt: int | None = None,
    modes: tuple[str, ...] = ("auto", "interactive"),
    artifacts: tuple[str, ...] = (),
) -> Path:
    spec = {
        "output_schema": output_schema,
        "max_attempt": max_attempt,
        "modes": modes,
        "artifacts": artifacts,
    }
    return runner_write_skill(folder, spec, name)


@dataclass
class Lab:
    root: Path
    bin: Path
    scripts: Path
    state: Path
    call_log: Path
    clock: ManualClock
    store: Store
    orchestrator: Orchestrator

    def engine_env(self) -> dict[str, str]:
        return {
            "HOME": str(self.root / "home"),
            "TURNGATE_SCRIPTS": str(self.scripts),
            "TURNGATE_STATE": str(self.state),
            "TURNGATE_CALL_LOG": str(self.call_log),
            "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
        }

    def skill(self, name: str = "greet", **options: Any) -> Skill:
        return load_skill(write_skill(self.root / "skills", name, **options))

    def case(self, case_id: str, *turns: list[dict[str, Any]], **script: Any) -> None:
        document = {"case": case_id, **script, "turns": [{"steps": steps} for steps in turns]}
        path = self.scripts / f"{case_id}.yaml"
        write_compiled(str(path), yaml.safe_dump(document, sort_keys=False), str(self.state))

    def start(self, skill: Skill, engine: str, mode: str, case_id: str, **options: Any) -> str:
        request = RunRequest(
            skill=skill, engine=engine, mode=mode, input={"case": f"tg-case-{case_id}"}, **options
        )  # type: ignore[arg-type]
        return self.orchestrator.submit(request)

    def settle(self, run_id: str) -> RunRecord:
        assert self.orchestrator.wait_idle(60), "turns still running after 60 s"
        return self.orchestrator.status(run_id)

    def calls(self) -> list[dict[str, Any]]:
        """The engine invocations, but the codex --version probe (as the runner leaves it out)."""
        return [call for call in self.all_calls() if call.get("action") != "version"]

    def all_calls(self) -> list[dict[str, Any]]:
        if not self.call_log.exists():
            return []
        return [json.loads(line) for line in self.call_log.read_text(encoding="utf-8").splitlines()]

    def reopen(self, **options: Any) -> Orchestrator:
        """A new orchestrator on the same store file, as after a restart of the process."""
        self.orchestrator.shutdown()
        self.store.close()
        self.store = Store(self.root / "turngate.sqlite3")
        self.orchestrator = make_orchestrator(self, **options)
        return self.orchestrator


def make_orchestrator(
    lab: Lab, *, slots: int = 2, turn_timeout_sec: float = 30.0, **options: Any
) -> Orchestrator:
    engines = EngineSetup(bin_dir=lab.bin, env=lab.engine_env(), turn_timeout_sec=turn_timeout_sec)
    return Orchestrator(
        store=lab.store, runs_dir=lab.root / "runs", engines=engines, clock=lab.clock, slots=slots, **options
    )


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    for folder in ("scripts", "state", "home", "runs", "skills"):
        (tmp_path / folder).mkdir()
    install(tmp_path / "bin")
    store = Store(tmp_path / "turngate.sqlite3")
    lab = Lab(
        root=tmp_path,
        bin=tmp_path / "bin",
        scripts=tmp_path / "scripts",
        state=tmp_path / "state",
        call_log=tmp_path / "calls.jsonl",
        clock=ManualClock(),
        store=store,
        orchestrator=None,  # type: ignore[arg-type]
    )
    lab.orchestrator = make_orchestrator(lab)
    yield lab
    lab.orchestrator.shutdown()
    lab.store.close()
