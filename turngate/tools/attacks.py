"""Issue #24's attacks, replayed against today's code: what each one does now, next to what the issue
measured before (``python -m turngate.tools.attacks [--out attacks.json]``; ``nox -s bench`` or
``python -m turngate.tools.bench --only-attacks`` runs it too).

Every attack runs in a child process of its own (``--one KEY``), started by a small interpreter that
does nothing else (``--table``): a child's ``ru_maxrss`` counts from the address space it was
started from, so the spawner must stay small. The figures of a row:

- seconds: the hostile work alone (the judgement, the request, the job from its POST to the state
  it settles in; never the server's start);
- peak RSS MB (2**20 bytes): the peak resident set of the process that did the work. In-process
  attacks (``assess``, ``check_output``, the reference's ``OneShot``): the child's ``ru_maxrss``
  from ``wait4``. ``turngate replay``: the replay process's, from ``wait4``. ``turngate serve``: the
  server's ``VmHWM`` just before it is stopped (one server per attack, started for it);
- what happens: the HTTP status and error code with its message, or the decision, or the check's
  data and warnings, in one line. For every attack through ``serve``, ``GET /v1/health`` is polled
  from another thread while the hostile work runs, and its slowest answer is shown (the freeze the
  issue measured); for the 16.7 MB opencode turn, ``POST /v1/jobs`` is sent alongside too. Long
  repetitions in it are written once and counted (``x×300``), the JSON (``--out``) alike.

Nothing is asserted: a row says what happened, and ``notes`` flags what the issue calls
misbehaviour (HTTP 5xx, a traceback in the server's log, a request held more than 1 s, more than
200 MB, a child that failed or was killed at its time limit).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from turngate.tools.bench_hostile import MB, multipart, peak_rss_kb, reply_frame, whole_gate, zipped_skill

MODULE: Final = "turngate.tools.attacks"
CHILD_TIMEOUT_SEC: Final = 150.0
JOB_TIMEOUT_SEC: Final = 120.0
FREEZE_MS: Final = 1000.0
RSS_LIMIT_MB: Final = 200.0
HEALTH_PAUSE_SEC: Final = 0.02
# The issue's turn-end figures were taken with --turn-timeout 15.
TURN_TIMEOUT_SEC: Final = 15.0
SHOWN_CHARS: Final = 200

# 10^9 leaves in under 600 bytes: ten "x", then eight levels of ten aliases to the level below.
ALIAS_LINES: Final = "\n".join(
    ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
)
BOMB_HINT: Final = f"<ASK_USER_YAML>\n{ALIAS_LINES}\nask_user: {{prompt: *a8}}\n</ASK_USER_YAML>"
DONE: Final = '{"greeting": "Hi", "__SKILL_DONE__": true}'
QUESTION: Final = "Which greeting style do you want?"
REDOS: Final = "^(a+)+$"

# A one-shot engine for `serve`: its help shows a resume command (codex's SESSION_ID, opencode's
# --session), and it prints a fixed turn.
ENGINE: Final = """#!{python} -S
import os
import sys

if "--help" in sys.argv:
    print("Usage: exec resume SESSION_ID | run --session ID")
    raise SystemExit(0)
os.write(1, {stdout!r})
"""

# opencode: a turn of "a" lines up to just under the per-turn output limit, then its reply and its
# end, for the job whose input says "hostile"; a short sound turn for every other job.
OPENCODE_TINY_LINES: Final = """#!{python} -S
import os
import sys

if "--help" in sys.argv:
    print("Usage: opencode run --session ID")
    raise SystemExit(0)
if "hostile" not in " ".join(sys.argv):
    os.write(1, {quick!r})
    raise SystemExit(0)
os.write(1, {head!r})
block = b"a\\n" * 32768
left = {body}
while left > 0:
    os.write(1, block[:left])
    left -= len(block)
