"""The dialects of the job API: how a server of one generation wants a job's runtime options.

``../shared/HTTP_API.md`` is the job API of Skill-Runner at 7d8914d. Its later releases speak it
differently, and refuse the old words with 400 (``Unknown runtime_options: ...``):

- ac9edec (2026-03-01, in v0.4.0) renamed the options: ``interactive_require_user_reply`` became
  ``interactive_auto_reply`` with the opposite meaning (default false: a person must reply), and
  every wait timeout became ``interactive_reply_timeout_sec``
  (``server/config/policy/options_policy.json`` at 8a0ec29);
- a5f0a39 (2026-03-12, in v0.4.3) added the per-job engine watchdog ``hard_timeout_seconds``
  (``options_policy.json`` at ff4e1a0), so a case can set the watchdog a hung engine meets.

A dialect is one such generation, named in the target file (``dialect:``); ``turngate probe`` finds
it by what the server accepts. What does not need naming is read in every dialect: the run's end in
``conversation.completed`` or in ``conversation.state.changed``'s ``terminal`` (http_events.py), and
the ``waiting_auth`` state (3d9e93a).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    spoken_by: str  # which servers speak it, in words
    reply_option: str  # whether a person must reply to an ask, or the system may decide on timeout
    reply_option_inverted: bool  # True: the option says the system may decide (require_user_reply's inverse)
    reply_timeout_option: str  # the seconds a wait lasts before it times out
    hard_timeout_option: str | None = None  # the per-job engine watchdog, in seconds; None: none per job

    def runtime_options(
        self, runtime: Mapping[str, Any], *, reply_timeout: int | None, hard_timeout: float | None
    ) -> dict[str, Any]:
        """The ``runtime_options`` of a case's job: its mode and, in this dialect's words, whether a
        person must reply, the wait's timeout (``reply_timeout`` when the case's clock runs on real
        time, else the scenario's) and the engine watchdog (``hard_timeout``, only where it is per job)."""
        options: dict[str, Any] = {"execution_mode": runtime["mode"], "no_cache": True}
        if "require_user_reply" in runtime:
            required = bool(runtime["require_user_reply"])
            options[self.reply_option] = not required if self.reply_option_inverted else required
        timeout = reply_timeout if reply_timeout is not None else runtime.get("session_timeout_sec")
        if timeout is not None:
            options[self.reply_timeout_option] = timeout
        if hard_timeout is not None and self.hard_timeout_option is not None:
            options[self.hard_timeout_option] = hard_timeout
        return options


REQUIRE_USER_REPLY: Final = Dialect(
    name="require-user-reply",
    spoken_by="the job API of ../shared/HTTP_API.md: Skill-Runner up to ac9edec (7d8914d, 4cb89ba)",
    reply_option="interactive_require_user_reply",
    reply_option_inverted=False,
    reply_timeout_option="session_timeout_sec",
)
AUTO_REPLY: Final = Dialect(
    name="auto-reply",
    spoken_by="Skill-Runner from ac9edec (v0.4.0) to v0.4.2",
    reply_option="interactive_auto_reply",
    reply_option_inverted=True,
    reply_timeout_option="interactive_reply_timeout_sec",
)
AUTO_REPLY_HARD_TIMEOUT: Final = Dialect(
    name="auto-reply-hard-timeout",
    spoken_by="Skill-Runner from a5f0a39 (v0.4.3) on, v0.6.0 and v0.7.9 included",
    reply_option="interactive_auto_reply",
    reply_option_inverted=True,
    reply_timeout_option="interactive_reply_timeout_sec",
    hard_timeout_option="hard_timeout_seconds",
)
DIALECTS: Final[Mapping[str, Dialect]] = {
    dialect.name: dialect for dialect in (REQUIRE_USER_REPLY, AUTO_REPLY, AUTO_REPLY_HARD_TIMEOUT)
}
DEFAULT_DIALECT: Final = REQUIRE_USER_REPLY.name
