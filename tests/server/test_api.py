"""The reference server's job API (HTTP_API.md) on a real socket: answers, stable 4xx codes, nothing lost."""

from __future__ import annotations

import http.client
import json
import urllib.parse
import uuid
from typing import Any

import pytest

from tests.server.conftest import Server, multipart, zip_folder

ASK = [
    {"steps": [{"say": "Which greeting style do you want?"}]},
    {"steps": [{"say": '{"greeting": "Good day", "__SKILL_DONE__": true}'}]},
]


def waiting_job(server: Server, **options: Any) -> str:
    assert server.install()[0] == 200
    case = server.script(f"api-{uuid.uuid4().hex[:8]}", ASK)
    job = server.job(case, **options)
    assert server.settle(job)["status"] == "waiting_user"
    return job


def events(server: Server, job: str) -> list[dict[str, Any]]:
    status, answer = server.call("GET", f"/v1/jobs/{job}/events/history")
    assert status == 200
    return list(answer["events"])


def test_a_waiting_job_shows_its_pending_interaction_and_takes_a_reply(server: Server) -> None:
    job = waiting_job(server)
    status = server.call("GET", f"/v1/jobs/{job}")[1]
    assert status["pending_interaction_id"] == 1
    assert status["interaction_count"] == 1
    pending = server.call("GET", f"/v1/jobs/{job}/interaction/pending")[1]
    assert pending["status"] == "waiting_user"
    assert pending["pending"]["interaction_id"] == 1
    assert pending["pending"]["prompt"] == "Which greeting style do you want?"
    code, answer = server.call(
        "POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 1, "response": "Formal"}
    )
    assert code == 200
    assert answer["accepted"] is True
    assert answer["status"] in ("queued", "running")
    assert server.settle(job)["status"] == "succeeded"
    code, result = server.call("GET", f"/v1/jobs/{job}/result")
    assert code == 200
    assert result["result"]["status"] == "success"
    assert result["result"]["data"] == {"greeting": "Good day"}
    assert server.call("GET", f"/v1/jobs/{job}/interaction/pending")[1]["pending"] is None


def test_protocol_events_have_the_fcmp_envelope_and_increasing_seq(server: Server) -> None:
    job = waiting_job(server)
    listed = events(server, job)
    assert [event["seq"] for event in listed] == sorted({event["seq"] for event in listed})
    for event in listed:
        assert event["protocol_version"] == "fcmp/1.0"
        assert event["run_id"] == job
        assert event["engine"] == "codex"
        assert set(event) >= {"ts", "type", "data", "meta", "raw_ref"}
    required = [event for event in listed if event["type"] == "user.input.required"]
    assert required[0]["data"]["interaction_id"] == 1
    later = server.call("GET", f"/v1/jobs/{job}/events/history?after_seq={listed[0]['seq']}")[1]["events"]
    assert later == listed[1:]


def test_a_stale_interaction_id_is_refused_with_409_and_changes_nothing(server: Server) -> None:
    job = waiting_job(server)
    before = events(server, job)
    code, answer = server.call(
        "POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 7, "response": "x"}
    )
    assert code == 409
    assert answer["error"]["code"] == "INTERACTION_STALE"
    assert server.call("GET", f"/v1/jobs/{job}")[1]["status"] == "waiting_user"
    assert events(server, job) == before


def test_a_reply_to_a_job_that_is_not_waiting_is_409(server: Server) -> None:
    job = waiting_job(server)
    server.call("POST", f"/v1/jobs/{job}/cancel")
    code, answer = server.call(
        "POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 1, "response": "x"}
    )
    assert code == 409
    assert answer["error"]["code"] == "RUN_NOT_WAITING"


def test_a_reply_over_the_size_limit_is_413_and_the_job_still_waits_for_it(server: Server) -> None:
    job = waiting_job(server)
    huge = {"interaction_id": 1, "response": "x" * (64 * 1024 + 1)}
    code, answer = server.call("POST", f"/v1/jobs/{job}/interaction/reply", huge)
    assert code == 413
    assert answer["error"]["code"] == "REQUEST_TOO_LARGE"
    assert server.call("GET", f"/v1/jobs/{job}/interaction/pending")[1]["pending"]["interaction_id"] == 1
    code, _ = server.call(
        "POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 1, "response": "ok"}
    )
    assert code == 200


