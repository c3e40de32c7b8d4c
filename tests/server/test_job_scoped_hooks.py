"""turngate serve's test hooks scoped to one job (``job_id``): cases sharing one server each move their
own clock, find slots full for their own run, and wait for their own turn, while the others go on.

This is what lets the HTTP catalog run such cases side by side (pool.exclusive): each test shows that
the scoped hook acts on its job and leaves a second job, started beside it, as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import Server
from tests.server.test_api import waiting_job


def state(server: Server, job: str) -> str:
    return str(server.call("GET", f"/v1/jobs/{job}")[1]["status"])


def test_moving_one_jobs_clock_times_out_that_job_alone(server: Server) -> None:
    # Both wait with a 60 s timeout and an automatic reply on timeout (require_user_reply false).
    mine = waiting_job(server, interactive_require_user_reply=False, session_timeout_sec=60)
    other = waiting_job(server, interactive_require_user_reply=False, session_timeout_sec=60)
    code, answer = server.call("POST", "/v1/_turngate/clock/advance", {"seconds": 61, "job_id": mine})
    assert code == 200, answer
    assert answer["job_id"] == mine
    assert server.settle(mine)["status"] == "succeeded"  # the automatic reply played the next turn
    assert state(server, other) == "waiting_user"  # its own clock did not move
    _, unscoped = server.call("POST", "/v1/_turngate/clock/advance", {"seconds": 0})
    assert unscoped["now"] < answer["now"]  # the server's own time stayed behind the job's


def test_a_job_kept_from_slots_stays_queued_while_another_job_runs(server: Server) -> None:
    mine, other = waiting_job(server), waiting_job(server)
    code, answer = server.call("POST", "/v1/_turngate/slots/fill", {"job_id": mine})
    assert code == 200, answer
    for job in (mine, other):
        reply = {"interaction_id": 1, "response": "Formal"}
        assert server.call("POST", f"/v1/jobs/{job}/interaction/reply", reply)[0] == 200
    assert server.settle(other)["status"] == "succeeded"  # slots were free for it
    assert state(server, mine) == "queued"
    internals = server.call("GET", f"/v1/_turngate/jobs/{mine}/internals")[1]
    assert internals["slot_held"] is False
    assert server.call("POST", "/v1/_turngate/slots/free", {"job_id": mine})[0] == 200
    assert server.settle(mine)["status"] == "succeeded"  # let in, it took a slot and ran


def test_waiting_for_one_jobs_turn_answers_its_status(server: Server) -> None:
    job = waiting_job(server)
    code, answer = server.call("POST", "/v1/_turngate/idle", {"timeout": 30, "job_id": job})
    assert code == 200, answer
    assert answer["idle"] is True
    assert answer["status"] == server.call("GET", f"/v1/jobs/{job}")[1]


@pytest.mark.parametrize("hook", ["clock/advance", "idle", "slots/fill", "slots/free"])
@pytest.mark.parametrize(("job_id", "code"), [(7, 400), (["a"], 400), ("run-nope", 404)])
def test_a_hook_scoped_to_no_such_job_is_refused(server: Server, hook: str, job_id: Any, code: int) -> None:
    status, answer = server.call(
        "POST", f"/v1/_turngate/{hook}", {"seconds": 1, "timeout": 1, "job_id": job_id}
    )
    assert status == code, answer
    assert answer["error"]["code"] in ("REQUEST_INVALID", "JOB_NOT_FOUND")
