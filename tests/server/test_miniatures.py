"""The HTTP connector against miniature servers, each reproducing one real-world behaviour."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.server.miniatures.app import Behaviour, ResettingProxy, serve
from turngate.judge.connectors.http import HttpConnector
from turngate.judge.connectors.http_options import TargetProblem, http_options
from turngate.judge.connectors.http_transport import TargetError
from turngate.judge.skill_writer import write_skill
from turngate.protocol.connector import CaseSetup, CaseSkipped, Observation, PackageRefused


def setup(
    tmp_path: Path, *, mode: str = "interactive", engine: str = "codex", name: str = "mini"
) -> CaseSetup:
    folder = tmp_path / "skills" / name
    skill = folder if folder.exists() else write_skill(tmp_path / "skills", {}, name=name)
    return CaseSetup(name, engine, skill, {"mode": mode}, None, tmp_path, {}, tmp_path / "bin")


@contextmanager
def connected(url: str, tmp_path: Path, **options: Any) -> Iterator[HttpConnector]:
    connector = HttpConnector(
        http_options({"base_url": url, "scripts_dir": str(tmp_path / "scripts"), **options}, None)
    )
    try:
        yield connector
    finally:
        connector.close()


def run_to_end(connector: HttpConnector, case: CaseSetup) -> list[Observation]:
    """start, then reply once if the job waits: the observation after each."""
    connector.start(case)
    connector.settle()
    seen = [connector.observe()]
    if seen[-1].state == "waiting_user":
        assert connector.reply("Formal", None).accepted
        connector.settle()
        seen.append(connector.observe())
    return seen


def test_an_asynchronous_install_is_followed_to_its_success(tmp_path: Path) -> None:
    with serve(Behaviour(install="async")) as (url, mini), connected(url, tmp_path) as connector:
        seen = run_to_end(connector, setup(tmp_path))
    assert [observation.state for observation in seen] == ["waiting_user", "succeeded"]
    assert all(record["reads"] >= 2 for record in mini.installs.values())  # running, then succeeded


def test_an_asynchronous_install_that_fails_names_the_servers_reason(tmp_path: Path) -> None:
    with (
        serve(Behaviour(install="async-fail")) as (url, _mini),
        connected(url, tmp_path) as connector,
        pytest.raises(
            PackageRefused
        ) as caught,  # the runner errs the case with it, unless refusal is expected
    ):
        connector.start(setup(tmp_path))
    message = str(caught.value)
    assert "\n" not in message
    assert "'mini'" in message
    assert "failed on the server" in message
    assert "non-empty version" in message


def test_a_skill_installed_again_goes_in_at_a_higher_version(tmp_path: Path) -> None:
    with serve(Behaviour(versioned=True)) as (url, mini):
        for _ in range(3):
            with connected(url, tmp_path) as connector:
                assert run_to_end(connector, setup(tmp_path))[-1].state == "succeeded"
    assert list(mini.installed) == ["mini"]


def test_an_engine_the_server_refuses_skips_the_case_with_its_reason(tmp_path: Path) -> None:
    with (
        serve(Behaviour()) as (url, _mini),
        connected(url, tmp_path) as connector,
        pytest.raises(CaseSkipped) as caught,
    ):
        connector.start(setup(tmp_path, engine="opencode"))
    assert "SKILL_ENGINE_UNSUPPORTED" in str(caught.value)
    assert "opencode" in str(caught.value)


def test_engines_in_the_target_file_skip_before_anything_is_sent(tmp_path: Path) -> None:
    with (
        serve(Behaviour()) as (url, mini),
        connected(url, tmp_path, engines=["codex"]) as connector,
        pytest.raises(CaseSkipped, match="runs only codex"),
    ):
        connector.start(setup(tmp_path, engine="gemini"))
    assert mini.installed == {}


def test_pending_answered_400_for_an_auto_job_is_no_pending(tmp_path: Path) -> None:
    with serve(Behaviour(pending_400_for_auto=True)) as (url, _mini), connected(url, tmp_path) as connector:
        (observation,) = run_to_end(connector, setup(tmp_path, mode="auto"))
    assert observation.state == "succeeded"
    assert observation.pending is None
    assert "pending_unknown" not in observation.extra
    assert "anomalies" not in observation.extra


def test_a_null_interaction_id_is_kept_null_and_the_reply_still_goes_to_the_pending(tmp_path: Path) -> None:
    with serve(Behaviour(null_interaction_ids=True)) as (url, _mini), connected(url, tmp_path) as connector:
        waiting, done = run_to_end(connector, setup(tmp_path))
    assert waiting.events is not None
    asked = [event for event in waiting.events if event["type"] == "user.input.required"]
    assert asked[0]["data"]["interaction_id"] is None
    assert waiting.history == (
        {"interaction_id": None, "prompt": "Which style?", "response": None, "automatic": None},
    )
    assert done.state == "succeeded"
    assert done.data == {"greeting": "Hi"}
    # answered, but no reply event says with what: the history cannot be shown
    assert done.history is None


def test_runtime_events_in_the_history_send_the_connector_to_the_stream(tmp_path: Path) -> None:
    with serve(Behaviour(runtime_history=True)) as (url, _mini), connected(url, tmp_path) as connector:
        _waiting, done = run_to_end(connector, setup(tmp_path))
    assert done.events is not None
    assert [event["type"] for event in done.events] == [
        "conversation.started",
        "user.input.required",
        "assistant.message.final",
        "conversation.completed",
    ]
    assert done.extra["events_source"] == "stream"
    assert done.reason_code == "DONE_MARKER_FOUND"
    assert done.attempts == 2


def test_a_full_queue_answering_429_is_retried(tmp_path: Path) -> None:
    with serve(Behaviour(full_for_first_jobs=2)) as (url, mini), connected(url, tmp_path) as connector:
        seen = run_to_end(connector, setup(tmp_path))
    assert mini.refused_jobs == 2
    assert seen[-1].state == "succeeded"


def test_a_full_queue_that_stays_full_is_one_line_naming_the_call(tmp_path: Path) -> None:
    with (
        serve(Behaviour(full_for_first_jobs=100)) as (url, _mini),
        connected(url, tmp_path, retries=1) as connector,
        pytest.raises(TargetError, match=r"POST /v1/jobs: HTTP 429"),
    ):
        connector.start(setup(tmp_path))


def test_a_connection_reset_is_retried(tmp_path: Path) -> None:
    with serve(Behaviour()) as (url, _mini):
        proxy = ResettingProxy(url, resets=2, matching=b"GET /v1/jobs/")
        try:
            with connected(proxy.url, tmp_path) as connector:
                seen = run_to_end(connector, setup(tmp_path))
        finally:
            proxy.close()
    assert proxy.reset_count == 2
    assert seen[-1].state == "succeeded"


def test_a_server_that_wants_credentials_says_so_in_one_line(tmp_path: Path) -> None:
    with (
        serve(Behaviour(token="s3cret")) as (url, _mini),
        connected(url, tmp_path) as connector,
        pytest.raises(TargetError) as caught,
    ):
        connector.start(setup(tmp_path))
    assert "HTTP 401" in str(caught.value)
    assert "auth:" in str(caught.value)


def test_a_bearer_token_from_the_environment_opens_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINI_TOKEN", "s3cret")
    with (
        serve(Behaviour(token="s3cret")) as (url, _mini),
        connected(url, tmp_path, auth={"scheme": "bearer", "env": "MINI_TOKEN"}) as connector,
    ):
        assert run_to_end(connector, setup(tmp_path))[-1].state == "succeeded"


@pytest.mark.parametrize(
    ("auth", "words"),
    [
        ({"scheme": "digest", "env": "X"}, ["auth.scheme", "digest"]),
        ({"scheme": "bearer", "env": "TURNGATE_NO_SUCH_VARIABLE"}, ["auth.env", "not set"]),
        ({"scheme": "bearer"}, ["auth.env", "None"]),
    ],
)
def test_a_bad_auth_option_names_the_field_and_value(auth: Mapping[str, Any], words: list[str]) -> None:
    with pytest.raises(TargetProblem) as caught:
        http_options({"base_url": "http://x", "scripts_dir": "/s", "auth": auth}, Path("target.yaml"))
    assert "target.yaml" in str(caught.value)
    for word in words:
        assert word in str(caught.value)


def test_a_model_per_engine_rides_in_the_job_request(tmp_path: Path) -> None:
    with (
        serve(Behaviour()) as (url, mini),
        connected(url, tmp_path, models={"codex": "gpt-5.2-codex@high"}) as connector,
    ):
        run_to_end(connector, setup(tmp_path))
    assert mini.job_requests[0]["model"] == "gpt-5.2-codex@high"


def test_a_restart_command_in_the_target_file_restarts_and_gives_the_restart_capability(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "restarted"
    with (
        serve(Behaviour()) as (url, _mini),
        connected(url, tmp_path, restart_command=f"touch {marker}") as connector,
    ):
        assert "restart" in connector.capabilities
        connector.restart()
    assert marker.exists()


def test_a_restart_command_that_fails_is_one_line_naming_it(tmp_path: Path) -> None:
    with (
        serve(Behaviour()) as (url, _mini),
        connected(url, tmp_path, restart_command="exit 3") as connector,
        pytest.raises(TargetError, match="restart_command 'exit 3'") as caught,
    ):
        connector.restart()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("audit", "agrees"), [("agrees", [True, True]), ("drifts", [False, True])])
def test_an_audit_source_in_the_target_file_shows_each_attempt_next_to_the_gate(
    tmp_path: Path, audit: str, agrees: list[bool]
) -> None:
    source = {
        "path": "/v1/management/runs/{job}/file?path=.audit/meta.{attempt}.json",
        "content": "preview.content",
        "marker_found": "completion.done_marker_found",
    }
    with (
        serve(Behaviour(audit=audit)) as (url, _mini),
        connected(url, tmp_path, audit_source=source) as connector,
    ):
        seen = run_to_end(connector, setup(tmp_path))
    # attempt 1 waited: the gate found no marker; attempt 2 succeeded with no soft-completion warning
    assert [item["agrees_with_gate"] for item in seen[-1].extra["audit"]] == agrees
    assert [item["gate_marker_found"] for item in seen[-1].extra["audit"]] == [False, True]


def test_a_bad_audit_source_names_the_field_and_value(tmp_path: Path) -> None:
    with pytest.raises(TargetProblem, match=r"audit_source\.path: '/x': a path with \{job\} and \{attempt\}"):
        http_options(
            {"base_url": "http://127.0.0.1:1", "scripts_dir": str(tmp_path), "audit_source": {"path": "/x"}},
            None,
        )


def test_a_new_wait_under_the_same_interaction_id_settles(tmp_path: Path) -> None:
    """A server whose reply answer says it moved the job on ("queued") has left the wait: the wait
    that follows is new although it shows the same pending id, as at Skill-Runner 4cb89ba when the
    engine repeats its hint's id. Without this the connector waited for a change that never comes."""
    case = setup(tmp_path)
    with (
        serve(Behaviour(waits_again=2)) as (url, _mini),
        connected(url, tmp_path, settle_timeout_sec=30) as connector,
    ):
        connector.start(case)
        connector.settle()
        states = []
        for _ in range(3):
            assert connector.reply("Formal", 1).accepted
            connector.settle()
            states.append(connector.observe().state)
    assert states == ["waiting_user", "waiting_user", "succeeded"]