def test_an_idempotency_key_makes_a_repeated_reply_answer_the_same_without_acting_twice(
    server: Server,
) -> None:
    job = waiting_job(server)
    body = {"interaction_id": 1, "response": "Formal", "idempotency_key": "k-1"}
    first = server.call("POST", f"/v1/jobs/{job}/interaction/reply", body)
    server.settle(job)
    again = server.call("POST", f"/v1/jobs/{job}/interaction/reply", body)
    assert first == again
    assert first[0] == 200
    replied = [event for event in events(server, job) if event["type"] == "user.input.replied"]
    assert len(replied) == 1
    assert replied[0]["data"]["response"] == "Formal"


def test_a_json_response_reaches_the_engine_as_json_text(server: Server) -> None:
    job = waiting_job(server)
    server.call(
        "POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 1, "response": {"style": "formal"}}
    )
    server.settle(job)
    replied = [event for event in events(server, job) if event["type"] == "user.input.replied"]
    assert json.loads(replied[0]["data"]["response"]) == {"style": "formal"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"response": "x"}, "interaction_id"),
        ({"interaction_id": "1", "response": "x"}, "interaction_id"),
        ({"interaction_id": 1}, "response"),
        ({"interaction_id": 1, "response": "x", "idempotency_key": 3}, "idempotency_key"),
    ],
)
def test_a_malformed_reply_is_400_naming_the_field(server: Server, body: dict[str, Any], field: str) -> None:
    job = waiting_job(server)
    code, answer = server.call("POST", f"/v1/jobs/{job}/interaction/reply", body)
    assert code == 400
    assert answer["error"]["code"] == "REQUEST_INVALID"
    assert field in answer["error"]["message"]
    assert server.call("GET", f"/v1/jobs/{job}")[1]["status"] == "waiting_user"


def test_cancel_then_cancel_again(server: Server) -> None:
    job = waiting_job(server)
    code, answer = server.call("POST", f"/v1/jobs/{job}/cancel")
    assert code == 200
    assert answer["accepted"] is True
    assert answer["status"] == "canceled"
    status = server.call("GET", f"/v1/jobs/{job}")[1]
    assert status["status"] == "canceled"
    assert status["error"]["code"] == "CANCELED_BY_USER"
    assert server.call("POST", f"/v1/jobs/{job}/cancel")[1]["accepted"] is False
    failed = [event for event in events(server, job) if event["type"] == "conversation.failed"]
    assert len(failed) == 1
    assert failed[0]["data"]["error"]["code"] == "CANCELED_BY_USER"


def test_the_result_of_a_job_that_has_not_ended_is_409(server: Server) -> None:
    job = waiting_job(server)
    code, answer = server.call("GET", f"/v1/jobs/{job}/result")
    assert code == 409
    assert answer["error"]["code"] == "RUN_NOT_TERMINAL"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"skill_id": "nope", "engine": "codex"}, 404, "SKILL_NOT_FOUND"),
        ({"skill_id": "greet", "engine": "aider"}, 400, "ENGINE_UNKNOWN"),
        (
            {"skill_id": "greet", "engine": "codex", "runtime_options": {"turbo": True}},
            400,
            "RUNTIME_OPTION_UNKNOWN",
        ),
        (
            {"skill_id": "greet", "engine": "codex", "runtime_options": {"execution_mode": "batch"}},
            400,
            "RUNTIME_OPTION_INVALID",
        ),
        (
            {"skill_id": "greet", "engine": "codex", "runtime_options": {"session_timeout_sec": 0}},
            400,
            "RUNTIME_OPTION_INVALID",
        ),
        ({"skill_id": "greet", "engine": "codex", "colour": "red"}, 400, "REQUEST_INVALID"),
        ({"skill_id": "greet", "engine": "codex", "input": []}, 400, "REQUEST_INVALID"),
    ],
)
def test_a_bad_job_request_gets_its_stable_code(
    server: Server, body: dict[str, Any], status: int, code: str
) -> None:
    assert server.install()[0] == 200
    answer = server.call("POST", "/v1/jobs", body)
    assert answer[0] == status
    assert answer[1]["error"]["code"] == code


