"""Ctrl-C held over a few lines that must run whole: a finished case is recorded in every report, or in
none, so that a footer never counts a case its file does not hold."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_held() -> Iterator[None]:
    """A SIGINT that arrives inside the block raises ``KeyboardInterrupt`` at its end instead (only the
    main thread receives signals; elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt
