"""A job of the job API: its states, and the body that starts one for a case of turngate's fake engines.

Shared by the connector (the case's own job) and the slot fillers (jobs that only hold a slot).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from turngate.judge.connectors.http_options import HttpOptions
from turngate.protocol.connector import CaseSetup

TERMINAL: Final = frozenset({"succeeded", "failed", "canceled"})
# waiting_auth: a run waiting for the engine's credentials (Skill-Runner from 3d9e93a, in v0.4.0);
# like waiting_user it moves on only when someone acts.
WAITING: Final = frozenset({"waiting_user", "waiting_auth"})
STATES: Final = TERMINAL | WAITING | {"queued", "running"}


def job_request(
    options: HttpOptions, setup: CaseSetup, case: str, runtime_options: Mapping[str, Any]
) -> dict[str, Any]:
    """POST /v1/jobs's body: the case's skill and engine, and the case token the fake engines read."""
    request: dict[str, Any] = {
        **options.extra_request,
        "skill_id": setup.skill_dir.name,
        "engine": setup.engine,
        "input": {"case": f"tg-case-{case}"},
        "parameter": {},
        "runtime_options": dict(runtime_options),
    }
    if setup.engine in options.models:
        request["model"] = options.models[setup.engine]
    if setup.engine in options.providers:
        request["provider_id"] = options.providers[setup.engine]
    return request
