"""A command-protocol implementation that declares no capability: every scenario needing one is skipped."""

from __future__ import annotations

from typing import Any

from turngate.implementations.command_example import Implementation, main


class DeclaresNothing(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        response = super().answer(request)
        if request["cmd"] == "start":
            response["implementation"] = {**response["implementation"], "capabilities": []}
        return response


if __name__ == "__main__":
    main(DeclaresNothing())
