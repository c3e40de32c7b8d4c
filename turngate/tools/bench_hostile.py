"""Hostile engine output, measured: each shape through the whole gate in a process of its own, and
`turngate serve` answering other requests while a run's hostile turn is read and judged.

MB here is 2**20 bytes (MiB): sizes, rates and resident sets alike.

The adversarial table (`adversarial`; `nox -s bench`, or ``python -m turngate.tools.bench
--only-adversarial``): each hostile shape x engine x delivery, 16 MB of engine stdout, read to a
decision by the whole gate (reader, done-marker detector, hints, output check, decision:
``reference.turn.assess``). The shapes are the matrix of `UNITS` (lines ``a``, fence lines, one
line deep in ``{"a":``, lines 50 deep in it, unterminated session ids, lines of a quoted marker,
lines of an escaped marker and colon), each delivered as ``noise`` (the unit repeated as the
engine's raw stdout; not for iflow, whose stdout is its reply) and as ``reply`` (the repeated unit
as the text of the engine's assistant message, in the engine's own format), and the named shapes:
balanced deep nesting, brackets, dense flow hints and a huge ask_user block as iflow replies,
gemini stdout dense in braces (noise), and a plain NDJSON codex turn (``stream``).

Each row is measured in a child process (``--one``) that builds the shape and judges it twice:

- MB/s: the input's size over the better of the two judgements. Goal: at least 20 (50 for the
  plain NDJSON turn).
- peak RSS: the child's whole peak resident set as the kernel reports it when the child is reaped
  (``wait4``'s ``ru_maxrss``; nothing subtracted). Goal: at most 200 MB for a 16 MB turn. Next to
  it, ``base RSS``: the same figure for a child that imports the gate and builds the same shape
  but judges nothing.

A row is below goal when either figure misses. The children are started by a small interpreter
of their own (``--table``), never by the benchmark process itself: a child's ``ru_maxrss`` starts
from the peak of the address space it was started from (it counts until exec), so a parent that
had read 50 MB first would lift every row by that much. ``json.loads`` of every line of the plain
NDJSON turn is this machine's ceiling for any reader of NDJSON.

Serve latency (`serve_latency`): `turngate serve` runs one codex job whose engine prints a hostile
turn while a client thread sends ``GET /v1/health`` and ``GET /v1/jobs/<that job>`` back to back,
each request's latency recorded until the job settles. The turns: lines ``a`` up to just under the
16 MB per-turn output limit, then a reply and the end of the turn (read and judged), and the
flood, which never ends its turn and is stopped at the output limit; each as a one-shot engine
(its help shows a resume command) and as a resident one. Figures: requests, p50, p99 and max
latency in ms, the job's final status and error code, the turn's wall time, the server's peak RSS.
Goal: max latency at most 250 ms, since the turn is judged outside the orchestrator's lock.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

MB: Final = 1 << 20
DEFAULT_MB: Final = 16.0
GOAL_MB_S: Final = 20.0
PLAIN_GOAL_MB_S: Final = 50.0
GOAL_PEAK_RSS_MB: Final = 200.0
GOAL_LATENCY_MS: Final = 250.0
JUDGEMENTS: Final = 2
CHILD_TIMEOUT_SEC: Final = 900.0
JOB_TIMEOUT_SEC: Final = 300.0
MODULE: Final = "turngate.tools.bench_hostile"

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
# The repeated units of the shape matrix, by name.
UNITS: Final = {
    "tiny a\\n": "a\n",
    "fence ```x": "```x\n",
    'deep {"a": (one line)': '{"a":',
    'deeplines {"a":x50': '{"a":' * 50 + "\n",
    'unterminated {"session_id":"s': 'x {"session_id":"s\n',
    'markerprefix "__SKILL_DONE__"': '"__SKILL_DONE__"\n',
    'markercolon \\"__SKILL_DONE__\\":': '\\"__SKILL_DONE__\\":  \n',
}
DELIVERIES: Final = ("noise", "reply")
# An iflow turn ends with its execution-info block: the iflow shapes are whole, ended turns.
IFLOW_INFO: Final = b'\n<Execution Info>\n{"session-id":"session-bench"}\n</Execution Info>\n'
_TEXT: Final = "@@TEXT@@"


@dataclass(frozen=True)
class Shape:
    """One row of the table: what an engine prints, built at a given size in bytes."""

    name: str
    engine: str
    delivery: str  # noise (raw stdout), reply (the assistant message's text), stream (a sound turn)
    build: Callable[[int], bytes]
    goal_mb_per_sec: float = GOAL_MB_S

    @property
    def key(self) -> str:
        return f"{self.name} | {self.engine} | {self.delivery}"


def _fill(head: bytes, unit: bytes, tail: bytes, size: int) -> bytes:
    """``head``, ``unit`` repeated, ``tail``: about ``size`` bytes in all."""
    count = max(1, (size - len(head) - len(tail)) // len(unit))
    return b"".join((head, unit * count, tail))


def _around(*events: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """NDJSON events, one holding `_TEXT` in a string: the bytes before that text and after it."""
    head, tail = "".join(json.dumps(event) + "\n" for event in events).split(_TEXT)
    return head.encode(), tail.encode()


def reply_frame(engine: str) -> tuple[bytes, bytes, bool]:
    """An assistant message in ``engine``'s own format, ending its turn: the bytes before its text,
    the bytes after it, and whether the text sits in a JSON string (escaped)."""
    if engine == "iflow":  # stdout is the reply
        return b"", IFLOW_INFO, False
    if engine == "codex":
        head, tail = _around(
            {"type": "thread.started", "thread_id": "thread-bench"},
            {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": _TEXT}},
            {"type": "turn.completed"},
        )
    elif engine in ("opencode", "kilo"):  # kilo: opencode's fork, the same events
        head, tail = _around(
            {"type": "text", "sessionID": "session-bench", "part": {"text": _TEXT}},
            {"type": "step_finish", "sessionID": "session-bench", "part": {"reason": "stop"}},
        )
    elif engine == "gemini":
        head, tail = _around(
            {"type": "init", "session_id": "session-bench"},
            {"type": "message", "role": "assistant", "content": _TEXT, "delta": True},
            {"type": "result", "status": "success"},
        )
    elif engine in ("claude", "qwen", "codebuddy"):  # the SDK message stream; no echo in the result
        head, tail = _around(
            {"type": "system", "subtype": "init", "session_id": "session-bench"},
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": _TEXT}]},
            },
            {"type": "result", "subtype": "success", "is_error": False, "result": ""},
        )
    else:
        raise ValueError(f"engine: {engine!r}")
    return head, tail, True


def _delivered(engine: str, delivery: str, unit: str, size: int) -> bytes:
    if delivery == "noise":
        return _fill(b"", unit.encode(), b"", size)
    head, tail, escaped = reply_frame(engine)
    text = json.dumps(unit)[1:-1] if escaped else unit
    return _fill(head, text.encode(), tail, size)


def _deep_nesting(size: int) -> bytes:
    half = max(1, (size - len(IFLOW_INFO) - 1) // 6)
    return b'{"a":' * half + b"1" + b"}" * half + IFLOW_INFO


def codex_stream(size: int) -> bytes:
    """A long, sound codex turn of about ``size`` bytes: commands echoing the marker, reasoning,
    and one reply at the end."""
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
    total = len(thread)
    index = 0
    while total < size:
        line = (item % (index, padding) + think % (index, padding)).encode()
        chunks.append(line)
        total += len(line)
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


def shape_list() -> list[Shape]:
    """Every row of the table: the matrix of `UNITS`, then the named shapes."""
    rows = [
        Shape(name, engine, delivery, functools.partial(_delivered, engine, delivery, unit))
        for name, unit in UNITS.items()
        for engine in ENGINES
        for delivery in DELIVERIES
        if not (engine == "iflow" and delivery == "noise")
    ]
    rows += [
        Shape('deep nesting {"a":...} balanced', "iflow", "reply", _deep_nesting),
        Shape("brackets [[[[", "iflow", "reply", functools.partial(_fill, b"", b"[", IFLOW_INFO)),
        Shape(
            "flow hints ask_user: {a: b}",
            "iflow",
            "reply",
            functools.partial(_fill, b"", b"ask_user: {a: b}\n", IFLOW_INFO),
        ),
        Shape(
            "ask_user block, huge prompt",
            "iflow",
            "reply",
            functools.partial(
                _fill,
                b"<ASK_USER_YAML>\nask_user: {prompt: '",
                b"p",
                b"'}\n</ASK_USER_YAML>" + IFLOW_INFO,
            ),
        ),
        Shape("dense {", "gemini", "noise", functools.partial(_fill, b"", b"{", b"")),
        Shape('dense {"a":x', "gemini", "noise", functools.partial(_fill, b"", b'{"a":x', b"")),
        Shape("plain NDJSON", "codex", "stream", codex_stream, PLAIN_GOAL_MB_S),
    ]
    return rows


def shapes() -> dict[str, Shape]:
    """`shape_list` by key."""
    return {shape.key: shape for shape in shape_list()}


def whole_gate(engine: str, stdout: bytes) -> Any:
    """The whole gate on one interactive first turn of the greeting skill: its TurnAssessment."""
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


def judge_in_this_process(key: str, megabytes: float, *, judge: bool = True) -> dict[str, Any]:
    """The child's work: build the shape, and unless ``judge`` is false judge it `JUDGEMENTS` times."""
    # The building-only child imports the gate too: its RSS is the interpreter, the modules, the input.
    for module in ("turngate.implementations.reference.turn", "turngate.judge.skill_writer"):
        importlib.import_module(module)
    shape = shapes()[key]
    stdout = shape.build(int(megabytes * MB))
    answer: dict[str, Any] = {"bytes": len(stdout)}
    if not judge:
        return answer
    best = math.inf
    for _ in range(JUDGEMENTS):
        started = time.perf_counter()
        assessment = whole_gate(shape.engine, stdout)
        best = min(best, time.perf_counter() - started)
        decision = assessment.decision
        answer["decision"] = f"{decision.state}/{decision.reason_code}"
        del assessment, decision  # one judgement's transcript in memory at a time
    answer["best_sec"] = best
    return answer


def measure(key: str, megabytes: float, *, judge: bool = True) -> dict[str, Any]:
    """Run `judge_in_this_process` in a child; its answer, exit code and peak RSS (MB, wait4)."""
    command = [sys.executable, "-m", MODULE, "--one", key, "--mb", repr(megabytes)]
    if not judge:
        command.append("--build-only")
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
        timer = threading.Timer(CHILD_TIMEOUT_SEC, child.kill)
        timer.start()
        try:
            assert child.stdout is not None
            with child.stdout:
                out = child.stdout.read()
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        problem = errors.read()[-2000:].decode("utf-8", "replace")
    answer: dict[str, Any] = json.loads(out) if child.returncode == 0 and out.strip() else {}
    answer["exit_code"] = child.returncode
    if child.returncode != 0:
        answer["stderr_tail"] = problem
    answer["peak_rss_mb"] = round(usage.ru_maxrss * 1024 / MB, 1)  # ru_maxrss: KiB on Linux
    return answer


def measure_row(shape: Shape, megabytes: float) -> dict[str, Any]:
    """One row of the table: the judging child's figures next to the building-only child's RSS."""
    judged = measure(shape.key, megabytes)
    baseline = measure(shape.key, megabytes, judge=False)
    size = judged.get("bytes", baseline.get("bytes", 0)) / MB
    seconds = judged.get("best_sec")
    rate = size / seconds if seconds else 0.0
    decision = judged.get("decision") or f"child failed (exit {judged['exit_code']})"
    row = {
        "shape": shape.name,
        "engine": shape.engine,
        "delivery": shape.delivery,
        "mb": round(size, 2),
        "sec": None if seconds is None else round(seconds, 3),
        "mb_per_sec": round(rate, 1),
        "goal_mb_per_sec": shape.goal_mb_per_sec,
        "peak_rss_mb": judged["peak_rss_mb"],
        "baseline_rss_mb": baseline["peak_rss_mb"],
        "decision": decision,
        "meets_goal": judged["exit_code"] == 0
        and rate >= shape.goal_mb_per_sec
        and judged["peak_rss_mb"] <= GOAL_PEAK_RSS_MB,
    }
    if "stderr_tail" in judged:
        row["stderr_tail"] = judged["stderr_tail"]
    return row


