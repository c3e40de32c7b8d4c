"""The JSON objects among lines of text (a call log, an engine's JSON Lines), in order: a line that is
not JSON, or holds something other than an object, is skipped, never the reason a reader fails."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def json_objects(lines: Iterable[str | bytes]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            found.append(item)
    return found


def logged_objects(log: Path, start: int = 0) -> list[dict[str, Any]]:
    """The JSON objects of a log written a line at a time (a call log, the model server's log), from
    byte ``start`` on; none when it does not exist. What follows the last newline is a line still
    being written, and a line cut off by a killed writer is passed over."""
    try:
        with log.open("rb") as stream:
            stream.seek(start)
            data = stream.read()
    except FileNotFoundError:
        return []
    return json_objects(data.decode("utf-8", "replace").split("\n")[:-1])
