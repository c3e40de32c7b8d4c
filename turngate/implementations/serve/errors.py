"""The one error a `turngate serve` operation raises: an HTTP status, a stable code, and what was wrong.

Every refusal the server sends has the same JSON shape, ``{"error": {"code", "message"}}``: those of
the operations (:class:`ApiError`) and those of the HTTP layer itself (an unknown path, a method a
path does not take, a server fault), which Starlette would otherwise answer in plain text.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

NOT_FOUND: Final = "NOT_FOUND"
METHOD_NOT_ALLOWED: Final = "METHOD_NOT_ALLOWED"
INTERNAL_ERROR: Final = "INTERNAL_ERROR"
# Codes for the other statuses Starlette itself may raise, as the operations name them.
_HTTP_CODES: Final = {400: "REQUEST_INVALID", 413: "REQUEST_TOO_LARGE"}
_SHOWN_PATH: Final = 200


class ApiError(Exception):
    """A refused request: HTTP status, stable code, and what was wrong."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


async def http_error(request: Request, error: Exception) -> JSONResponse:
    """Starlette's own refusals (404 unknown path, 405 with its ``Allow`` header, ...) as JSON."""
    assert isinstance(error, HTTPException)  # registered for HTTPException only
    method, path = request.method, _shown(request.url.path)
    headers = dict(error.headers or {})
    if error.status_code == 404:
        refusal = ApiError(404, NOT_FOUND, f"{method} {path}: no such path")
    elif error.status_code == 405:
        # Starlette lists a route's methods from a set; one order, the same on every answer.
        allowed = ", ".join(sorted(part.strip() for part in headers.get("Allow", "").split(",") if part))
        headers["Allow"] = allowed
        refusal = ApiError(405, METHOD_NOT_ALLOWED, f"{method} {path}: not allowed here (allowed: {allowed})")
    else:
        code = _HTTP_CODES.get(error.status_code, f"HTTP_{error.status_code}")
        refusal = ApiError(error.status_code, code, f"{method} {path}: {error.detail}")
    return JSONResponse(refusal.body(), status_code=refusal.status, headers=headers)


async def server_fault(request: Request, error: Exception) -> JSONResponse:
    """A fault of the server's own (a bug): 500 in the same shape; the traceback goes to the log."""
    refusal = ApiError(
        500, INTERNAL_ERROR, f"{request.method} {_shown(request.url.path)}: the server failed (see its log)"
    )
    return JSONResponse(refusal.body(), status_code=500)


def _shown(path: str) -> str:
    return path if len(path) <= _SHOWN_PATH else path[: _SHOWN_PATH - 3] + "..."
