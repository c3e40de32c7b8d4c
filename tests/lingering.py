"""Whether a process is gone: for tests that check nothing an engine started outlives its turn."""

from __future__ import annotations

import time
from pathlib import Path


def gone(pid: int, patience: float = 30.0) -> bool:
    """True once ``pid`` no longer runs (gone or a zombie); waits at most ``patience`` for the reaper."""
    end = time.monotonic() + patience
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False
