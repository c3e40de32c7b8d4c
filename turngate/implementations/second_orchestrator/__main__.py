"""The command-protocol front end: ``python -m turngate.implementations.second_orchestrator [--bug NAME]``.

One JSON request per stdin line, one JSON answer per stdout line, flushed at once; exits on
``stop`` or end of input (docs/command-protocol.md). fd 1 is moved to stderr so nothing but
answers can reach the protocol stream.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Final, TextIO

from .bugs import activate
from .orchestrator import Orchestrator
from .skill_package import PackageRefused
from .slot_pool import SlotPool

CAPABILITIES: Final = (
    "argv",
    "clock",
    "events",
    "gemini_output_format",
    "history",
    "restart",
    "slot_fill",
    "slots",
    "sticky",
    "watchdog",
)
OK: Final = {"ok": True}


class Implementation:
    def __init__(self) -> None:
        self.run: Orchestrator | None = None
        self.slots = SlotPool()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request.get("cmd")
        if cmd == "start":
            return {
                "ready": True,
                "version": 1,
                "implementation": {
                    "name": "turngate-second-orchestrator",
                    "version": "0.1.0",
                    "language": "python",
                    "capabilities": list(CAPABILITIES),
                },
            }
        if cmd == "run.start":
            self.close()
            self.slots = SlotPool()  # no state survives between cases
            self.run = Orchestrator.start(request["case"], self.slots)
            return OK
        if cmd == "run.close":
            self.close()
            return OK
        run = self.run
        if run is None:
            return {"error": {"message": "no case is running: send run.start first", "code": "no-run"}}
        if cmd == "run.reply":
            iid = request.get("interaction_id")
            result = run.reply(str(request.get("text", "")), iid if isinstance(iid, int) else None)
            return {"accepted": result.accepted, "code": result.code}
        if cmd == "run.cancel":
            return {"accepted": run.cancel()}
        if cmd == "run.advance_clock":
            run.advance_clock(float(request["seconds"]))
            return OK
        if cmd == "run.restart":
            self.run = run.restart()
            return OK
        if cmd == "run.fill_slots":
            self.slots.fill()
            return OK
        if cmd == "run.free_slots":
            self.slots.free()
            run.pump()
            return OK
        if cmd == "run.settle":
            run.settle()
            return OK
        if cmd == "run.observe":
            return {"observation": run.observe()}
        return {"error": {"message": f"unknown cmd {cmd!r}", "code": "unknown-cmd"}}

    def close(self) -> None:
        if self.run is not None:
            self.run.close()
            self.run = None


def serve(requests: TextIO, answers: TextIO, implementation: Implementation) -> None:
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            request = {}
        if not isinstance(request, dict):
            request = {}
        if request.get("cmd") == "stop":
            break
        try:
            response = implementation.answer(request)
        except PackageRefused as refusal:
            response = {"error": {"message": str(refusal), "code": "package-refused"}}
        except Exception as error:  # the step failed, the process is fine: say why, keep serving
            response = {"error": {"message": f"{type(error).__name__}: {error}"}}
        answers.write(json.dumps(response) + "\n")
        answers.flush()
    implementation.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m turngate.implementations.second_orchestrator")
    parser.add_argument(
        "--bug", action="append", default=[], help="run with this implementer mistake (bugs.py)"
    )
    args = parser.parse_args(argv)
    for name in args.bug:
        activate(name)
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, answers, Implementation())


if __name__ == "__main__":
    main()
