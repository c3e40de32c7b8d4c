"""A turn as a list of operations: what to write where, when to pause, how to end.

Scripts speak in steps above the level of engine formats; an engine format
turns content steps into lines, and this module weaves in the control steps
(`sleep`, `detach`, `hang`, `crash`, `truncate`, `split`, `pad`, `raw`, `stderr`) the same way
for every engine. A `model_error` is the format's to write (each CLI reports a failed model
request its own way) and may end the turn; a `file_change` also writes its file. Playing the
operations is `player`'s job.
"""

from __future__ import annotations

from turngate.engines.fake.formats import HANG, RECOVERED, provider_message, text_line
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
    """End the process now with this code (after a truncated line, or a failed model request)."""

    exit_code: int
    outcome: str = "truncated"  # the call log's outcome: "exited" where the CLI ends the turn itself


@value
class WriteFile:
    """Write a file the engine's patch tool changes (relative to the working directory)."""

    path: str
    data: bytes


if TYPE_CHECKING:
    from typing import TypeAlias

    Operation: TypeAlias = Write | Pause | Detach | Hang | Crash | Stop | WriteFile

STREAMS = {"stdout": 1, "stderr": 2}


def render_turn(turn: dict[str, Any], fmt: Format) -> list[Operation]:
    """The operations of one turn; the last one is Hang, Crash or Stop when the turn ends abnormally."""
    operations: list[Operation] = []
    split: tuple[int, float, str | None] | None = None
    pad: int | None = None
    answer: list[dict[str, Any]] = []  # the content of the last model answer: what a retry prints again

    def emit(pieces: list[tuple[int, bytes]]) -> None:
        nonlocal split, pad
        for fd, data in pieces:
            if pad is not None and fd == 1:
                data, pad = _padded(data, pad), None
            if split is None:
                operations.append(Write(fd, data))
            else:
                operations.extend(_split(fd, data, *split))
                split = None

    if turn.get("start", "engine") != "none":  # none: a raw capture brings its own first lines
        emit(fmt.begin())
    withheld = _withheld(turn["steps"]) if getattr(fmt, "drop_withholds_answer", False) else set()
    look_ahead = getattr(fmt, "look_ahead", None)  # a format that prints a step by what follows it
    if look_ahead is not None:
        look_ahead(turn["steps"])
    for index, step in enumerate(turn["steps"]):
        if index in withheld:  # an answer the CLI never printed: its connection dropped mid-body
            answer.append(step)
            continue
        match step:
            case {"model_error": spec}:
                pieces, ending = _model_error(fmt, spec, answer)
                emit(pieces)
                if ending == RECOVERED:
                    continue
                operations.append(Hang() if ending == HANG else Stop(int(ending), "exited"))
                return operations
            case {"file_change": change}:
                operations.append(WriteFile(change["path"], change["content"].encode("utf-8")))
                answer = []
                emit(fmt.step(step))
            case {"pad": size}:
                pad = size
            case {"tool": _}:
                answer = []
                emit(fmt.step(step))
            case {"say": _} | {"think": _}:
                answer.append(step)
                emit(fmt.step(step))
            case {"sleep": seconds}:
                # what the engine writes before it waits (opencode ends a tool call's step at once)
                emit(getattr(fmt, "before_pause", list)())
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
            case {"split": {"parts": parts, "pause": pause, **rest}}:
                inside = rest.get("inside")
                split = (parts, pause, inside if isinstance(inside, str) else None)
            case {"raw": {"data": data, "stream": stream}}:
                emit([(STREAMS[stream], data)])
            case {"stderr": text}:
                emit([(2, _line(text))])
            case _:
                emit(fmt.step(step))
    emit(fmt.end(turn["end"]))
    return operations


def _withheld(steps: list[dict[str, Any]]) -> set[int]:
    """The indexes of the say and think steps of an answer whose connection is dropped for good (a
    `model_error` cut `dropped`, not recovering): a CLI that prints a part only once it is complete
    (opencode) never prints them."""
    found: set[int] = set()
    current: list[int] = []
    for index, step in enumerate(steps):
        if "say" in step or "think" in step:
            current.append(index)
        elif "tool" in step or "file_change" in step:
            current = []
        elif "model_error" in step:
            spec = step["model_error"]
            if spec["cut"] and spec.get("dropped") and not spec["recovers"]:
                found.update(current)
            current = []
    return found


def _line(text: str) -> bytes:
    """A stderr step's text as a real CLI prints it, lone surrogates included (``text_line``)."""
    return text_line(text, 2)[1]


def _model_error(
    fmt: Format, spec: dict[str, Any], answer: list[dict[str, Any]]
) -> tuple[list[tuple[int, bytes]], int | str]:
    """The lines a failed model request gives and how the turn goes on: the format's own report where
    it has one (the CLIs' shapes, docs/fake-engines.md), else an error and a failed end, exit 1."""
    writer = getattr(fmt, "model_error", None)
    if writer is not None:
        result: tuple[list[tuple[int, bytes]], int | str] = writer(spec, answer)
        return result
    if spec["recovers"]:
        return [], RECOVERED
    error = {"error": {"message": provider_message(spec), "transient": False, "code": spec["status"]}}
    return [*fmt.step(error), *fmt.end("failed")], 1


def _padded(data: bytes, size: int) -> bytes:
    """The write with spaces after its first `{` (JSON whitespace: the same JSON), its line at least
    `size` bytes long (its newline not counted)."""
    missing = size - len(data.rstrip(b"\n"))
    if missing <= 0:
        return data
    at = data.find(b"{") + 1 or len(data.rstrip(b"\n"))
    return data[:at] + b" " * missing + data[at:]


def _split(fd: int, data: bytes, parts: int, pause: float, inside: str | None = None) -> list[Operation]:
    """One piece of output delivered in `parts` writes, `pause` seconds apart; with `inside`, in two
    writes cut just after the first byte of that text (a multi-byte character split mid-sequence)."""
    if inside is not None:
        found = data.find(inside.encode("utf-8"))
        cut = found + 1 if found >= 0 else len(data) // 2
        return [Write(fd, data[:cut]), Pause(pause), Write(fd, data[cut:])]
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
