"""gemini: one JSON document (json), NDJSON events (stream-json), or plain text."""

from __future__ import annotations

from turngate.engines.fake.formats import (
    GEMINI_DROPPED,
    GEMINI_QUOTA_ADVICE,
    GEMINI_STREAM_CUT,
    RECOVERED,
    TurnContext,
    json_line,
    last_error_message,
    provider_message,
    text_line,
    tokens,
)
from turngate.engines.fake.jsonline import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STREAMS = {"stdout": 1, "stderr": 2}


def make(context: TurnContext) -> DocumentFormat | StreamFormat | TextFormat:
    if context.output_format == "json":
        return DocumentFormat(context)
    if context.output_format == "stream-json":
        return StreamFormat(context)
    return TextFormat(context)


class _Turn:
    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.variant = context.variant
        self.reply = ""
        self.errors: list[str] = []
        self.tool_calls: list[tuple[str, bool]] = []

    def noise(self) -> list[tuple[int, bytes]]:
        """Start-up chatter; with glue_noise the last line has no newline, so what follows sticks to it."""
        lines = self.variant["noise"]
        fd = STREAMS[self.variant["noise_stream"]]
        pieces = [text_line(line, fd) for line in lines]
        if pieces and self.variant["glue_noise"]:
            pieces[-1] = (fd, lines[-1].rstrip("\n").encode("utf-8"))
        return pieces


class DocumentFormat(_Turn):
    """`--output-format json`: everything in one document at the end of the turn."""

    def begin(self) -> list[tuple[int, bytes]]:
        return self.noise()

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                self.reply += "".join(chunks)
            case {"tool": tool} if not tool.get("running"):
                self.tool_calls.append((tool["name"], tool["ok"]))
            case {"file_change": _}:
                self.tool_calls.append(("write_file", True))
            case {"error": {"message": message}}:
                self.errors.append(message)
        return []

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """0.61.0, json mode: a cut stream is retried (the answer streamed again joins the response),
        then the document keeps the response and stats and adds `error` INVALID_STREAM, exit 0; a
        status is retried silently, then the error document goes to stderr with the status as its
        code, and the exit code is the status modulo 256 (as for the 400 the fidelity runs record).
        A dropped connection is not retried: nothing on stdout, the document `terminated` (code 1) on
        stderr, exit 1 (corpus/gemini/real-0.61.0-json-hazard-drop)."""
        if spec["cut"] and spec.get("dropped"):
            error = {"type": "Error", "message": GEMINI_DROPPED, "code": 1}
            return [self._document({"session_id": self.context.session_id, "error": error}, 2)], 1
        if spec["cut"]:
            for _ in range(spec["retries"]):
                for step in answer:
                    self.step(step)
            if spec["recovers"]:
                return [], RECOVERED
            document: dict[str, Any] = {
                "session_id": self.context.session_id,
                "response": self.reply,
                "stats": self._stats(),
                "error": {"type": "INVALID_STREAM", "message": GEMINI_STREAM_CUT},
            }
            return [self._document(document, STREAMS[self.variant["document_stream"]])], 0
        if spec["recovers"]:
            return [], RECOVERED
        error = {"type": "Error", "message": provider_message(spec), "code": spec["status"]}
        document = {"session_id": self.context.session_id, "error": error}
        return [self._document(document, 2)], spec["status"] % 256

    def _document(self, document: dict[str, Any], fd: int) -> tuple[int, bytes]:
        text = dumps(document, indent=2 if self.variant["pretty"] else None)
        return fd, (text + "\n").encode("utf-8")

    def _stats(self) -> dict[str, Any]:
        prompt_tokens, reply_tokens = 1000 + tokens(self.context.prompt), tokens(self.reply)
        by_name: dict[str, dict[str, int]] = {}
        for name, ok in self.tool_calls:
            entry = by_name.setdefault(name, {"count": 0, "success": 0, "fail": 0, "durationMs": 0})
            entry["count"] += 1
            entry["success" if ok else "fail"] += 1
        successes = sum(1 for _, ok in self.tool_calls if ok)
        return {
            "models": {
                self.context.model: {
                    "api": {
                        "totalRequests": 1 + len(self.tool_calls),
                        "totalErrors": 0,
                        "totalLatencyMs": 1200,
                    },
                    "tokens": {
                        "prompt": prompt_tokens,
                        "candidates": reply_tokens,
                        "total": prompt_tokens + reply_tokens,
                        "cached": 0,
                        "thoughts": 0,
                        "tool": 0,
                    },
                }
            },
            "tools": {
                "totalCalls": len(self.tool_calls),
                "totalSuccess": successes,
                "totalFail": len(self.tool_calls) - successes,
                "totalDurationMs": 0,
                # As gemini 0.61.0 counts them; --yolo approves every call.
                "totalDecisions": {
                    "accept": len(self.tool_calls),
                    "reject": 0,
                    "modify": 0,
                    "auto_accept": 0,
                },
                "byName": by_name,
            },
            "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
        }

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "none":
            return []
        document: dict[str, Any] = {"session_id": self.context.session_id}
        if end == "failed":
            document["error"] = {"type": "Error", "message": last_error_message(self.errors), "code": 1}
        else:
            document["response"] = self.reply
            document["stats"] = self._stats()
        text = dumps(document, indent=2 if self.variant["pretty"] else None)
        return [(STREAMS[self.variant["document_stream"]], (text + "\n").encode("utf-8"))]


