"""Exits with code 3 when asked to start a case (the first time, with TG_ONCE_MARKER)."""

from __future__ import annotations

import os
import sys
from typing import Any

from _once import first_time

from turngate.implementations.command_example import Implementation, main


class CrashesOnStart(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        if request["cmd"] == "run.start" and first_time():
            print("crashing on purpose at run.start", file=sys.stderr, flush=True)
            os._exit(3)
        return super().answer(request)


if __name__ == "__main__":
    main(CrashesOnStart())
