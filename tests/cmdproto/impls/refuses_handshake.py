"""Answers the start handshake with a protocol ``error``: nothing can be run on it."""

from __future__ import annotations

from typing import Any

from turngate.implementations.command_example import Implementation, main


class RefusesHandshake(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        if request["cmd"] == "start":
            return {"error": {"message": "no licence for this machine"}}
        return super().answer(request)


if __name__ == "__main__":
    main(RefusesHandshake())
