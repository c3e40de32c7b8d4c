"""An example implementation of the command protocol: turngate's reference orchestrator over stdin/stdout.

Run it as ``python -m turngate.implementations.command_example``. It reads one JSON request per
line, answers each with one JSON line, and exits on ``stop`` or at the end of
its input. Every step is delegated to ``ReferenceConnector``, so this file is
only the protocol: an implementation in another language has the same shape,
with its own orchestrator behind ``answer``. See docs/command-protocol.md.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final, TextIO

from turngate import __version__
from turngate.implementations.reference_connector import ReferenceConnector
from turngate.protocol.connector import CAPABILITIES, CaseSetup, PackageRefused

PROTOCOL_VERSION: Final = 1
IMPLEMENTATION: Final = {
    "name": "turngate-reference",
    "version": __version__,
    "language": "python",
    "capabilities": sorted(CAPABILITIES),
}
OK: Final = {"ok": True}


def case_setup(case: Mapping[str, Any]) -> CaseSetup:
    """The run.start ``case`` object as the reference's CaseSetup (paths arrive as strings)."""
    return CaseSetup(
        case_id=case["case_id"],
        engine=case["engine"],
        skill_dir=Path(case["skill_dir"]),
        runtime=case["runtime"],
        reading=case["reading"],
        workdir=Path(case["workdir"]),
        engine_env=case["engine_env"],
        engine_bin=Path(case["engine_bin"]),
        gemini_output_format=case["gemini_output_format"],
    )


class Implementation:
    """Answers one request at a time; holds the case being run, if any."""

    def __init__(self) -> None:
        self._run: ReferenceConnector | None = None

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        match request["cmd"]:
            case "start":
                return {"ready": True, "version": PROTOCOL_VERSION, "implementation": IMPLEMENTATION}
            case "run.start":
                self.close()  # a harness that died mid-case never sent run.close: do not leak its run
                self._run = ReferenceConnector()
                self._run.start(case_setup(request["case"]))
                return OK
            case "run.reply":
                result = self._current.reply(request["text"], request["interaction_id"])
                return {"accepted": result.accepted, "code": result.code}
            case "run.cancel":
                return {"accepted": self._current.cancel()}
            case "run.advance_clock":
                self._current.advance_clock(float(request["seconds"]))
                return OK
            case "run.restart":
                self._current.restart()
                return OK
            case "run.fill_slots":
                self._current.fill_slots()
                return OK
            case "run.free_slots":
                self._current.free_slots()
                return OK
            case "run.settle":
                self._current.settle()
                return OK
            case "run.observe":
                # asdict keeps tuples; json writes them as arrays, which is what the schema asks for.
                # Every field is sent (the reference shows everything): a null is an observed null,
                # and each history row carries its timestamp (the orchestrator's clock).
                return {"observation": asdict(self._current.observe())}
            case "run.close":
                self.close()
                return OK
            case other:
                return {"error": {"message": f"unknown cmd {other!r}", "code": "unknown-cmd"}}

    def close(self) -> None:
        if self._run is not None:
            self._run.close()
            self._run = None

    @property
    def _current(self) -> ReferenceConnector:
        if self._run is None:
            raise RuntimeError("no case is running: send run.start first")
        return self._run


def serve(requests: TextIO, answers: TextIO, implementation: Implementation) -> None:
    """The protocol loop: one request line in, one answer line out, flushed at once."""
    for line in requests:
        request = json.loads(line)
        if request.get("cmd") == "stop":
            break
        try:
            response = implementation.answer(request)
        except PackageRefused as refusal:  # the case's skill package is invalid: a named answer
            response = {"error": {"message": str(refusal), "code": "package-refused"}}
        except Exception as error:  # the step failed, the process is fine: say why and keep serving
            response = {"error": {"message": f"{type(error).__name__}: {error}"}}
        answers.write(json.dumps(response) + "\n")
        answers.flush()  # turngate waits for this line; a buffered answer looks like a hang
    implementation.close()


def protocol_stdout() -> TextIO:
    """A private copy of stdout for answers; fd 1 itself becomes stderr.

    Anything else that writes to fd 1 (a stray print, a child process that
    inherits it) would otherwise corrupt the answer stream.
    """
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return answers


def main(implementation: Implementation | None = None) -> None:
    serve(sys.stdin, protocol_stdout(), implementation or Implementation())


if __name__ == "__main__":
    main()
