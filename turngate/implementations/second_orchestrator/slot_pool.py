"""The concurrency slot pool: how many engine turns may run at once in this process.

``fill`` lets "other work" take every free slot (``run.fill_slots``), ``free`` gives them back;
a run that cannot get a slot stays queued and its engine does not start.
"""

from __future__ import annotations

from typing import Final

CAPACITY: Final = 2


class SlotPool:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.held_by_run = False
        self.held_by_others = 0

    def free_count(self) -> int:
        return self.capacity - self.held_by_others - (1 if self.held_by_run else 0)

    def acquire(self) -> bool:
        """Take a slot for the run; False when none is free (the run must wait, queued)."""
        if self.held_by_run:
            return True
        if self.free_count() <= 0:
            return False
        self.held_by_run = True
        return True

    def release(self) -> None:
        self.held_by_run = False

    def fill(self) -> None:
        self.held_by_others += self.free_count()

    def free(self) -> None:
        self.held_by_others = 0
