"""Engine processes as the orchestrator runs them: one-shot turns and resident (sticky) processes.

A one-shot turn runs to exit under a watchdog. A resident process stays alive
between turns: its two output streams are drained by threads, and a turn is
over when the engine's own end-of-turn signal appears in what it wrote since
the turn began (or the process exits, or the watchdog fires).

Every buffer is bounded and every wait ends, whatever a hostile engine prints or leaves behind:

- At most ``OutputLimits.per_stream_bytes`` of each stream is kept per turn. An
  engine that writes more is killed and its turn ends ``ENGINE_OUTPUT_LIMIT``;
  the bytes kept (the first ``per_stream_bytes``) are what the gate judges and
  what is stored, so the audit reads what the gate read.
- The engine runs in its own session, so killing its process group kills what it
  started. A descendant that left the group (``setsid``) but still holds the
  engine's pipes is found by the pipe it holds and killed too; and whatever
  happens, the turn stops reading once it has what was in the pipes when the engine exited
  (``PIPE_GRACE_SEC`` after it was killed), and closes its ends of the pipes.
- An engine that lives on once its turn is over (its end-of-turn signal seen, or both pipes
  closed) is stopped ``LINGER_SEC`` later (a quarter of the turn timeout, if that is shorter),
  and the turn judged by its stream; the watchdog no longer applies to a turn that is over.
- A resident turn does not re-read the whole turn on every chunk: the reader runs
  again only when the turn has doubled since the last reading, or when the
  streams have gone quiet (an engine that ended its turn waits for input), so the
  reading work stays linear in the bytes read.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import selectors
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from turngate.base.pipes import write_within
from turngate.engines import readers
from turngate.implementations.reference.outcome import KilledBy, ProcessEnd

# A real turn writes well under 1 MiB; the limit bounds what a flooding engine costs: the gate reads
# what is kept (several times its size in memory), so 16 MiB keeps `turngate serve` under 200 MB.
DEFAULT_OUTPUT_LIMIT: Final = 16 * 1024 * 1024
# How long a turn keeps reading after the engine ended or was killed, for output still in the pipes.
PIPE_GRACE_SEC: Final = 2.0
# How long an engine may live on once its turn is over (its end-of-turn signal, or both pipes
# closed) before it is stopped and the turn judged by its stream (docs/reference-orchestrator.md).
LINGER_SEC: Final = 5.0
_CHUNK: Final = 65536
# A resident turn's reader runs again once the streams were quiet this long (or the turn doubled).
_QUIET_SEC: Final = 0.01
_FIRST_READING_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class OutputLimits:
    """How much of one turn's output is kept, per stream (stdout and stderr each)."""

    per_stream_bytes: int = DEFAULT_OUTPUT_LIMIT

    def __post_init__(self) -> None:
        if self.per_stream_bytes < 1:
            raise ValueError(f"OutputLimits.per_stream_bytes: {self.per_stream_bytes!r}: must be >= 1")


@dataclass(frozen=True, slots=True)
class TurnBytes:
    stdout: bytes
    stderr: bytes
    end: ProcessEnd


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process as the store records it: pid and start time, so a recycled pid is never killed."""

    pid: int
    started: str


def identity_of(pid: int) -> ProcessIdentity | None:
    """The process's identity, or None where the platform does not show start times (or it is gone)."""
    started = _start_time(pid)
    return None if started is None else ProcessIdentity(pid, started)


def kill_stale_group(process: ProcessIdentity) -> bool:
    """SIGKILL the group of an engine a dead orchestrator left behind; True when it was still there.

    The engine led its own session, so its pid is its group id; the start time
    tells it from an unrelated process that got the same pid since.
    """
    if _start_time(process.pid) != process.started:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    return True


