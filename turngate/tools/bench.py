"""Benchmarks, written to a JSON file (`nox -s bench`); speed is measured here, never in tests.

Figures: the median wall time of one fake-engine turn per engine (a real
process started through the installed launcher, warm script cache) against
the median of `python -c pass` with the same interpreter (goal: a turn costs at
most 1.5 times the bare interpreter start); and the wall time of the whole
catalog against the reference orchestrator (goal: at most 20 s on 2 cores); the
peak RSS of `turngate serve` while an engine floods 1 GiB without ending its
turn (goal: at most 200 MB); the
done-marker detector's and the readers' MB/s, and a 50 MB codex replay against
a 10 MB one (goal: at least 100 MB/s for the detector, linear time); and the
hostile engine output shapes (deep nesting, brackets, fence lines, dense flow
hints, a huge hint block, gemini output dense in braces, lines of ``a``, and
plain NDJSON) each through the whole gate, read to decision: MB/s (goal 20,
50 for plain NDJSON) and peak memory over the input (goal 3, tracemalloc),
with json.loads of every NDJSON line as this machine's ceiling for a reader.
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

GOAL_RATIO = 1.5
CATALOG_GOAL_SEC = 20  # the in-process catalog on 2 cores
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


def _codex_stream(megabytes: float) -> bytes:
    """A long codex turn: commands echoing the marker, reasoning, and one reply at the end."""
    thread = b'{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}\n'
    item = (
        '{"type":"item.completed","item":{"id":"item_%d","type":"command_execution",'
        '"command":"bash -lc cat SKILL.md","aggregated_output":"# Greet\\nWhen done print '
        '{\\"greeting\\": \\"...\\", \\"__SKILL_DONE__\\": true}\\n%s",'
        '"exit_code":0,"status":"completed"}}\n'
    )
    think = (
        '{"type":"item.completed","item":{"id":"r_%d","type":"reasoning","text":"Reading the skill %s"}}\n'
    )
    padding = "lorem ipsum dolor sit amet " * 8
    chunks = [thread]
    size = len(thread)
    index = 0
    while size < megabytes * 1_000_000:
        line = (item % (index, padding) + think % (index, padding)).encode()
        chunks.append(line)
        size += len(line)
        index += 1
    reply = (
        '{"type":"item.completed","item":{"id":"last","type":"agent_message",'
        '"text":"{\\"greeting\\": \\"Hi\\", \\"__SKILL_DONE__\\": true}"}}\n'
    )
    chunks.append(reply.encode())
    chunks.append(
        b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n'
    )
    return b"".join(chunks)


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

    stream = _codex_stream(50)
    megabytes = len(stream) / 1_000_000
    text = stream.decode("utf-8")
    detector_sec = _best_of(3, lambda: find_markers(text))
    small = _codex_stream(10)
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


# The adversarial engine output shapes, each delivered the way an engine would print it, and
# the goal for each: MB/s through the whole gate (read, detect, hint, output check, decision).
ADVERSARIAL_GOAL_MB_S = 20
PLAIN_GOAL_MB_S = 50
MEMORY_GOAL_RATIO = 3


def _repeat(unit: str, megabytes: float) -> str:
    return unit * max(1, int(megabytes * 1_000_000 / len(unit)))


def adversarial_shapes(megabytes: float) -> dict[str, tuple[str, bytes, float]]:
    """name -> (engine, stdout, goal MB/s); the reply shapes are iflow replies (stdout is the reply)."""
    half = max(1, int(megabytes * 1_000_000 / 10))
    shapes = {
        'deep nesting {"a": ... }': ("iflow", ('{"a":' * half + "1" + "}" * half).encode(), 0),
        "brackets [[[[": ("iflow", _repeat("[", megabytes).encode(), 0),
        "fence lines ```x": ("iflow", _repeat("```x\n", megabytes).encode(), 0),
        "flow hints ask_user: {a: b}": ("iflow", _repeat("ask_user: {a: b}\n", megabytes).encode(), 0),
        "ask_user block, huge prompt": (
            "iflow",
            (
                "<ASK_USER_YAML>\nask_user: {prompt: '"
                + "p" * int(megabytes * 1_000_000)
                + "'}\n</ASK_USER_YAML>"
            ).encode(),
            0,
        ),
        "gemini dense {": ("gemini", _repeat("{", megabytes).encode(), 0),
        'gemini dense {"a":x': ("gemini", _repeat('{"a":x', megabytes).encode(), 0),
        "lines a\\n (reply)": ("iflow", _repeat("a\n", megabytes).encode(), 0),
        "lines a\\n (codex noise)": ("codex", _repeat("a\n", megabytes).encode(), 0),
    }
    # an iflow turn ends with its execution-info block: the shapes are whole, ended turns
    info = b'\n<Execution Info>\n{"session-id":"session-bench"}\n</Execution Info>\n'
    named = {
        name: (engine, data + info if engine == "iflow" else data, float(ADVERSARIAL_GOAL_MB_S))
        for name, (engine, data, _) in shapes.items()
    }
    named["plain NDJSON (codex)"] = ("codex", _codex_stream(megabytes), float(PLAIN_GOAL_MB_S))
    return named


def _whole_gate(engine: str, stdout: bytes) -> Any:
    from turngate.implementations.reference.outcome import ProcessEnd
    from turngate.implementations.reference.turn import TurnInput, assess
    from turngate.judge.skill_writer import GREETING_SCHEMA

    turn = TurnInput(
        engine=engine,
        mode="interactive",
        attempt_number=1,
        max_attempt=None,
        output_schema=GREETING_SCHEMA,
        needs_session_id=True,
    )
    return assess(turn, stdout, b"", ProcessEnd(0, None))


def _peak_ratio(engine: str, stdout: bytes) -> float:
    """Peak Python allocation while the gate runs, over the input's size (tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        _whole_gate(engine, stdout)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / max(1, len(stdout))


