"""A command-protocol implementation that cannot show its history (``extra.unobservable``): the
checks that read it are unverified, which makes a case partial, never passed."""

from __future__ import annotations

from typing import Any

from turngate.implementations.command_example import Implementation, main


class HidesHistory(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        response = super().answer(request)
        if request["cmd"] == "run.observe":
            observation = response["observation"]
            observation["history"] = None
            observation["extra"] = {**(observation.get("extra") or {}), "unobservable": ["history"]}
        return response


if __name__ == "__main__":
    main(HidesHistory())
