"""What a protocol module hands the HTTP layer: a status, a content type and the body pieces."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    content_type: str
    chunks: tuple[bytes, ...]  # written and flushed one by one (an SSE event each)
    kind: str  # for the request log: "round", "error", "fault", "cut", "router", "title", "side"...
    headers: tuple[tuple[str, str], ...] = ()  # e.g. retry-after on a scripted 429
    # A stream cut short (a model_error cut): the chunks hold no end-of-answer event, and the body ends
    # there or the connection is dropped (the server's cut_style); a JSON document is cut in half.
    cut: bool = False
    # A cut whose connection is dropped whatever the server's cut_style (the script's `dropped: true`).
    dropped: bool = False


def json_answer(status: int, document: Any, kind: str) -> Answer:
    return Answer(status, "application/json", (json.dumps(document).encode("utf-8"),), kind)


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def tokens(text: str) -> int:
    """A plausible, deterministic token count (as the fake engines count)."""
    return max(1, len(text) // 4)
