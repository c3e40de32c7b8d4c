"""Answers run.observe with a line that is not JSON (the first time, with TG_ONCE_MARKER)."""

from __future__ import annotations

import json
import sys

from _once import first_time

from turngate.implementations.command_example import Implementation, protocol_stdout

answers = protocol_stdout()
implementation = Implementation()
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "run.observe" and first_time():
        answers.write("observation: state=running\n")
    else:
        answers.write(json.dumps(implementation.answer(request)) + "\n")
    answers.flush()
