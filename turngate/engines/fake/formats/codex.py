"""codex `exec --json`: NDJSON items (or the legacy `msg` envelope); plain text without --json."""

from __future__ import annotations

import os

from turngate.engines.fake.formats import (
    CODEX_HIGH_DEMAND,
    CODEX_STREAM_CUT,
    CODEX_STREAM_DROPPED,
    CODEX_STREAM_RETRIES,
    REASONS,
    RECOVERED,
    TurnContext,
    json_line,
    last_error_message,
    text_line,
    tokens,
)
from turngate.engines.fake.jsonline import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION_BANNER = "OpenAI Codex v0.99.0 (research preview)"
SHELL_TOOLS = ("bash", "shell")
REQUEST_USER_INPUT = "request_user_input"
REQUEST_USER_INPUT_REFUSED = (
    "ERROR codex_core::tools::router: error=request_user_input is unavailable in Default mode"
)


def make(context: TurnContext) -> ItemsFormat | LegacyFormat | TextFormat:
    if context.output_format != "json":
        return TextFormat(context)
    if context.variant["envelope"] == "legacy_msg":
        return LegacyFormat(context)
    return ItemsFormat(context)


def _command(tool: dict[str, Any]) -> str:
    command = tool["input"].get("command")
    return command if isinstance(command, str) else dumps(tool["input"])


class _Turn:
    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.replies: list[str] = []
        self.errors: list[str] = []

    def usage(self) -> dict[str, int]:
        # Key order and set as real codex 0.146.1 and 0.169.0 print them (docs/real-engines.md).
        return {
            "input_tokens": 1000 + tokens(self.context.prompt),
            "cached_input_tokens": 0,
            "cache_write_input_tokens": 0,
            "output_tokens": tokens("".join(self.replies)),
            "reasoning_output_tokens": 0,
        }


