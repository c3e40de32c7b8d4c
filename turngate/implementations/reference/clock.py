"""Time for the lifecycle's deadlines, injectable so that a 1200 s wait is tested without sleeping."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now(self, run_id: str | None = None) -> float:
        """Seconds since the epoch, as the run ``run_id`` sees them (None: the server's own time)."""
        ...


class SystemClock:
    def now(self, run_id: str | None = None) -> float:
        return time.time()


class ManualClock:
    """A clock that moves only when told to: for every run at once, or for one run alone.

    Moving one run's time leaves the others' where they were, so that cases sharing one server can
    each move their own run's clock while the others run beside them (turngate serve's test hook).
    A run's time never goes back, and never falls behind the server's.
    """

    def __init__(self, start: float = 1_763_812_800.0) -> None:
        self._now = start
        self._ahead: dict[str, float] = {}  # run id -> seconds its clock is ahead of the server's
        self._lock = threading.Lock()

    def now(self, run_id: str | None = None) -> float:
        with self._lock:
            return self._now + (self._ahead.get(run_id, 0.0) if run_id is not None else 0.0)

    def advance(self, seconds: float, run_id: str | None = None) -> None:
        if seconds < 0:
            raise ValueError(f"ManualClock.advance: {seconds!r}: time does not go back")
        with self._lock:
            if run_id is None:
                self._now += seconds
            else:
                self._ahead[run_id] = self._ahead.get(run_id, 0.0) + seconds
