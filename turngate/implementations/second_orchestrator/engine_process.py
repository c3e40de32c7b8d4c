"""Engine processes: launch, read bounded output, enforce the turn watchdog, kill the group.

One-shot turns end when the process exits. A resident (sticky_process) engine stays alive
between turns: a turn ends when the reader says the engine signalled its end of turn, and the
next turn starts by writing the reply as one line on its stdin. Every engine gets its own
process group so a kill also reaches what it spawned; a descendant that left the group and
keeps the pipes open is not waited for beyond a short grace.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

MAX_STREAM: Final = 4 * 1024 * 1024  # bytes kept per stream per process; the rest is drained and dropped
PIPE_GRACE: Final = 0.5  # seconds to wait for pipes after the engine has exited
# After a one-shot engine signalled the end of its turn, how long it may take to exit before it is
# stopped (within the turn's watchdog): the turn is over, the process only outlives it.
LINGER_LIMIT: Final = 10.0
POLL: Final = 0.02


@dataclass(frozen=True)
class TurnBytes:
    stdout: bytes
    stderr: bytes
    exit_code: int | None  # None: still running (resident) or killed by us
    timed_out: bool
    exited: bool


class _Sink:
    """Reads one pipe to its end on a thread, keeping at most MAX_STREAM bytes."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.data = bytearray()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self.thread.start()

    def _pump(self, pipe: IO[bytes]) -> None:
        try:
            while True:
                chunk = pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536)
                if not chunk:
                    break
                with self.lock:
                    room = MAX_STREAM - len(self.data)
                    if room > 0:
                        self.data += chunk[:room]
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                pipe.close()

    def since(self, offset: int) -> bytes:
        with self.lock:
            return bytes(self.data[offset:])

    def size(self) -> int:
        with self.lock:
            return len(self.data)


class EngineProcess:
    def __init__(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], resident: bool) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if resident else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so kill() reaches its children
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.resident = resident
        self.out = _Sink(self.proc.stdout)
        self.err = _Sink(self.proc.stderr)
        self.offsets = (0, 0)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, line: str, new_turn: bool = True) -> bool:
        """Start the next resident turn: the reply as one line on stdin.

        ``new_turn`` false: the first message of a process started without a prompt, whose
        turn began with the process (nothing it printed so far is dropped)."""
        if new_turn:
            self.offsets = (self.out.size(), self.err.size())
        if self.proc.stdin is None or not self.alive():
            return False
        try:
            self.proc.stdin.write((line.replace("\n", " ") + "\n").encode("utf-8"))
            self.proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def wait_turn(self, timeout: float, turn_over: Callable[[bytes, bytes], bool] | None) -> TurnBytes:
        """Wait for the turn to end: process exit, or ``turn_over`` on the bytes so far.

        A resident engine's turn ends when ``turn_over`` says so. A one-shot engine's turn ends
        with its exit; one that signalled its end of turn but does not exit is stopped after
        ``LINGER_LIMIT`` (or when the watchdog expires), and its turn stands: it is not a
        timeout, the turn was over.
        """
        start = time.monotonic()
        deadline = start + timeout
        last_check = 0
        over_since: float | None = None
        while True:
            if not self.alive():
                self._drain()
                return self._snapshot(exited=True, timed_out=False)
            now = time.monotonic()
            if turn_over is not None:
                size = self.out.size() + self.err.size()
                if size != last_check:
                    last_check = size
                    out, err = self._current()
                    if not turn_over(out, err):
                        over_since = None
                    elif self.resident:
                        return self._snapshot(exited=False, timed_out=False)
                    elif over_since is None:
                        over_since = now
            if over_since is not None and (now - over_since >= LINGER_LIMIT or now >= deadline):
                self.kill()
                return self._snapshot(exited=False, timed_out=False)
            if now >= deadline:
                self.kill()
                return self._snapshot(exited=True, timed_out=True)
            time.sleep(POLL)

    def _drain(self) -> None:
        for sink in (self.out, self.err):
            sink.thread.join(PIPE_GRACE)

    def _current(self) -> tuple[bytes, bytes]:
        return self.out.since(self.offsets[0]), self.err.since(self.offsets[1])

    def _snapshot(self, exited: bool, timed_out: bool) -> TurnBytes:
        out, err = self._current()
        code = self.proc.poll() if exited and not timed_out else None
        return TurnBytes(out, err, code, timed_out, exited)

    def stop(self) -> None:
        """End a resident engine gracefully: end of input, then SIGTERM, then the group kill.

        A graceful end lets the engine finish its own bookkeeping (the fake engines write their
        call-log line at exit; a SIGKILL loses it).
        """
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        for sig in (None, signal.SIGTERM):
            if sig is not None and self.alive():
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(sig)
            try:
                self.proc.wait(1.0)
                break
            except subprocess.TimeoutExpired:
                continue
        self.kill()

    def kill(self) -> None:
        """Kill the engine's whole process group and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._drain()