class StreamFormat(_Turn):
    """`--output-format stream-json`: init, the echoed prompt, deltas, tools, result."""

    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.tool_count = 0

    def _event(self, kind: str, **fields: Any) -> tuple[int, bytes]:
        return json_line({"type": kind, "timestamp": self.context.clock.iso(), **fields})

    def begin(self) -> list[tuple[int, bytes]]:
        return [
            *self.noise(),
            self._event("init", session_id=self.context.session_id, model=self.context.model),
            self._event("message", role="user", content=self.context.prompt),
        ]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                self.reply += "".join(chunks)
                return [
                    self._event("message", role="assistant", content=chunk, delta=True) for chunk in chunks
                ]
            case {"think": _}:
                return []  # gemini does not stream its thoughts
            case {"tool": tool}:
                self.tool_count += 1
                tool_id = f"{tool['name']}-{self.context.clock.current}-{self.tool_count}"
                use = self._event(
                    "tool_use", tool_name=tool["name"], tool_id=tool_id, parameters=tool["input"]
                )
                if tool.get("running"):  # a call that never finishes: no tool_result
                    return [use]
                self.tool_calls.append((tool["name"], tool["ok"]))
                return [
                    use,
                    self._event(
                        "tool_result",
                        tool_id=tool_id,
                        status="success" if tool["ok"] else "error",
                        output=tool["output"],
                    ),
                ]
            case {"file_change": change}:
                # write_file as 0.61.0 shows it: the path as the model gave it, the content, and a
                # tool_result with no output
                self.tool_count += 1
                self.tool_calls.append(("write_file", True))
                tool_id = f"write_file-{self.context.clock.current}-{self.tool_count}"
                parameters = {"file_path": change["path"], "content": change["content"]}
                return [
                    self._event("tool_use", tool_name="write_file", tool_id=tool_id, parameters=parameters),
                    self._event("tool_result", tool_id=tool_id, status="success"),
                ]
            case {"error": {"message": message, "transient": transient}}:
                if not transient:
                    self.errors.append(message)
                severity = "warning" if transient else "error"
                return [self._event("error", severity=severity, message=message)]
        raise AssertionError(step)

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """0.61.0, stream-json: a cut stream is retried without a word (the answer's deltas come
        again), then an `error` event and a `result` with status error and no error object, exit 0;
        a status is retried silently for minutes, then the `result` carries the API error, and the
        exit code is the status modulo 256. A dropped connection is not retried: the answer's deltas
        once, then a `result` with status error and the API error `[API Error: terminated]`, no `error`
        event, exit 1 (corpus/gemini/real-0.61.0-stream-json-hazard-drop and -drop-retried)."""
        lines: list[tuple[int, bytes]] = []
        if spec["cut"] and spec.get("dropped"):
            error = {"type": "unknown", "message": f"[API Error: {GEMINI_DROPPED}]"}
            return [self._event("result", status="error", error=error, stats=self._stats())], 1
        if spec["cut"]:
            for _ in range(spec["retries"]):
                for step in answer:
                    lines += self.step(step)
            if spec["recovers"]:
                return lines, RECOVERED
            lines.append(self._event("error", severity="error", message=GEMINI_STREAM_CUT))
            lines.append(self._event("result", status="error", stats=self._stats()))
            return lines, 0
        if spec["recovers"]:
            return lines, RECOVERED
        message = f"[API Error: {provider_message(spec)}]"
        if spec["status"] == 429:
            message += "\n" + GEMINI_QUOTA_ADVICE
        error = {"type": "unknown", "message": message}
        lines.append(self._event("result", status="error", error=error, stats=self._stats()))
        return lines, spec["status"] % 256

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "none":
            return []
        stats = self._stats()
        if end == "failed":
            error = {"type": "Error", "message": last_error_message(self.errors)}
            return [self._event("result", status="error", error=error, stats=stats)]
        return [self._event("result", status="success", stats=stats)]

    def _stats(self) -> dict[str, Any]:
        prompt_tokens, reply_tokens = 1000 + tokens(self.context.prompt), tokens(self.reply)
        usage = {
            "total_tokens": prompt_tokens + reply_tokens,
            "input_tokens": prompt_tokens,
            "output_tokens": reply_tokens,
            "cached": 0,
            "input": prompt_tokens,
        }
        # Key set and order as gemini 0.61.0 prints them (docs/real-engines.md).
        return {
            **usage,
            "duration_ms": self.context.clock.elapsed_ms(),
            "tool_calls": len(self.tool_calls),
            "models": {self.context.model: dict(usage)},
        }


class TextFormat(_Turn):
    """The default text output: the reply on stdout, errors on stderr."""

    def begin(self) -> list[tuple[int, bytes]]:
        return self.noise()

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.reply += text
                return [(1, text.encode("utf-8"))]
            case {"error": {"message": message}}:
                self.errors.append(message)
                return [text_line(f"Error: {message}", 2)]
        return []

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "failed":
            return [text_line(f"Error: {last_error_message(self.errors)}", 2)]
        if end == "completed" and not self.reply.endswith("\n"):
            return [(1, b"\n")]
        return []
