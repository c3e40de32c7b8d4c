"""The HTTP connector against servers that misbehave: down, garbage, gone mid-run, bad options."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.conftest import Server, start_server, stop_server
from tests.turngate_cli import in_process as cli
from turngate.judge.catalog import load_catalog
from turngate.judge.connectors.http_options import TargetProblem, http_options
from turngate.judge.pool import cases, run_all
from turngate.judge.report import JsonlReport, read_report
from turngate.judge.targets import Target, parse_target

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def options_file(tmp_path: Path, url: str, **extra: object) -> Path:
    import yaml

    path = tmp_path / "target.yaml"
    path.write_text(yaml.safe_dump({"base_url": url, "scripts_dir": str(tmp_path / "scripts"), **extra}))
    return path


def test_a_server_that_is_down_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = cli("run", "--target", str(options_file(tmp_path, url)), "-k", "design/decision-1/*")
    assert code == 2
    assert err.count("\n") == 1
    assert "nothing answers" in err
    assert url in err


@pytest.fixture
def garbage_server() -> Iterator[str]:
    class Garbage(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>hello</html>")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_a_server_that_answers_garbage_is_one_line_and_exit_2(tmp_path: Path, garbage_server: str) -> None:
    code, _, err = cli(
        "run", "--target", garbage_server, "--target-options", str(options_file(tmp_path, garbage_server))
    )
    assert code == 2
    assert err.count("\n") == 1
    assert "not JSON" in err
    assert "<html>" in err


def test_a_server_that_goes_away_mid_run_leaves_the_rest_unreached_in_the_report(tmp_path: Path) -> None:
    running = start_server(tmp_path / "serve", "--test-hooks")
    target = Target(
        running.url,
        "http",
        http=http_options(running.target_fields(), None),
    )
    planned = cases(load_catalog(ROOT / "scenarios"), ["codex"])[:5]
    report_path = tmp_path / "report.jsonl"
    try:
        with report_path.open("w", encoding="utf-8") as stream:
            report = JsonlReport(stream, target=target.name, engines=["codex"], planned=len(planned))
            for index, result in enumerate(run_all(planned, target=target, jobs=1)):
                report.case(result)
                if index == 1:
                    stop_server(running)
            report.finish()
    finally:
        stop_server(running)
    _, listed, footer = read_report(report_path)
    assert [case["outcome"] for case in listed][:2] == ["passed", "passed"]
    assert [case["outcome"] for case in listed][2:] == ["unreached"] * 3
    assert footer["counts"]["unreached"] == 3
    assert "nothing answers" in listed[2]["message"]
    assert "not run" in listed[3]["message"]
    assert listed[2]["scenario_id"] in listed[3]["message"]


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"scripts_dir": "/s"}, ["base_url", "missing"]),
        ({"base_url": "ftp://x", "scripts_dir": "/s"}, ["base_url", "ftp://x"]),
        ({"base_url": "http://x"}, ["scripts_dir", "missing"]),
        ({"base_url": "http://x", "scripts_dir": "/s", "colour": 1}, ["colour", "unknown field"]),
        ({"base_url": "http://x", "scripts_dir": "/s", "jobs": "two"}, ["jobs", "'two'"]),
        (
            {"base_url": "http://x", "scripts_dir": "/s", "capabilities": ["telepathy"]},
            ["capabilities", "telepathy"],
        ),
        (
            {"base_url": "http://x", "scripts_dir": "/s", "turn_timeout_sec": 400, "settle_timeout_sec": 300},
            ["turn_timeout_sec", "400", "settle_timeout_sec"],
        ),
    ],
)
def test_a_bad_target_options_file_names_the_file_field_and_value(
    tmp_path: Path, document: dict[str, object], words: list[str]
) -> None:
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(TargetProblem) as caught:
        parse_target(str(path))
    assert str(path) in str(caught.value)
    for word in words:
        assert word in str(caught.value)


def test_an_unknown_target_is_one_line_and_exit_2() -> None:
    code, _, err = cli("run", "--target", "telnet://x")
    assert code == 2
    assert err.count("\n") == 1
    assert "telnet://x" in err


def test_a_timeout_scenario_is_skipped_with_the_reason_on_a_server_without_a_clock(server: Server) -> None:
    target = Target(
        server.url,
        "http",
        http=http_options({"base_url": server.url, "scripts_dir": str(server.scripts)}, None),
    )
    planned = [
        (scenario, engine)
        for scenario, engine in cases(load_catalog(ROOT / "scenarios"), ["codex"])
        if "clock" in scenario.capabilities
    ][:2]
    assert planned
    for result in run_all(planned, target=target, jobs=1):
        assert result.outcome == "skipped"
        assert "clock" in result.message