# Dialects: Skill-Runner's later generations of the job API (http_dialect.py) -----------------


def test_a_server_of_a_later_dialect_refuses_the_seeds_option_names_in_one_line(tmp_path: Path) -> None:
    case = replace(setup(tmp_path), runtime={"mode": "interactive", "require_user_reply": True})
    with (
        serve(Behaviour(dialect="auto-reply")) as (url, _mini),
        connected(url, tmp_path) as connector,
        pytest.raises(TargetError) as caught,
    ):
        connector.start(case)
    assert "HTTP 400" in str(caught.value)
    assert "Unknown runtime_options: interactive_require_user_reply" in str(caught.value)


@pytest.mark.parametrize("dialect", ["auto-reply", "auto-reply-hard-timeout"])
@pytest.mark.parametrize("required", [True, False])
def test_each_dialect_names_the_reply_option_its_way_and_reads_the_end_from_the_state_change(
    tmp_path: Path, dialect: str, required: bool
) -> None:
    runtime = {"mode": "interactive", "require_user_reply": required, "session_timeout_sec": 30}
    case = replace(setup(tmp_path), runtime=runtime)
    with (
        serve(Behaviour(dialect=dialect)) as (url, mini),
        connected(url, tmp_path, dialect=dialect) as connector,
    ):
        seen = run_to_end(connector, case)
    assert mini.job_requests[0]["runtime_options"] == {
        "execution_mode": "interactive",
        "no_cache": True,
        "interactive_auto_reply": not required,  # the inverse of the seed's require_user_reply
        "interactive_reply_timeout_sec": 30,
    }
    assert [observation.state for observation in seen] == ["waiting_user", "succeeded"]
    end = seen[-1]
    assert end.reason_code == "DONE_MARKER_FOUND"  # conversation.state.changed's terminal
    assert end.events is not None
    assert "conversation.completed" not in [event["type"] for event in end.events]
    envelopes = end.extra["event_envelopes"]
    assert [item["seq"] for item in envelopes] == list(range(1, len(end.events) + 1))
    assert envelopes[0]["attempt"] == 1
    assert envelopes[-1]["attempt"] == 2


