"""Declares words turngate does not know (and ``http``, which a pipe cannot offer) and no ``clock``."""

from __future__ import annotations

from typing import Any

from turngate.implementations.command_example import Implementation, main


class Unusual(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        response = super().answer(request)
        if request["cmd"] == "start":
            words = set(response["implementation"]["capabilities"]) - {"clock"} | {"http", "teleport"}
            response["implementation"] = {**response["implementation"], "capabilities": sorted(words)}
        return response


if __name__ == "__main__":
    main(Unusual())
