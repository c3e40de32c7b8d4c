"""The fake engines' call log as the judge reads it: the calls written to a shared log after a mark.

A log an HTTP server's engines share holds every case's calls; a case (or a probe job) marks the
log's size before it starts and reads only what was written after. A call's line is written when
its process ends; the companion ``<log>.started`` says which calls have begun, so that a judge
reading right after a run ended waits for the lines still to come (``wait_finished``). Lines end at
"\\n" alone (``str.splitlines`` would also cut at a raw U+2028 or U+0085 inside a JSON string), and
a line that is not a JSON object (a call cut off by a killed engine) is passed over.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from turngate.base.json_lines import logged_objects
from turngate.engines.fake.calllog import STARTED_SUFFIX

# How long a judge waits, once a run has ended, for its engines' calls still to be written: a server
# closes its engine processes when a run ends; one it leaves running is not waited for any longer.
FINISH_WAIT_SEC: Final = 15.0
_POLL_SEC: Final = 0.05


def log_mark(log: Path) -> int:
    """Where what is written to ``log`` from now on begins (0 for a log not written yet)."""
    return log.stat().st_size if log.exists() else 0


def calls_since(log: Path, mark: int) -> list[dict[str, Any]]:
    """The calls written to ``log`` past byte ``mark``, in order; none when there is no log."""
    return logged_objects(log, mark)


@dataclass(frozen=True, slots=True)
class LogMarks:
    """Where a case's part of a shared call log and of its companion ``.started`` file begin."""

    log: int
    started: int

    @classmethod
    def of(cls, log: Path) -> LogMarks:
        return cls(log_mark(log), log_mark(started_path(log)))


def started_path(log: Path) -> Path:
    return log.with_name(log.name + STARTED_SUFFIX)


def unfinished(log: Path, marks: LogMarks, case: str) -> list[dict[str, Any]]:
    """The calls of ``case`` begun since ``marks`` whose line is not in the log yet, and whose process
    still runs (a process killed without a word never writes its line; on this machine, that is seen)."""
    written = {(call.get("pid"), call.get("start")) for call in calls_since(log, marks.log)}
    return [
        begun
        for begun in calls_since(started_path(log), marks.started)
        if begun.get("case") == case
        and (begun.get("pid"), begun.get("start")) not in written
        and _may_run(begun.get("pid"))
    ]


def wait_finished(
    log: Path,
    marks: LogMarks,
    case: str,
    *,
    bound_sec: float = FINISH_WAIT_SEC,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], None] = time.sleep,
) -> list[dict[str, Any]]:
    """Once a run has ended: wait until every call of ``case`` begun since ``marks`` has its line in the
    log, at most ``bound_sec``; what is still unwritten then is returned (the server left it running).

    A server may show a run's end while an engine process still lives (a resident process that ends
    when the server closes its input): read at once, the log would lack the call."""
    deadline = clock() + bound_sec
    while True:
        waiting = unfinished(log, marks, case)
        if not waiting or clock() >= deadline:
            return waiting
        pause(_POLL_SEC)


def _may_run(pid: Any) -> bool:
    """False only when this machine says no such process exists; an engine in another PID namespace
    (a container) is not visible here, and is then taken as gone rather than waited for in vain."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by another user
    return True
