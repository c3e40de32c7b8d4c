"""Progress of a long command on standard error: a bar on a terminal, one line per item elsewhere.

A CI log or a pipe has no cursor to move: there each finished item is a line of
its own (``[ 12/223] passed  ID [engine]``), so a stalled run shows where it
stalled. On a terminal a rich bar counts, with the outcomes so far and the time
left, and only what needs reading (a miss, an error) stays above it, one line
each: the whole of it is in the reports and the list at the end.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import IO, Final

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
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
        self.total = total
        self.counts: Counter[str] = Counter()  # per outcome; their sum is how many are done
        self._console = console(stream if stream is not None else sys.stderr)
        self._width = len(str(total))
        self._bar: RichProgress | None = None
        if self._console.is_terminal:
            self._bar = RichProgress(
                TextColumn(f"[bold]{escape(what)}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tally]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._task = self._bar.add_task(what, total=total, tally="")
            self._bar.start()

    def advance(self, outcome: str, label: str, detail: str = "") -> None:
        self.counts[outcome] += 1
        style = OUTCOME_STYLES.get(outcome, "")
        text = f"[{style}]{escape(outcome)}[/]  {escape(visible(label))}" if style else escape(visible(label))
        if self._bar is not None:
            self._bar.update(self._task, advance=1, tally=self.tally())
            if outcome in NOTEWORTHY:  # one line: the bar stays in view, the details are in the reports
                first = detail.split("\n", 1)[0]
                line = text + (f": {escape(visible(first))}" if first else "")
                self._bar.console.print(line, no_wrap=True, overflow="ellipsis")
            return
        if detail:
            text += f": {escape(visible(detail))}"
        self._console.print(f"[{self.counts.total():>{self._width}}/{self.total}] {text}", soft_wrap=True)
        self._console.file.flush()

    def tally(self) -> str:
        """The outcomes so far, the failing ones first: ``2 failed, 1 partial, 40 passed``."""
        order = [*sorted(NOTEWORTHY), "passed", "skipped"]
        shown = [(outcome, self.counts[outcome]) for outcome in order if self.counts[outcome]]
        shown += [(outcome, n) for outcome, n in self.counts.items() if outcome not in order]
        return ", ".join(f"[{OUTCOME_STYLES.get(o) or 'default'}]{n} {escape(o)}[/]" for o, n in shown)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