os.write(1, {tail!r})
"""


@dataclass(frozen=True)
class Attack:
    """One row: an attack from the issue, where it is aimed, what the issue measured before, and the
    work the child does (it answers ``outcome`` and ``seconds``, and may add its own figures)."""

    key: str
    name: str
    where: str
    before: str
    run: Callable[[], dict[str, Any]]


# Engine turns ------------------------------------------------------------------------------------


def codex_turn(text: str) -> bytes:
    """A codex turn whose one assistant message is ``text``."""
    head, tail, _ = reply_frame("codex")
    return head + json.dumps(text)[1:-1].encode() + tail


def opencode_turn(text: str) -> bytes:
    head, tail, _ = reply_frame("opencode")
    return head + json.dumps(text)[1:-1].encode() + tail


def _decided(assessment: Any) -> str:
    decision = assessment.decision
    said = f"{decision.state}/{decision.error_code or decision.reason_code}"
    if assessment.hint is not None and assessment.hint.problems:
        said += f"; hint: {assessment.hint.problems[0]}"
    return said


def _timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    answer = work()
    return answer, time.perf_counter() - started


# 1. YAML alias bomb ------------------------------------------------------------------------------


def bomb_assess() -> dict[str, Any]:
    stdout = codex_turn(BOMB_HINT)
    assessment, seconds = _timed(lambda: whole_gate("codex", stdout))
    return {"outcome": _decided(assessment), "seconds": seconds, "input_bytes": len(BOMB_HINT)}


def bomb_replay() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="turngate-attacks-") as folder:
        capture = Path(folder) / "bomb.jsonl"
        capture.write_bytes(codex_turn(BOMB_HINT))
        command = [sys.executable, "-m", "turngate.cli.main", "replay", str(capture)]
        command += ["--engine", "codex", "--mode", "interactive", "--json"]
        done, seconds, rss_mb = _run_measured(command, cwd=Path(folder))
    if done.returncode != 0:
        outcome = f"exit {done.returncode}: {_last_line(done.stderr)}"
    else:
        seen = json.loads(done.stdout)
        decision = seen["decision"]
        outcome = f"exit 0, {decision['state']}/{decision['error_code'] or decision['reason_code']}"
        problems = (seen.get("hint") or {}).get("problems") or []
        if problems:
            outcome += f"; hint: {problems[0]}"
    return {
        "outcome": outcome,
        "seconds": seconds,
        "rss_mb": rss_mb,
        "rss_of": "replay",
        "capture_bytes": len(codex_turn(BOMB_HINT)),
    }


def bomb_serve_engine() -> dict[str, Any]:
    with serving({"codex": codex_turn(BOMB_HINT)}) as server:
        return server.job_attack({"execution_mode": "interactive"})


def bomb_serve_skill_md() -> dict[str, Any]:
    return _package_attack(_skill_md(f"{ALIAS_LINES}\nname: *a8"))


# 2. A 16.7 MB opencode turn of short lines --------------------------------------------------------


def opencode_tiny_lines() -> dict[str, Any]:
    from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT

    total = DEFAULT_OUTPUT_LIMIT - 4096
    head = b'{"type":"step_start","sessionID":"ses_attack","part":{}}\n'
    tail = opencode_turn(DONE).replace(b"session-bench", b"ses_attack")
    body = (total - len(head) - len(tail)) // 2 * 2
    script = OPENCODE_TINY_LINES.format(
        python=sys.executable, quick=opencode_turn(DONE), head=head, body=body, tail=tail
    )
    with serving({"opencode": script}) as server:
        answer = server.job_attack({"execution_mode": "auto"}, engine="opencode", post_jobs=True)
    answer["turn_bytes"] = len(head) + body + len(tail)
    return answer


# 3. An output schema pattern that backtracks -------------------------------------------------------


def _pattern_schema(pattern: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["greeting"],
        "properties": {"greeting": {"type": "string", "pattern": pattern}},
    }


def _pattern_check(length: int) -> dict[str, Any]:
    from turngate.implementations.reference.output import check_output

    answer = json.dumps({"greeting": "a" * (length - 1) + "!"})
    check, seconds = _timed(lambda: check_output(answer, output_schema=_pattern_schema(REDOS)))
    said = "valid" if check.valid else f"{check.problem}: {check.detail}"
    return {"outcome": said, "seconds": seconds}


def pattern_check_27() -> dict[str, Any]:
    return _pattern_check(27)


def pattern_check_100k() -> dict[str, Any]:
    return _pattern_check(100_000)


def pattern_serve() -> dict[str, Any]:
    answer = json.dumps({"greeting": "a" * 26 + "!", "__SKILL_DONE__": True})
    with serving({"codex": codex_turn(answer)}, install=False) as server:
        installed = server.install_package(_with_schema(_pattern_schema(REDOS)))
        if installed["http_status"] != 200:
            return installed
        ran = server.job_attack({"execution_mode": "auto"})
    ran["outcome"] = f"install {installed['http_status']}; {ran['outcome']}"
    return ran


def pattern_lookaround_install() -> dict[str, Any]:
    return _package_attack(_with_schema(_pattern_schema("(?=a)a+$")))


# 4. Malformed packages and ids ----------------------------------------------------------------------


def _write(relative: str, text: str) -> Callable[[Path], None]:
    def change(skill: Path) -> None:
        (skill / relative).write_text(text, encoding="utf-8")

    return change


def _skill_md(front: str) -> Callable[[Path], None]:
    return _write("SKILL.md", f"---\n{front}\n---\n\n# Greet\n")


def _with_schema(schema: Mapping[str, Any]) -> Callable[[Path], None]:
    return _write("assets/output.schema.json", json.dumps(schema))


def _schema_path(path: str) -> Callable[[Path], None]:
    def change(skill: Path) -> None:
        runner_file = skill / "assets" / "runner.json"
        runner = json.loads(runner_file.read_text(encoding="utf-8"))
        runner["schemas"]["output"] = path
        runner_file.write_text(json.dumps(runner), encoding="utf-8")  # \u0000, \ud800 as escapes

    return change


def _package_attack(change: Callable[[Path], None]) -> dict[str, Any]:
    with serving({}, install=False) as server:
        return server.install_package(change)


def _entry_attack(entry: str) -> dict[str, Any]:
    archive = _zip({entry: b"x", "greet/SKILL.md": b"---\nname: greet\n---\n"})
    with serving({}, install=False) as server:
        return server.request("POST", "/v1/skill-packages/install", *multipart(archive))


def long_skill_id() -> dict[str, Any]:
    job = {"skill_id": "s" * 300, "engine": "codex", "input": {}, "runtime_options": {}}
    with serving({}) as server:
        return server.request("POST", "/v1/jobs", json.dumps(job).encode(), "application/json")


def long_upload_entry() -> dict[str, Any]:
    with serving({"codex": codex_turn(QUESTION)}) as server:
        job = server.settled_job({"execution_mode": "interactive"})
        if job["status"] != "waiting_user":
            return {"outcome": f"the job to upload to ended {job['status']}", "seconds": 0.0}
        archive = _zip({"x" * 300: b"data"})
        return server.request("POST", f"/v1/jobs/{job['request_id']}/upload", *multipart(archive))


# 5. Turn end -------------------------------------------------------------------------------------------

TURN_THEN: Final = """import os, sys, time
sys.stdout.write({turn!r})
sys.stdout.flush()
{then}
"""
LATE_LINE: Final = (
    '{"type":"item.completed","item":{"id":"late","type":"agent_message","text":"a late line"}}\n'
)


def _turn_end(then: str) -> dict[str, Any]:
    """An engine that prints a whole codex turn, then does ``then``: read by the reference's
    `OneShot` as the orchestrator reads a one-shot turn, and judged by the whole gate."""
    from turngate.implementations.reference.processes import OneShot
    from turngate.implementations.reference.turn import TurnInput, assess

    with tempfile.TemporaryDirectory(prefix="turngate-attacks-") as folder:
        script = Path(folder) / "engine.py"
        script.write_text(TURN_THEN.format(turn=codex_turn(DONE).decode(), then=then), encoding="utf-8")
        oneshot = OneShot([sys.executable, str(script)], cwd=Path(folder), env=dict(os.environ))
        read, seconds = _timed(lambda: oneshot.wait(TURN_TIMEOUT_SEC, engine="codex"))
    turn = TurnInput(
        engine="codex", mode="interactive", attempt_number=1, max_attempt=None, output_schema=None
    )
    assessment = assess(turn, read.stdout, read.stderr, read.end)
    end = read.end
    said = (
        f"{_decided(assessment)}; ProcessEnd(exit={end.exit_code}, signal={end.signal}, "
        f"killed_by={end.killed_by}); final message {assessment.final_message!r}"
    )
    return {"outcome": said, "seconds": seconds}


def turn_end_never_exits() -> dict[str, Any]:
    return _turn_end("time.sleep(600)")


def turn_end_closes_then_exits() -> dict[str, Any]:
    return _turn_end("os.close(1)\nos.close(2)\ntime.sleep(1.5)")


def turn_end_late_child_line() -> dict[str, Any]:
    late = LATE_LINE.encode()
    then = f"if os.fork() == 0:\n    time.sleep(0.1)\n    os.write(1, {late!r})\n    os._exit(0)"
    return _turn_end(then)


# 6. Text the engine did not send -------------------------------------------------------------------


def surrogate_output() -> dict[str, Any]:
    from turngate.implementations.reference.output import check_output
    from turngate.judge.skill_writer import GREETING_SCHEMA

    message = '{"greeting": "Hi \\ud83d"}'
    check, seconds = _timed(lambda: check_output(message, output_schema=GREETING_SCHEMA))
    data = dict(check.data or {})
    greeting = data.get("greeting")
    kept = "the six-character escape" if greeting == "Hi \\ud83d" else "not the six-character escape"
    said = (
        f"valid={check.valid}; greeting {greeting!r} ({len(greeting or '')} chars: {kept}); "
        f"warnings {list(check.warnings)}"
    )
    return {"outcome": said, "seconds": seconds}


def surrogate_prompt() -> dict[str, Any]:
    stdout = codex_turn('<ASK_USER_YAML>\nask_user: {prompt: "Pick one \\ud83d"}\n</ASK_USER_YAML>')
    assessment, seconds = _timed(lambda: whole_gate("codex", stdout))
    prompt = assessment.pending.prompt if assessment.pending is not None else None
    return {"outcome": f"{_decided(assessment)}; pending prompt {prompt!r}", "seconds": seconds}


def _number_attack(number: str) -> dict[str, Any]:
    body = '{"skill_id": "greet", "engine": "codex", "input": {"case": "x", "n": NUMBER}}'
    with serving({}) as server:
        return server.request("POST", "/v1/jobs", body.replace("NUMBER", number).encode(), "application/json")


# `serve` --------------------------------------------------------------------------------------------


class Server:
    """A `turngate serve` started for one attack, with the greeting skill's package installed unless
    not asked; its stderr goes to a file searched for tracebacks."""

    def __init__(self, url: str, root: Path, process: subprocess.Popen[str]) -> None:
        self.url = url
        self.root = root
        self.process = process

    def rss_mb(self) -> float:
        return round(peak_rss_kb(self.process.pid) / 1024, 1)

    def log(self) -> str:
        return (self.root / "serve.log").read_text(encoding="utf-8", errors="replace")

    def figures(self) -> dict[str, Any]:
        rss_mb = self.rss_mb()
        time.sleep(0.1)  # the request log's lines are written by a thread of the server's own
        log = self.log()
        return {
            "rss_mb": rss_mb,
            "rss_of": "serve",
            "traceback_in_log": "Traceback" in log,
            "log_5xx": len(re.findall(r" 5\d\d [\d.]+ ms$", log, re.MULTILINE)),
        }

    def request(self, method: str, path: str, body: bytes | None, content_type: str) -> dict[str, Any]:
        """One hostile request while health is polled: its status, code and message, one line."""
        import httpx

        def send() -> httpx.Response:
            with httpx.Client(base_url=self.url, timeout=JOB_TIMEOUT_SEC) as client:
                return client.request(method, path, content=body, headers={"Content-Type": content_type})

        with HealthWatch(self.url) as health:
            answer, seconds = _timed(send)
        return {
            "outcome": _said(answer),
            "seconds": seconds,
            "http_status": answer.status_code,
            **health.figures(),
            **self.figures(),
        }

    def install_package(self, change: Callable[[Path], None]) -> dict[str, Any]:
        from turngate.judge.skill_writer import write_skill

        skill = write_skill(Path(tempfile.mkdtemp(dir=self.root)), {"output_schema": None})
        change(skill)
        body, content_type = zipped_skill(skill)
        return self.request("POST", "/v1/skill-packages/install", body, content_type)

    def settled_job(
        self, options: Mapping[str, Any], *, engine: str = "codex", case: str = "tg-case-hostile"
    ) -> dict[str, Any]:
        """POST a job and poll it until it settles (or `JOB_TIMEOUT_SEC`): its last status."""
        import httpx

        from turngate.implementations.serve.service import SETTLED_STATES

        job = {"skill_id": "greet", "engine": engine, "input": {"case": case}, "runtime_options": options}
        with httpx.Client(base_url=self.url, timeout=JOB_TIMEOUT_SEC) as client:
            created = client.post("/v1/jobs", json=job)
            if created.status_code != 200:
                return {"status": f"POST /v1/jobs {_said(created)}"}
            path = f"/v1/jobs/{created.json()['request_id']}"
            started = time.perf_counter()
            status: dict[str, Any] = {}
            while time.perf_counter() - started < JOB_TIMEOUT_SEC:
                status = client.get(path).json()
                if status.get("status") in SETTLED_STATES:
                    break
                time.sleep(0.05)
        return status

    def job_attack(
        self, options: Mapping[str, Any], *, engine: str = "codex", post_jobs: bool = False
    ) -> dict[str, Any]:
        """A job whose engine prints the hostile turn, while health (and, with ``post_jobs``, other
        jobs' POSTs) are sent alongside: how the job settles, and how long."""
        with HealthWatch(self.url, post_jobs=engine if post_jobs else None) as health:
            status, seconds = _timed(lambda: self.settled_job(options, engine=engine))
        error = status.get("error") or {}
        said = f"job {status.get('status')}" + (f"/{error.get('code')}" if error.get("code") else "")
        message = _one_line(str(error.get("message") or ""))
        if message:  # a message that starts with its code already: the code once
            said += ": " + message.removeprefix(f"{error.get('code')}: ")
        return {"outcome": said, "seconds": seconds, **health.figures(), **self.figures()}


@contextlib.contextmanager
def serving(engines: Mapping[str, str | bytes], *, install: bool = True) -> Iterator[Server]:
    """`turngate serve` on a free port with ``engines`` (name: script, or the bytes a one-shot engine
    prints; codex asks a question if not given) in its --engines folder."""
    import httpx

    from turngate.judge.skill_writer import write_skill

    wanted = {"codex": codex_turn(QUESTION), **engines}
    with tempfile.TemporaryDirectory(prefix="turngate-attacks-serve-") as folder:
        root = Path(folder)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        for name, engine in wanted.items():
            script = (
                engine if isinstance(engine, str) else ENGINE.format(python=sys.executable, stdout=engine)
            )
            (bin_dir / name).write_text(script, encoding="utf-8")
            (bin_dir / name).chmod(0o755)
        with (root / "serve.log").open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "turngate.cli.main", "serve", "--port", "0",
                 "--data", str(root / "data"), "--engines", str(bin_dir)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True, cwd=root,
            )  # fmt: skip
        try:
            assert process.stdout is not None
            url = process.stdout.readline().split("listening on ")[1].split()[0]
            if install:
                body, content_type = zipped_skill(write_skill(root / "skills", {"output_schema": None}))
                httpx.post(
                    f"{url}/v1/skill-packages/install",
                    content=body,
                    headers={"Content-Type": content_type},
                    timeout=60,
                ).raise_for_status()
            yield Server(url, root, process)
        finally:
            process.terminate()
            process.wait(timeout=30)


