"""codebuddy `-p --output-format stream-json`: CodeBuddy Code 2.118.2's SDK messages.

As the real 2.118.2 printed them against a scripted model (captures in
`tests/data/real-captures/codebuddy/`): every turn opens with `system/init` (`uuid` is the
session id), `system/status` and a `file-history-snapshot` (the one line without a
`session_id`); events carry `__timestamp` and the turn's `_requestId`; the blocks of one
answer share an id (the provider's completion id, `chatcmpl_…`); a tool result is the
command's report as text (`Command: …\\nStdout: …`) with the raw outcome in `_meta`.

Its hazards: a reply text may be printed **only** in `result.result` (after thinking in the
same answer, or after an earlier text of the turn: variant `text_in_result_only`); a failed
request is an assistant text and a `result` `error_during_execution`, yet the process exits
0; a body that ends without its end-of-answer event is taken for a finished answer (`result`
success, exit 0); a connection dropped mid-body is a text per attempt and then no `result` at
all, the process never exiting; an unknown resume id is one `{"type":"error",…}` line, exit 0. With
`--json-schema` the answer is a `StructuredOutput` call, and codebuddy asks the model again:
its follow-up (`Done.`) is `result.result`, the branch `result.structured_output`.
"""

from __future__ import annotations

from turngate.engines.fake.formats import HANG, RECOVERED, TurnContext, provider_message
from turngate.engines.fake.formats.sdk_messages import SHELL_TOOLS, MessageStream, PlainOutput, event
from turngate.engines.fake.jsonline import dumps
from turngate.engines.fake.sessions import fnv64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STREAM_CUT = (
    "The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the"
    " second argument to fetch()"
)
STRUCTURED_ACK = "Structured output captured successfully"
# What the model answered codebuddy's request after a StructuredOutput call in the captures.
FOLLOW_UP = "Done."
TOOLS = (
    "Agent", "Read", "Write", "Edit", "Bash", "PowerShell", "Glob", "Grep", "EnterPlanMode", "ExitPlanMode",
    "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "WebFetch", "WebSearch", "TaskStop", "TaskOutput",
    "Skill", "SkillManage", "AskUserQuestion", "StructuredOutput", "ToolSearch", "DeferExecuteTool",
    "SendMessage", "TeamCreate", "TeamDelete", "NotebookEdit", "LSP", "ImageGen", "ImageEdit", "VideoGen",
    "EnterWorktree", "LeaveWorktree", "CronCreate", "CronDelete", "CronList", "WeChatReply", "WeComReply",
    "ComputerUse", "ListMcpResources", "ReadMcpResource", "WaitForMcpServers", "Workflow",
)  # fmt: skip
SLASH_COMMANDS = (
    "add-dir", "agents", "branch", "btw", "clear", "config", "context", "cost", "doctor", "exit", "export",
    "feedback", "fork", "gateway", "goal", "remote-control", "help", "hooks", "keybindings", "ide",
    "install-github-app", "login", "logout", "mcp", "memory", "migrate-installer", "model", "permissions",
    "plan", "pr-comments", "release-notes", "rename", "resume", "review", "rewind", "sandbox", "skills",
    "status", "terminal-setup", "upgrade", "vim", "tasks", "todos", "plugin", "reload-plugins",
    "plugin-validate", "theme", "output-style", "stats", "workflows", "effort", "deep-research", "simplify",
    "code-review", "verify", "copy", "debug", "model:text-to-video", "model:image-to-video", "init",
    "compact", "_compact", "statusline", "security-review", "commit", "commit-push-pr", "insights",
)  # fmt: skip


def make(context: TurnContext) -> CodebuddyStream | PlainOutput:
    stream = CodebuddyStream(context)
    if context.output_format == "stream-json":
        return stream
    return PlainOutput(stream, context.output_format)


def unknown_session(session_id: str, output_format: str, epoch_ms: int | None) -> tuple[bytes, str, int]:
    """2.118.2: one `error` line on stdout (no init, no `result`, no session id), and exit 0."""
    line = {"type": "error", "error": f"No conversation found with session ID: {session_id}"}
    return (dumps(line) + "\n").encode("utf-8"), "", 0


