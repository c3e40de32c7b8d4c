"""`turngate probe` against turngate serve (no hooks) and against a miniature of Skill-Runner."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from tests.server.conftest import Server, start_server, stop_server
from tests.server.miniatures.app import POLICIES, Behaviour, serve
from tests.turngate_cli import in_process as cli
from turngate.engines.fake.invocation import ENGINES
from turngate.judge.connectors.http_options import http_options
from turngate.judge.probe import probe_server
from turngate.judge.probe_dialect import find_per_job_watchdog
from turngate.judge.probe_jobs import Ledger
from turngate.judge.skill_writer import write_skill
from turngate.judge.targets import parse_target


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("serve-probe"))
    try:
        yield running
    finally:
        stop_server(running)


def test_probing_turngate_serve_finds_every_engine_protocol_history_and_the_real_timeout(
    plain: Server, tmp_path: Path
) -> None:
    out = tmp_path / "target.yaml"
    code, printed, _ = cli(
        "probe", "--target", plain.url, "--scripts", str(plain.scripts), "--call-log", str(plain.call_log),
        "--watchdog-wait", "1", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    assert "skill install: synchronous" in printed
    assert "history holds protocol events" in printed
    assert "dialect: require-user-reply (interactive_require_user_reply, session_timeout_sec" in printed
    assert "edition: looks like seed-7d8914d+4cb89ba (" in printed
    written = yaml.safe_load(out.read_text())
    assert written["engines"] == list(ENGINES)
    assert written["events_source"] == "history"
    assert written["honours_session_timeout"] is True
    assert written["probes_each_run"] is False  # turngate serve without hooks probes an engine once
    assert written["skill_gemini_settings"] is True  # the skill's gemini settings choose the format
    assert written["slots"] == 2  # turngate serve's default --slots
    assert "turngate_hooks" not in written  # serve without --test-hooks
    assert "turn_timeout_sec" not in written  # its watchdog (30 s here) is longer than the wait
    assert "engine watchdog: none within 1 s" in printed
    assert "restart_command: not observable" in printed  # and what that costs, in cases
    target = parse_target(str(out))  # the file the probe wrote is one `turngate run` takes
    assert target.http is not None
    assert {"clock", "patch", "argv"} <= target.http.capabilities


def test_probing_turngate_serve_with_probe_each_run_finds_it_so_sticky_scenarios_run(tmp_path: Path) -> None:
    server = start_server(tmp_path / "serve", "--probe-each-run")
    try:
        found = probe_server(
            server.url, scripts=server.scripts, call_log=server.call_log, workdir=tmp_path, models={},
            timeout_probe=False, slots_most=0, watchdog_wait=0,
        )  # fmt: skip
    finally:
        stop_server(server)
    assert found.target["probes_each_run"] is True
    assert "engine resume support probed for each run: yes" in "\n".join(found.lines)
    assert {"sticky", "gemini_output_format"} <= http_options(found.target, None).capabilities


def test_probing_a_skill_runner_miniature_finds_its_async_install_refused_engine_and_runtime_history(
    tmp_path: Path,
) -> None:
    behaviour = Behaviour(install="async", runtime_history=True, pending_400_for_auto=True)
    with serve(behaviour) as (url, _mini):
        found = probe_server(
            url, scripts=tmp_path / "scripts", call_log=None, workdir=tmp_path, models={}, timeout_probe=False
        )
    assert found.target["engines"] == ["codex"]
    assert found.target["events_source"] == "stream"
    said = "\n".join(found.lines)
    assert "skill install: asynchronous" in said
    assert "engine gemini: not used" in said
    assert "SKILL_ENGINE_UNSUPPORTED" in said
    assert "runtime events, not protocol events" in said


def test_probing_a_server_that_is_down_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from tests.server.test_http_connector import free_port

    code, _, err = cli("probe", "--target", f"http://127.0.0.1:{free_port()}", "--scripts", str(tmp_path))
    assert code == 2
    assert err.count("\n") == 1
    assert "nothing answers" in err


@pytest.mark.parametrize(
    ("layout", "path"),
    [
        ("flat", "/v1/management/runs/{job}/file?path=.audit/meta.{attempt}.json"),
        ("namespaced", "/v1/management/runs/{job}/file?path=.audit/{skill}.1/meta.{attempt}.json"),
    ],
)
def test_the_probe_finds_a_per_attempt_audit_record_where_skill_runner_serves_it(
    tmp_path: Path, layout: str, path: str
) -> None:
    with serve(Behaviour(audit="agrees", audit_layout=layout)) as (url, _mini):
        found = probe_server(
            url,
            scripts=tmp_path / "scripts",
            call_log=None,
            workdir=tmp_path / "one",
            models={},
            timeout_probe=False,
        )
    assert found.target["audit_source"]["path"] == path
    assert http_options(found.target, None).audit_source is not None
    with serve(Behaviour()) as (url, _mini):
        found = probe_server(
            url,
            scripts=tmp_path / "scripts",
            call_log=None,
            workdir=tmp_path / "two",
            models={},
            timeout_probe=False,
        )
    assert "audit_source" not in found.target
    assert "audit records per attempt: none found" in "\n".join(found.lines)


def test_a_server_that_resumes_a_non_resumable_engine_gets_no_sticky_scenarios() -> None:
    """probes_each_run says what the server does; sticky_process: false (the probe saw it resume a
    non-resumable engine all the same, as Skill-Runner 4cb89ba does) keeps the sticky cases out."""
    base = {"base_url": "http://127.0.0.1:1", "scripts_dir": "scripts", "probes_each_run": True}
    assert "sticky" in http_options(base, None).capabilities  # a target file from an older probe
    assert "sticky" in http_options({**base, "sticky_process": True}, None).capabilities
    assert "sticky" not in http_options({**base, "sticky_process": False}, None).capabilities


@pytest.mark.parametrize(
    ("dialect", "engines", "edition"),
    [
        ("require-user-reply", {"codex"}, "seed-7d8914d+4cb89ba"),
        ("auto-reply", {"codex"}, "skill-runner-v0.4.0"),
        ("auto-reply-hard-timeout", {"codex", "gemini"}, "skill-runner-v0.6.0"),
        ("auto-reply-hard-timeout", {"codex"}, "skill-runner-v0.7.9"),
    ],
)
def test_the_probe_finds_the_dialect_by_what_the_server_refuses_and_names_the_edition_it_looks_like(
    tmp_path: Path, dialect: str, engines: set[str], edition: str
) -> None:
    behaviour = Behaviour(dialect=dialect, engines=frozenset(engines))
    with serve(behaviour) as (url, mini):
        found = probe_server(
            url, scripts=tmp_path / "scripts", call_log=None, workdir=tmp_path, models={}, timeout_probe=False
        )
    said = "\n".join(found.lines)
    assert f"dialect: {dialect} (" in said
    assert found.target.get("dialect", "require-user-reply") == dialect
    assert f"edition: looks like {edition} (" in said
    assert f"judge it with --edition {edition}" in said
    if dialect != "require-user-reply":
        assert "the end in conversation.state.changed" in said
    # Every later job speaks the dialect found: none was refused for its options after it.
    refused = [body for body in mini.job_requests if set(body["runtime_options"]) - POLICIES[dialect]]
    tried_before = {"require-user-reply": 0, "auto-reply-hard-timeout": 1, "auto-reply": 2}[dialect]
    assert len(refused) == tried_before
    assert http_options(found.target, None).dialect.name == dialect


def test_the_per_job_watchdog_is_written_only_when_it_ends_a_hung_engine(tmp_path: Path) -> None:
    raw = {"base_url": "http://127.0.0.1:1", "scripts_dir": str(tmp_path / "scripts")}
    options = http_options({**raw, "dialect": "auto-reply-hard-timeout"}, None)
    skill = write_skill(tmp_path, {}, name="turngate-probe")
    (tmp_path / "scripts").mkdir()
    for code, written in (("ENGINE_HARD_TIMEOUT", True), ("ENGINE_CRASHED", False)):
        behaviour = Behaviour(dialect="auto-reply-hard-timeout", hard_timeout_code=code)
        with serve(behaviour) as (url, mini):
            limit = find_per_job_watchdog(
                replace(options, base_url=url), skill, "codex", tmp_path / "scripts", tmp_path, Ledger()
            )
        assert mini.job_requests[0]["runtime_options"]["hard_timeout_seconds"] == 3
        assert (limit.fields == {"turn_timeout_per_job": True}) is written, limit.line
        assert ("not by a timeout" in limit.line) is not written


def test_a_model_refused_without_its_provider_is_named_with_the_way_to_give_one(tmp_path: Path) -> None:
    behaviour = Behaviour(dialect="auto-reply-hard-timeout", provider_required=frozenset({"codex"}))
    with serve(behaviour) as (url, _mini):
        found = probe_server(
            url, scripts=tmp_path / "scripts", call_log=None, workdir=tmp_path, models={"codex": "gpt-5"},
            engines=("codex",), timeout_probe=False,
        )  # fmt: skip
    said = "\n".join(found.lines)
    assert "engine codex: not used: POST /v1/jobs: HTTP 400" in said
    assert "provider_id is required for multi-provider engine 'codex'" in said
    assert "name the model as PROVIDER/MODEL, or give providers: {codex: PROVIDER} in the target file" in said


# A resident engine: it says it has begun, plays until the server closes its input, and only then
# writes its line (the delay stands for a loaded machine between the job's end and the line).
_RESIDENT = """
import json, os, sys, time
log, started = sys.argv[1], sys.argv[1] + ".started"
call = {"engine": "codex", "case": "probe-sticky", "pid": os.getpid(), "start": time.time()}
with open(started, "a") as file:
    file.write(json.dumps(call) + "\\n")
print("ready", flush=True)
sys.stdin.read()
time.sleep(0.3)
with open(log, "a") as file:
    file.write(json.dumps({**call, "action": "run", "turns": [1, 2]}) + "\\n")
"""


def test_a_probe_job_reads_its_calls_once_a_resident_engine_has_written_its_line(tmp_path: Path) -> None:
    """The sticky probe reads the call log right after its job settled: a resident process that
    writes its line only when its input closes must be waited for, or sticky_process looks absent."""
    import subprocess
    import sys

    from turngate.judge.connectors.call_log import LogMarks
    from turngate.judge.probe import _case_calls

    log = tmp_path / "calls.jsonl"
    marks = LogMarks.of(log)
    engine = subprocess.Popen(
        [sys.executable, "-c", _RESIDENT, str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert engine.stdout is not None and engine.stdin is not None
    assert engine.stdout.readline() == "ready\n"
    engine.stdin.close()  # the server ends the run: the job shows its end before the line is written
    calls = _case_calls(log, marks, "probe-sticky")
    engine.wait()
    assert [(call["case"], call["turns"]) for call in calls] == [("probe-sticky", [1, 2])]
