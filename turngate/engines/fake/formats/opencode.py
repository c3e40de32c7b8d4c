"""opencode `run --format json`: NDJSON events, each with `sessionID`; plain text by default."""

from __future__ import annotations

import os

from turngate.engines.fake.formats import (
    HANG,
    OPENCODE_DROPPED,
    OPENCODE_DROPPED_METADATA,
    RECOVERED,
    TurnContext,
    json_line,
    last_error_message,
    provider_message,
    text_line,
    tokens,
)
from turngate.engines.fake.sessions import fnv64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def make(context: TurnContext) -> EventFormat | TextFormat:
    if context.output_format == "json":
        return EventFormat(context)
    return TextFormat(context)


class EventFormat:
    # A text or reasoning part is printed once complete: an answer whose connection drops mid-body
    # prints none of it (corpus/opencode/real-1.18.33-hazard-drop; turngate/engines/fake/plan.py).
    drop_withholds_answer = True

    def __init__(self, context: TurnContext) -> None:
        self.context = context
        # .get: kilo's format (its fork, a subclass) has no such variant.
        self.top_level_text = context.variant.get("text_at") == "top_level"
        self.part_count = 0
        self.reply = ""
        self.errors_written = 0
        self.errors: list[str] = []
        self.message_count = 0
        self.message_id = self._next_message_id()
        self.after_tool = False  # a tool call ends a step: the next answer is a new step (real 1.18.33)
        self.step_finished = False  # that step's step_finish already written (before a pause)

    def _next_message_id(self) -> str:
        self.message_count += 1
        seed = f"{self.context.id_seed}:message:{self.message_count}"
        return f"msg_{fnv64(seed):016x}{self.message_count:04d}"

    def _part(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A part as opencode 1.18.33 writes it: ids of the part, its message and its session first."""
        return {
            "id": self._part_id(),
            "messageID": self.message_id,
            "sessionID": self.context.session_id,
            "type": kind,
            **fields,
        }

    def _time(self) -> dict[str, int]:
        start = self.context.clock.ms()
        return {"start": start, "end": start}

    def _new_step_after_tool(self) -> list[tuple[int, bytes]]:
        if not self.after_tool:
            return []
        self.after_tool = False
        finished = [] if self.step_finished else [self._step_finish("tool-calls")]
        self.step_finished = False
        self.message_id = self._next_message_id()
        return [*finished, self._event("step_start", part=self._part("step-start"))]

    def before_pause(self) -> list[tuple[int, bytes]]:
        """1.18.33 ends a tool call's step as soon as the tool has run (step_finish "tool-calls"); the
        next step starts when the model answers. A pause after a tool (a slow model) comes between
        them: the same lines, written when the real CLI writes them."""
        if not self.after_tool or self.step_finished:
            return []
        self.step_finished = True
        return [self._step_finish("tool-calls")]

    def _step_finish(self, reason: str) -> tuple[int, bytes]:
        input_tokens, output_tokens = 1000 + tokens(self.context.prompt), tokens(self.reply)
        part = self._part(
            "step-finish",
            reason=reason,
            tokens={
                "total": input_tokens + output_tokens,
                "input": input_tokens,
                "output": output_tokens,
                "reasoning": 0,
                "cache": {"read": 0, "write": 0},
            },
            cost=0,
        )
        return self._event("step_finish", part=part)

    def _part_id(self) -> str:
        self.part_count += 1
        seed = f"{self.context.id_seed}:{self.part_count}"
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
        return [self._event("step_start", part=self._part("step-start"))]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.reply += text
                if self.top_level_text:
                    return [*self._new_step_after_tool(), self._event("text", text=text)]
                part = self._part("text", text=text, time=self._time())
                return [*self._new_step_after_tool(), self._event("text", part=part)]
            case {"think": text}:
                if self.context.reasoning == "hidden":  # a build that prints it only with --thinking
                    return []
                part = self._part("reasoning", text=text, time=self._time())
                return [*self._new_step_after_tool(), self._event("reasoning", part=part)]
            case {"tool": tool} if tool.get("running"):
                return []  # 1.18.33 prints a tool part once it has finished: a call that never does, never
            case {"file_change": change}:
                return self._write(change)
            case {"tool": tool}:
                lines = self._new_step_after_tool()
                self.after_tool = True
                state: dict[str, Any] = {
                    "status": "completed" if tool["ok"] else "error",
                    "input": tool["input"],
                }
                state["output" if tool["ok"] else "error"] = tool["output"]
                if tool["ok"]:
                    state["metadata"] = {
                        "output": tool["output"],
                        "exit": tool["exit_code"],
                        "truncated": False,
                    }
                command = tool["input"].get("command") if isinstance(tool["input"], dict) else None
                state["title"] = command if isinstance(command, str) else tool["name"]
                state["time"] = self._time()
                call_id = f"call_{fnv64(self._part_id()):016x}"
                part = self._part("tool", callID=call_id, tool=tool["name"], state=state)
                return [*lines, self._event("tool_use", part=part)]
            case {"error": {"message": message, "code": code, "transient": transient}}:
                self.errors.append(message)
                return [self._error(message, code, transient)]
        raise AssertionError(step)

    def _write(self, change: dict[str, Any]) -> list[tuple[int, bytes]]:
        """The `write` tool as 1.18.33 shows it: the path and content as the model gave them, and the
        file's absolute path in the metadata."""
        lines = self._new_step_after_tool()
        self.after_tool = True
        path = os.path.normpath(os.path.join(self.context.cwd, change["path"]))
        state = {
            "status": "completed",
            "input": {"filePath": change["path"], "content": change["content"]},
            "output": "Wrote file successfully.",
            "metadata": {
                "diagnostics": {},
                "filepath": path,
                "exists": change["kind"] == "update",
                "truncated": False,
            },
            "title": change["path"],
            "time": self._time(),
        }
        call_id = f"call_{fnv64(self._part_id()):016x}"
        part = self._part("tool", callID=call_id, tool="write", state=state)
        return [*lines, self._event("tool_use", part=part)]

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """1.18.33: a stream cut short is not an error: the step finishes with reason `unknown` and the
        model is asked again, a new step with the answer again, and again: the CLI never exits (its
        turn never ends with `stop`). A status is retried silently (about a minute for 429), then an
        APIError with `isRetryable: true`, exit 1. A dropped connection is retried silently too (about
        a minute), then the APIError `Connection reset by server` with the socket's error as its metadata
        and no status, in the step the answer began, exit 1 (corpus/opencode/real-1.18.33-hazard-drop:
        the answer's text is not printed)."""
        lines = self._new_step_after_tool()
        if spec["cut"] and spec.get("dropped"):
            if spec["recovers"]:
                return lines, RECOVERED
            data = {
                "message": OPENCODE_DROPPED,
                "isRetryable": True,
                "metadata": dict(OPENCODE_DROPPED_METADATA),
            }
            self.errors_written += 1
            lines.append(self._event("error", error={"name": "APIError", "data": data}))
            return lines, 1
        if spec["cut"]:
            for _ in range(spec["retries"]):
                lines.append(self._step_finish("unknown"))
                self.message_id = self._next_message_id()
                lines.append(self._event("step_start", part=self._part("step-start")))
                for step in answer:
                    lines += self.step(step)
            if spec["recovers"]:
                return lines, RECOVERED
            lines.append(self._step_finish("unknown"))
            return lines, HANG
        if spec["recovers"]:
            return lines, RECOVERED
        lines.append(self._error(provider_message(spec), spec["status"], transient=True))
        return lines, 1

    def _error(self, message: str, code: Any, transient: bool = False) -> tuple[int, bytes]:
        self.errors_written += 1
        data: dict[str, Any] = {"message": message}
        if isinstance(code, int) and not isinstance(code, bool):
            data["statusCode"] = code
        data["isRetryable"] = transient  # as opencode 1.18.33's APIError says it
        return self._event("error", error={"name": "APIError", "data": data})

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            # A turn whose last step was a tool call still ends with an answer step (maybe empty).
            lines = self._new_step_after_tool()
            return [*lines, self._step_finish("stop")]
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
            case {"think": text} if self.context.reasoning == "shown" and text.strip():
                # 1.2.1 with --thinking, stdout not a terminal: `Thinking: <text, trimmed>`.
                return [text_line(f"Thinking: {text.strip()}")]
            case {"error": {"message": message}}:
                return [text_line(f"Error: {message}", 2)]
        return []  # tools (and file changes) are not shown

    def end(self, end: str) -> list[tuple[int, bytes]]:
        return []
