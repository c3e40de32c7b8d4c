"""Answers run.observe with ``state: 7`` (the first time, with TG_ONCE_MARKER)."""

from __future__ import annotations

from typing import Any

from _once import first_time

from turngate.implementations.command_example import Implementation, main


class NumericState(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        response = super().answer(request)
        if request["cmd"] == "run.observe" and first_time():
            response["observation"]["state"] = 7
        return response


if __name__ == "__main__":
    main(NumericState())