def test_an_engine_or_mode_the_skill_does_not_support_is_refused(server: Server) -> None:
    assert server.install({"modes": ["auto"]}, name="autoonly")[0] == 200
    code, answer = server.call(
        "POST",
        "/v1/jobs",
        {"skill_id": "autoonly", "engine": "codex", "runtime_options": {"execution_mode": "interactive"}},
    )
    assert code == 400
    assert answer["error"]["code"] == "SKILL_EXECUTION_MODE_UNSUPPORTED"


def test_a_request_body_that_is_not_json_is_400(server: Server) -> None:
    code, answer = server.call("POST", "/v1/jobs", raw=b"{nope", content_type="application/json")
    assert code == 400
    assert "not JSON" in answer["error"]["message"]


def test_unknown_jobs_are_404(server: Server) -> None:
    for method, path in [
        ("GET", "/v1/jobs/nope"),
        ("GET", "/v1/jobs/nope/interaction/pending"),
        ("POST", "/v1/jobs/nope/cancel"),
        ("GET", "/v1/jobs/nope/events/history"),
    ]:
        code, answer = server.call(method, path)
        assert code == 404, path
        assert answer["error"]["code"] == "JOB_NOT_FOUND", path


def test_an_invalid_package_is_refused_naming_the_file_and_field(server: Server, tmp_path: Any) -> None:
    from turngate.judge.skill_writer import write_skill

    skill = write_skill(tmp_path, {"max_attempt": 0})
    body, content_type = zip_folder(skill)
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400
    assert "runner.json" in answer["error"]["message"]
    assert "max_attempt" in answer["error"]["message"]


def test_an_archive_that_is_not_a_zip_or_leaves_its_folder_is_refused(server: Server) -> None:
    import io
    import zipfile

    body, content_type = multipart(b"not a zip")
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400
    assert answer["error"]["code"] == "PACKAGE_INVALID"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("greet/../../evil.txt", "x")
    body, content_type = multipart(buffer.getvalue())
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400
    assert "leaves the package folder" in answer["error"]["message"]
    assert not (server.root / "data" / "evil.txt").exists()


def test_a_waiting_job_keeps_the_package_it_started_with_when_the_skill_is_reinstalled(
    server: Server,
) -> None:
    job = waiting_job(server)
    assert server.install({"output_schema": None})[0] == 200
    server.call("POST", f"/v1/jobs/{job}/interaction/reply", {"interaction_id": 1, "response": "Formal"})
    assert server.settle(job)["status"] == "succeeded"  # still validated against the greeting schema


def read_sse(server: Server, job: str, last_event_id: int | None = None) -> list[tuple[str, str | None, Any]]:
    url = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    connection.request("GET", f"/v1/jobs/{job}/events", headers=headers)
    answer = connection.getresponse()
    assert answer.status == 200
    assert answer.getheader("Content-Type", "").startswith("text/event-stream")
    seen: list[tuple[str, str | None, Any]] = []
    kind, ident = "message", None
    for raw in answer:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("id: "):
            ident = line[4:]
        elif line.startswith("data: "):
            seen.append((kind, ident, json.loads(line[6:])))
            kind, ident = "message", None
    connection.close()
    return seen


def test_the_event_stream_sends_a_snapshot_each_event_and_ends_with_the_reason(server: Server) -> None:
    job = waiting_job(server)
    seen = read_sse(server, job)
    assert seen[0][0] == "snapshot"
    assert seen[0][2]["status"] == "waiting_user"
    assert seen[-1][0] == "end"
    assert seen[-1][2]["reason"] == "waiting_user"
    kinds = {payload["type"]: kind for kind, _, payload in seen if kind in ("run_event", "chat_event")}
    assert kinds["conversation.started"] == "run_event"
    assert kinds["user.input.required"] == "chat_event"
    assert [int(ident) for _, ident, _ in seen if ident] == [event["seq"] for event in events(server, job)]


def test_a_reconnecting_stream_resumes_after_the_last_event_id(server: Server) -> None:
    job = waiting_job(server)
    first = [payload["seq"] for kind, _, payload in read_sse(server, job) if kind.endswith("_event")]
    again = [
        payload["seq"] for kind, _, payload in read_sse(server, job, first[0]) if kind.endswith("_event")
    ]
    assert again == first[1:]
    server.call("POST", f"/v1/jobs/{job}/cancel")
    assert read_sse(server, job, first[-1])[-1][2]["reason"] == "terminal"


