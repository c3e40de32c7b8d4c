"""Play a turn's operations on the real file descriptors."""

from __future__ import annotations

import os
import time

from turngate.engines.fake.plan import Crash, Detach, Hang, Pause, Stop, Write, WriteFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.plan import Operation


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
            case Detach(seconds=seconds):
                _detach(seconds)
            case WriteFile(path=path, data=data):
                _write_file(path, data)
            case Hang() | Crash() | Stop():
                return operation
    return None


def _detach(seconds: float) -> None:
    """Fork a descendant that calls setsid (so killing the engine's group misses it) and keeps
    the inherited stdout and stderr open for `seconds`: what a daemonising tool does."""
    if os.fork() != 0:
        return
    try:
        if TYPE_CHECKING:
            import signal as _signal
        else:
            import _signal  # the C half of `signal`: no enum import, as in engine.py
        for number in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
            _signal.signal(number, _signal.SIG_DFL)  # not the engine's handlers, which log the call
        os.setsid()
        time.sleep(seconds)
    finally:
        os._exit(0)


def _write_file(path: str, data: bytes) -> None:
    """What a patch tool leaves behind: the file, under the working directory (the schema keeps the
    path relative and inside it)."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def _write_all(fd: int, data: bytes) -> None:
    # Unbuffered writes: a reader sees each line (or split piece) as soon as it is played.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
