"""Why a fake engine refused to play, with the spec-style stable codes.

Every problem with a script or case names the file, the field and the value,
on one stderr line, and ends the process with EXIT_SCRIPT_ERROR, a code no
real engine uses, so a harness can tell "the script is wrong" from "the engine
failed".
"""

from __future__ import annotations

EXIT_SCRIPT_ERROR = 97

SCRIPT_INVALID = "SCRIPT_INVALID"
CASE_UNKNOWN = "CASE_UNKNOWN"
CASE_NOT_FOUND = "CASE_NOT_FOUND"
TURN_OUT_OF_RANGE = "TURN_OUT_OF_RANGE"
# A repair resume (Skill-Runner's output-repair prompt) the turn scripts no answer for.
REPAIR_OUT_OF_RANGE = "REPAIR_OUT_OF_RANGE"
ENVIRONMENT_INVALID = "ENVIRONMENT_INVALID"


class ScriptProblem(Exception):
    """A script, case or environment problem: fatal for this invocation."""

    def __init__(self, code: str, file: str, field: str, value: object, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.file = file
        self.field = field
        self.value = value
        self.message = message

    def line(self, engine: str) -> str:
        shown = repr(self.value)
        if len(shown) > 200:
            shown = shown[:197] + "..."
        # one line, whatever the message holds
        message = " ".join(self.message.split())
        return f"turngate-fake-{engine}: {self.code}: {self.file}: {self.field}: {shown}: {message}"

    def as_record(self) -> dict[str, object]:
        return {
            "code": self.code,
            "file": self.file,
            "field": self.field,
            "value": repr(self.value),
            "message": self.message,
        }