def _start_time(pid: int) -> str | None:
    fields = _stat_fields(pid)  # field 22 is the start time
    return fields[19] if fields is not None and len(fields) > 19 else None


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` from field 3 on (index 0 is field 3), or None when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    return text[text.rfind(")") + 2 :].split()


class _Capture:
    """One turn's output, at most ``limit`` bytes per stream; what is past the limit is dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        self.sizes = {"stdout": 0, "stderr": 0}
        self.overflowed = False

    def add(self, name: str, chunk: bytes) -> None:
        room = self.limit - self.sizes[name]
        if len(chunk) > room:
            self.overflowed = True
            chunk = chunk[: max(room, 0)]
        if chunk:
            self.chunks[name].append(chunk)
            self.sizes[name] += len(chunk)

    def peek(self, name: str) -> bytes:
        return b"".join(self.chunks[name])

    def size(self) -> int:
        return self.sizes["stdout"] + self.sizes["stderr"]

    def take(self, name: str) -> bytes:
        data = self.peek(name)
        self.chunks[name] = []
        return data


def _end_of(returncode: int, killed_by: KilledBy | None) -> ProcessEnd:
    match killed_by:
        case "watchdog" | "cancel" | "output_limit":
            return ProcessEnd(returncode, killed_by=killed_by)
        case "lingered":  # stopped by us once its turn was over: the stream says how it ended
            return ProcessEnd(None)
    if returncode < 0:
        return ProcessEnd(None, signal=-returncode)
    return ProcessEnd(returncode)


class OneShot:
    """One engine invocation that runs its turn and exits."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        limits: OutputLimits | None = None,
    ) -> None:
        self._process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._limits = limits or OutputLimits()
        self._killed_by: KilledBy | None = None
        self._kill_lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self._process.pid

    def wait(self, timeout: float, *, engine: str | None = None, linger_sec: float = LINGER_SEC) -> TurnBytes:
        """Read the turn until the engine exits, the watchdog fires or the output limit is passed.

        One thread reads both pipes with a selector, so a deadline covers the whole turn: nothing
        here waits for a pipe's end without a bound. Once the turn is over its end does not depend
        on timing (docs/reference-orchestrator.md, "When a turn is over"):

        - the engine exited: exactly what was in its pipes at that moment is the rest of the turn
          (FIONREAD), never what a descendant writes afterwards;
        - its stream shows its own end-of-turn signal (``engine`` given) or it closed both pipes,
          and it lives on: ``linger_sec`` later it is stopped, and the turn is judged by its stream
          (``ProcessEnd(None)``), not failed as killed.
        """
        process = self._process
        assert process.stdout is not None and process.stderr is not None
        # A short turn budget gets a short linger: an engine that lives on must not eat the budget of
        # the turns after it (a quarter of it at most; LINGER_SEC for the default 120 s).
        linger_sec = min(linger_sec, timeout / 4)
        capture = _Capture(self._limits.per_stream_bytes)
        pipes = {process.stdout.fileno(): "stdout", process.stderr.fileno(): "stderr"}
        inodes = {os.fstat(fd).st_ino for fd in pipes}
        ended: set[int] = set()  # pipes read to their end
        deadline = time.monotonic() + timeout
        drain_until: float | None = None  # set once the engine was killed: its group may still be dying
        left_at_exit: dict[int, int] | None = None  # bytes in each pipe when its exit was seen
        linger_until: float | None = None  # its turn is over but it has not exited
        watch = (
            _TurnWatch(
                lambda: turn_over(
                    engine, readers.read(engine, capture.peek("stdout"), capture.peek("stderr"))
                )
            )
            if engine
            else None
        )
        exit_fd = _exit_fd(process.pid)  # readable once it exits: seen at once, not at the next poll
        with selectors.DefaultSelector() as selector:
            for fd in pipes:
                selector.register(fd, selectors.EVENT_READ)
            if exit_fd is not None:
                selector.register(exit_fd, selectors.EVENT_READ)
            while any(key.fd in pipes for key in selector.get_map().values()):
                now = time.monotonic()
                settled = drain_until is not None or left_at_exit is not None
                if drain_until is None and self._killed_by is not None:
                    drain_until = now + PIPE_GRACE_SEC
                    continue
                if not settled and _exited(process.pid):
                    # All it wrote is in the pipes now: read exactly that, so what a descendant writes
                    # later is never part of the turn (a verdict must not depend on timing).
                    left_at_exit = {fd: _unread(fd) for fd in pipes if fd in selector.get_map()}
                    for fd in [fd for fd, left in left_at_exit.items() if left == 0]:
                        selector.unregister(fd)
                    continue
                if not settled and linger_until is None and now >= deadline:
                    self.kill("watchdog")  # once its turn is over, only the linger bounds the wait
                    continue
                if drain_until is not None and now >= drain_until:
                    break  # a descendant keeps the pipes open: stop reading, close them below
                if not settled and linger_until is None and watch is not None:
                    size = capture.size()
                    if watch.due(size) and watch.read(size):
                        linger_until = now + linger_sec
                if not settled and linger_until is not None and now >= linger_until:
                    self.kill("lingered")
                    continue
                watchdog = deadline if linger_until is None else None
                limit = min(x for x in (drain_until, watchdog, linger_until) if x is not None)
                ready = selector.select(max(min(limit - now, 0.1), 0.0))
                if not ready and watch is not None:
                    watch.quiet()  # an engine that ended its turn and lingers goes quiet
                for key, _ in ready:
                    fd = int(key.fd)
                    if fd == exit_fd:  # it exited: the loop's top reads what it left, and no more
                        selector.unregister(fd)
                        continue
                    room = _CHUNK if left_at_exit is None else min(_CHUNK, left_at_exit[fd])
                    chunk = os.read(fd, room)
                    if not chunk:
                        selector.unregister(fd)
                        ended.add(fd)
                        continue
                    capture.add(pipes[fd], chunk)
                    if left_at_exit is not None:
                        left_at_exit[fd] -= len(chunk)
                        if left_at_exit[fd] <= 0:  # all the engine wrote; what follows is not its
                            selector.unregister(fd)
                    if capture.overflowed and self._killed_by is None:
                        self.kill("output_limit")
            # A pipe not read to its end is held open by something the engine left behind.
            held_open = any(fd not in ended and not _at_eof(fd) for fd in pipes)
        if exit_fd is not None:
            os.close(exit_fd)
        if self._killed_by is None and not _exited(process.pid):
            # Both pipes closed and it lives on: the same grace as after its end-of-turn signal.
            try:
                process.wait(timeout=linger_sec)
            except subprocess.TimeoutExpired:
                self.kill("lingered")
        # Whatever the engine started and left behind (its group, a setsid'd holder of its
        # pipes) ends with the turn, and the turn never waits for them.
        _kill_remaining_group(process.pid)
        if held_open:
            _kill_pipe_holders(inodes)
        process.stdout.close()
        process.stderr.close()
        returncode = process.wait()
        return TurnBytes(capture.take("stdout"), capture.take("stderr"), _end_of(returncode, self._killed_by))

    def kill(self, why: KilledBy) -> None:
        with self._kill_lock:
            if self._killed_by is None:
                self._killed_by = why
        _kill_group(self._process)


class Resident:
    """A sticky engine process: turns are read from its live streams, replies written to its stdin."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        engine: str,
        limits: OutputLimits | None = None,
    ) -> None:
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
        self._limit = (limits or OutputLimits()).per_stream_bytes
        # The current turn's bytes only: a finished turn's are handed over and dropped.
        self._buffers = {"stdout": bytearray(), "stderr": bytearray()}
        self._overflowed = False
        self._open = 2
        self._changed = threading.Condition()
        self._killed_by: KilledBy | None = None
        # Bytes given to the stream reader while looking for the end of a turn (work, counted for tests).
        self.scanned_bytes = 0
        assert self._process.stdout is not None and self._process.stderr is not None
        pipes = (self._process.stdout, self._process.stderr)
        self._fds = tuple(pipe.fileno() for pipe in pipes)
        self._inodes = {os.fstat(fd).st_ino for fd in self._fds}
        for name, pipe in (("stdout", self._process.stdout), ("stderr", self._process.stderr)):
            threading.Thread(target=self._drain, args=(name, pipe), daemon=True).start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _drain(self, name: str, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError):  # the pipe closed under us: the turn gave up on it
            while chunk := os.read(pipe.fileno(), _CHUNK):
                with self._changed:
                    buffer = self._buffers[name]
                    room = self._limit - len(buffer)
                    if len(chunk) > room:
                        self._overflowed = True
                        chunk = chunk[: max(room, 0)]
                    buffer += chunk
                    self._changed.notify_all()
        with self._changed:
            self._open -= 1
            self._changed.notify_all()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def read_turn(self, timeout: float, reader_options: Mapping[str, Any] | None = None) -> TurnBytes:
        """Wait for the current turn's end-of-turn signal, the process's exit, or the watchdog."""
        options = dict(reader_options or {})
        deadline = time.monotonic() + timeout
        why: KilledBy | None = None
        with self._changed:
            watch = _TurnWatch(lambda: self._turn_ends(options))
            while True:
                if self._open == 0:
                    self._settle()
                    break
                if self._overflowed:
                    why = "output_limit"
                    break
                size = self._size()
                if watch.due(size) and watch.read(size):
                    self._settle()
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    why = "watchdog"
                    break
                wait = min(remaining, _QUIET_SEC)
                grew = self._changed.wait_for(lambda: self._size() != size, timeout=wait)  # noqa: B023
                if not grew:
                    watch.quiet()
        if why is not None:
            self.kill(why)
        with self._changed:
            out, err = bytes(self._buffers["stdout"]), bytes(self._buffers["stderr"])
            for buffer in self._buffers.values():
                buffer.clear()
            streams_closed = self._open == 0
        if streams_closed or why is not None:
            try:
                returncode = self._process.wait(timeout=PIPE_GRACE_SEC)
            except subprocess.TimeoutExpired:  # it closed its streams but lives on: end it
                self.kill("ended")
                returncode = self._process.wait()
            return TurnBytes(out, err, _end_of(returncode, self._killed_by))
        return TurnBytes(out, err, ProcessEnd(None))

    def _size(self) -> int:
        return len(self._buffers["stdout"]) + len(self._buffers["stderr"]) + self._open

    def _turn_ends(self, options: Mapping[str, Any]) -> bool:
        out, err = bytes(self._buffers["stdout"]), bytes(self._buffers["stderr"])
        self.scanned_bytes += len(out) + len(err)
        return turn_over(self.engine, readers.read(self.engine, out, err, **options))

    def _settle(self) -> None:
        """Let the other pipe catch up: its end-of-turn signal can arrive before the reply text.

        The two streams are drained by two threads, so iflow's block on stderr may be
        seen before the text it wrote on stdout just before. Wait until both pipes are
        empty (what the engine wrote is in the buffers, or in a drain thread's hands)
        and neither buffer has grown for a short quiet spell (bounded). Caller holds
        ``_changed``.
        """
        quiet, limit = 0.01, 200
        for _ in range(limit):
            before = self._size()
            grew = self._changed.wait_for(lambda: self._size() != before, timeout=quiet)  # noqa: B023
            if not grew and not any(_unread(fd) for fd in self._fds):
                return

    def send(self, line: str, timeout: float = 10.0) -> bool:
        """Write one reply line; False when the process is gone or does not read it within ``timeout``."""
        stdin = self._process.stdin
        if stdin is None or not self.alive:
            return False
        data = line.replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n"
        try:
            return write_within(stdin.fileno(), data, timeout)
        except OSError:  # a broken pipe to a dead process
            return False

    def kill(self, why: KilledBy) -> None:
        if self._killed_by is None:
            self._killed_by = why
        _kill_group(self._process)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        # A setsid'd descendant holding the pipes would keep the drain threads reading forever.
        with self._changed:
            closed = self._changed.wait_for(lambda: self._open == 0, timeout=PIPE_GRACE_SEC)
        if not closed:
            _kill_pipe_holders(self._inodes)
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()


# Engines that end each step of a turn, and the turn only with step_finish reason "stop".
_STEPPED_ENGINES: Final = frozenset({"opencode", "kilo"})


def turn_over(engine: str, transcript: readers.Transcript) -> bool:
    """Whether the stream shows the end of the engine's turn. opencode ends every *step* of a turn
    with step_finish, and only reason "stop" ends the turn (ENGINE_FORMATS.md): "tool-calls" closes a
    step the turn goes on after (the model is asked again, which can take a while), "unknown" one
    it asks the model again after. kilo, its fork, too; its `error` fails the turn, but the process
    may still print the text the failed request left (docs/fake-engines.md, kilo), so only its exit
    ends that turn. Every other engine's end-of-turn signal ends the turn, failed or not."""
    end = transcript.turn_end()
    return end is not None and (end.ok or engine not in _STEPPED_ENGINES)


class _TurnWatch:
    """When a resident turn's reader runs again: the turn doubled, or the streams went quiet.

    Doubling keeps the total reading work under twice the turn's bytes however the
    engine splits its writes; a quiet spell is when an engine that ended its turn
    shows it, since it then waits for input. A trickling engine could make every
    spell quiet, so after each reading the next quiet reading waits in proportion
    to what the last one cost.
    """

    def __init__(self, read: Callable[[], bool]) -> None:
        self._read = read
        self._read_at = -1  # the size at the last reading (-1: never read)
        self._quiet = False
        self._not_before = 0.0

    def due(self, size: int) -> bool:
        if size == self._read_at:
            return False
        if size >= max(2 * self._read_at, _FIRST_READING_BYTES):
            return True
        return self._quiet and time.monotonic() >= self._not_before

    def read(self, size: int) -> bool:
        started = time.monotonic()
        ended = self._read()
        cost = time.monotonic() - started
        self._read_at, self._quiet = size, False
        self._not_before = time.monotonic() + 4 * cost
        return ended

    def quiet(self) -> None:
        self._quiet = True


def _unread(fd: int) -> int:
    """Bytes waiting in a pipe (0 when closed or when the platform cannot tell)."""
    try:
        answer = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return 0
    return int.from_bytes(answer, sys.byteorder)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+); None elsewhere."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # an older kernel, or already reaped
        return None


def _at_eof(fd: int) -> bool:
    """Whether a pipe's writers are all gone (a read would end), without waiting."""
    readable, _, _ = select.select([fd], [], [], 0)
    if not readable:
        return False
    try:
        return os.read(fd, _CHUNK) == b""
    except OSError:
        return True


def _exited(pid: int) -> bool:
    """True once the process has exited, without reaping it (its group id stays reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_remaining_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_pipe_holders(inodes: set[int]) -> None:
    """SIGKILL every other process that holds one of these pipes (a descendant that left the group).

    Never a child of this process: a child another thread is starting right now holds a copy of
    every descriptor this process has, these pipes among them, from its fork until its exec closes
    them. Killed there, another run's engine (or a help probe) died before it began: no call-log
    line, and the run failed or turned sticky_process (seen on a loaded machine). What the pipes are
    held by once their engine has ended is that engine's descendant, whose parent is the engine (or,
    orphaned, an init), never this process. Linux only (``/proc``); elsewhere the turn still ends,
    having closed its ends.
    """
    me = os.getpid()
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return
    wanted = {f"pipe:[{inode}]" for inode in inodes}
    for pid in pids:
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    if _parent_of(pid) != me:
                        os.kill(pid, signal.SIGKILL)
                    break
            except OSError:
                continue


def _parent_of(pid: int) -> int | None:
    """The parent's pid (``/proc/PID/stat`` field 4), or None when the process is gone."""
    fields = _stat_fields(pid)
    return int(fields[1]) if fields is not None and len(fields) > 1 and fields[1].isdigit() else None


def _kill_group(process: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """SIGTERM the engine's process group, then SIGKILL what is left after ``grace`` seconds.

    The engine runs in its own session, so the group holds the launcher's children too;
    SIGTERM first lets an engine (and the fake engines' call log) record how it ended.
    """
    if process.poll() is not None:
        _kill_remaining_group(process.pid)
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
