"""The concurrency slot pool: at most ``capacity`` runs hold a slot, and the pool knows who."""

from __future__ import annotations

import threading


class SlotError(RuntimeError):
    """A slot was taken twice or given back by a run that does not hold one: an orchestrator bug."""


class SlotPool:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"SlotPool.capacity: {capacity!r}: must be >= 1")
        self.capacity = capacity
        self._holders: set[str] = set()
        self._peak = 0
        self._lock = threading.Lock()

    def try_acquire(self, run_id: str) -> bool:
        with self._lock:
            if run_id in self._holders:
                raise SlotError(f"run {run_id} already holds a slot")
            if len(self._holders) >= self.capacity:
                return False
            self._holders.add(run_id)
            self._peak = max(self._peak, len(self._holders))
            return True

    def release(self, run_id: str) -> None:
        with self._lock:
            if run_id not in self._holders:
                raise SlotError(f"run {run_id} holds no slot")
            self._holders.remove(run_id)

    def holds(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._holders

    @property
    def holders(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._holders)

    @property
    def peak(self) -> int:
        """The most slots ever held at once."""
        with self._lock:
            return self._peak
