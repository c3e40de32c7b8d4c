"""The files a command writes (``-o``, ``--report-json``, ``--junit``, ``--html``): checked before any
work, so that a bad path is one line and exit 2 up front, and opened with the same one-line problem
when the disk fills or the folder vanishes meanwhile."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from turngate.base.arguments import UsageProblem
from turngate.base.terminal import Output, OutputProblem, check_outputs


def checked_outputs(**named: str | Path | None) -> dict[str, Output]:
    """The outputs given (keyed by option name; ``None``: not given), each writable."""
    try:
        return check_outputs(**named)
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None


@contextlib.contextmanager
def open_output(output: Output) -> Iterator[IO[str]]:
    try:
        with output.open() as stream:
            yield stream
    except OutputProblem as problem:
        raise UsageProblem(str(problem)) from None