def table(megabytes: float = DEFAULT_MB, match: str | None = None) -> dict[str, Any]:
    """Every shape measured, one child each (this process only starts them: keep it small)."""
    rows = []
    for shape in shapes().values():
        if match and match not in shape.key:
            continue
        row = measure_row(shape, megabytes)
        rows.append(row)
        print(render_table([row], header=False), file=sys.stderr, flush=True)
    spawner_kb = peak_rss_kb(os.getpid())
    plain = codex_stream(int(megabytes * MB))
    lines = [line for line in plain.split(b"\n") if line]
    started = time.perf_counter()
    for line in lines:
        json.loads(line)
    ceiling = len(plain) / MB / (time.perf_counter() - started)
    return {
        "mb": megabytes,
        "rows": rows,
        "goal_mb_per_sec": GOAL_MB_S,
        "goal_plain_mb_per_sec": PLAIN_GOAL_MB_S,
        "goal_max_peak_rss_mb": GOAL_PEAK_RSS_MB,
        "spawner_peak_rss_mb": round(spawner_kb / 1024, 1),
        "json_loads_every_line_mb_per_sec": round(ceiling, 1),
        "below_goal": [
            f"{r['shape']} | {r['engine']} | {r['delivery']}" for r in rows if not r["meets_goal"]
        ],
        "meets_goal": all(row["meets_goal"] for row in rows),
    }


