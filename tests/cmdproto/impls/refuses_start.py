"""Answers run.start with a protocol ``error`` (the first time, with TG_ONCE_MARKER): healthy, but unable."""

from __future__ import annotations

from typing import Any

from _once import first_time

from turngate.implementations.command_example import Implementation, main


class RefusesStart(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        if request["cmd"] == "run.start" and first_time():
            return {"error": {"message": "this engine is not installed here", "code": "no-engine"}}
        return super().answer(request)


if __name__ == "__main__":
    main(RefusesStart())
