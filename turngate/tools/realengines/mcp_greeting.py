"""A minimal MCP server over stdio with one tool, ``lookup_greeting``: what a real CLI needs to show an
MCP tool call (the exploration captures of `turngate engines real capture`).

Newline-delimited JSON-RPC 2.0, as the MCP stdio transport carries it: ``initialize``,
``tools/list``, ``tools/call`` and ``ping`` are answered; notifications get no answer; any other
method is a JSON-RPC "method not found" error. Standard library only, run as a file
(``python mcp_greeting.py``), so a CLI can start it with no turngate on its path.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final, TextIO

TOOL: Final = {
    "name": "lookup_greeting",
    "description": "The greeting to use for a style (formal or casual).",
    "inputSchema": {
        "type": "object",
        "properties": {"style": {"type": "string", "enum": ["formal", "casual"]}},
        "required": ["style"],
    },
}
GREETINGS: Final = {"formal": "Good day", "casual": "Hi"}
PROTOCOL_VERSION: Final = "2025-06-18"


def answer(request: Any) -> dict[str, Any] | None:
    """The response to one JSON-RPC message (None for a notification)."""
    if not isinstance(request, dict) or "id" not in request:
        return None
    method, ident = request.get("method"), request["id"]
    given = request.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    match method:
        case "initialize":
            version = params.get("protocolVersion") or PROTOCOL_VERSION
            result: dict[str, Any] = {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "turngate-greeting", "version": "1.0.0"},
            }
        case "tools/list":
            result = {"tools": [TOOL]}
        case "tools/call" if params.get("name") == TOOL["name"]:
            arguments = params.get("arguments")
            style = arguments.get("style") if isinstance(arguments, dict) else None
            text = GREETINGS.get(str(style), f"no greeting for style {style!r}")
            result = {"content": [{"type": "text", "text": text}], "isError": style not in GREETINGS}
        case "tools/call":
            return _error(ident, -32602, f"unknown tool: {params.get('name')!r}")
        case "ping":
            result = {}
        case _:
            return _error(ident, -32601, f"method not found: {method!r}")
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def serve(source: TextIO, sink: TextIO) -> None:
    for line in source:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            response: dict[str, Any] | None = _error(None, -32700, "parse error")
        else:
            response = answer(request)
        if response is not None:
            sink.write(json.dumps(response) + "\n")
            sink.flush()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
