"""What reaches a person: consoles that honour NO_COLOR, control characters made visible, output
files checked before a run starts, ``-`` as standard output, and a closed pipe that ends quietly.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from rich.console import Console

from turngate.base.hostile_text import escape

STDOUT: Final = "-"
# Exit status of a command whose output pipe was closed (128 + SIGPIPE), as a shell reports it.
EXIT_BROKEN_PIPE: Final = 141
# Wide enough for the verdict table without wrapping when the output is not a terminal (CI logs, files).
PLAIN_WIDTH: Final = 132

# C0 and C1 control characters and DEL, except newline and tab which keep their meaning on a terminal;
# the bidirectional embeddings, overrides, isolates and marks, which reorder what the terminal shows
# around them; and lone surrogates (a Node CLI's string cut inside an emoji), which cannot be encoded.
_CONTROLS: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


class OutputProblem(ValueError):
    """An output path that cannot be written: ``--option: path: why``."""


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape (``\\x1b``),
    so that a captured stream cannot move the cursor, recolour or retitle the user's terminal; bidi
    controls and lone surrogates too (``\\u202e``, ``\\ud83d``)."""
    return _CONTROLS.sub(escape, text)


def console(stream: IO[str] | None = None) -> Console:
    """A rich console on ``stream`` (default stdout, looked up now so that redirections count).

    rich colours only a terminal and honours ``FORCE_COLOR`` by itself (``NO_COLOR``: below); off a
    terminal it gets a fixed width, so a CI log shows the same table on every machine.
    """
    target = stream if stream is not None else sys.stdout
    tty = bool(getattr(target, "isatty", lambda: False)())
    width = None if tty or os.environ.get("COLUMNS") else PLAIN_WIDTH
    # rich's own NO_COLOR handling drops colours but keeps bold and dim; no-color.org asks for no
    # added styling, so with NO_COLOR set no style is written at all.
    if os.environ.get("NO_COLOR"):
        return Console(
            file=target, width=width, highlight=False, soft_wrap=False, emoji=False, color_system=None
        )
    return Console(file=target, width=width, highlight=False, soft_wrap=False, emoji=False)


@dataclass(frozen=True, slots=True)
class Output:
    """A place a report goes: a file, or standard output for ``-``."""

    option: str
    value: str

    @property
    def is_stdout(self) -> bool:
        return self.value == STDOUT

    @property
    def path(self) -> Path:
        return Path(self.value)

    @contextlib.contextmanager
    def open(self) -> Iterator[IO[str]]:
        if self.is_stdout:
            yield sys.stdout
            sys.stdout.flush()
            return
        try:
            stream = self.path.open("w", encoding="utf-8")
        except OSError as error:
            raise OutputProblem(f"{self.option}: {self.value}: {error.strerror}") from None
        with stream:
            yield stream


def check_outputs(**options: str | Path | None) -> dict[str, Output]:
    """Every output a run will write, checked before the run (a finished run is never thrown away
    because its last file cannot be written). Keys are option names without dashes; ``None`` is skipped.
    At most one may be ``-``: two reports interleaved on standard output could be read as neither.
    """
    outputs: dict[str, Output] = {}
    for key, value in options.items():
        if value is None:
            continue
        option = "--" + key.replace("_", "-")
        output = Output(option, str(value))
        if not output.is_stdout:
            _check_writable(output)
        outputs[key] = output
    on_stdout = [output.option for output in outputs.values() if output.is_stdout]
    if len(on_stdout) > 1:
        raise OutputProblem(f"{' and '.join(on_stdout)}: -: only one report can go to standard output")
    return outputs


def _check_writable(output: Output) -> None:
    path = output.path
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputProblem(f"{output.option}: {output.value}: is a folder, not a file")
    if not parent.is_dir():
        raise OutputProblem(f"{output.option}: {output.value}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputProblem(f"{output.option}: {output.value}: not writable")


def end_quietly_on_closed_pipe() -> int:
    """After a ``BrokenPipeError`` (``turngate list | head``): point stdout at /dev/null so that
    Python's flush at exit does not raise a second time, and return the shell's status for it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE
