"""The command connector: an implementation in any language, driven over the line-JSON command protocol.

turngate starts the implementation's command once per Python process and
reuses it for every case (starting a process per case would cost more than
most cases). A process that crashes, hangs or breaks the protocol is killed
and forgotten, so the case fails with the reason and the next case gets a
fresh process. The protocol is in docs/command-protocol.md; the messages are
checked against turngate/protocol/command/schemas/.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing.util
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Final, NoReturn

from turngate.base.pipes import write_within
from turngate.judge.connectors.callpatch import modules_unnamed
from turngate.protocol import connector as base
from turngate.protocol.command import (
    KNOWN_CAPABILITIES,
    PROTOCOL_VERSION,
    ProtocolError,
    check_request,
    check_response,
)
from turngate.protocol.connector import HISTORY_FIELDS, CaseSetup, Observation, ReplyResult, TargetUnreachable

STDERR_TAIL_LINES: Final = 20
STOP_GRACE_SEC: Final = 2.0
EXCERPT_CHARS: Final = 200
# The longest answer line read (an observation with its events and history is well under it); a
# longer one, or one that never ends, is a broken process, not a buffer to grow without bound.
MAX_ANSWER_BYTES: Final = 16 * 1024 * 1024
# stderr is only quoted: longer lines are cut into pieces of this size.
STDERR_LINE_BYTES: Final = 4096


class CommandProtocolError(RuntimeError):
    """The implementation process broke: it exited, hung, or answered something that is not the protocol."""


PACKAGE_REFUSED: Final = "package-refused"  # the error code of a run.start whose package is refused


class ImplementationError(RuntimeError):
    """The implementation answered ``{"error": ...}``: it is healthy but could not perform the step."""


@dataclass(frozen=True, slots=True)
class ImplementationInfo:
    """What the implementation said about itself in its ``start`` answer."""

    name: str
    version: str
    language: str
    homepage: str | None
    capabilities: frozenset[str]  # only the words turngate knows


class _Process:
    """One running implementation: its pipes, a reader thread per output, and its handshake."""

    def __init__(self, command: str, timeout_sec: float, max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.command = command
        self.max_answer_bytes = max_answer_bytes
        self.broken: str | None = None  # why the process was discarded, once it is
        self._owner = os.getpid()  # a forked child's copy of this object is not its to stop
        self._lock = threading.Lock()  # one request and its answer at a time
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        # Its own session, so a kill reaches the shell, the implementation and anything it started.
        self._popen = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self._popen.stdout is not None and self._popen.stderr is not None
        # Threads rather than non-blocking reads: readline reassembles an answer written in several
        # pieces, and stderr is drained all the time so a chatty implementation never blocks on it.
        self._stdout_reader = _thread(_read_lines, self._popen.stdout, self._lines, max_answer_bytes)
        self._stderr_reader = _thread(_read_tail, self._popen.stderr, self._stderr)
        try:
            answer = self.request({"cmd": "start", "version": PROTOCOL_VERSION}, timeout_sec)
        except ImplementationError as error:  # healthy but useless: nothing else can be asked of it
            self._discard(f"the handshake was refused: {error}")
        info = answer["implementation"]
        self.info = ImplementationInfo(
            name=info["name"],
            version=info["version"],
            language=info["language"],
            homepage=info.get("homepage"),
            capabilities=frozenset(info["capabilities"]) & KNOWN_CAPABILITIES,
        )

    @property
    def pid(self) -> int:
        return self._popen.pid

    def request(self, message: Mapping[str, Any], timeout_sec: float) -> dict[str, Any]:
        """Send one request and return its answer; a broken process is discarded and raises."""
        cmd = check_request(message)  # our own bug if this fails: nothing is sent
        with self._lock:
            if self.broken is not None:
                raise CommandProtocolError(f"implementation was discarded earlier: {self.broken}")
            line = self._exchange(cmd, message, timeout_sec)
            try:
                answer = json.loads(line)
            except ValueError as error:
                self._discard(f"answer to {cmd} is not JSON: {_excerpt(line)!r} ({error})")
            try:
                check_response(cmd, answer)
            except ProtocolError as error:
                self._discard(str(error))
        if "error" in answer:
            problem = answer["error"]
            if cmd == "run.start" and problem.get("code") == PACKAGE_REFUSED:
                raise base.PackageRefused(problem["message"])
            code = f" [{problem['code']}]" if "code" in problem else ""
            raise ImplementationError(f"implementation could not perform {cmd}{code}: {problem['message']}")
        result: dict[str, Any] = answer
        return result

    def stop(self) -> None:
        """Ask the implementation to exit, then insist."""
        if os.getpid() != self._owner:
            return
        if self.broken is None:
            self.broken = "stopped"
            try:
                assert self._popen.stdin is not None
                # Timed: an implementation that stopped reading must not hold turngate at exit.
                write_within(self._popen.stdin.fileno(), b'{"cmd": "stop"}\n', STOP_GRACE_SEC)
                self._popen.stdin.close()
            except OSError:
                pass  # already gone
        try:
            self._popen.wait(STOP_GRACE_SEC)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGTERM)
            try:
                self._popen.wait(STOP_GRACE_SEC)
            except subprocess.TimeoutExpired:
                self._kill()

    # Internals ---------------------------------------------------------------------------------------

    def _exchange(self, cmd: str, message: Mapping[str, Any], timeout_sec: float) -> str:
        assert self._popen.stdin is not None
        deadline = time.monotonic() + timeout_sec
        try:
            data = json.dumps(message).encode("utf-8") + b"\n"
            if not write_within(self._popen.stdin.fileno(), data, timeout_sec):
                self._discard(f"the implementation did not read the {cmd} request within {timeout_sec:g} s")
        except OSError:  # a closed pipe: the process is gone, say how it went
            self._discard(self._exit_reason())
        try:
            raw = self._lines.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            self._discard(f"no answer to {cmd} within {timeout_sec:g} s")
        if raw is not None and len(raw) > self.max_answer_bytes:
            self._discard(f"answer to {cmd} is longer than {self.max_answer_bytes} bytes (ANSWER_TOO_LONG)")
        if raw is None or not raw.endswith(b"\n"):  # end of output (a last line without newline is cut)
            self._discard(self._exit_reason())
        return raw.decode("utf-8", errors="replace")

    def _exit_reason(self) -> str:
        try:
            code = self._popen.wait(STOP_GRACE_SEC)
        except subprocess.TimeoutExpired:
            return f"implementation closed its stdout but is still running{self._tail()}"
        self._stderr_reader.join(1.0)  # let the last stderr lines arrive
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"implementation {how}{self._tail()}"

    def _tail(self) -> str:
        lines = list(self._stderr)
        return f" (stderr tail: {chr(10).join(lines)})" if lines else " (no stderr)"

    def _discard(self, reason: str) -> NoReturn:
        """Kill the process, forget it, and fail the request with the reason."""
        self.broken = reason
        self._kill()
        _forget(self)
        raise CommandProtocolError(reason)

    def _kill(self) -> None:
        self._signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):  # unreaped now, but no longer ours to talk to
            self._popen.wait(STOP_GRACE_SEC)
        if self._popen.stdin is not None:
            with contextlib.suppress(OSError):
                self._popen.stdin.close()

    def _signal(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
            os.killpg(self._popen.pid, number)


def _thread(target: Any, *args: Any) -> threading.Thread:
    reader = threading.Thread(target=target, args=args, daemon=True)
    reader.start()
    return reader


def _read_lines(stream: IO[bytes], lines: queue.Queue[bytes | None], limit: int) -> None:
    """Queue each answer line; past ``limit`` bytes without a newline, queue what was read and stop.

    ``readline(limit + 1)`` never holds more than that, so an answer that never ends
    costs ``limit`` bytes, not what the implementation manages to write in the timeout.
    """
    with stream:
        while raw := stream.readline(limit + 1):
            lines.put(raw)
            if len(raw) > limit:
                return  # the request fails on it and the process is discarded
    lines.put(None)  # end of output


def _read_tail(stream: IO[bytes], tail: deque[str]) -> None:
    with stream:
        while raw := stream.readline(STDERR_LINE_BYTES):
            tail.append(raw.decode("utf-8", errors="replace").rstrip("\n"))


def _excerpt(line: str) -> str:
    line = line.rstrip("\n")
    return line if len(line) <= EXCERPT_CHARS else line[:EXCERPT_CHARS] + "…"


# One process per command string, shared by every connector of this Python process ---------------------

_LIVE: dict[str, _Process] = {}
_LIVE_LOCK = threading.RLock()  # re-entered when a failed handshake forgets its process


def _process_for(command: str, timeout_sec: float) -> _Process:
    with _LIVE_LOCK:
        process = _LIVE.get(command)
        if process is None or process.broken is not None:
            process = _Process(command, timeout_sec)  # a failed handshake discards it and raises
            _LIVE[command] = process
            # The runner's pool workers end without atexit handlers but with multiprocessing's
            # finalizers: stop the process there too, rather than rely on it exiting at end of input.
            multiprocessing.util.Finalize(process, process.stop, exitpriority=10)
        return process


def _forget(process: _Process) -> None:
    with _LIVE_LOCK:
        if _LIVE.get(process.command) is process:
            del _LIVE[process.command]


@atexit.register
def stop_all() -> None:
    """Stop every implementation process this Python process started (also run at exit)."""
    with _LIVE_LOCK:
        processes = list(_LIVE.values())
        _LIVE.clear()
    for process in processes:
        process.stop()


def _forget_after_fork() -> None:
    """A forked worker (the runner's process pool) inherits the parent's table but not its reader
    threads: it must start processes of its own, and must not stop the parent's at its exit."""
    global _LIVE_LOCK
    _LIVE.clear()
    _LIVE_LOCK = threading.RLock()


os.register_at_fork(after_in_child=_forget_after_fork)


# The connector --------------------------------------------------------------------------------------


class CommandConnector:
    """A connector speaking the command protocol to a shared implementation process."""

    name = "cmd"

    def __init__(self, command: str, *, timeout_sec: float = 60.0) -> None:
        self.command = command
        self.timeout_sec = timeout_sec
        self._process: _Process | None = None
        self._unstarted: CommandProtocolError | None = None
        self._in_case = False
        # The runner reads the capabilities before the case starts, so the handshake happens here. A
        # failure is kept for start(): raised here, it would end the whole run outside any case.
        try:
            self._process = _process_for(command, timeout_sec)
        except CommandProtocolError as error:
            self._unstarted = error
        self.implementation: ImplementationInfo | None = self._process.info if self._process else None
        # Without a handshake, claim every word so that the case is not skipped but reaches start().
        self.capabilities = self.implementation.capabilities if self.implementation else KNOWN_CAPABILITIES

    @property
    def pid(self) -> int | None:
        """The process serving this connector (the shell's, when the command is a shell line)."""
        return self._process.pid if self._process else None

    def start(self, setup: CaseSetup) -> None:
        failed = self._unstarted
        if failed is None:
            try:  # a process that broke in an earlier case is replaced here, never in the middle of one
                self._process = _process_for(self.command, self.timeout_sec)
            except CommandProtocolError as error:
                failed = error
        if failed is not None:  # unreached, as an HTTP server that is down: the later cases are not tried
            raise TargetUnreachable(f"the implementation did not start: {failed}") from failed
        self._in_case = True
        self._call({"cmd": "run.start", "case": _case(setup)})

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        answer = self._call({"cmd": "run.reply", "text": text, "interaction_id": interaction_id})
        return ReplyResult(answer["accepted"], answer["code"])

    def cancel(self) -> bool:
        accepted: bool = self._call({"cmd": "run.cancel"})["accepted"]
        return accepted

    def advance_clock(self, seconds: float) -> None:
        self._call({"cmd": "run.advance_clock", "seconds": seconds})

    def restart(self) -> None:
        self._call({"cmd": "run.restart"})

    def fill_slots(self) -> None:
        self._call({"cmd": "run.fill_slots"})

    def free_slots(self) -> None:
        self._call({"cmd": "run.free_slots"})

    def settle(self) -> None:
        self._call({"cmd": "run.settle"})

    def observe(self) -> Observation:
        return _observation(self._call({"cmd": "run.observe"})["observation"])

    def close(self) -> None:
        """End the case (not the process, which serves the next case); never raises."""
        if not self._in_case:
            return
        self._in_case = False
        if self._process is None or self._process.broken is not None:
            return  # nothing to tell a discarded process
        # The runner calls close in a finally: the case already has its outcome, keep that one.
        with contextlib.suppress(RuntimeError):
            self._call({"cmd": "run.close"})

    def _call(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if self._process is None:
            raise CommandProtocolError("the implementation did not start")
        return self._process.request(message, self.timeout_sec)


def handshake(command: str, *, timeout_sec: float = 60.0) -> ImplementationInfo:
    """Start the implementation and shake hands before any case runs (as
    ``http_transport.check_job_api`` asks a server): one that cannot start is refused with its reason,
    not reported once per case. The process is kept for the cases of this Python process; forked
    workers start their own."""
    return _process_for(command, timeout_sec).info


def command_connector(command: str, *, timeout_sec: float = 60.0) -> CommandConnector:
    """The connector for an implementation started as ``sh -c command``."""
    return CommandConnector(command, timeout_sec=timeout_sec)


def _case(setup: CaseSetup) -> dict[str, Any]:
    return {
        "case_id": setup.case_id,
        "engine": setup.engine,
        "skill_dir": str(setup.skill_dir),
        "runtime": dict(setup.runtime),
        "reading": setup.reading,
        "workdir": str(setup.workdir),
        "engine_env": dict(setup.engine_env),
        "engine_bin": str(setup.engine_bin),
        "gemini_output_format": setup.gemini_output_format,
    }


# The fields an implementation may leave out of an observation (it cannot show them), and those of a
# history row (HISTORY_FIELDS): left out, declared unobservable (unverified); sent as null, an observed null.
OPTIONAL_FIELDS: Final = ("attempts", "history", "events", "slot_held", "patch")


def _observation(seen: Mapping[str, Any]) -> Observation:
    extra = dict(seen.get("extra") or {})
    history = seen.get("history")
    unobservable = {*extra.get("unobservable", ()), *(name for name in OPTIONAL_FIELDS if name not in seen)}
    unobservable |= {
        f"history.{name}" for name in HISTORY_FIELDS if history and any(name not in row for row in history)
    }
    if isinstance(seen.get("patch"), str) and modules_unnamed(seen["patch"]):
        unobservable.add("patch.modules")  # a patch without turngate's module markers: order unjudged
    if unobservable:
        extra["unobservable"] = sorted(unobservable)
    return Observation(
        state=seen["state"],
        error_code=seen["error_code"],
        warnings=tuple(seen["warnings"]),
        reason_code=seen["reason_code"],
        data=seen["data"],
        pending=seen["pending"],
        attempts=seen.get("attempts"),
        history=None if history is None else tuple(history),
        events=None if seen.get("events") is None else tuple(seen["events"]),
        slot_held=seen.get("slot_held"),
        patch=seen.get("patch"),
        extra=extra,
    )
