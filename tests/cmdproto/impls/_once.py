"""Shared by the broken implementations: break the first time only, when a marker file is given.

``TG_ONCE_MARKER`` names a file that records that the breakage happened, so a
restarted process (same command line) behaves; without it, every time breaks.
"""

from __future__ import annotations

import os
from pathlib import Path


def first_time() -> bool:
    marker = os.environ.get("TG_ONCE_MARKER")
    if not marker:
        return True
    path = Path(marker)
    if path.exists():
        return False
    path.write_text("broken once\n", encoding="utf-8")
    return True