class HealthWatch:
    """``GET /v1/health`` back to back (a pause of `HEALTH_PAUSE_SEC` between) from a thread of its
    own while the block runs; with ``post_jobs`` (an engine), a short job is POSTed each round too."""

    def __init__(self, url: str, *, post_jobs: str | None = None) -> None:
        self.url = url
        self.post_jobs = post_jobs
        self.samples: dict[str, list[float]] = {"health": [], "post_jobs": []}
        self.statuses: set[int] = set()
        self._stop = threading.Event()
        self._polled = threading.Event()  # one health answer at least, however quick the block
        self._thread = threading.Thread(target=self._poll, name="attacks-health", daemon=True)

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._polled.wait(JOB_TIMEOUT_SEC)
        self._stop.set()
        self._thread.join(JOB_TIMEOUT_SEC)

    def _poll(self) -> None:
        import httpx

        job = {"skill_id": "greet", "engine": self.post_jobs, "input": {"case": "tg-case-quick"}}
        with httpx.Client(base_url=self.url, timeout=JOB_TIMEOUT_SEC) as client:
            while not self._stop.is_set():
                self._send("health", lambda: client.get("/v1/health"))
                if self.post_jobs is not None:
                    self._send("post_jobs", lambda: client.post("/v1/jobs", json=job))
                self._stop.wait(HEALTH_PAUSE_SEC)

    def _send(self, name: str, send: Callable[[], Any]) -> None:
        sent = time.perf_counter()
        try:
            answer = send()
        except Exception:  # a refused or dropped connection: count it, never stop polling
            self.statuses.add(0)
        else:
            self.statuses.add(answer.status_code)
        self.samples[name].append(time.perf_counter() - sent)
        self._polled.set()

    def figures(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "health_requests": len(self.samples["health"]),
            "health_max_ms": round(max(self.samples["health"], default=0.0) * 1000, 1),
            "side_statuses": sorted(self.statuses),
        }
        if self.post_jobs is not None:
            figures["post_jobs_requests"] = len(self.samples["post_jobs"])
            figures["post_jobs_max_ms"] = round(max(self.samples["post_jobs"], default=0.0) * 1000, 1)
        return figures


