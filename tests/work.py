"""Counting work instead of timing it: a count cannot depend on the machine's load."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def calls_made(function: Callable[[Any], object], argument: Any) -> int:
    """Python and C function calls made while ``function(argument)`` runs."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        function(argument)
    finally:
        sys.setprofile(None)
    return count