def test_test_hooks_are_absent_unless_asked_for(tmp_path: Any) -> None:
    from tests.server.conftest import start_server, stop_server

    plain = start_server(tmp_path / "plain")
    try:
        code, answer = plain.call("POST", "/v1/_turngate/clock/advance", {"seconds": 5})
        assert code == 404
        assert "--test-hooks" in answer["error"]["message"]
        assert plain.call("GET", "/v1/jobs/x")[0] == 404
    finally:
        stop_server(plain)


def test_binding_beyond_loopback_needs_allow_remote() -> None:
    import io
    from contextlib import redirect_stderr

    from turngate.cli.main import main
    from turngate.implementations.serve.main import BindRefused, check_host

    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert err.getvalue().count("\n") == 1
    assert "--allow-remote" in err.getvalue()
    with pytest.raises(BindRefused):
        check_host("192.168.1.5", allow_remote=False)
    check_host("::1", allow_remote=False)
    check_host("0.0.0.0", allow_remote=True)


def test_a_zip_of_the_folder_contents_is_named_by_its_skill_md(server: Server, tmp_path: Any) -> None:
    import io
    import zipfile

    from turngate.judge.skill_writer import write_skill

    skill = write_skill(tmp_path, {}, name="flat")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(skill.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(skill).as_posix())
    body, content_type = multipart(buffer.getvalue())
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 200
    assert answer["skill_id"] == "flat"
    (skill / "SKILL.md").write_text("no front matter\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(skill / "SKILL.md", "SKILL.md")
    body, content_type = multipart(buffer.getvalue())
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400
    assert "front matter" in answer["error"]["message"]


def test_a_skills_own_gemini_settings_choose_the_output_format_and_a_bad_one_is_refused(
    server: Server, tmp_path: Any
) -> None:
    from turngate.judge.skill_writer import write_skill

    skill = write_skill(tmp_path, {}, name="streamy")
    (skill / "assets" / "gemini_settings.json").write_text('{"output": {"format": "stream-json"}}')
    body, content_type = zip_folder(skill)
    assert server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)[0] == 200
    case = server.script(f"api-{uuid.uuid4().hex[:8]}", ASK[1:])
    request = {"skill_id": "streamy", "engine": "gemini", "input": {"case": f"tg-case-{case}"}}
    job = server.call("POST", "/v1/jobs", request)[1]["request_id"]
    assert server.settle(job)["status"] == "succeeded"
    calls = [json.loads(line) for line in server.call_log.read_text().splitlines()]
    assert [call["output_format"] for call in calls if call.get("case") == case] == ["stream-json"]
    (skill / "assets" / "gemini_settings.json").write_text('{"output": {"format": "yaml"}}')
    body, content_type = zip_folder(skill)
    assert server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)[0] == 200
    code, answer = server.call("POST", "/v1/jobs", {"skill_id": "streamy", "engine": "gemini"})
    assert code == 400
    assert answer["error"]["code"] == "SKILL_INVALID"
    assert "gemini_settings.json" in answer["error"]["message"]
    assert "'yaml'" in answer["error"]["message"]


