"""``turngate ARGS`` as a real subprocess (``python -m turngate``, the shim an installed copy has too),
or in this process with its two streams captured."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from turngate.cli.main import main


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


def in_process(*args: str) -> tuple[int, str, str]:
    """``turngate ARGS`` run by its ``main`` here: the exit code, then what it wrote to stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stopped:  # argparse's errors end the process: the status it would have
            # as the interpreter turns SystemExit's code into a status: None is 0, a message is 1
            code = 0 if stopped.code is None else stopped.code if isinstance(stopped.code, int) else 1
    return code, out.getvalue(), err.getvalue()
