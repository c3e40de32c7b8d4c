"""A correct implementation that writes every answer in three pieces, flushed apart, with pauses."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from turngate.implementations.command_example import Implementation, protocol_stdout, serve


class InPieces:
    """A text stream that sends each answer line as three separately flushed writes."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        third = max(1, len(text) // 3)
        for start in range(0, len(text), third):
            self._stream.write(text[start : start + third])
            self._stream.flush()
            time.sleep(0.02)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


if __name__ == "__main__":
    serve(sys.stdin, InPieces(protocol_stdout()), Implementation())  # type: ignore[arg-type]
