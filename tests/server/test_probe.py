"""`turngate probe` against turngate serve (no hooks) and against a miniature of Skill-Runner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.server.conftest import Server, start_server, stop_server
from tests.server.miniatures.app import Behaviour, serve
from tests.turngate_cli import in_process as cli
from turngate.judge.connectors.http_options import http_options
from turngate.judge.probe import probe_server
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
    written = yaml.safe_load(out.read_text())
    assert written["engines"] == ["codex", "gemini", "iflow", "opencode"]
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


def test_the_probe_finds_a_per_attempt_audit_record_where_skill_runner_serves_it(tmp_path: Path) -> None:
    with serve(Behaviour(audit="agrees")) as (url, _mini):
        found = probe_server(
            url,
            scripts=tmp_path / "scripts",
            call_log=None,
            workdir=tmp_path / "one",
            models={},
            timeout_probe=False,
        )
    assert (
        found.target["audit_source"]["path"]
        == "/v1/management/runs/{job}/file?path=.audit/meta.{attempt}.json"
    )
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
