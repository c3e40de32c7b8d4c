"""The orchestrator's injectable clock: wall time at case start plus an offset moved by tests.

Timeouts are judged on this clock only, so ``run.advance_clock`` can expire a deadline
without anyone sleeping. The offset is persisted with the run, so a restart keeps it.
"""

from __future__ import annotations

import datetime as dt


class Clock:
    """Seconds since the epoch, advanced only by ``advance``; never reads time after creation."""

    def __init__(self, base: float, offset: float = 0.0) -> None:
        self.base = base
        self.offset = offset

    def now(self) -> float:
        return self.base + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def iso(self) -> str:
        """ISO 8601 UTC with milliseconds, for history rows and events."""
        moment = dt.datetime.fromtimestamp(self.now(), tz=dt.UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