def adversarial(megabytes: float = DEFAULT_MB, match: str | None = None) -> dict[str, Any]:
    """`table` run by a fresh interpreter (see the module's docstring); rows go to stderr as measured."""
    command = [sys.executable, "-m", MODULE, "--table", "--mb", repr(megabytes)]
    if match:
        command += ["--match", match]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def render_table(rows: list[dict[str, Any]], *, header: bool = True) -> str:
    lines = (
        [
            f"{'shape':<34} {'engine':<8} {'delivery':<8} {'MB':>6} {'MB/s':>7} {'goal':>4} "
            f"{'peak RSS MB':>11} {'base RSS MB':>11}  decision"
        ]
        if header
        else []
    )
    for row in rows:
        lines.append(
            f"{row['shape']:<34} {row['engine']:<8} {row['delivery']:<8} {row['mb']:>6} "
            f"{row['mb_per_sec']:>7} {row['goal_mb_per_sec']:>4.0f} {row['peak_rss_mb']:>11} "
            f"{row['baseline_rss_mb']:>11}  {row['decision']}"
            + ("" if row["meets_goal"] else "  (below goal)")
        )
    return "\n".join(lines)


# Serve latency ------------------------------------------------------------------------------

FLOOD_ENGINE = """#!{python} -S
# A hostile engine for the benchmark: floods stdout with codex lines and never ends its turn.
import os
import sys

if "--help" in sys.argv:
    print("Usage: codex exec resume SESSION_ID" if os.environ.get("BENCH_RESUMABLE") else "Usage: codex")
    raise SystemExit(0)
head = b'{{"type":"item.completed","item":{{"id":"i","type":"agent_message","text":"'
line = head + b"x" * 180 + b'"}}}}\\n'
block = line * 4096
left = {total}
while left > 0:
    os.write(1, block[:left])
    left -= len(block)
"""

TINY_LINES_ENGINE = """#!{python} -S
# A hostile engine for the benchmark: a codex turn of lines "a", then its reply and its end.
import os
import sys

if "--help" in sys.argv:
    print("Usage: codex exec resume SESSION_ID" if os.environ.get("BENCH_RESUMABLE") else "Usage: codex")
    raise SystemExit(0)
os.write(1, {head!r})
block = b"a\\n" * 32768
left = {body}
while left > 0:
    os.write(1, block[:left])
    left -= len(block)
os.write(1, {tail!r})
"""


