"""The one error a `turngate serve` operation raises: an HTTP status, a stable code, and what was wrong."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A refused request: HTTP status, stable code, and what was wrong."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}
