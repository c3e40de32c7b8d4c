"""Engine processes as the orchestrator runs them: one-shot turns and resident (sticky) processes.

A one-shot turn runs to exit under a watchdog. A resident process stays alive
between turns: its two output streams are drained by threads, and a turn is
over when the engine's own end-of-turn signal appears in what it wrote since
the turn began (or the process exits, or the watchdog fires).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness import readers
from harness.reference.outcome import ProcessEnd


@dataclass(frozen=True, slots=True)
class TurnBytes:
    stdout: bytes
    stderr: bytes
    end: ProcessEnd


def _end_of(returncode: int, killed_by: str | None) -> ProcessEnd:
    if killed_by == "watchdog":
        return ProcessEnd(returncode, killed_by="watchdog")
    if killed_by == "cancel":
        return ProcessEnd(returncode, killed_by="cancel")
    if returncode < 0:
        return ProcessEnd(None, signal=-returncode)
    return ProcessEnd(returncode)


class OneShot:
    """One engine invocation that runs its turn and exits."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        self._process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._killed_by: str | None = None

    def wait(self, timeout: float) -> TurnBytes:
        try:
            out, err = self._process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill("watchdog")
            out, err = self._process.communicate()
        return TurnBytes(out, err, _end_of(self._process.returncode, self._killed_by))

    def kill(self, why: str) -> None:
        if self._killed_by is None:
            self._killed_by = why
        _kill_group(self._process)


class Resident:
    """A sticky engine process: turns are read from its live streams, replies written to its stdin."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], engine: str) -> None:
        self.engine = engine
        self._process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._buffers = {"stdout": bytearray(), "stderr": bytearray()}
        self._open = 2
        self._changed = threading.Condition()
        self._marks = (0, 0)
        self._killed_by: str | None = None
        assert self._process.stdout is not None and self._process.stderr is not None
        for name, pipe in (("stdout", self._process.stdout), ("stderr", self._process.stderr)):
            threading.Thread(target=self._drain, args=(name, pipe), daemon=True).start()

    def _drain(self, name: str, pipe: IO[bytes]) -> None:
        while chunk := os.read(pipe.fileno(), 65536):
            with self._changed:
                self._buffers[name] += chunk
                self._changed.notify_all()
        pipe.close()
        with self._changed:
            self._open -= 1
            self._changed.notify_all()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def read_turn(self, timeout: float, reader_options: Mapping[str, Any] | None = None) -> TurnBytes:
        """Wait for the current turn's end-of-turn signal, the process's exit, or the watchdog."""
        start_out, start_err = self._marks
        options = dict(reader_options or {})

        def turn_bytes() -> tuple[bytes, bytes]:
            return bytes(self._buffers["stdout"][start_out:]), bytes(self._buffers["stderr"][start_err:])

        def turn_over() -> bool:
            if self._open == 0:
                return True
            out, err = turn_bytes()
            return readers.read(self.engine, out, err, **options).turn_end() is not None

        with self._changed:
            finished = self._changed.wait_for(turn_over, timeout=timeout)
            if not finished:
                self._killed_by = "watchdog"
            else:
                self._settle()
        if not finished:
            _kill_group(self._process)
            with self._changed:
                self._changed.wait_for(lambda: self._open == 0, timeout=10)
        with self._changed:
            out, err = turn_bytes()
            self._marks = (len(self._buffers["stdout"]), len(self._buffers["stderr"]))
            streams_closed = self._open == 0
        if streams_closed:
            returncode = self._process.wait()
            return TurnBytes(out, err, _end_of(returncode, self._killed_by))
        return TurnBytes(out, err, ProcessEnd(None))

    def _settle(self) -> None:
        """Let the other pipe catch up: its end-of-turn signal can arrive before the reply text.

        The two streams are drained by two threads, so iflow's block on stderr may be
        seen before the text it wrote on stdout just before. Wait until neither buffer
        has grown for a short quiet spell (bounded). Caller holds ``_changed``.
        """

        def sizes() -> tuple[int, int, int]:
            return len(self._buffers["stdout"]), len(self._buffers["stderr"]), self._open

        quiet, limit = 0.05, 40
        for _ in range(limit):
            before = sizes()
            if not self._changed.wait_for(lambda: sizes() != before, timeout=quiet):  # noqa: B023 - used at once
                return

    def send(self, line: str) -> bool:
        """Write one reply line; False when the process is gone."""
        stdin = self._process.stdin
        if stdin is None or not self.alive:
            return False
        try:
            stdin.write(line.replace("\n", " ").encode("utf-8") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def kill(self, why: str) -> None:
        if self._killed_by is None:
            self._killed_by = why
        _kill_group(self._process)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):  # a broken pipe to a dead process
                self._process.stdin.close()


def _kill_group(process: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """SIGTERM the engine's process group, then SIGKILL what is left after ``grace`` seconds.

    The engine runs in its own session, so the group holds the launcher's children too;
    SIGTERM first lets an engine (and the fake engines' call log) record how it ended.
    """
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        if wait is None:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