def tiny_lines_engine(total: int) -> str:
    """The engine script: ``a`` lines and a proper codex end of turn, ``total`` bytes at most."""
    head = b'{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}\n'
    tail = (
        b'{"type":"item.completed","item":{"id":"last","type":"agent_message",'
        b'"text":"{\\"greeting\\": \\"Hi\\", \\"__SKILL_DONE__\\": true}"}}\n'
        b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n'
    )
    body = (total - len(head) - len(tail)) // 2 * 2
    return TINY_LINES_ENGINE.format(python=sys.executable, head=head, body=body, tail=tail)


@contextlib.contextmanager
def serving(engine_script: str, *, resumable: bool) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`turngate serve` on a free port, ``engine_script`` as its codex, the greeting skill installed
    (any object as output): its URL and process."""
    import httpx

    from turngate.judge.skill_writer import write_skill

    with tempfile.TemporaryDirectory(prefix="turngate-bench-serve-") as folder:
        root = Path(folder)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        engine = bin_dir / "codex"
        engine.write_text(engine_script, encoding="utf-8")
        engine.chmod(0o755)
        env = {**os.environ, "BENCH_RESUMABLE": "1" if resumable else ""}
        server = subprocess.Popen(
            [sys.executable, "-m", "turngate.cli.main", "serve", "--port", "0",
             "--data", str(root / "data"), "--engines", str(bin_dir)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("listening on ")[1].split()[0]
            body, form = zipped_skill(write_skill(root / "skills", {"output_schema": None}))
            installed = httpx.post(
                f"{url}/v1/skill-packages/install", content=body, headers={"Content-Type": form}, timeout=60
            )
            installed.raise_for_status()
            yield url, server
        finally:
            server.terminate()
            server.wait(timeout=30)


def zipped_skill(skill: Path) -> tuple[bytes, str]:
    """A multipart body carrying the skill folder zipped as field ``file``, as it is: not the HTTP
    connector's `package_zip`, which reads runner.json to raise its version and would itself fall on
    the hostile manifests the attacks send."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(skill.rglob("*")):
            if path.is_file():
                archive.write(path, f"{skill.name}/{path.relative_to(skill).as_posix()}")
    return multipart(buffer.getvalue())


def multipart(archive: bytes) -> tuple[bytes, str]:
    """A multipart body carrying ``archive`` as field ``file``, and its content type."""
    boundary = "turngatebench"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.zip"\r\n\r\n'
    body = head.encode() + archive + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _quantile(ordered: list[float], q: float) -> float:
    """The nearest-rank quantile of an ascending list."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0.0


def latency_run(url: str, server_pid: int) -> dict[str, Any]:
    """Start one job, and time ``GET /v1/health`` and ``GET /v1/jobs/<it>`` back to back from a
    client thread until the job settles."""
    import httpx

    from turngate.implementations.serve.service import SETTLED_STATES

    samples: dict[str, list[float]] = {"health": [], "job": []}
    final: dict[str, Any] = {}
    job = {"skill_id": "greet", "engine": "codex", "input": {}, "runtime_options": {}}
    with httpx.Client(base_url=url, timeout=JOB_TIMEOUT_SEC) as client:
        created = client.post("/v1/jobs", json=job)
        created.raise_for_status()
        paths = {"health": "/v1/health", "job": f"/v1/jobs/{created.json()['request_id']}"}
        started = time.perf_counter()

        def hammer() -> None:
            while time.perf_counter() - started < JOB_TIMEOUT_SEC:
                for name, path in paths.items():
                    sent = time.perf_counter()
                    answer = client.get(path)
                    samples[name].append(time.perf_counter() - sent)
                    if name == "job":
                        final.update(answer.json())
                if final.get("status") in SETTLED_STATES:
                    return

        client_thread = threading.Thread(target=hammer, name="bench-latency-client", daemon=True)
        client_thread.start()
        client_thread.join(JOB_TIMEOUT_SEC + 60)
        seconds = time.perf_counter() - started
    every = sorted(samples["health"] + samples["job"])
    error = final.get("error") or {}
    return {
        "requests": len(every),
        "p50_ms": round(_quantile(every, 0.50) * 1000, 1),
        "p99_ms": round(_quantile(every, 0.99) * 1000, 1),
        "max_ms": round(_quantile(every, 1.0) * 1000, 1),
        "max_health_ms": round(max(samples["health"], default=0.0) * 1000, 1),
        "max_job_ms": round(max(samples["job"], default=0.0) * 1000, 1),
        "status": final.get("status"),
        "error_code": error.get("code"),
        "job_sec": round(seconds, 2),
        "server_peak_rss_mb": round(peak_rss_kb(server_pid) / 1024, 1),
    }


def serve_latency(kinds: tuple[str, ...] = ("one_shot", "resident")) -> dict[str, Any]:
    """Other requests' latency while `turngate serve` reads and judges a hostile turn (see above)."""
    from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT

    turns = {
        # name: (engine script, what the job should end as: status or error code)
        "tiny lines a\\n, then an end of turn": (
            tiny_lines_engine(DEFAULT_OUTPUT_LIMIT - 4096),
            "succeeded",
        ),
        "flood (never ends its turn)": (
            FLOOD_ENGINE.format(python=sys.executable, total=1 << 30),
            "ENGINE_OUTPUT_LIMIT",
        ),
    }
    runs = []
    for name, (script, expected) in turns.items():
        for kind in kinds:
            with serving(script, resumable=kind == "one_shot") as (url, server):
                run = {"turn": name, "kind": kind, **latency_run(url, server.pid), "expected": expected}
            run["as_expected"] = expected in (run["status"], run["error_code"])
            run["meets_goal"] = run["as_expected"] and run["max_ms"] <= GOAL_LATENCY_MS
            runs.append(run)
            print(render_latency([run], header=False), file=sys.stderr, flush=True)
    return {
        "output_limit_bytes": DEFAULT_OUTPUT_LIMIT,
        "runs": runs,
        "goal_max_latency_ms": GOAL_LATENCY_MS,
        "meets_goal": all(run["meets_goal"] for run in runs),
    }


