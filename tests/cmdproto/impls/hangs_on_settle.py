"""Never answers run.settle (the first time, with TG_ONCE_MARKER)."""

from __future__ import annotations

import time
from typing import Any

from _once import first_time

from turngate.implementations.command_example import Implementation, main


class HangsOnSettle(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        if request["cmd"] == "run.settle" and first_time():
            time.sleep(3600)
        return super().answer(request)


if __name__ == "__main__":
    main(HangsOnSettle())
