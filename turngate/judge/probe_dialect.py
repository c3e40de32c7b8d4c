"""The probe's findings on which generation of the job API a server speaks, and which edition it looks like.

- ``dialect`` (connectors/http_dialect.py): an interactive job is started in each dialect's words,
  the job API's own first; the first the server does not refuse with 400 for its runtime options is
  its dialect. Any other refusal ends the search: the dialect is "not found" and nothing is written.
- ``turn_timeout_per_job``: in a dialect with a per-job engine watchdog, a hung engine's job given a
  short one; it is written only if the job then fails by a timeout within the wait.
- The edition: what the server showed, each sign read against Skill-Runner's history
  (../shared/SKILL_RUNNER_EDITIONS.md), to name the edition ``--edition`` should judge it by. A
  sign is evidence, not proof: a server of another family may look like any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from turngate.engines.fake.script import remove_compiled
from turngate.judge.connectors.http import HttpConnector
from turngate.judge.connectors.http_dialect import (
    AUTO_REPLY,
    AUTO_REPLY_HARD_TIMEOUT,
    DIALECTS,
    REQUIRE_USER_REPLY,
    Dialect,
)
from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.probe_jobs import DONE, PROBE_SKILL, Ledger, case_setup, write_script
from turngate.judge.probe_limits import REFUSED, Limit, watch_hung_job

# The dialects in the order they are tried: the job API's own words first, then the newest.
TRIED: Final = (REQUIRE_USER_REPLY, AUTO_REPLY_HARD_TIMEOUT, AUTO_REPLY)
# The watchdog the dialect job names where its dialect has one: longer than its turn, never met.
DIALECT_JOB_WATCHDOG_SEC: Final = 600
# The per-job watchdog the probe asks for, and the most it waits to see it end the hung engine.
PER_JOB_WATCHDOG_SEC: Final = 3
PER_JOB_WAIT_SEC: Final = 45.0


def find_dialect(options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path) -> Limit:
    """The first dialect whose interactive job the server does not refuse for its runtime options."""
    refused: list[str] = []
    for dialect in TRIED:
        case = f"{PROBE_SKILL}__dialect-{dialect.name}__{engine}"
        script = write_script(scripts, case, [{"steps": [{"say": DONE}]}])
        # Every word of the dialect is sent, its watchdog included: a server of an older dialect
        # refuses the one word it lacks.
        per_job = dialect.hard_timeout_option is not None
        connector = HttpConnector(replace(options, dialect=dialect, turn_timeout_per_job=per_job))
        runtime = {
            "require_user_reply": True,
            "session_timeout_sec": 1200,
            **({"turn_timeout_sec": DIALECT_JOB_WATCHDOG_SEC} if per_job else {}),
        }
        try:
            connector.start(case_setup(skill, engine, case, "interactive", workdir, runtime))
            connector.settle()
        except REFUSED as error:
            if not _refuses_options(str(error), dialect):
                return Limit.not_found("dialect", f"an interactive job did not run: {error}")
            refused.append(f"{dialect.name} (refused with 400)")
            continue
        finally:
            connector.close()
            remove_compiled(str(script))
        before = f" after {', '.join(refused)}" if refused else ""
        return Limit(
            f"dialect: {dialect.name} ({dialect.reply_option}, {dialect.reply_timeout_option}"
            f"{f', {dialect.hard_timeout_option}' if dialect.hard_timeout_option else ''} accepted"
            f"{before}): {dialect.spoken_by}",
            {} if dialect == REQUIRE_USER_REPLY else {"dialect": dialect.name},
        )
    return Limit.not_found("dialect", f"every dialect's runtime options refused: {', '.join(refused)}")


def _refuses_options(error: str, dialect: Dialect) -> bool:
    """A 400 that names the runtime options or one of this dialect's words (Skill-Runner: "Unknown
    runtime_options: interactive_require_user_reply")."""
    words = (dialect.reply_option, dialect.reply_timeout_option, dialect.hard_timeout_option)
    named = (*(word for word in words if word), "runtime_options", "runtime option")
    return "HTTP 400" in error and any(word in error for word in named)


def find_per_job_watchdog(
    options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path, ledger: Ledger
) -> Limit:
    """Whether the dialect's per-job watchdog ends a hung engine: a job given PER_JOB_WATCHDOG_SEC."""
    name = options.dialect.hard_timeout_option
    watched = watch_hung_job(
        replace(options, turn_timeout_per_job=True),
        skill,
        engine,
        scripts,
        workdir,
        ledger,
        wait_sec=PER_JOB_WAIT_SEC,
        runtime={"turn_timeout_sec": PER_JOB_WATCHDOG_SEC},
        label="per-job watchdog",
    )
    if isinstance(watched, Limit):
        return watched
    return Limit(
        f"per-job watchdog: a hung engine's job given {name}: {PER_JOB_WATCHDOG_SEC} failed"
        f" {watched.code} after {watched.took:.1f} s: written as turn_timeout_per_job: true",
        {"turn_timeout_per_job": True},
    )


@dataclass(frozen=True, slots=True)
class Signs:
    """What the probe saw that tells one Skill-Runner generation from another."""

    dialect: str | None  # None: not found
    protocol_history: bool  # /events/history holds the protocol's (FCMP) events, not runtime events
    end_in_state_change: bool | None  # the run's end in conversation.state.changed (None: not seen)
    refused: Sequence[str]  # engines refused as unsupported (SKILL_ENGINE_UNSUPPORTED)


def edition_guess(signs: Signs) -> tuple[str | None, str]:
    """The edition the server looks like (an edition's name, None: none), and why, in one line."""
    reasons: list[str] = []
    guess: str | None = None
    if signs.dialect == REQUIRE_USER_REPLY.name and not signs.protocol_history:
        guess = "skill-runner-7d8914d"
        reasons.append("the seed's option names and runtime events in its history (7d8914d)")
    elif signs.dialect == REQUIRE_USER_REPLY.name:
        guess = "seed-7d8914d+4cb89ba"
        reasons.append("the seed's option names with protocol events in its history (46dbf1d..ac9edec)")
    elif signs.dialect is not None:
        guess = "skill-runner-v0.4.0"
        reasons.append("interactive_auto_reply (ac9edec, v0.4.0)")
        if DIALECTS[signs.dialect].hard_timeout_option:
            guess = "skill-runner-v0.4.3"
            reasons.append("hard_timeout_seconds per job (v0.4.3)")
    if signs.end_in_state_change:
        reasons.append("the end in conversation.state.changed (3d9e93a, v0.4.0)")
    if guess == "skill-runner-v0.4.3" and "iflow" in signs.refused:
        guess = "skill-runner-v0.6.0"
        reasons.append("iflow refused (5a9be22, v0.6.0)")
        if "gemini" in signs.refused:
            guess = "skill-runner-v0.7.9"
            reasons.append("gemini refused (11dec8a, v0.7.0)")
    if guess is None:
        return None, "no edition: its dialect was not found"
    return guess, "; ".join(reasons)
