"""Benchmarks, written to a JSON file (`nox -s bench`); speed is measured here, never in tests.

Figures: the median wall time of one fake-engine turn per engine (a real
process started through the installed launcher, warm script cache) against
the median of `python -c pass` with the same interpreter (goal: a turn costs at
most 1.5 times the bare interpreter start); and the wall time of the whole
catalog against the reference orchestrator (goal: at most 20 s on 2 cores); the
peak RSS of `turngate serve` while an engine floods 1 GiB without ending its
turn (goal: at most 200 MB); the
done-marker detector's and the readers' MB/s, and a 50 MB codex replay against
a 10 MB one (goal: at least 100 MB/s for the detector, linear time).

The hostile figures come from `turngate.tools.bench_hostile` (its docstring has the details):
the adversarial table, every hostile engine-output shape x engine x delivery at 16 MB
(2**20 bytes) through the whole gate, each in a child process of its own, with MB/s (goal at
least 20, 50 for plain NDJSON) and the child's peak RSS from wait4 (goal at most 200 MB; next to
it the peak RSS of a child that builds the shape and judges nothing); and `turngate serve`'s
latency for other requests (health, the job's status) while a run's turn of ``a`` lines, or a
flood, is read and judged (goal: max latency at most 250 ms). ``--only-adversarial`` and
``--only-serve-latency`` run just those.
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

from turngate import __version__
from turngate.engines.fake.install import install
from turngate.tools.attacks import attacks, render_attacks
from turngate.tools.bench_hostile import (
    DEFAULT_MB,
    FLOOD_ENGINE,
    adversarial,
    codex_stream,
    peak_rss_kb,
    render_hostile,
    serve_latency,
    serving,
)

GOAL_RATIO = 1.5
CATALOG_GOAL_SEC = 20  # the in-process catalog on 2 cores
FIRST_TURN = {
    "codex": ["exec", "--skip-git-repo-check", "--json", "--full-auto", "tg-case-bench"],
    "gemini": ["--yolo", "--output-format", "json", "tg-case-bench"],
    "iflow": ["--yolo", "--thinking", "-p", "tg-case-bench"],
    "opencode": ["run", "--format", "json", "tg-case-bench"],
    "claude": ["-p", "--output-format", "stream-json", "--verbose", "tg-case-bench"],
    "qwen": ["--output-format", "stream-json", "--approval-mode", "yolo", "-p", "tg-case-bench"],
    "codebuddy": [
        *("-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"),
        "tg-case-bench",
    ],
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

    from turngate.judge.catalog import load_catalog
    from turngate.judge.pool import cases, run_all

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
        "goal_max_wall_sec": CATALOG_GOAL_SEC,
        "meets_goal": seconds <= CATALOG_GOAL_SEC and set(outcomes) == {"passed"},
    }


def _best_of(runs: int, work: Any) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def stream_throughput() -> dict[str, Any]:
    """MB/s of the done-marker detector and the readers, and a 50 MB codex replay at two sizes.

    The detector runs over plain NDJSON text (every line, marker echoes included: the
    audit's worst case); linear time shows as a 50 MB replay taking about five times a
    10 MB one.
    """
    from turngate.engines import readers
    from turngate.implementations.reference.marker import find_markers
    from turngate.tools.drift.capture import Capture
    from turngate.tools.drift.gate_replay import replay

    stream = codex_stream(50_000_000)
    megabytes = len(stream) / 1_000_000
    text = stream.decode("utf-8")
    detector_sec = _best_of(3, lambda: find_markers(text))
    small = codex_stream(10_000_000)
    reader_sec = _best_of(3, lambda: readers.read("codex", small))
    replay_small = _best_of(2, lambda: replay(Capture("codex", small, mode="auto")))
    replay_large = _best_of(2, lambda: replay(Capture("codex", stream, mode="auto")))
    detector_mb_s = megabytes / detector_sec
    ratio = replay_large / replay_small
    return {
        "detector_mb_per_sec": round(detector_mb_s, 1),
        "detector_goal_mb_per_sec": 100,
        "codex_reader_mb_per_sec": round(len(small) / 1_000_000 / reader_sec, 1),
        "replay_10mb_sec": round(replay_small, 3),
        "replay_50mb_sec": round(replay_large, 3),
        "replay_50mb_mb_per_sec": round(megabytes / replay_large, 1),
        "replay_size_ratio": round(megabytes / (len(small) / 1_000_000), 2),
        "replay_time_ratio": round(ratio, 2),
        "meets_goal": detector_mb_s >= 100 and ratio <= 1.5 * megabytes / (len(small) / 1_000_000),
    }


def serve_flood_memory(total_bytes: int = 1 << 30) -> dict[str, Any]:
    """Peak RSS of `turngate serve` while an engine floods ``total_bytes`` without ending its turn.

    One run per engine process kind: a one-shot turn (the engine's help shows a
    resume command) and a resident one (it does not). The engine is killed at the
    per-turn output limit; the figure is the server's VmHWM from /proc (Linux).
    Goal: at most 200 MB.
    """
    import urllib.request

    from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT

    def call(url: str, method: str, body: bytes | None, content_type: str) -> Any:
        request = urllib.request.Request(url, data=body, method=method)
        if body is not None:
            request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())

    results: dict[str, Any] = {}
    flood = FLOOD_ENGINE.format(python=sys.executable, total=total_bytes)
    for kind in ("one_shot", "resident"):
        with serving(flood, resumable=kind == "one_shot") as (url, server):
            baseline_kb = peak_rss_kb(server.pid)
            job = {"skill_id": "greet", "engine": "codex", "input": {}, "runtime_options": {}}
            created = call(f"{url}/v1/jobs", "POST", json.dumps(job).encode(), "application/json")
            started = time.perf_counter()
            status: dict[str, Any] = {}
            while time.perf_counter() - started < 300:
                status = call(f"{url}/v1/jobs/{created['request_id']}", "GET", None, "")
                if status["status"] in ("succeeded", "failed", "canceled"):
                    break
                time.sleep(0.2)
            seconds = time.perf_counter() - started
            peak_kb = peak_rss_kb(server.pid)
        error = status.get("error") or {}
        results[kind] = {
            "state": status.get("status"),
            "error_code": error.get("code"),
            "turn_sec": round(seconds, 2),
            "server_rss_before_mb": round(baseline_kb / 1024, 1),
            "server_peak_rss_mb": round(peak_kb / 1024, 1),
        }
    peaks = [entry["server_peak_rss_mb"] for entry in results.values()]
    return {
        "flood_bytes": total_bytes,
        "output_limit_bytes": DEFAULT_OUTPUT_LIMIT,
        **results,
        "goal_max_peak_rss_mb": 200,
        "meets_goal": all(peak <= 200 for peak in peaks)
        and all(entry["error_code"] == "ENGINE_OUTPUT_LIMIT" for entry in results.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m turngate.tools.bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench-results.json"))
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel cases for the catalog run"
    )
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP catalog runs (minutes)")
    parser.add_argument(
        "--adversarial-mb",
        type=float,
        default=DEFAULT_MB,
        help="size of each hostile shape, MB (2**20 bytes)",
    )
    parser.add_argument("--only-adversarial", action="store_true", help="only the hostile-shape table")
    parser.add_argument(
        "--only-serve-latency", action="store_true", help="only serve's latency under hostile turns"
    )
    parser.add_argument("--only-attacks", action="store_true", help="only issue #24's attack table")
    args = parser.parse_args(argv)
    if args.only_adversarial or args.only_serve_latency or args.only_attacks:
        hostile: dict[str, Any] = {}
        if args.only_adversarial:
            hostile["adversarial"] = adversarial(args.adversarial_mb)
        if args.only_serve_latency:
            hostile["serve_latency"] = serve_latency()
        if args.only_attacks:
            hostile["attacks"] = attacks()
        args.out.write_text(json.dumps(hostile, indent=2) + "\n", encoding="utf-8")
        print(render_hostile(hostile))
        if "attacks" in hostile:
            print(render_attacks(hostile["attacks"]))
        return 0
    results: dict[str, Any] = {
        "turngate_version": __version__,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "engines": engine_turns(args.runs),
        "streams": stream_throughput(),
        "adversarial": adversarial(args.adversarial_mb),
        "conformance_reference": conformance_run(args.jobs),
        "serve_flood_memory": serve_flood_memory(),
        "serve_latency": serve_latency(),
        "attacks": attacks(),
    }
    if not args.no_http:
        from turngate.tools.bench_http import http_catalog

        results["conformance_http"] = http_catalog()
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    print(render_hostile(results))
    print(render_attacks(results["attacks"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
