"""iflow: the reply as plain text, then the `<Execution Info>` block (usually on stderr)."""

from __future__ import annotations

from turngate.engines.fake.formats import TurnContext, last_error_message, text_line, tokens
from turngate.engines.fake.jsonline import dumps
from turngate.engines.fake.sessions import uuid_shaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STREAMS = {"stdout": 1, "stderr": 2}


def make(context: TurnContext) -> TextFormat:
    return TextFormat(context)


class TextFormat:
    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.variant = context.variant
        self.reply = ""
        self.rounds = 0
        self.errors: list[str] = []

    def begin(self) -> list[tuple[int, bytes]]:
        if self.context.resumed and self.variant["resuming_banner"]:
            return [text_line(f"Resuming session {self.context.session_id}...")]
        return []

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                self.rounds += 1
                piece = text_line("".join(chunks))
                self.reply += piece[1].decode("utf-8")
                return [piece]
            case {"think": _} | {"tool": _} | {"file_change": _}:
                self.rounds += 1  # -p mode prints only the reply; tools show in the count
                return []
            case {"error": {"message": message}}:
                self.errors.append(message)
                return [text_line(f"Error: {message}", 2)]
        raise AssertionError(step)

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "failed":
            message = last_error_message(self.errors)
            trace = (
                f"Error: {message}\n"
                "    at runNonInteractive (file:///usr/lib/node_modules/@iflow-ai/iflow-cli/bundle/iflow.js:1:1)\n"
                "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
            )
            return [(2, trace.encode("utf-8"))]
        if end == "none":
            return []
        prompt_tokens, reply_tokens = 1000 + tokens(self.context.prompt), tokens(self.reply)
        info = {
            "session-id": self.context.session_id,
            "conversation-id": uuid_shaped(self.context.session_id + ":conversation", 4),
            "assistantRounds": max(1, self.rounds),
            "executionTimeMs": self.context.clock.elapsed_ms(),
            "tokenUsage": {
                "input": prompt_tokens,
                "output": reply_tokens,
                "total": prompt_tokens + reply_tokens,
            },
        }
        block = f"<Execution Info>\n{dumps(info)}\n</Execution Info>\n"
        return [(STREAMS[self.variant["block_stream"]], block.encode("utf-8"))]
