"""The JSON objects among lines of text (a call log, an engine's JSON Lines), in order: a line that is
not JSON, or holds something other than an object, is skipped, never the reason a reader fails."""

from __future__ import annotations

import json
from collections.abc import Iterable
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