def adversarial_throughput(megabytes: float) -> dict[str, Any]:
    """The hostile-shapes table: each hostile shape through the whole gate, MB/s and peak memory / input."""
    rows = []
    for name, (engine, stdout, goal) in adversarial_shapes(megabytes).items():
        size = len(stdout) / 1_000_000
        seconds = _best_of(2, lambda: _whole_gate(engine, stdout))  # noqa: B023 (called at once)
        ratio = _peak_ratio(engine, stdout)
        decision = _whole_gate(engine, stdout).decision
        rows.append(
            {
                "shape": name,
                "engine": engine,
                "mb": round(size, 2),
                "sec": round(seconds, 3),
                "mb_per_sec": round(size / seconds, 1),
                "goal_mb_per_sec": goal,
                "peak_memory_ratio": round(ratio, 2),
                "decision": f"{decision.state}/{decision.reason_code}",
                "meets_goal": size / seconds >= goal and ratio <= MEMORY_GOAL_RATIO,
            }
        )
    # The ceiling on this machine for any reader of NDJSON: json.loads of every line, nothing else.
    plain = _codex_stream(megabytes)
    lines = [line for line in plain.split(b"\n") if line]
    baseline = _best_of(2, lambda: [json.loads(line) for line in lines])
    return {
        "rows": rows,
        "memory_goal_ratio": MEMORY_GOAL_RATIO,
        "json_loads_every_line_mb_per_sec": round(len(plain) / 1_000_000 / baseline, 1),
        "meets_goal": all(r["meets_goal"] for r in rows),
    }


def render_table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'shape':<32} {'engine':<8} {'MB':>6} {'MB/s':>8} {'goal':>5} {'mem×':>6}  decision"]
    for row in rows:
        lines.append(
            f"{row['shape']:<32} {row['engine']:<8} {row['mb']:>6} {row['mb_per_sec']:>8} "
            f"{row['goal_mb_per_sec']:>5.0f} {row['peak_memory_ratio']:>6}  {row['decision']}"
            + ("" if row["meets_goal"] else "  (below goal)")
        )
    return "\n".join(lines)


