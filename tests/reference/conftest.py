"""A lab for the reference orchestrator: fake engines installed, a skill, a store, a manual clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fake_engines.install import install
from harness.reference.clock import ManualClock
from harness.reference.lifecycle import EngineSetup, Orchestrator, RunRequest
from harness.reference.skill import Skill, load_skill
from harness.reference.store import RunRecord, Store

GREETING_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,  # so a marker left in the data would fail validation (Decision 3)
}
FIXED_EPOCH_MS = 1_763_812_800_000


def write_skill(
    folder: Path,
    name: str = "greet",
    *,
    output_schema: dict[str, Any] | None = GREETING_SCHEMA,
    max_attempt: int | None = None,
    modes: tuple[str, ...] = ("auto", "interactive"),
    artifacts: tuple[str, ...] = (),
) -> Path:
    root = folder / name
    (root / "assets").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\n---\n\n# Greet\n\nGreet the user.\n", encoding="utf-8"
    )
    runner: dict[str, Any] = {"id": name, "execution_modes": list(modes), "schemas": {}}
    if output_schema is not None:
        (root / "assets" / "output.schema.json").write_text(json.dumps(output_schema), encoding="utf-8")
        runner["schemas"]["output"] = "assets/output.schema.json"
    if max_attempt is not None:
        runner["max_attempt"] = max_attempt
    if artifacts:
        runner["artifacts"] = list(artifacts)
    (root / "assets" / "runner.json").write_text(json.dumps(runner, indent=2), encoding="utf-8")
    return root


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
        (self.scripts / f"{case_id}.yaml").write_text(
            yaml.safe_dump(document, sort_keys=False), encoding="utf-8"
        )

    def start(self, skill: Skill, engine: str, mode: str, case_id: str, **options: Any) -> str:
        request = RunRequest(
            skill=skill, engine=engine, mode=mode, input={"case": f"tg-case-{case_id}"}, **options
        )  # type: ignore[arg-type]
        return self.orchestrator.submit(request)

    def settle(self, run_id: str) -> RunRecord:
        assert self.orchestrator.wait_idle(60), "turns still running after 60 s"
        return self.orchestrator.status(run_id)

    def calls(self) -> list[dict[str, Any]]:
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
