"""Writing to a child's pipe without ever blocking past a deadline, whatever the reader does."""

from __future__ import annotations

import os
import select
import selectors
import time


def write_within(fd: int, data: bytes, timeout_sec: float) -> bool:
    """Write ``data`` to a pipe; False when the reader has not taken it all within ``timeout_sec``.

    A pipe reported writable takes ``PIPE_BUF`` bytes without blocking, so no write here
    can block past the deadline.
    """
    deadline = time.monotonic() + timeout_sec
    view = memoryview(data)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return False
            view = view[os.write(fd, view[: select.PIPE_BUF]) :]
    return True
