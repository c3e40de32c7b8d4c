"""A correct implementation that writes 200 KB to stderr before every answer (more than a pipe holds)."""

from __future__ import annotations

import sys
from typing import Any

from turngate.implementations.command_example import Implementation, main


class Noisy(Implementation):
    def answer(self, request: Any) -> dict[str, Any]:
        for number in range(2000):
            print(f"debug {request['cmd']} line {number}: " + "x" * 80, file=sys.stderr)
        sys.stderr.flush()
        return super().answer(request)


if __name__ == "__main__":
    main(Noisy())
