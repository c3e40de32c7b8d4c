"""Play a turn's operations on the real file descriptors."""

from __future__ import annotations

import os
import time

from fake_engines.plan import Crash, Hang, Pause, Stop, Write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fake_engines.plan import Operation


def play(operations: list[Operation]) -> Hang | Crash | Stop | None:
    """Write and pause as planned; return the abnormal ending, if the turn has one.

    Raises BrokenPipeError when the reader has gone away.
    """
    for operation in operations:
        match operation:
            case Write(fd=fd, data=data):
                _write_all(fd, data)
            case Pause(seconds=seconds):
                time.sleep(seconds)
            case Hang() | Crash() | Stop():
                return operation
    return None


def _write_all(fd: int, data: bytes) -> None:
    # Unbuffered writes: a reader sees each line (or split piece) as soon as it is played.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
