"""A turn as a list of operations: what to write where, when to pause, how to end.

Scripts speak in steps above the level of engine formats; an engine format
turns content steps into lines, and this module weaves in the control steps
(`sleep`, `detach`, `hang`, `crash`, `truncate`, `split`, `raw`, `stderr`) the same way
for every engine. Playing the operations is `player`'s job.
"""

from __future__ import annotations

from turngate.engines.fake.formats import text_line
from turngate.engines.fake.frozen import value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Format(Protocol):
        """One engine's output format for one turn (see turngate/engines/fake/formats/)."""

        def begin(self) -> list[tuple[int, bytes]]: ...
        def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]: ...
        def end(self, end: str) -> list[tuple[int, bytes]]: ...


@value
class Write:
    fd: int  # 1 stdout, 2 stderr
    data: bytes


@value
class Pause:
    seconds: float


@value
class Detach:
    """Start a descendant that leaves the engine's session and holds its output pipes for `seconds`."""

    seconds: float


@value
class Hang:
    """Block until killed."""


@value
class Crash:
    exit_code: int | None
    signal: str | None


@value
class Stop:
    """End the process now with this code (after a truncated line)."""

    exit_code: int


if TYPE_CHECKING:
    from typing import TypeAlias

    Operation: TypeAlias = Write | Pause | Detach | Hang | Crash | Stop

STREAMS = {"stdout": 1, "stderr": 2}


def render_turn(turn: dict[str, Any], fmt: Format) -> list[Operation]:
    """The operations of one turn; the last one is Hang, Crash or Stop when the turn ends abnormally."""
    operations: list[Operation] = []
    split: tuple[int, float] | None = None

    def emit(pieces: list[tuple[int, bytes]]) -> None:
        nonlocal split
        for fd, data in pieces:
            if split is None:
                operations.append(Write(fd, data))
            else:
                operations.extend(_split(fd, data, *split))
                split = None

    if turn.get("start", "engine") != "none":  # none: a raw capture brings its own first lines
        emit(fmt.begin())
    for step in turn["steps"]:
        match step:
            case {"sleep": seconds}:
                operations.append(Pause(seconds))
            case {"detach": seconds}:
                operations.append(Detach(seconds))
            case {"hang": _}:
                operations.append(Hang())
                return operations
            case {"crash": {"exit_code": exit_code, "signal": signal}}:
                operations.append(Crash(exit_code, signal))
                return operations
            case {"truncate": {"at": fraction, "exit_code": exit_code}}:
                _cut_last_stdout_line(operations, fraction)
                operations.append(Stop(exit_code))
                return operations
            case {"split": {"parts": parts, "pause": pause}}:
                split = (parts, pause)
            case {"raw": {"data": data, "stream": stream}}:
                emit([(STREAMS[stream], data)])
            case {"stderr": text}:
                emit([(2, _line(text))])
            case _:
                emit(fmt.step(step))
    emit(fmt.end(turn["end"]))
    return operations


def _line(text: str) -> bytes:
    """A stderr step's text as a real CLI prints it, lone surrogates included (``text_line``)."""
    return text_line(text, 2)[1]


def _split(fd: int, data: bytes, parts: int, pause: float) -> list[Operation]:
    """One piece of output delivered in `parts` writes, `pause` seconds apart."""
    size = max(1, -(-len(data) // parts))
    pieces: list[Operation] = []
    for start in range(0, len(data), size):
        if pieces:
            pieces.append(Pause(pause))
        pieces.append(Write(fd, data[start : start + size]))
    return pieces


def _cut_last_stdout_line(operations: list[Operation], fraction: float) -> None:
    for index in range(len(operations) - 1, -1, -1):
        operation = operations[index]
        if isinstance(operation, Write) and operation.fd == 1:
            line = operation.data.rstrip(b"\n")
            keep = min(len(line) - 1, max(1, int(len(line) * fraction))) if len(line) > 1 else 0
            operations[index] = Write(1, line[:keep])
            return