class CodebuddyStream(MessageStream):
    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.request_id = ""
        self.thought = False  # the answer in progress began with thinking
        self.printed_text = False  # a reply text of this turn was printed as an assistant event

    def _stamp(self) -> dict[str, str]:
        return {"__timestamp": self.context.clock.iso()}

    def opening(self) -> list[tuple[int, bytes]]:
        context = self.context
        self.request_id = self.hex_id("", 32)
        init = {
            "type": "system",
            "subtype": "init",
            "uuid": context.session_id,
            "session_id": context.session_id,
            "apiKeySource": "www.codebuddy.ai",
            "cwd": context.cwd,
            "tools": list(TOOLS),
            "mcp_servers": [],
            "model": context.model,
            "permissionMode": self.command.get("permission_mode") or "default",
            "slash_commands": list(SLASH_COMMANDS),
            "output_style": "default",
            **self._stamp(),
            "_requestId": self.request_id,
        }
        status = {
            "type": "system",
            "subtype": "status",
            "status": None,
            "uuid": self.uuid(),
            "session_id": context.session_id,
            **self._stamp(),
            "_requestId": self.request_id,
        }
        return [event(init), event(status), self._snapshot()]

    def _snapshot(
        self, backups: dict[str, Any] | None = None, message_id: str | None = None
    ) -> tuple[int, bytes]:
        """The file-history snapshot codebuddy takes before it sends the user's message (again), or,
        with ``backups``, the update naming the files its Write tool backed up."""
        return event(
            {
                "type": "file-history-snapshot",
                "id": self.uuid(),
                "timestamp": self.context.clock.ms(),
                "isSnapshotUpdate": backups is not None,
                "snapshot": {"messageId": message_id or self.uuid(), "trackedFileBackups": backups or {}},
                **self._stamp(),
                "_requestId": self.request_id,
            }
        )

    def new_message_id(self) -> str:
        return self.hex_id("chatcmpl_", 24)

    def tool_id(self) -> str:
        return self.hex_id("call_", 24)

    def tool_call(self, tool: dict[str, Any]) -> tuple[str, Any]:
        return ("Bash" if tool["name"] in SHELL_TOOLS else tool["name"]), tool["input"]

    def _assistant(
        self, block: dict[str, Any], *, own_id: bool = False, stop: str | None = None, request: bool = False
    ) -> tuple[int, bytes]:
        """An assistant event: the answer's id (or one of its own, for thinking and errors), and the
        turn's request id on tool calls and errors, as 2.118.2 printed them."""
        self.last_message_text = block.get("text", "") if block["type"] == "text" else ""
        identity = self.uuid() if own_id else self.message_id
        spent = block["type"] != "thinking" and not own_id
        # A thinking block's cache counts are null; a failure text's are 0, as an answer's
        # (corpus/codebuddy/real-2.118.2-think-message, real-2.118.2-error).
        cached = None if block["type"] == "thinking" else 0
        usage = {
            "input_tokens": self.input_tokens() if spent else 0,
            "output_tokens": self.output_tokens() if spent else 0,
            "cache_creation_input_tokens": cached,
            "cache_read_input_tokens": cached,
            "cache_creation": None,
            "server_tool_use": None,
            "service_tier": None,
        }
        message = {
            "id": identity,
            "content": [block],
            "model": self.context.model,
            "role": "assistant",
            "stop_reason": stop,
            "stop_sequence": None,
            "type": "message",
            "usage": usage,
        }
        document = {
            "type": "assistant",
            "uuid": identity,
            "session_id": self.context.session_id,
            "message": message,
            "parent_tool_use_id": None,
            **self._stamp(),
        }
        if request:
            document["_requestId"] = self.request_id
        return event(document)

    def _user(self, call_id: str, block: dict[str, Any], *, request: bool = True) -> tuple[int, bytes]:
        document = {
            "type": "user",
            "uuid": self.uuid(),
            "session_id": self.context.session_id,
            "message": {"content": [block], "role": "user"},
            "parent_tool_use_id": call_id,
            **self._stamp(),
        }
        if request:
            document["_requestId"] = self.request_id
        return event(document)

    def text_events(self, text: str, first: bool) -> list[tuple[int, bytes]]:
        if first:
            self.thought = False
        hidden = {
            "observed": self.thought or self.printed_text,
            "never": False,
            "always": True,
        }[self.variant["text_in_result_only"]]
        if hidden:
            return []  # only result.result will have it
        self.printed_text = True
        return [self._assistant({"type": "text", "text": text})]

    def thinking_events(self, text: str) -> list[tuple[int, bytes]]:
        self.thought = True
        return [self._assistant({"type": "thinking", "thinking": text, "signature": ""}, own_id=True)]

    def tool_use_event(self, block: dict[str, Any]) -> tuple[int, bytes]:
        return self._assistant(block, stop="tool_use", request=True)

    def tool_result_event(self, call_id: str, name: str, tool: dict[str, Any]) -> tuple[int, bytes]:
        output = tool["output"]
        if name != "Bash":
            block = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": [_text(output)],
                "is_error": not tool["ok"],
            }
            return self._user(call_id, block)
        command = tool["input"].get("command") if isinstance(tool["input"], dict) else None
        report = (
            f"Command: {command if isinstance(command, str) else ''}\nStdout: {output}\n\n"
            f"Stderr: (empty)\nExit Code: {tool['exit_code']}\nSignal: (none)"
        )
        raw: dict[str, Any] = {
            "exitCode": tool["exit_code"],
            "signal": None,
            "interrupted": False,
            "sandboxDenied": False,
            "stderrBytesTruncated": 0,
            "stdoutBytesTruncated": 0,
            "tool_error_code": "0" if tool["ok"] else "8002",
        }
        if not tool["ok"]:
            raw.update({"is_error": True, "error": report})
        # A failed command is `is_error: false` on the block all the same (its outcome is in _meta).
        block = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": [_text(report)],
            "is_error": False,
            "_meta": {"rawResponse": raw, "renderer": {"type": "text", "value": output}},
        }
        return self._user(call_id, block)

    def structured_result_event(self, call_id: str) -> tuple[int, bytes]:
        # codebuddy asks the model again after the call; its answer is printed only in result.result
        self.texts.append(FOLLOW_UP)
        self.requests += 1
        block = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": [_text(STRUCTURED_ACK)],
            "is_error": False,
        }
        return self._user(call_id, block)

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        lines = super().step(step)
        if "file_change" in step and len(lines) == 2:
            # Write backs the file up before it writes: two snapshot updates naming it come between
            # the call and its result (corpus/codebuddy/real-2.118.2-file-change/stdout).
            backup = {step["file_change"]["path"]: {"version": 1, "backupTime": self.context.clock.ms()}}
            message_id = self.uuid()
            lines[1:1] = [self._snapshot(backup, message_id), self._snapshot(backup, message_id)]
        return lines

    def write_result_event(self, call_id: str, path: str, change: dict[str, Any]) -> tuple[int, bytes]:
        # 2.118.2's words for a new file (an update's were not observed); the result has no _requestId
        text = (
            f"Successfully created and wrote to new file: {path}"
            if change["kind"] == "add"
            else f"File updated: {path}"
        )
        block = {"type": "tool_result", "tool_use_id": call_id, "content": [_text(text)], "is_error": False}
        return self._user(call_id, block, request=False)

    def retry_notice(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        return []  # no retry was seen: a custom model's failure is reported at once

    def _failure_text(self, message: str, code: Any) -> str:
        """A failed request as 2.118.2 words it: the status, the message, (request id/session id).
        The request id is the provider's (not the turn's `_requestId`, as in the captures): derived
        from the case and the turn, not the session, so the same failure reads the same in any state
        folder (a judge's records name sessions by their order, never a request)."""
        status = f"{code} " if isinstance(code, int) and not isinstance(code, bool) else ""
        context = self.context
        seed = f"{context.case_id}:{context.turn_number}:{context.repair_round}:failure:{len(self.errors)}"
        request = f"{fnv64(seed + '#1'):016x}{fnv64(seed + '#2'):016x}"
        return f"{status}{message} ({request}/{context.session_id})"

    def api_error(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        text = self._failure_text(message, code)
        self.errors[-1:] = [text]
        return [self._assistant({"type": "text", "text": text}, own_id=True, request=True)]

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """2.118.2 against a custom model: a 429 or 5xx is not retried: its text and the failed
        `result`, exit 0. A body that ends without its end-of-answer event is a finished answer: the
        answer as printed, then the `result` success holding it, exit 0, never retried
        (corpus/codebuddy/real-2.118.2-hazard-cut*). A connection dropped mid-body (`dropped`) is asked
        again at once; each failure is printed as a text (never the answer's text), a new
        file-history snapshot before each new attempt, and then nothing: no `result`, and the process
        never exits (corpus/codebuddy/real-2.118.2-hazard-drop*, killed by the recorder)."""
        lines: list[tuple[int, bytes]] = []
        if spec["cut"] and not spec.get("dropped"):
            if spec["recovers"]:  # the answer was taken as it ended: the turn goes on
                return lines, RECOVERED
            self.answer_open = False
            return [self.result_event()], 0
        if spec["cut"]:
            for attempt in range(spec["retries"] + (0 if spec["recovers"] else 1)):
                if attempt:
                    lines.append(self._snapshot())
                block = {"type": "text", "text": STREAM_CUT}
                lines.append(self._assistant(block, own_id=True, request=not attempt))
            return lines, RECOVERED if spec["recovers"] else HANG
        if spec["recovers"]:
            return lines, RECOVERED
        text = self._failure_text(provider_message(spec), spec["status"])
        self.errors.append(text)
        lines.append(self._assistant({"type": "text", "text": text}, own_id=True, request=True))
        lines.append(self.error_result_event(text))
        return lines, 0

    def _usage(self, spent: bool) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens() * max(self.requests, 1) if spent else 0,
            "output_tokens": self.output_tokens() if spent else 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": None,
            "server_tool_use": None,
            "service_tier": None,
        }

    def result_event(self) -> tuple[int, bytes]:
        elapsed = self.context.clock.elapsed_ms()
        result: dict[str, Any] = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": self.reply_text() if self.variant["result_echo"] else "",
            "uuid": self.uuid(),
            "session_id": self.context.session_id,
            "duration_ms": elapsed,
            "duration_api_ms": elapsed,
            "num_turns": 2 * max(self.requests, 1),
            "total_cost_usd": 0,
            "usage": self._usage(True),
            "permission_denials": [],
        }
        if self.structured is not None:
            result["structured_output"] = self.structured
        return event({**result, **self._stamp()})

    def error_result_event(self, message: str) -> tuple[int, bytes]:
        elapsed = self.context.clock.elapsed_ms()
        return event(
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "uuid": self.uuid(),
                "session_id": self.context.session_id,
                "duration_ms": elapsed,
                "duration_api_ms": elapsed,
                "num_turns": 2 * max(self.requests, 1),
                "total_cost_usd": 0,
                "usage": self._usage(False),
                "permission_denials": [],
                "errors": [message],
                **self._stamp(),
            }
        )


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}