FLOOD_ENGINE = """#!{python} -S
# A hostile engine for the benchmark: floods stdout with codex lines and never ends its turn.
import os
import sys

if "--help" in sys.argv:
    print("Usage: codex exec resume SESSION_ID" if os.environ.get("FLOOD_RESUMABLE") else "Usage: codex")
    raise SystemExit(0)
head = b'{{"type":"item.completed","item":{{"id":"i","type":"agent_message","text":"'
line = head + b"x" * 180 + b'"}}}}\\n'
block = line * 4096
left = {total}
while left > 0:
    os.write(1, block[:left])
    left -= len(block)
"""


def serve_flood_memory(total_bytes: int = 1 << 30) -> dict[str, Any]:
    """Peak RSS of `turngate serve` while an engine floods ``total_bytes`` without ending its turn.

    One run per engine process kind: a one-shot turn (the engine's help shows a
    resume command) and a resident one (it does not). The engine is killed at the
    per-turn output limit; the figure is the server's VmHWM from /proc (Linux).
    Goal: at most 200 MB.
    """
    import urllib.request

    from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT
    from turngate.judge.skill_writer import write_skill

    def call(url: str, method: str, body: bytes | None, content_type: str) -> Any:
        request = urllib.request.Request(url, data=body, method=method)
        if body is not None:
            request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())

    results: dict[str, Any] = {}
    for kind in ("one_shot", "resident"):
        with tempfile.TemporaryDirectory(prefix="turngate-flood-") as folder:
            root = Path(folder)
            bin_dir = root / "bin"
            bin_dir.mkdir()
            engine = bin_dir / "codex"
            engine.write_text(FLOOD_ENGINE.format(python=sys.executable, total=total_bytes), encoding="utf-8")
            engine.chmod(0o755)
            env = {**os.environ, "FLOOD_RESUMABLE": "1" if kind == "one_shot" else ""}
            server = subprocess.Popen(
                [sys.executable, "-m", "turngate.cli.main", "serve", "--port", "0",
                 "--data", str(root / "data"), "--engines", str(bin_dir)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            )  # fmt: skip
            try:
                assert server.stdout is not None
                url = server.stdout.readline().split("listening on ")[1].split()[0]
                body, form = _zipped_skill(write_skill(root / "skills", {"output_schema": None}))
                call(f"{url}/v1/skill-packages/install", "POST", body, form)
                baseline_kb = _peak_rss_kb(server.pid)
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
                peak_kb = _peak_rss_kb(server.pid)
            finally:
                server.terminate()
                server.wait(timeout=30)
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


def _zipped_skill(skill: Path) -> tuple[bytes, str]:
    """A multipart body carrying the skill folder zipped as field ``file``, and its content type."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(skill.rglob("*")):
            if path.is_file():
                archive.write(path, f"{skill.name}/{path.relative_to(skill).as_posix()}")
    boundary = "turngatebench"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.zip"\r\n\r\n'
    body = head.encode() + buffer.getvalue() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m turngate.tools.bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench-results.json"))
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel cases for the catalog run"
    )
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP catalog runs (minutes)")
    parser.add_argument("--adversarial-mb", type=float, default=20.0, help="size of each hostile shape, MB")
    parser.add_argument("--only-adversarial", action="store_true", help="only the hostile-shape table")
    args = parser.parse_args(argv)
    if args.only_adversarial:
        table = adversarial_throughput(args.adversarial_mb)
        args.out.write_text(json.dumps({"adversarial": table}, indent=2) + "\n", encoding="utf-8")
        print(render_table(table["rows"]))
        print(f"json.loads of every NDJSON line alone: {table['json_loads_every_line_mb_per_sec']} MB/s")
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
        "adversarial": adversarial_throughput(args.adversarial_mb),
        "conformance_reference": conformance_run(args.jobs),
        "serve_flood_memory": serve_flood_memory(),
    }
    if not args.no_http:
        from turngate.tools.bench_http import http_catalog

        results["conformance_http"] = http_catalog()
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    print(render_table(results["adversarial"]["rows"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
