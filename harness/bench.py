"""Benchmarks, written to a JSON file (`nox -s bench`); speed is measured here, never in tests.

Figures: the median wall time of one fake-engine turn per engine (a real
process started through the installed launcher, warm script cache) against
the median of `python -c pass` with the same interpreter (goal: a turn costs at
most 1.5 times the bare interpreter start); and the wall time of the whole
catalog against the reference orchestrator (goal: well under a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fake_engines.install import install
from harness import __version__

GOAL_RATIO = 1.5
FIRST_TURN = {
    "codex": ["exec", "--skip-git-repo-check", "--json", "--full-auto", "tg-case-bench"],
    "gemini": ["--yolo", "--output-format", "json", "tg-case-bench"],
    "iflow": ["--yolo", "--thinking", "-p", "tg-case-bench"],
    "opencode": ["run", "--format", "json", "tg-case-bench"],
}
SCRIPT = """case: bench
turns:
  - steps:
      - think: Reading the skill.
      - tool: {name: bash, input: {command: cat SKILL.md}, output: "# greet"}
      - say: '{"greeting": "Hello", "__SKILL_DONE__": true}'
"""


def _median_ms(command: list[str], runs: int, env: dict[str, str], cwd: Path) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 3)


def engine_turns(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="turngate-bench-") as folder:
        root = Path(folder)
        scripts, workdir = root / "scripts", root / "run"
        scripts.mkdir()
        workdir.mkdir()
        (scripts / "bench.yaml").write_text(SCRIPT, encoding="utf-8")
        install(root / "bin")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(root),
            "TURNGATE_SCRIPTS": str(scripts),
            "TURNGATE_STATE": str(root / "state"),
        }
        baseline = _median_ms([sys.executable, "-c", "pass"], runs, env, workdir)
        turns = {}
        for engine, args in FIRST_TURN.items():
            command = [str(root / "bin" / engine), *args]
            subprocess.run(command, env=env, cwd=workdir, capture_output=True, check=True)  # compile once
            turns[engine] = _median_ms(command, runs, env, workdir)
    ratios = {engine: round(ms / baseline, 3) for engine, ms in turns.items()}
    return {
        "python_c_pass_ms": baseline,
        "fake_engine_turn_ms": turns,
        "ratio_to_python_c_pass": ratios,
        "goal_max_ratio": GOAL_RATIO,
        "meets_goal": all(ratio <= GOAL_RATIO for ratio in ratios.values()),
    }


def conformance_run(jobs: int) -> dict[str, Any]:
    """The whole catalog against the reference orchestrator: wall time and verdict counts."""
    from collections import Counter

    from harness.catalog import load_catalog
    from harness.runner import cases, run_all

    planned = cases(load_catalog(), None)
    started = time.perf_counter()
    outcomes = Counter(result.outcome for result in run_all(planned, target="reference", jobs=jobs))
    seconds = time.perf_counter() - started
    return {
        "cases": len(planned),
        "jobs": jobs,
        "wall_sec": round(seconds, 3),
        "cases_per_sec": round(len(planned) / seconds, 2),
        "outcomes": dict(sorted(outcomes.items())),
        "goal_max_wall_sec": 60,
        "meets_goal": seconds < 60 and set(outcomes) == {"passed"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench-results.json"))
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel cases for the catalog run"
    )
    args = parser.parse_args(argv)
    results = {
        "turngate_version": __version__,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "engines": engine_turns(args.runs),
        "conformance_reference": conformance_run(args.jobs),
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
