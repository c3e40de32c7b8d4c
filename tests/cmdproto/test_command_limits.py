"""The command connector against implementations that stop reading or never end a line: bounded waits.

Real processes. Each case checks the named failure it ends with; a connector
without the bound would instead wait out its (long) timeout or block forever.
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from turngate.judge.connectors.command import CommandProtocolError, _Process

HANDSHAKE = """
    import json, os, sys, time
    sys.stdin.readline()
    answer = {"ready": True, "version": 1, "implementation": {
        "name": "hostile", "version": "0", "language": "python", "capabilities": []}}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""


def _command(tmp_path: Path, name: str, then: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(HANDSHAKE) + textwrap.dedent(then), encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_a_request_to_an_implementation_that_never_reads_fails_by_its_timeout(tmp_path: Path) -> None:
    process = _Process(_command(tmp_path, "deaf", "time.sleep(600)\n"), timeout_sec=30)
    # Larger than a pipe's buffer: a blocking write would never return.
    message = {"cmd": "run.reply", "text": "x" * (1024 * 1024), "interaction_id": 1}
    with pytest.raises(CommandProtocolError, match=r"did not read the run\.reply request within 1 s"):
        process.request(message, timeout_sec=1)
    assert process.broken is not None


def test_an_answer_that_never_ends_its_line_fails_at_the_length_limit(tmp_path: Path) -> None:
    flood = """
        sys.stdin.readline()
        while True:
            os.write(1, b"x" * 65536)
    """
    process = _Process(_command(tmp_path, "endless", flood), timeout_sec=30, max_answer_bytes=1024 * 1024)
    with pytest.raises(CommandProtocolError, match=r"longer than 1048576 bytes \(ANSWER_TOO_LONG\)"):
        process.request({"cmd": "run.settle"}, timeout_sec=600)
