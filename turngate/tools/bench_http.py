"""The HTTP catalog benchmark: the whole catalog through the HTTP connector against `turngate serve`.

Sequential against four cases at once, with the server's test hooks (manual
clock) and without them (the clock on a short real session timeout, the patch
from the fake engines' call log). Goal: jobs 4 at least twice as fast as the
sequential run, and within twice the in-process catalog at jobs 4. Figures only; no test times
anything.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

GOAL_SPEEDUP = 2.0
GOAL_RATIO = 2.0  # the HTTP catalog at jobs 4 within twice the in-process catalog at jobs 4


def _serve(root: Path, hooks: bool) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable, "-m", "turngate.cli.main", "serve", "--port", "0", "--data", str(root / "data"),
        "--scripts", str(root / "scripts"), "--call-log", str(root / "calls.jsonl"), "--slots", "4",
    ]  # fmt: skip
    if hooks:
        command.append("--test-hooks")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"turngate serve did not start: {line!r}")
    return process, line.split("listening on ")[1].split()[0]


def _catalog(hooks: bool, jobs: int) -> dict[str, Any]:
    from turngate.judge.case_folder import case_root
    from turngate.judge.catalog import load_catalog
    from turngate.judge.connectors.http_options import http_options
    from turngate.judge.pool import cases, run_all
    from turngate.judge.targets import Target

    # The server's folder where the in-process catalog keeps its case folders (memory when it can),
    # so that the two figures differ by the job API alone, not by the disk under the store.
    with tempfile.TemporaryDirectory(prefix="turngate-bench-http-", dir=case_root()) as folder:
        root = Path(folder)
        (root / "scripts").mkdir()
        process, url = _serve(root, hooks)
        try:
            options = http_options(
                {
                    "base_url": url,
                    "scripts_dir": str(root / "scripts"),
                    "call_log": str(root / "calls.jsonl"),
                    "turngate_hooks": hooks,
                    "honours_session_timeout": not hooks,
                    "jobs": jobs,
                },
                None,
            )
            planned = cases(load_catalog(), None)
            started = time.perf_counter()
            outcomes = Counter(
                result.outcome
                for result in run_all(planned, target=Target(url, "http", http=options), jobs=jobs)
            )
            seconds = time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=30)
    return {"jobs": jobs, "cases": len(planned), "wall_sec": round(seconds, 3), "outcomes": dict(outcomes)}


def _in_process(jobs: int) -> dict[str, Any]:
    """The same catalog on the reference in this process: what the HTTP figures are measured against."""
    from turngate.judge.catalog import load_catalog
    from turngate.judge.pool import cases, run_all
    from turngate.judge.targets import parse_target

    planned = cases(load_catalog(), None)
    started = time.perf_counter()
    outcomes = Counter(
        result.outcome for result in run_all(planned, target=parse_target("reference"), jobs=jobs)
    )
    seconds = time.perf_counter() - started
    return {"jobs": jobs, "cases": len(planned), "wall_sec": round(seconds, 3), "outcomes": dict(outcomes)}


def http_catalog() -> dict[str, Any]:
    in_process = _in_process(4)
    figures: dict[str, Any] = {
        "goal_min_speedup": GOAL_SPEEDUP,
        "goal_max_ratio_to_in_process": GOAL_RATIO,
        "in_process_jobs_4": in_process,
    }
    for name, hooks in (("with_hooks", True), ("without_hooks", False)):
        sequential, parallel = _catalog(hooks, 1), _catalog(hooks, 4)
        speedup = sequential["wall_sec"] / max(parallel["wall_sec"], 1e-9)
        figures[name] = {
            "sequential": sequential,
            "jobs_4": parallel,
            "speedup": round(speedup, 2),
            "meets_goal": speedup >= GOAL_SPEEDUP,
            # jobs 4 over HTTP against jobs 4 in process: the price of the job API
            "ratio_to_in_process": round(parallel["wall_sec"] / max(in_process["wall_sec"], 1e-9), 2),
        }
        figures[name]["meets_ratio_goal"] = figures[name]["ratio_to_in_process"] <= GOAL_RATIO
    return figures
