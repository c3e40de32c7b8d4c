"""Counting work instead of timing it: a count cannot depend on the machine's load."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any


def calls_made(function: Callable[[Any], object], argument: Any) -> int:
    """Python and C function calls made while ``function(argument)`` runs.

    Counted after one warm-up call (a regular expression evicted from ``re``'s cache is compiled
    again on first use, hundreds of calls that are not the function's own), with the garbage
    collector held (a collection would run finalizers inside the count); the fewer of two counts."""
    function(argument)
    return min(_counted(function, argument) for _ in range(2))


def _counted(function: Callable[[Any], object], argument: Any) -> int:
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    collecting = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        function(argument)
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return count
