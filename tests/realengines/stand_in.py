"""``turngate run --engines real`` on one scenario, with a shell script standing in for a pinned real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.turngate_cli import turngate
from turngate.engines.real.lock import read_lock, select


def run_with_stand_in(
    tmp_path: Path, engine: str, scenario: str, shell: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The run (no --real: the run's engine picks its pin, the only one installed here) and the one
    case its JSON report holds. ``shell`` is the body of the stand-in's ``#!/bin/sh`` script."""
    (pin,) = select(read_lock(), [engine])
    cache = tmp_path / "cache"
    executable = pin.executable(cache)
    executable.parent.mkdir(parents=True)
    executable.write_text(f"#!/bin/sh\n{shell}\n", encoding="utf-8")
    executable.chmod(0o755)
    report = tmp_path / "run.jsonl"
    done = turngate(
        *("run", "--engines", "real", "--engine", engine, "-k", scenario),
        *("--report-json", str(report)),
        cwd=tmp_path,
        env={"TURNGATE_ENGINE_CACHE": str(cache), "PATH": os.environ["PATH"]},
    )
    (case,) = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()][1:-1]
    return done, case