def render_latency(runs: list[dict[str, Any]], *, header: bool = True) -> str:
    lines = (
        [
            f"{'turn':<36} {'kind':<9} {'requests':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
            f"{'job s':>6} {'RSS MB':>6}  job"
        ]
        if header
        else []
    )
    for run in runs:
        ended = run["status"] + (f"/{run['error_code']}" if run["error_code"] else "")
        lines.append(
            f"{run['turn']:<36} {run['kind']:<9} {run['requests']:>8} {run['p50_ms']:>7} "
            f"{run['p99_ms']:>7} {run['max_ms']:>7} {run['job_sec']:>6} {run['server_peak_rss_mb']:>6}  "
            f"{ended}" + ("" if run["meets_goal"] else "  (below goal)")
        )
    return "\n".join(lines)


def render_hostile(results: Mapping[str, Any]) -> str:
    """The ``adversarial`` table and the ``serve_latency`` runs in ``results``, as printed."""
    lines = []
    if "adversarial" in results:
        table = results["adversarial"]
        lines.append(render_table(table["rows"]))
        lines.append(
            f"json.loads of every NDJSON line alone: {table['json_loads_every_line_mb_per_sec']} MB/s"
        )
        lines.append(f"below goal: {'; '.join(table['below_goal']) or 'none'}")
    if "serve_latency" in results:
        lines.append(render_latency(results["serve_latency"]["runs"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__)
    parser.add_argument("--mb", type=float, default=DEFAULT_MB, help="size of each shape, MB (2**20 bytes)")
    parser.add_argument("--match", help="only the shapes whose key holds this text")
    parser.add_argument("--only", choices=("table", "serve"), help="only the table, or only serve's latency")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    internal = parser.add_mutually_exclusive_group()
    internal.add_argument("--one", metavar="KEY", help=argparse.SUPPRESS)  # a child: one shape
    internal.add_argument("--table", action="store_true", help=argparse.SUPPRESS)  # the children's parent
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(judge_in_this_process(args.one, args.mb, judge=not args.build_only)))
        return 0
    if args.table:
        print(json.dumps(table(args.mb, args.match)))
        return 0
    results: dict[str, Any] = {}
    if args.only != "serve":
        results["adversarial"] = adversarial(args.mb, args.match)
    if args.only != "table":
        results["serve_latency"] = serve_latency()
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(render_hostile(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
