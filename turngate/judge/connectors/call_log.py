"""The fake engines' call log as the judge reads it: the calls written to a shared log after a mark.

A log an HTTP server's engines share holds every case's calls; a case (or a probe job) marks the
log's size before it starts and reads only what was written after. Lines end at "\\n" alone
(``str.splitlines`` would also cut at a raw U+2028 or U+0085 inside a JSON string), and a line
that is not a JSON object (a call cut off by a killed engine) is passed over.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def log_mark(log: Path) -> int:
    """Where what is written to ``log`` from now on begins (0 for a log not written yet)."""
    return log.stat().st_size if log.exists() else 0


def calls_since(log: Path, mark: int) -> list[dict[str, Any]]:
    """The calls written to ``log`` past byte ``mark``, in order; none when there is no log."""
    if not log.exists():
        return []
    with log.open("rb") as stream:
        stream.seek(mark)
        lines = stream.read().decode("utf-8", "replace").split("\n")
    calls = []
    for line in lines:
        try:
            call = json.loads(line)
        except ValueError:
            continue
        if isinstance(call, dict):
            calls.append(call)
    return calls
