"""``turngate ARGS`` as a real subprocess (``python -m turngate``, the shim an installed copy has too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def turngate(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turngate", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        input=stdin,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )
