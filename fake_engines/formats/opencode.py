"""opencode `run --format json`: NDJSON events, each with `sessionID`; plain text by default."""

from __future__ import annotations

from fake_engines.formats import TurnContext, json_line, last_error_message, text_line, tokens
from fake_engines.sessions import fnv64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def make(context: TurnContext) -> EventFormat | TextFormat:
    if context.output_format == "json":
        return EventFormat(context)
    return TextFormat(context)


class EventFormat:
    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.top_level_text = context.variant["text_at"] == "top_level"
        self.part_count = 0
        self.reply = ""
        self.errors_written = 0
        self.errors: list[str] = []

    def _part_id(self) -> str:
        self.part_count += 1
        seed = f"{self.context.session_id}:{self.context.turn_number}:{self.part_count}"
        return f"prt_{fnv64(seed):016x}{self.part_count:04d}"

    def _event(self, kind: str, **fields: Any) -> tuple[int, bytes]:
        return json_line(
            {
                "type": kind,
                "timestamp": self.context.clock.ms(),
                "sessionID": self.context.session_id,
                **fields,
            }
        )

    def begin(self) -> list[tuple[int, bytes]]:
        return [self._event("step_start", part={"id": self._part_id(), "type": "step-start"})]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.reply += text
                if self.top_level_text:
                    return [self._event("text", text=text)]
                return [self._event("text", part={"id": self._part_id(), "type": "text", "text": text})]
            case {"think": text}:
                return [
                    self._event("reasoning", part={"id": self._part_id(), "type": "reasoning", "text": text})
                ]
            case {"tool": tool}:
                state: dict[str, Any] = {
                    "status": "completed" if tool["ok"] else "error",
                    "input": tool["input"],
                }
                state["output" if tool["ok"] else "error"] = tool["output"]
                part = {"id": self._part_id(), "type": "tool", "tool": tool["name"], "state": state}
                return [self._event("tool_use", part=part)]
            case {"error": {"message": message, "code": code}}:
                self.errors.append(message)
                return [self._error(message, code)]
        raise AssertionError(step)

    def _error(self, message: str, code: Any) -> tuple[int, bytes]:
        self.errors_written += 1
        data: dict[str, Any] = {"message": message}
        if isinstance(code, int) and not isinstance(code, bool):
            data["statusCode"] = code
        data["providerID"] = "turngate"
        return self._event("error", error={"name": "APIError", "data": data})

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            part = {
                "id": self._part_id(),
                "type": "step-finish",
                "reason": "stop",
                "tokens": {
                    "input": 1000 + tokens(self.context.prompt),
                    "output": tokens(self.reply),
                    "reasoning": 0,
                    "cache": {"read": 0, "write": 0},
                },
                "cost": 0,
            }
            return [self._event("step_finish", part=part)]
        if end == "failed" and not self.errors_written:
            return [self._error(last_error_message(self.errors), None)]
        return []


class TextFormat:
    """`--format default`: the reply text only."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context

    def begin(self) -> list[tuple[int, bytes]]:
        return []

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                return [text_line("".join(chunks))]
            case {"error": {"message": message}}:
                return [text_line(f"Error: {message}", 2)]
        return []

    def end(self, end: str) -> list[tuple[int, bytes]]:
        return []
