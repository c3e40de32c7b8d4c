"""The clock of a server without turngate's hooks: a short real ``session_timeout_sec``, not a moved clock.

A server that honours a short session timeout (``honours_session_timeout`` in the target file) is
sent one of ``session_timeout_real_sec`` real seconds; a scenario that moves the clock past its own
timeout then waits that long in real time, and gives the server its grace to act on it. Moves that
stay inside the scenario's timeout change nothing the server shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from turngate.judge.connectors.http_options import HttpOptions
from turngate.protocol.connector import CaseSetup

SCENARIO_TIMEOUT_SEC: Final = 1200.0  # the spec's default session_timeout_sec


class RealClock:
    """One case's scenario clock against the server's real one."""

    def __init__(self, options: HttpOptions) -> None:
        self._options = options
        self.active = False  # the case moves the clock and the server takes a short real timeout
        self._scenario_timeout = SCENARIO_TIMEOUT_SEC
        self._real_timeout = options.session_timeout_real_sec
        self._elapsed = 0.0  # scenario seconds since the run began waiting
        self._waiting_since: float | None = None  # when it did (monotonic)
        self._waiting_for: Any = None  # the pending interaction id the run waits on

    def begin(self, setup: CaseSetup, *, extra_sec: float = 0.0) -> int | None:
        """The real session_timeout_sec to send for this case; None when its clock is not real.

        ``extra_sec``: real time the case spends on other things while it waits (looking at slots),
        which must not run the short timeout out before the scenario says it has.
        """
        options = self._options
        self.active = setup.uses_clock and not options.turngate_hooks and options.honours_session_timeout
        if not self.active:
            return None
        self._scenario_timeout = float(setup.runtime.get("session_timeout_sec", SCENARIO_TIMEOUT_SEC))
        self._real_timeout = options.session_timeout_real_sec + int(extra_sec)
        return self._real_timeout

    def settled(self, status: Mapping[str, Any]) -> None:
        """Note the job's settled status: a new wait starts the scenario clock afresh."""
        if status.get("status") == "waiting_user":
            waiting_for = status.get("pending_interaction_id")
            if self._waiting_since is None or waiting_for != self._waiting_for:
                self._waiting_since, self._waiting_for = time.monotonic(), waiting_for
                self._elapsed = 0.0
        else:
            self._waiting_since = None

    def advance(self, seconds: float, status: Callable[[], Mapping[str, Any]]) -> None:
        """Move the scenario clock; past its timeout, wait out the real one (``status`` reads the job's)."""
        self._elapsed += seconds
        if self._elapsed < self._scenario_timeout or self._waiting_since is None:
            return  # still inside the timeout: what the server shows now is what it shows then
        self._wait_past_timeout(self._waiting_since, status)
        self._waiting_since = None  # this wait's deadline is spent; later advances add nothing

    def _wait_past_timeout(self, since: float, status: Callable[[], Mapping[str, Any]]) -> None:
        """Sleep until the short real timeout has passed, then give the server its grace to act."""
        due = since + self._real_timeout + 0.5
        while (left := due - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
        grace = time.monotonic() + self._options.clock_grace_sec
        pause = 0.05
        while time.monotonic() < grace:
            now = status()
            if now.get("status") != "waiting_user" or now.get("pending_interaction_id") != self._waiting_for:
                return
            time.sleep(pause)
            pause = min(pause * 1.5, 0.5)
