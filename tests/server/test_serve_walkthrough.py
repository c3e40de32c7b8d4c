"""docs/serve.md works as written: its `sh` blocks, run in order against a real `turngate serve`.

The first block starts the server (port 0 instead of 8765, so the test takes any free port); the
others run in one bash session, as a reader would type them in a second terminal, with the
server's address and a temporary folder for ``/tmp/``. Each block's output is checked for what
the page says it shows. Without curl the doc test is skipped; the same steps over urllib, with
the example package, run anyway.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import Server, start_server, stop_server, zip_folder
from tests.server.test_api import read_sse

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "serve.md"
EXAMPLE = ROOT / "examples" / "hello-skill"
SCRIPTS = ROOT / "examples" / "fake-engine-scripts"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
MARK = "@@ block {} @@"

# What each block of the page shows: (a text only that block has, what its output must contain).
SHOWN: list[tuple[str, list[str]]] = [
    ("/v1/health", ['"description":"the reference orchestrator"', '"mutant":null']),
    ("skill-packages/install", ['"skill_id":"hello-skill"', '"version":"1.0.0"', '"archive_sha256":"']),
    ('"colour"', ['"code":"INPUT_UNDECLARED"', "'colour'"]),
    ("JOB=$(", ["run-"]),
    ("events?after_seq=3", ['"seq": 4', '"reason": "terminal", "status": "succeeded"']),
    ('/events"', ['"type": "user.input.required"', 'event: end\ndata: {"reason": "waiting_user"']),
    ("interaction/pending", ['"status":"waiting_user"', '"prompt":"Formal or casual?"']),
    ("interaction/reply", ['"accepted":true']),
    ("/result", ['"status":"success"', '"data":{"greeting":"Good day, Ada."}']),
    ("curl -si", ["405 Method Not Allowed", "allow: POST", '"code":"METHOD_NOT_ALLOWED"']),
]


def sh_blocks() -> list[str]:
    return SH_BLOCK.findall(DOC.read_text(encoding="utf-8"))


def expected(block: str) -> list[str]:
    for text, shown in SHOWN:
        if text in block:
            return shown
    raise AssertionError(f"docs/serve.md has a block this test does not check:\n{block}")


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_every_sh_block_of_docs_serve_md_works_as_written(tmp_path: Path) -> None:
    start, *steps = sh_blocks()
    assert "turngate serve --port 8765" in start
    assert len(steps) == len(SHOWN)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("TURNGATE_CASE", None)
    env.pop("TURNGATE_STATE", None)
    here = f"{tmp_path}/"
    server = subprocess.Popen(
        ["bash", "-c", start.replace("--port 8765", "--port 0").replace("/tmp/", here)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: bash and the server it starts end together
    )
    try:
        assert server.stdout is not None
        listening = server.stdout.readline()
        assert "listening on http://127.0.0.1:" in listening
        assert server.stdout.readline() == "turngate serve: serving the reference orchestrator\n"
        address = listening.split("http://")[1].split()[0]
        # A newline before each mark: curl's JSON answers end without one.
        script = "set -eu\n" + "".join(
            f"printf '\\n{MARK.format(number)}\\n'\n"
            + step.replace("127.0.0.1:8765", address).replace("/tmp/", here)
            for number, step in enumerate(steps)
        )
        done = subprocess.run(
            ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, log = server.communicate(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = re.split(r"^@@ block \d+ @@\n", done.stdout, flags=re.MULTILINE)[1:]
    assert len(outputs) == len(steps)
    for step, output in zip(steps, outputs, strict=True):
        for shown in expected(step):
            assert shown in output, f"{step}\n---\n{output}"
    assert not (SCRIPTS / ".turngate-state").exists()  # the fake engines' state went to DATA
    requests = re.findall(r"^(GET|POST) (\S+) (\d{3}) \d+\.\d ms$", log, flags=re.MULTILINE)
    assert [(method, re.sub(r"run-\w+", "run-…", path), status) for method, path, status in requests] == [
        ("GET", "/v1/health", "200"),
        ("POST", "/v1/skill-packages/install", "200"),
        ("POST", "/v1/jobs", "200"),
        ("POST", "/v1/jobs", "400"),
        ("GET", "/v1/jobs/run-…/events", "200"),
        ("GET", "/v1/jobs/run-…/interaction/pending", "200"),
        ("POST", "/v1/jobs/run-…/interaction/reply", "200"),
        ("GET", "/v1/jobs/run-…/events?after_seq=3", "200"),
        ("GET", "/v1/jobs/run-…/result", "200"),
        ("GET", "/v1/jobs", "405"),
    ]


@pytest.fixture
def hello_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("TURNGATE_CASE", "hello")  # as the page's start line
    return start_server(tmp_path / "serve", "--quiet")


def test_the_example_package_walks_through_the_page_without_curl(hello_server: Server) -> None:
    server = hello_server
    try:
        shutil.copy(SCRIPTS / "hello.yaml", server.scripts / "hello.yaml")
        body, content_type = zip_folder(EXAMPLE)
        code, installed = server.call(
            "POST", "/v1/skill-packages/install", raw=body, content_type=content_type
        )
        assert (code, installed["skill_id"], installed["version"]) == (200, "hello-skill", "1.0.0")
        request = {
            "skill_id": "hello-skill",
            "engine": "codex",
            "input": {"name": "Ada"},
            "runtime_options": {"execution_mode": "interactive"},
        }
        refused = server.call("POST", "/v1/jobs", {**request, "input": {"name": "Ada", "colour": "red"}})
        assert (refused[0], refused[1]["error"]["code"]) == (400, "INPUT_UNDECLARED")
        code, created = server.call("POST", "/v1/jobs", request)
        assert code == 200
        job = created["request_id"]
        assert read_sse(server, job)[-1][2] == {"reason": "waiting_user", "status": "waiting_user"}
        pending = server.call("GET", f"/v1/jobs/{job}/interaction/pending")[1]["pending"]
        assert (pending["interaction_id"], pending["prompt"]) == (1, "Formal or casual?")
        reply = {"interaction_id": 1, "response": "formal"}
        assert server.call("POST", f"/v1/jobs/{job}/interaction/reply", reply)[1]["accepted"] is True
        assert read_sse(server, job, 3)[-1][2] == {"reason": "terminal", "status": "succeeded"}
        result = server.call("GET", f"/v1/jobs/{job}/result")[1]["result"]
        assert (result["status"], result["data"]) == ("success", {"greeting": "Good day, Ada."})
    finally:
        stop_server(server)