def _said(answer: Any) -> str:
    """An HTTP answer in one line: status, error code, message."""
    try:
        body = answer.json()
    except ValueError:
        return f"{answer.status_code} (not JSON: {_one_line(answer.text)})"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code, message = str(error.get("code")), _one_line(str(error.get("message")))
        # Some messages start with their code already: the line shows it once.
        return f"{answer.status_code} {message if message.startswith(code) else f'{code}: {message}'}"
    return f"{answer.status_code}"


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "") if lines else ""


def condensed(text: str) -> str:
    """``text`` with long repetitions written once and counted (``x×300``, ``(abcdefghi/)×499``), so
    a message quoting a hostile 5,000-character name still shows its reason."""
    text = re.sub(r"(.)\1{11,}", lambda run: f"{run[1]}×{len(run[0])}", text)
    return re.sub(r"(.{2,16}?)\1{4,}", lambda run: f"({run[1]})×{len(run[0]) // len(run[1])}", text)


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def _zip(entries: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in entries.items():
            archive.writestr(zipfile.ZipInfo(name), content)
    return buffer.getvalue()


# Children --------------------------------------------------------------------------------------------


def _run_measured(command: list[str], *, cwd: Path | None = None) -> tuple[Any, float, float]:
    """Run ``command`` to its end: its (returncode, stdout, stderr), wall seconds, peak RSS MB."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=errors, cwd=cwd)
        timer = threading.Timer(CHILD_TIMEOUT_SEC, child.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        errors.seek(0)
        done = subprocess.CompletedProcess(
            command,
            child.returncode,
            out.read().decode("utf-8", "replace"),
            errors.read().decode("utf-8", "replace"),
        )
    return done, seconds, round(usage.ru_maxrss * 1024 / MB, 1)  # ru_maxrss: KiB on Linux


# A package whose file is replaced by hostile text, by the attack's key.
PACKAGES: Final[Mapping[str, tuple[str, Callable[[Path], None]]]] = {
    "4a": ("runner.json [ x100000", _write("assets/runner.json", "[" * 100_000 + "]" * 100_000)),
    "4b": ('runner.json {"a": x50000', _write("assets/runner.json", '{"a":' * 50_000 + "1" + "}" * 50_000)),
    "4c": (
        "output schema nested 900 deep",
        _write("assets/output.schema.json", '{"items":' * 900 + "{}" + "}" * 900),
    ),
    "4d": ("SKILL.md front matter nested [ x5000", _skill_md("name: " + "[" * 5000 + "]" * 5000)),
    "4e": ("schema path holding \\u0000", _schema_path("assets/a\u0000b.json")),
    "4f": ("schema path holding \\ud800", _schema_path("assets/\ud800.json")),
}
# A zip entry name the file system cannot hold, by the attack's key.
ENTRIES: Final = {
    "4g": ("zip entry component of 300 chars", "greet/" + "x" * 300),
    "4h": ("zip entry path of 5,000 chars", "greet/" + "/".join(["abcdefghi"] * 500)),
    "4i": ("skill folder name of 300 chars", "x" * 300 + "/SKILL.md"),
}
PACKAGES_BEFORE: Final = {
    "4a": "RecursionError: 500",
    "4b": "RecursionError: 500",
    "4c": "RecursionError: 500",
    "4d": "RecursionError: 500",
    "4e": "500 (ValueError)",
    "4f": "500",
    "4g": "500 (ENAMETOOLONG)",
    "4h": "500 (ENAMETOOLONG)",
    "4i": "500",
}
INSTALL: Final = "serve POST /v1/skill-packages/install"
ONE_SHOT: Final = "reference OneShot + assess (timeout 15 s)"


def attack_list() -> list[Attack]:
    """Every attack, in the issue's order."""
    return [
        Attack(
            "1a",
            "alias bomb (587 B, 10^9 leaves) as ask_user hint",
            "assess (codex reply)",
            "10^9: 273 s, 12.8 GB",
            bomb_assess,
        ),
        Attack(
            "1b",
            "alias bomb (10^9) as ask_user hint in the engine's reply",
            "serve job (codex, interactive)",
            "10^8: every endpoint stalled 14 s, 1.36 GB",
            bomb_serve_engine,
        ),
        Attack(
            "1c",
            "alias bomb (10^9) in a capture's reply",
            "turngate replay --engine codex",
            "10^8, 749 B capture: 30 s, 1.37 GB",
            bomb_replay,
        ),
        Attack(
            "1d",
            "alias bomb (10^9) as SKILL.md front matter name",
            INSTALL,
            "10^8: 9.3 s, 1.29 GB; health stalled 8.9 s",
            bomb_serve_skill_md,
        ),
        Attack(
            "2",
            "opencode turn: 16.7 MB of a\\n lines (jobs POSTed alongside)",
            "serve job (opencode, auto)",
            "POST /v1/jobs blocked 23 s; server 959 MB",
            opencode_tiny_lines,
        ),
        Attack(
            "3a",
            "output pattern ^(a+)+$ vs 'a'*26+'!'",
            "check_output",
            "4.3 s (froze the server); x4 per 2 more chars",
            pattern_check_27,
        ),
        Attack(
            "3b",
            "output pattern ^(a+)+$ vs 'a'*99999+'!'",
            "check_output",
            "(not measured: x4 per 2 more chars)",
            pattern_check_100k,
        ),
        Attack(
            "3c",
            "package with ^(a+)+$; its job answers 'a'*26+'!'",
            f"{INSTALL}; serve job (codex, auto)",
            "the whole server froze 4.3 s",
            pattern_serve,
        ),
        Attack(
            "3d",
            "output pattern with a lookahead (?=a)a+$",
            INSTALL,
            "(not in the issue)",
            pattern_lookaround_install,
        ),
        *(
            Attack(key, name, INSTALL, PACKAGES_BEFORE[key], _bind(_package_attack, change))
            for key, (name, change) in PACKAGES.items()
        ),
        *(
            Attack(key, name, INSTALL, PACKAGES_BEFORE[key], _bind(_entry_attack, entry))
            for key, (name, entry) in ENTRIES.items()
        ),
        Attack("4j", "job for a 300-char skill_id", "serve POST /v1/jobs", "500", long_skill_id),
        Attack(
            "4k",
            "job upload with a 300-char entry name",
            "serve POST /v1/jobs/{id}/upload",
            "500",
            long_upload_entry,
        ),
        Attack(
            "5a",
            "engine prints its whole turn, never exits",
            ONE_SHOT,
            "TIMEOUT at 15.2 s, the valid turn lost",
            turn_end_never_exits,
        ),
        Attack(
            "5b",
            "engine closes stdout/stderr, exits 0 1.5 s later",
            ONE_SHOT,
            'SIGKILLed at once: ENGINE_FAILED "killed by signal 9"',
            turn_end_closes_then_exits,
        ),
        Attack(
            "5c",
            "its child writes an agent line 0.1 s after the engine exits",
            ONE_SHOT,
            "the late line became the final message: OUTPUT_NOT_FOUND",
            turn_end_late_child_line,
        ),
        Attack(
            "6a",
            'lone surrogate: {"greeting": "Hi \\ud83d"}',
            "check_output",
            "U+FFFD, no warning",
            surrogate_output,
        ),
        Attack(
            "6b",
            "lone surrogate in an ask_user prompt",
            "assess (codex reply, interactive)",
            "U+FFFD in the prompt",
            surrogate_prompt,
        ),
        Attack(
            "6c",
            "job input {n: 1e999}",
            "serve POST /v1/jobs",
            "accepted: Infinity in input.json",
            _bind(_number_attack, "1e999"),
        ),
        Attack(
            "6d",
            "job input {n: NaN}",
            "serve POST /v1/jobs",
            "accepted: NaN in input.json",
            _bind(_number_attack, "NaN"),
        ),
    ]


def _bind(work: Callable[[Any], dict[str, Any]], argument: Any) -> Callable[[], dict[str, Any]]:
    return lambda: work(argument)


def attacks_by_key() -> dict[str, Attack]:
    return {attack.key: attack for attack in attack_list()}


def measure(key: str) -> dict[str, Any]:
    """One attack in a child of its own (``--one``): its row."""
    attack = attacks_by_key()[key]
    done, wall, child_rss = _run_measured([sys.executable, "-m", MODULE, "--one", key])
    found: dict[str, Any] = {}
    if done.returncode == 0 and done.stdout.strip():
        found = json.loads(done.stdout)
    elif done.returncode == -9:
        found = {"outcome": f"killed at the child's limit of {CHILD_TIMEOUT_SEC:.0f} s"}
    else:
        found = {"outcome": f"child failed (exit {done.returncode}): {_last_line(done.stderr)}"}
    row: dict[str, Any] = {
        "key": attack.key,
        "attack": attack.name,
        "where": attack.where,
        "sec": round(found.get("seconds", wall), 3),
        "peak_rss_mb": found.get("rss_mb", child_rss),
        "rss_of": found.get("rss_of", "child"),
        "outcome": condensed(found["outcome"]),
        "before": attack.before,
        "child_exit": done.returncode,
        "child_rss_mb": child_rss,
    }
    for name, value in found.items():
        row.setdefault(name, value)
    row.pop("seconds", None)
    row.pop("rss_mb", None)
    if done.returncode != 0:
        row["stderr_tail"] = done.stderr[-2000:]
    row["notes"] = notes(row)
    return row


def notes(row: Mapping[str, Any]) -> list[str]:
    """What the issue calls misbehaviour, as seen in a row."""
    found = []
    if row["child_exit"] != 0:
        found.append(f"child exit {row['child_exit']}")
    if row.get("http_status", 0) >= 500 or any(status >= 500 for status in row.get("side_statuses", ())):
        found.append("HTTP 5xx")
    if row.get("log_5xx"):
        found.append(f"{row['log_5xx']} answers 5xx in the server's log")
    if row.get("traceback_in_log"):
        found.append("traceback in the server's log")
    for name in ("health_max_ms", "post_jobs_max_ms"):
        if row.get(name, 0.0) > FREEZE_MS:
            found.append(f"{name.removesuffix('_max_ms')} held {row[name] / 1000:.1f} s")
    if row["peak_rss_mb"] > RSS_LIMIT_MB:
        found.append(f"peak RSS {row['peak_rss_mb']} MB > {RSS_LIMIT_MB:.0f}")
    return found


def table(match: str | None = None) -> dict[str, Any]:
    """Every attack measured, one child each; rows go to stderr as they are measured."""
    started = time.perf_counter()
    rows = []
    for attack in attack_list():
        if match and not attack.key.startswith(match):
            continue
        row = measure(attack.key)
        rows.append(row)
        print(render([row], header=False), file=sys.stderr, flush=True)
    return {
        "rows": rows,
        "freeze_ms": FREEZE_MS,
        "rss_limit_mb": RSS_LIMIT_MB,
        "misbehaving": [f"{row['key']}: {'; '.join(row['notes'])}" for row in rows if row["notes"]],
        "spawner_peak_rss_mb": round(peak_rss_kb(os.getpid()) / 1024, 1),
        "wall_sec": round(time.perf_counter() - started, 1),
    }


def attacks(match: str | None = None) -> dict[str, Any]:
    """`table` run by a fresh, small interpreter (see the module's docstring)."""
    command = [sys.executable, "-m", MODULE, "--table"] + (["--match", match] if match else [])
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def render(rows: list[dict[str, Any]], *, header: bool = True) -> str:
    """The rows as a Markdown table: attack | where | seconds | peak RSS | what happens | before."""
    lines = (
        [
            "| # | attack | where | seconds | peak RSS MB | what happens now | the issue measured |",
            "| --- | --- | --- | ---: | ---: | --- | --- |",
        ]
        if header
        else []
    )
    for row in rows:
        happened = _cell(row["outcome"])
        if "health_max_ms" in row:
            happened += f"; health max {row['health_max_ms']:.0f} ms ({row['health_requests']} polls)"
        if "post_jobs_max_ms" in row:
            happened += f"; POST /v1/jobs max {row['post_jobs_max_ms']:.0f} ms ({row['post_jobs_requests']})"
        if row["notes"]:
            happened += f" **[{'; '.join(row['notes'])}]**"
        lines.append(
            f"| {row['key']} | {_cell(row['attack'])} | {_cell(row['where'])} | {row['sec']:.3f} | "
            f"{row['peak_rss_mb']} ({row['rss_of']}) | {happened} | {_cell(row['before'])} |"
        )
    return "\n".join(lines)


def render_attacks(result: Mapping[str, Any]) -> str:
    misbehaving = "; ".join(result["misbehaving"]) or "none"
    return (
        f"{render(result['rows'])}\n"
        f"misbehaving (5xx, traceback, a request held > {result['freeze_ms'] / 1000:.0f} s, "
        f"> {result['rss_limit_mb']:.0f} MB, child failed): {misbehaving}\n"
        f"wall time {result['wall_sec']} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__)
    parser.add_argument("--out", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--match", help="only the attacks whose key starts with this (1, 4a, ...)")
    internal = parser.add_mutually_exclusive_group()
    internal.add_argument("--one", metavar="KEY", help=argparse.SUPPRESS)  # a child: one attack
    internal.add_argument("--table", action="store_true", help=argparse.SUPPRESS)  # the children's parent
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(attacks_by_key()[args.one].run()))
        return 0
    if args.table:
        print(json.dumps(table(args.match)))
        return 0
    result = attacks(args.match)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(render_attacks(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