def test_the_seed_dialect_keeps_the_seeds_names(tmp_path: Path) -> None:
    runtime = {"mode": "interactive", "require_user_reply": False, "session_timeout_sec": 30}
    with serve(Behaviour()) as (url, mini), connected(url, tmp_path) as connector:
        seen = run_to_end(connector, replace(setup(tmp_path), runtime=runtime))
    assert mini.job_requests[0]["runtime_options"] == {
        "execution_mode": "interactive",
        "no_cache": True,
        "interactive_require_user_reply": False,
        "session_timeout_sec": 30,
    }
    assert seen[-1].reason_code == "DONE_MARKER_FOUND"  # conversation.completed's


def test_a_per_job_watchdog_is_sent_only_where_the_dialect_has_one_and_the_probe_saw_it_work(
    tmp_path: Path,
) -> None:
    runtime = {"mode": "auto", "turn_timeout_sec": 1.5}
    dialect = "auto-reply-hard-timeout"
    for per_job in (True, False):
        with (
            serve(Behaviour(dialect=dialect)) as (url, mini),
            connected(url, tmp_path, dialect=dialect, turn_timeout_per_job=per_job) as connector,
        ):
            assert ("watchdog" in connector.capabilities) is per_job
            run_to_end(connector, replace(setup(tmp_path, mode="auto"), runtime=runtime))
        options = mini.job_requests[0]["runtime_options"]
        assert options.get("hard_timeout_seconds") == (2 if per_job else None)  # whole seconds, rounded up