class ItemsFormat(_Turn):
    """The current `exec --json` stream: thread/turn events and items."""

    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.item_count = 0

    def _item_id(self) -> str:
        item_id = f"item_{self.item_count}"
        self.item_count += 1
        return item_id

    def begin(self) -> list[tuple[int, bytes]]:
        return [
            json_line({"type": "thread.started", "thread_id": self.context.session_id}),
            json_line({"type": "turn.started"}),
        ]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.replies.append(text)
                item = {"id": self._item_id(), "type": "agent_message", "text": text}
                return [json_line({"type": "item.completed", "item": item})]
            case {"think": text}:
                item = {"id": self._item_id(), "type": "reasoning", "text": text}
                return [json_line({"type": "item.completed", "item": item})]
            case {"tool": tool}:
                return self._tool(tool)
            case {"file_change": change}:
                return self._file_change(change)
            case {"error": {"message": message, "transient": True}}:
                return [json_line({"type": "error", "message": message})]
            case {"error": {"message": message}}:
                self.errors.append(message)
                item = {"id": self._item_id(), "type": "error", "message": message}
                return [json_line({"type": "item.completed", "item": item})]
        raise AssertionError(step)

    def _file_change(self, change: dict[str, Any]) -> list[tuple[int, bytes]]:
        """apply_patch as 0.169.0 shows it: the changed paths (absolute) and kinds, never the content."""
        path = os.path.normpath(os.path.join(self.context.cwd, change["path"]))
        item: dict[str, Any] = {
            "id": self._item_id(),
            "type": "file_change",
            "changes": [{"path": path, "kind": change["kind"]}],
            "status": "in_progress",
        }
        return [
            json_line({"type": "item.started", "item": item}),
            json_line({"type": "item.completed", "item": {**item, "status": "completed"}}),
        ]

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """As 0.169.0 and 0.146.1 report a model request they gave up on: a top-level `error` line,
        then `turn.failed` naming it, exit 1. A cut stream is retried: `Reconnecting... n/N (…)`, and
        the answer streamed again is printed again (new items); a dropped one the same, with the
        transport's reason. A 500 is codex's "high demand" message, each retry announced; a 429's
        retries are announced from 0.169.0 on (0.146.1 and the default build retry it silently);
        other statuses are retried silently (not observed). A status that recovers is silent."""
        lines: list[tuple[int, bytes]] = []
        if spec["cut"]:
            reason = CODEX_STREAM_DROPPED if spec.get("dropped") else CODEX_STREAM_CUT
            limit = CODEX_STREAM_RETRIES if spec["recovers"] else spec["retries"]
            for attempt in range(1, spec["retries"] + 1):
                notice = f"Reconnecting... {attempt}/{limit} ({reason})"
                lines.append(json_line({"type": "error", "message": notice}))
                for step in answer:
                    lines += self.step(step)
            message = reason
        else:  # then the status, whatever the provider's body said
            status = spec["status"]
            if status == 500:
                message = CODEX_HIGH_DEMAND.format("\u2019" if self.context.build == "0.169.0" else "'")
            else:
                message = f"exceeded retry limit, last status: {status} {REASONS[status]}"
            announced = status == 500 or (status == 429 and self.context.build == "0.169.0")
            if announced and not spec["recovers"]:
                for attempt in range(1, spec["retries"] + 1):
                    notice = f"Reconnecting... {attempt}/{spec['retries']} ({message})"
                    lines.append(json_line({"type": "error", "message": notice}))
        if spec["recovers"]:
            return lines, RECOVERED
        self.errors.append(message)
        lines.append(json_line({"type": "error", "message": message}))
        lines += self.end("failed")
        return lines, 1

    def _tool(self, tool: dict[str, Any]) -> list[tuple[int, bytes]]:
        if tool["name"] == REQUEST_USER_INPUT:
            # Declared to the model, refused in exec: one timestamped line on stderr, nothing on stdout;
            # the refusal goes back to the model, which goes on (corpus/codex/real-*-request-user-input).
            when = self.context.clock.iso()[:-1] + "000Z"  # microseconds, as codex's log prints them
            return [text_line(f"{when} {REQUEST_USER_INPUT_REFUSED}", fd=2)]
        item_id = self._item_id()
        if tool["name"] in SHELL_TOOLS:
            started: dict[str, Any] = {
                "id": item_id,
                "type": "command_execution",
                "command": _command(tool),
                "aggregated_output": "",
                "exit_code": None,
                "status": "in_progress",
            }
            completed = {
                **started,
                "aggregated_output": tool["output"],
                "exit_code": tool["exit_code"],
                "status": "completed" if tool["ok"] else "failed",
            }
        else:
            started = {
                "id": item_id,
                "type": "mcp_tool_call",
                "server": "turngate",
                "tool": tool["name"],
                "arguments": tool["input"],
                "result": None,
                "error": None,
                "status": "in_progress",
            }
            if tool["ok"]:  # as 0.169.0 and 0.146.1 print it (corpus/codex/real-*-mcp-call)
                content = [{"type": "text", "text": tool["output"]}]
                outcome = {"result": {"content": content, "structured_content": None}}
            else:
                outcome = {"error": {"message": tool["output"]}}
            completed = {**started, **outcome, "status": "completed" if tool["ok"] else "failed"}
        if tool.get("running"):  # a call that never finishes: started, never completed
            return [json_line({"type": "item.started", "item": started})]
        return [
            json_line({"type": "item.started", "item": started}),
            json_line({"type": "item.completed", "item": completed}),
        ]

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            return [json_line({"type": "turn.completed", "usage": self.usage()})]
        if end == "failed":
            message = last_error_message(self.errors)
            return [json_line({"type": "turn.failed", "error": {"message": message}})]
        return []


