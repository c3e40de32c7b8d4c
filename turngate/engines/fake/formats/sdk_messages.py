"""The SDK message stream (`--output-format stream-json`) that claude, qwen and codebuddy print.

Qwen Code and CodeBuddy Code copy Claude Code's Agent SDK messages, one JSON object per
line: `system` (`init`, then notices), `assistant` (one content block per event:
`text`, `thinking` or `tool_use`), `user` (a `tool_result` block), and the `result` that
ends the turn (`result.result` echoing the last reply text). What they share lives here:
which script step becomes which blocks, where a model answer begins and ends (a tool
result ends one; the next block starts another, with a new message id), the texts a
`result` echoes, structured output, and the text and json output formats. Each engine's
module writes its own events: their keys, their key order, their ids and its failures
(docs/fake-engines.md, "claude", "qwen", "codebuddy").
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod  # loaded by every interpreter already (io imports it)

from turngate.engines.fake.formats import TurnContext, json_line, last_error_message, text_line, tokens
from turngate.engines.fake.sessions import fnv64, uuid_shaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL_TOOLS = ("bash", "shell")


class MessageStream(ABC):
    """One turn of the message stream; a subclass writes the engine's own events."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.variant = context.variant
        self.command = dict(context.command_fields)
        self.counter = 0
        self.texts: list[str] = []  # every reply text of the turn, printed or not
        self.last_message_text = ""  # the text of the last assistant event (its blocks' text)
        self.errors: list[str] = []
        self.structured: Any = None  # the branch answered through StructuredOutput, if any
        self.answer_open = False  # a model answer in progress (its blocks share one message id)
        self.message_id = ""
        self.requests = 0  # model requests made this turn (num_turns counts them)
        self.tool_calls = 0
        self.step_now: dict[str, Any] = {}  # the step being written
        self.before_call: set[int] = set()  # the say steps of an answer that ends in a call (id())

    def look_ahead(self, steps: list[dict[str, Any]]) -> None:
        """The turn's steps, before any is written: which says share their answer with a tool call
        (or a file change) after them, which qwen prints without the answer's usage."""
        current: list[int] = []
        for step in steps:
            if "say" in step:
                current.append(id(step))
            elif "tool" in step or "file_change" in step:
                self.before_call.update(current)
                current = []
            elif "model_error" in step or "error" in step:
                current = []

    # --- ids, times, counts ------------------------------------------------------------------

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def uuid(self) -> str:
        """A fresh UUIDv4, derived from the turn and a counter (the same again in a fresh state)."""
        return uuid_shaped(f"{self.context.id_seed}:uuid:{self._next()}", 4)

    def hex_id(self, prefix: str, width: int = 24) -> str:
        seed = f"{self.context.id_seed}:{prefix}:{self._next()}"
        digits = f"{fnv64(seed + '#1'):016x}{fnv64(seed + '#2'):016x}"
        return prefix + digits[:width]

    def input_tokens(self) -> int:
        return 1000 + tokens(self.context.prompt)

    def output_tokens(self) -> int:
        return tokens("".join(self.texts)) if self.texts else 1

    def _start_answer(self) -> bool:
        """Open a model answer when none is: True when this block starts a new one."""
        if self.answer_open:
            return False
        self.answer_open = True
        self.requests += 1
        self.message_id = self.new_message_id()
        return True

    # --- what the script's steps become --------------------------------------------------------

    def begin(self) -> list[tuple[int, bytes]]:
        return self.opening()

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        self.step_now = step
        match step:
            case {"say": _, "union": branch} if self.context.structured and self.structured_tool:
                self.structured = branch
                self._start_answer()
                call_id = self.tool_id()
                block = {"type": "tool_use", "id": call_id, "name": self.structured_tool, "input": branch}
                use = self.tool_use_event(block)
                self.answer_open = False
                return [use, self.structured_result_event(call_id)]
            case {"say": chunks}:
                text = "".join(chunks)
                self.texts.append(text)
                first = self._start_answer()
                return self.text_events(text, first)
            case {"think": text}:
                self._start_answer()
                return self.thinking_events(text)
            case {"tool": tool}:
                self._start_answer()
                self.tool_calls += 1
                call_id = self.tool_id()
                name, tool_input = self.tool_call(tool)
                block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
                use = self.tool_use_event(block)
                if tool.get("running"):  # a call that never finishes: no tool result
                    return [use]
                self.answer_open = False
                return [use, self.tool_result_event(call_id, name, tool)]
            case {"file_change": change}:
                self._start_answer()
                self.tool_calls += 1
                call_id = self.tool_id()
                path = os.path.normpath(os.path.join(self.context.cwd, change["path"]))
                block = {
                    "type": "tool_use",
                    "id": call_id,
                    "name": self.write_tool,
                    "input": self.write_input(path, change),
                }
                use = self.tool_use_event(block)
                self.answer_open = False
                return [use, self.write_result_event(call_id, path, change)]
            case {"error": {"message": message, "code": code, "transient": True}}:
                return self.retry_notice(message, code)
            case {"error": {"message": message, "code": code}}:
                self.errors.append(message)
                return self.api_error(message, code)
        raise AssertionError(step)

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            return [self.result_event()]
        if end == "failed":
            lines: list[tuple[int, bytes]] = []
            if not self.errors:  # a failed turn without an error step: the CLI's own error
                self.errors.append(last_error_message(self.errors))
                lines = self.api_error(self.errors[-1], None)
            return [*lines, self.error_result_event(self.errors[-1])]
        return []

    def reply_text(self) -> str:
        """What `result.result` echoes: the last reply text of the turn."""
        return self.texts[-1] if self.texts else ""

    # --- what each engine writes (overridden) ---------------------------------------------------

    # The tool a file change is written with, and the one a --json-schema answer is given through
    # (None: the engine's structured output is not modelled, the branch is said as text).
    write_tool = "Write"
    structured_tool: str | None = "StructuredOutput"

    @abstractmethod
    def opening(self) -> list[tuple[int, bytes]]:
        """The lines that open the turn: the `system` init event, and what the engine adds."""

    @abstractmethod
    def new_message_id(self) -> str:
        """The id of a new model answer, shared by its blocks' events."""

    @abstractmethod
    def tool_id(self) -> str:
        """The id of a tool call (`tool_use.id`, `tool_result.tool_use_id`)."""

    @abstractmethod
    def tool_call(self, tool: dict[str, Any]) -> tuple[str, Any]:
        """The tool's name and input as the engine's model calls it."""

    @abstractmethod
    def text_events(self, text: str, first: bool) -> list[tuple[int, bytes]]:
        """A reply text of the answer in progress (`first`: it opens the answer)."""

    @abstractmethod
    def thinking_events(self, text: str) -> list[tuple[int, bytes]]:
        """The model's visible thinking."""

    @abstractmethod
    def tool_use_event(self, block: dict[str, Any]) -> tuple[int, bytes]:
        """The assistant event carrying a `tool_use` block."""

    @abstractmethod
    def tool_result_event(self, call_id: str, name: str, tool: dict[str, Any]) -> tuple[int, bytes]:
        """The user event carrying the tool's result."""

    @abstractmethod
    def structured_result_event(self, call_id: str) -> tuple[int, bytes]:
        """The user event acknowledging a StructuredOutput call."""

    def write_input(self, path: str, change: dict[str, Any]) -> dict[str, Any]:
        return {"file_path": path, "content": change["content"]}

    @abstractmethod
    def write_result_event(self, call_id: str, path: str, change: dict[str, Any]) -> tuple[int, bytes]:
        """The user event carrying the file-writing tool's result."""

    @abstractmethod
    def retry_notice(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        """A transient error: what the engine prints while it retries."""

    @abstractmethod
    def api_error(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        """A failed model request, as the engine reports it before its failed `result`."""

    @abstractmethod
    def result_event(self) -> tuple[int, bytes]:
        """The `result` of a turn that completed."""

    @abstractmethod
    def error_result_event(self, message: str) -> tuple[int, bytes]:
        """The `result` of a failed turn."""


class PlainOutput:
    """`--output-format text` (the reply text alone) or `json` (the `result` object alone), as
    claude documents them: a stream format runs underneath and only its last line is printed."""

    def __init__(self, stream: MessageStream, output_format: str) -> None:
        self.stream = stream
        self.output_format = output_format

    def begin(self) -> list[tuple[int, bytes]]:
        self.stream.begin()
        return []

    def look_ahead(self, steps: list[dict[str, Any]]) -> None:
        self.stream.look_ahead(steps)

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        self.stream.step(step)
        return []

    def end(self, end: str) -> list[tuple[int, bytes]]:
        lines = self.stream.end(end)
        if not lines:
            return []
        if self.output_format == "json":
            return [lines[-1]]
        if end == "failed":
            return [text_line(self.stream.errors[-1] if self.stream.errors else "turn failed")]
        text = self.stream.reply_text()
        return [text_line(text)] if text else []


def event(document: dict[str, Any]) -> tuple[int, bytes]:
    """One stdout line: the event as compact JSON, non-ASCII as is (as every one of the three prints)."""
    return json_line(document)