def test_a_provider_is_named_for_the_engines_the_target_file_gives_one(tmp_path: Path) -> None:
    behaviour = Behaviour(dialect="auto-reply-hard-timeout", provider_required=frozenset({"codex"}))
    with (
        serve(behaviour) as (url, _mini),
        connected(url, tmp_path, dialect=behaviour.dialect) as connector,
        pytest.raises(TargetError, match="provider_id is required"),
    ):
        connector.start(setup(tmp_path, mode="auto"))
    with (
        serve(behaviour) as (url, mini),
        connected(url, tmp_path, dialect=behaviour.dialect, providers={"codex": "openai"}) as connector,
    ):
        assert run_to_end(connector, setup(tmp_path, mode="auto"))[-1].state == "succeeded"
    assert mini.job_requests[0]["provider_id"] == "openai"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"dialect": "v0.7.9"}, "dialect: 'v0.7.9': one of require-user-reply, auto-reply,"),
        ({"dialect": "auto-reply", "turn_timeout_per_job": True}, "dialect auto-reply has no per-job"),
    ],
)
def test_a_dialect_the_connector_cannot_speak_is_one_line_naming_the_field(
    tmp_path: Path, fields: Mapping[str, Any], named: str
) -> None:
    with pytest.raises(TargetProblem) as caught:
        http_options({"base_url": "http://127.0.0.1:1", "scripts_dir": str(tmp_path), **fields}, None)
    assert named in str(caught.value)
    assert "\n" not in str(caught.value)