def raw_call(server: Server, method: str, path: str) -> tuple[int, dict[str, str], Any]:
    """Status, headers and JSON body of a request, whatever its status (urllib hides a 405's headers)."""
    url = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request(method, path)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), json.loads(answer.read())
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "/v1/jobs", "POST"),
        ("DELETE", "/v1/jobs/nope", "GET, HEAD"),
        ("POST", "/v1/health", "GET, HEAD"),
        ("PUT", "/v1/jobs/nope/interaction/reply", "POST"),
    ],
)
def test_a_method_a_path_does_not_take_is_a_json_405_with_allow(
    server: Server, method: str, path: str, allowed: str
) -> None:
    status, headers, body = raw_call(server, method, path)
    assert status == 405
    assert headers["content-type"] == "application/json"
    assert headers["allow"] == allowed
    assert body["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert f"{method} {path}" in body["error"]["message"]
    assert allowed in body["error"]["message"]


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/job", "/v1/jobs/nope/nothing", "/v2/health"])
def test_an_unknown_path_is_a_json_404(server: Server, path: str) -> None:
    status, headers, body = raw_call(server, "GET", path)
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert body["error"]["code"] == "NOT_FOUND"
    assert path in body["error"]["message"]


def test_a_fault_of_the_server_is_a_json_500(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import httpx

    from turngate.implementations.serve.app import build_app
    from turngate.implementations.serve.main import ServeOptions, build_service

    service = build_service(ServeOptions(data_dir=tmp_path / "data"))

    def broken(job_id: str) -> dict[str, Any]:
        raise RuntimeError("a bug")

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(build_app(service, tick_sec=None), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://serve") as client:
            return await client.get(path)

    monkeypatch.setattr(service, "status", broken)
    try:
        answer = asyncio.run(get("/v1/jobs/x"))
    finally:
        service.close()
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "INTERNAL_ERROR"
    assert "a bug" not in answer.text  # what failed inside stays in the server's log


def test_an_input_key_the_skill_does_not_declare_is_400_naming_it_and_starts_nothing(server: Server) -> None:
    assert server.install()[0] == 200
    runs = server.root / "data" / "runs"
    before = sorted(runs.iterdir()) if runs.exists() else []
    body = {"skill_id": "greet", "engine": "codex", "input": {"case": "tg-case-x", "colour": "red"}}
    code, answer = server.call("POST", "/v1/jobs", body)
    assert code == 400
    assert answer["error"]["code"] == "INPUT_UNDECLARED"
    assert "'colour'" in answer["error"]["message"]
    assert "declares 'case'" in answer["error"]["message"]
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before


@pytest.mark.parametrize(
    ("schema", "given", "refused"),
    [
        ({"type": "object", "properties": {"case": {"type": "string"}}}, {"extra": 1}, ["'extra'"]),
        (
            {"type": "object", "properties": {"case": {}}, "additionalProperties": False},
            {"extra": 1},
            ["'extra'"],
        ),
        ({"type": "object", "properties": {"case": {}}, "additionalProperties": True}, {"extra": 1}, None),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, {"extra": 1}, None),
        ({"type": "object", "patternProperties": {"^x_": {}}}, {"x_ok": 1}, None),
        ({"type": "object", "patternProperties": {"^x_": {}}}, {"x_ok": 1, "y": 2}, ["'y'", "'^x_'"]),
        (None, {"extra": 1}, ["'extra'", "no schemas.input"]),
    ],
)
def test_only_a_schema_that_says_so_takes_undeclared_input_keys(
    server: Server,
    tmp_path: Any,
    schema: dict[str, Any] | None,
    given: dict[str, Any],
    refused: list[str] | None,
) -> None:
    from turngate.judge.skill_writer import write_skill

    skill = write_skill(tmp_path, {}, name="inputs")
    runner = json.loads((skill / "assets" / "runner.json").read_text())
    if schema is None:
        del runner["schemas"]["input"]
    else:
        (skill / "assets" / "input.schema.json").write_text(json.dumps(schema))
    (skill / "assets" / "runner.json").write_text(json.dumps(runner))
    body, content_type = zip_folder(skill)
    assert server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)[0] == 200
    request = {"skill_id": "inputs", "engine": "codex", "input": given, "runtime_options": {"no_cache": True}}
    code, answer = server.call("POST", "/v1/jobs", request)
    if refused is None:
        assert code == 200, answer
        server.call("POST", f"/v1/jobs/{answer['request_id']}/cancel")
    else:
        assert code == 400
        assert answer["error"]["code"] == "INPUT_UNDECLARED"
        for part in refused:
            assert part in answer["error"]["message"]


def test_install_answers_the_packages_declared_version_and_the_zips_hash_apart(
    server: Server, tmp_path: Any
) -> None:
    import hashlib
    import io
    import zipfile

    from turngate.judge.skill_writer import SKILL_VERSION, write_skill

    skill = write_skill(tmp_path, {}, name="versioned")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(skill.rglob("*")):
            if path.is_file():
                archive.write(path, f"versioned/{path.relative_to(skill).as_posix()}")
    body, content_type = multipart(buffer.getvalue())
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 200
    assert answer["version"] == SKILL_VERSION == "1.0.0"
    assert answer["archive_sha256"] == hashlib.sha256(buffer.getvalue()).hexdigest()
    runner = json.loads((skill / "assets" / "runner.json").read_text())
    del runner["version"]
    (skill / "assets" / "runner.json").write_text(json.dumps(runner))
    body, content_type = zip_folder(skill)
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 200
    assert answer["version"] is None