class LegacyFormat(_Turn):
    """Older builds: every event wrapped as {"id": <submission>, "msg": {...}}."""

    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.call_count = 0

    def _event(self, msg: dict[str, Any]) -> tuple[int, bytes]:
        return json_line({"id": str(self.context.turn_number - 1), "msg": msg})

    def begin(self) -> list[tuple[int, bytes]]:
        return [
            self._event(
                {
                    "type": "session_configured",
                    "session_id": self.context.session_id,
                    "model": self.context.model,
                }
            ),
            self._event({"type": "task_started"}),
        ]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.replies.append(text)
                return [self._event({"type": "agent_message", "message": text})]
            case {"think": text}:
                return [self._event({"type": "agent_reasoning", "text": text})]
            case {"tool": tool}:
                return self._tool(tool)
            case {"file_change": _}:
                return []  # not modelled for the legacy envelope
            case {"error": {"message": message, "transient": True}}:
                return [self._event({"type": "stream_error", "message": message})]
            case {"error": {"message": message}}:
                self.errors.append(message)
                return [self._event({"type": "error", "message": message})]
        raise AssertionError(step)

    def _tool(self, tool: dict[str, Any]) -> list[tuple[int, bytes]]:
        self.call_count += 1
        call_id = f"call_{self.call_count}"
        begin: dict[str, Any]
        finish: dict[str, Any]
        if tool["name"] in SHELL_TOOLS:
            begin = {
                "type": "exec_command_begin",
                "call_id": call_id,
                "command": ["bash", "-lc", _command(tool)],
                "cwd": self.context.cwd,
            }
            finish = {
                "type": "exec_command_end",
                "call_id": call_id,
                "stdout": tool["output"],
                "stderr": "",
                "aggregated_output": tool["output"],
                "exit_code": tool["exit_code"],
            }
        else:
            invocation = {"server": "turngate", "tool": tool["name"], "arguments": tool["input"]}
            begin = {"type": "mcp_tool_call_begin", "call_id": call_id, "invocation": invocation}
            content = {"content": [{"type": "text", "text": tool["output"]}]}
            result: dict[str, Any] = content if tool["ok"] else {"error": tool["output"]}
            finish = {
                "type": "mcp_tool_call_end",
                "call_id": call_id,
                "invocation": invocation,
                "result": result,
            }
        if tool.get("running"):
            return [self._event(begin)]
        return [self._event(begin), self._event(finish)]

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            last = self.replies[-1] if self.replies else None
            return [self._event({"type": "task_complete", "last_agent_message": last})]
        if end == "failed":
            return [self._event({"type": "error", "message": last_error_message(self.errors)})]
        return []


class TextFormat(_Turn):
    """Without --json: a human-readable log on stderr and the last reply on stdout."""

    def begin(self) -> list[tuple[int, bytes]]:
        header = (
            f"{VERSION_BANNER}\n--------\nworkdir: {self.context.cwd}\n"
            f"model: {self.context.model}\nprovider: openai\napproval: never\n"
            f"sandbox: workspace-write\nsession id: {self.context.session_id}\n--------\n"
            f"user\n{self.context.prompt}\n"
        )
        return [text_line(header, 2)]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks}:
                text = "".join(chunks)
                self.replies.append(text)
                return [text_line(f"codex\n{text}", 2)]
            case {"think": text}:
                return [text_line(f"thinking\n{text}", 2)]
            case {"tool": tool} if tool.get("running"):
                return [text_line(f"exec\n{_command(tool)}", 2)]
            case {"tool": tool}:
                status = "succeeded" if tool["ok"] else f"exited {tool['exit_code']}"
                return [text_line(f"exec\n{_command(tool)}\n {status}:\n{tool['output']}", 2)]
            case {"file_change": change}:
                return [text_line(f"apply_patch\n{change['kind']} {change['path']}", 2)]
            case {"error": {"message": message}}:
                self.errors.append(message)
                return [text_line(f"ERROR: {message}", 2)]
        raise AssertionError(step)

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            used = sum(self.usage().values())
            pieces = [text_line(f"tokens used\n{used}", 2)]
            if self.replies:
                pieces.append(text_line(self.replies[-1], 1))
            return pieces
        if end == "failed":
            return [text_line(f"ERROR: {last_error_message(self.errors)}", 2)]
        return []
