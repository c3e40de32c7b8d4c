"""Progress of a long command on standard error: a bar on a terminal, one line per item elsewhere.

A CI log or a pipe has no cursor to move: there each finished item is a line of
its own (``[ 12/223] passed  ID [engine]``), so a stalled run shows where it
stalled. On a terminal a rich bar counts, and only what needs reading (a miss,
an error) stays on the screen above it.
"""

from __future__ import annotations

import sys
from typing import IO, Final

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from turngate.base.terminal import console, visible

OUTCOME_STYLES: Final = {
    "passed": "green",
    "failed": "bold red",
    "partial": "cyan",
    "non-strict": "yellow",
    "skipped": "dim",
    "errored": "bold magenta",
    "unreached": "magenta",
    "interrupted": "bold yellow",
}
# What stays on a terminal above the bar; everything else is only counted there.
NOTEWORTHY: Final = frozenset({"failed", "partial", "non-strict", "errored", "unreached"})


class Progress:
    """``total`` items of ``what`` (cases, captures); ``advance`` once per finished item."""

    def __init__(self, total: int, what: str, stream: IO[str] | None = None) -> None:
        self.total, self.done = total, 0
        self._console = console(stream if stream is not None else sys.stderr)
        self._width = len(str(total))
        self._bar: RichProgress | None = None
        if self._console.is_terminal:
            self._bar = RichProgress(
                TextColumn(f"[bold]{escape(what)}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._console,
                transient=True,
            )
            self._task = self._bar.add_task(what, total=total)
            self._bar.start()

    def advance(self, outcome: str, label: str, detail: str = "") -> None:
        self.done += 1
        style = OUTCOME_STYLES.get(outcome, "")
        text = f"[{style}]{escape(outcome)}[/]  {escape(visible(label))}" if style else escape(visible(label))
        if detail:
            text += f": {escape(visible(detail))}"
        if self._bar is not None:
            self._bar.advance(self._task)
            if outcome in NOTEWORTHY:
                self._bar.console.print(text, soft_wrap=True)
            return
        self._console.print(f"[{self.done:>{self._width}}/{self.total}] {text}", soft_wrap=True)
        self._console.file.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
