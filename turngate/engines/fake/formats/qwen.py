"""qwen `--output-format stream-json`: Qwen Code 0.24.4's SDK messages.

As the real 0.24.4 printed them against a scripted model (captures in
`tests/data/real-captures/qwen/`): every event starts `type, (subtype,) uuid, session_id`;
the init event's `uuid` is the session id; a stray `stream_event` (`goal_state`) follows
it in a process's first turn; each content block is an `assistant` event of its own,
with a new id per block; a `result` echoes the last assistant message's text. A failed
request is the assistant text `[API Error: …]` and a `result` `error_during_execution`,
exit 1; retries are `system/retry` lines and `Retrying …` lines on stderr, a rate limit's on the
schedule the settings give (`model.generationConfig`: `maxRetries`, `retryInitialDelayMs`,
`retryMaxDelayMs` of `~/.qwen/settings.json`, then of the workspace's `.qwen/settings.json`). Every turn
of a `--approval-mode yolo` process warns on stderr first (unless
`QWEN_CODE_SUPPRESS_YOLO_WARNING=1`).

Not captured, so not modelled: `--json-schema` (qwen's own `structured_output` tool;
Skill-Runner does not pass it to qwen): a final or pending step is the reply text, as
for any engine.
"""

from __future__ import annotations

import json
import os

from turngate.engines.fake.formats import (
    GEMINI_STREAM_CUT,
    RECOVERED,
    TurnContext,
    provider_message,
    text_line,
)
from turngate.engines.fake.formats.sdk_messages import SHELL_TOOLS, MessageStream, PlainOutput, event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = "0.24.4"
YOLO_WARNING = (
    "Warning: running headless with --yolo / approval-mode=yolo and no sandbox. All tool calls (shell,"
    " write, edit) auto-execute at this process's privilege level. Configure tools.executionSandbox on"
    " Linux or a supported legacy sandbox via --sandbox / QWEN_SANDBOX, or set"
    " QWEN_CODE_SUPPRESS_YOLO_WARNING=1 to silence this notice."
)
# What qwen adds under a rate limit's `[API Error: 429 …]` once it gives up (not in its retry notices):
# corpus/qwen/real-0.24.4-hazard-429.
RATE_LIMIT_ADVICE = (
    "Possible quota limitations in place or slow response times detected. Please wait and try again later."
)
# A connection dropped mid-body (corpus/qwen/real-0.24.4-hazard-drop*, and the research capture
# tests/data/real-captures/qwen/hazard-cut, whose server dropped it too).
STREAM_DROPPED = "terminated (cause: UND_ERR_SOCKET: other side closed)"
# How many times 0.24.4 asks again, whatever its retry limit, when a model answer's body ends without
# its end-of-answer event (8: corpus/qwen/real-0.24.4-hazard-cut, retry limit 0, and -hazard-cut-retried,
# limit 2) and when the connection is dropped mid-body (2: real-0.24.4-hazard-drop, limit 0,
# -hazard-drop-retried, limit 2, and the research capture, qwen's default limit).
ENDED_CUT_RETRIES = 8
DROPPED_RETRIES = 2
TOOLS = (
    "web_fetch", "get_goal", "update_goal", "tool_call", "tool_search", "read_mcp_resource", "agent",
    "list_agents", "send_message", "skill", "read_file", "zoom_image", "write_file", "run_shell_command",
    "report_findings", "enter_worktree", "exit_worktree", "record_artifact", "cron_create", "cron_list",
    "cron_delete", "loop_wakeup", "monitor", "task_stop", "grep_search", "glob", "edit", "notebook_edit",
)  # fmt: skip
SLASH_COMMANDS = (
    "auth", "batch", "browser-use", "bug", "clear", "compress", "compress-fast", "computer-use", "config",
    "context", "coordinate", "curator", "dataviz", "diff", "docs", "doctor", "effort", "export",
    "extension-creator", "extensions", "goal", "goal-draft", "hooks", "import-config", "init", "insight",
    "language", "loop", "model", "new-app", "output-style", "qc-helper", "review", "simplify", "stats",
    "status", "stuck", "summary", "tasks", "update", "workflow-authoring", "workflow-creator",
    "zvec-grep-install",
)  # fmt: skip
AGENTS = ("general-purpose", "Explore", "statusline-setup", "review-agent", "claude-code", "codex")
# qwen's retry schedule for a rate limit when its settings name none (model.generationConfig): at most
# 10 retries, the first after 60 s, each delay twice the one before, at most 5 min (60 s, 120 s: the
# research capture tests/data/real-captures/qwen/hazard-429, killed in its second wait; 1 s, 2 s for
# retryInitialDelayMs 1000 and retryMaxDelayMs 2000: corpus/qwen/real-0.24.4-hazard-429).
MAX_RETRIES = 10
RATE_LIMIT_DELAY_MS = 60000
RATE_LIMIT_MAX_DELAY_MS = 300000
SETTINGS = "settings.json"


def make(context: TurnContext) -> QwenStream | PlainOutput:
    stream = QwenStream(context)
    if context.output_format == "stream-json":
        return stream
    return PlainOutput(stream, context.output_format)


def unknown_session(session_id: str, output_format: str, epoch_ms: int | None) -> tuple[bytes, str, int]:
    """0.24.4: the reason on stderr, nothing on stdout, exit 1."""
    return (
        b"",
        f"No saved session found with ID {session_id}. Run `qwen --resume` without an ID to choose"
        " from existing sessions.\n",
        1,
    )


def retry_settings(cwd: str) -> tuple[int, int, int]:
    """`maxRetries`, `retryInitialDelayMs` and `retryMaxDelayMs` of `model.generationConfig`, as qwen
    reads its settings: the user's (`~/.qwen/settings.json`), then the workspace's (`.qwen/settings.json`
    in the working directory), a later value winning. A file that is missing or not JSON, or a value
    that is not a whole number (>= 0 for the limit, > 0 for a delay), leaves the default."""
    found: dict[str, int] = {}
    for folder in (os.path.expanduser("~"), cwd):
        try:
            with open(os.path.join(folder, ".qwen", SETTINGS), encoding="utf-8") as handle:
                settings = json.load(handle)
        except (OSError, ValueError):
            continue
        model = settings.get("model") if isinstance(settings, dict) else None
        config = model.get("generationConfig") if isinstance(model, dict) else None
        if not isinstance(config, dict):
            continue
        for key, least in (("maxRetries", 0), ("retryInitialDelayMs", 1), ("retryMaxDelayMs", 1)):
            value = config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= least:
                found[key] = value
    return (
        found.get("maxRetries", MAX_RETRIES),
        found.get("retryInitialDelayMs", RATE_LIMIT_DELAY_MS),
        found.get("retryMaxDelayMs", RATE_LIMIT_MAX_DELAY_MS),
    )


class QwenStream(MessageStream):
    write_tool = "write_file"
    structured_tool = None
    answered = False  # an answer of the turn came whole (its event carries the usage)

    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.cut_answers: set[int] = set()  # the say and think steps of an answer that is cut (id())
        self.schedule: tuple[int, int, int] | None = None  # retry_settings, read when first needed

    def look_ahead(self, steps: list[dict[str, Any]]) -> None:
        """Besides the answers a tool call follows: the answers a `model_error` cut ends, which qwen
        never prints (it asks again; a retry that succeeds prints the new answer)."""
        super().look_ahead(steps)
        current: list[int] = []
        for step in steps:
            if "say" in step or "think" in step:
                current.append(id(step))
            elif "model_error" in step:
                if step["model_error"].get("cut"):
                    self.cut_answers.update(current)
                current = []
            elif "tool" in step or "file_change" in step or "error" in step:
                current = []

    def _head(self, kind: str, subtype: str | None = None, **fields: Any) -> dict[str, Any]:
        head: dict[str, Any] = {"type": kind}
        if subtype is not None:
            head["subtype"] = subtype
        return {**head, "uuid": self.uuid(), "session_id": self.context.session_id, **fields}

    def opening(self) -> list[tuple[int, bytes]]:
        context = self.context
        lines: list[tuple[int, bytes]] = []
        approval = self.command.get("approval_mode", "default")
        if (
            approval == "yolo"
            and context.process_turn == 1
            and os.environ.get("QWEN_CODE_SUPPRESS_YOLO_WARNING") != "1"
        ):
            lines.append(text_line(YOLO_WARNING, 2))
        init = {
            "type": "system",
            "subtype": "init",
            "uuid": context.session_id,
            "session_id": context.session_id,
            "cwd": context.cwd,
            "tools": list(TOOLS),
            "mcp_servers": [],
            "model": context.model,
            "permission_mode": approval,
            "slash_commands": list(SLASH_COMMANDS),
            "qwen_code_version": VERSION,
            "agents": list(AGENTS),
        }
        lines.append(event(init))
        if context.process_turn == 1 and self.variant["goal_state"]:
            goal = {"type": "goal_state", "goal_state": {"v": 2, "goal": None, "activity": "idle"}}
            lines.append(event(self._head("stream_event", parent_tool_use_id=None, event=goal)))
        return lines

    def new_message_id(self) -> str:
        return ""  # every block has an id of its own (its event's uuid)

    def tool_id(self) -> str:
        return self.hex_id("call_", 16)

    def tool_call(self, tool: dict[str, Any]) -> tuple[str, Any]:
        return ("run_shell_command" if tool["name"] in SHELL_TOOLS else tool["name"]), tool["input"]

    def _assistant(
        self, block: dict[str, Any], *, spent: bool = True, stop: str | None = None
    ) -> tuple[int, bytes]:
        self.last_message_text = block.get("text", "") if block["type"] == "text" else ""
        uuid = self.uuid()
        usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0}
        if spent:
            self.answered = True
            prompt, reply = self.input_tokens(), self.output_tokens()
            usage = {
                "input_tokens": prompt,
                "output_tokens": reply,
                "cache_read_input_tokens": 0,
                "total_tokens": prompt + reply,
            }
        message = {
            "id": uuid,
            "type": "message",
            "role": "assistant",
            "model": self.context.model,
            "content": [block],
            "stop_reason": stop,
            "usage": usage,
        }
        return event(
            {
                "type": "assistant",
                "uuid": uuid,
                "session_id": self.context.session_id,
                "parent_tool_use_id": None,
                "message": message,
            }
        )

    def _user(self, call_id: str, ok: bool, content: str) -> tuple[int, bytes]:
        block = {"type": "tool_result", "tool_use_id": call_id, "is_error": not ok, "content": content}
        return event(
            self._head("user", parent_tool_use_id=None, message={"role": "user", "content": [block]})
        )

    def text_events(self, text: str, first: bool) -> list[tuple[int, bytes]]:
        if id(self.step_now) in self.cut_answers:
            return []  # printed only if a retry brings it whole (model_error)
        return [self._text(text, self.step_now)]

    def _text(self, text: str, step: dict[str, Any]) -> tuple[int, bytes]:
        # A text the answer's tool call follows carries no usage of its own: the call's event has the
        # answer's (tests/data/real-captures/qwen/ne-two-messages.stdout).
        spent = id(step) not in self.before_call
        return self._assistant({"type": "text", "text": text}, spent=spent)

    def thinking_events(self, text: str) -> list[tuple[int, bytes]]:
        if id(self.step_now) in self.cut_answers:
            return []
        return [self._thinking(text)]

    def _thinking(self, text: str) -> tuple[int, bytes]:
        return self._assistant({"type": "thinking", "thinking": text, "signature": ""}, spent=False)

    def tool_use_event(self, block: dict[str, Any]) -> tuple[int, bytes]:
        return self._assistant(block, stop="tool_use")

    def tool_result_event(self, call_id: str, name: str, tool: dict[str, Any]) -> tuple[int, bytes]:
        output = tool["output"]
        if not tool["ok"] and name == "run_shell_command":
            command = tool["input"].get("command") if isinstance(tool["input"], dict) else None
            shown = command if isinstance(command, str) else ""
            output = (
                f"Command: {shown}\nDirectory: (root)\nOutput: {output}\n"
                f"Error: (none)\nExit Code: {tool['exit_code']}\nSignal: (none)\nProcess Group PGID: (none)"
            )
        return self._user(call_id, tool["ok"], output)

    def structured_result_event(self, call_id: str) -> tuple[int, bytes]:
        raise AssertionError("qwen's structured output is not modelled")  # structured_tool is None

    def write_result_event(self, call_id: str, path: str, change: dict[str, Any]) -> tuple[int, bytes]:
        # gemini-cli's write_file messages, which the fork keeps
        if change["kind"] == "add":
            return self._user(call_id, True, f"Successfully created and wrote to new file: {path}.")
        return self._user(call_id, True, f"Successfully overwrote file: {path}.")

    def retry_notice(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        return self._retry(1, f"[API Error: {_with_code(code, message)}]")

    def _schedule(self) -> tuple[int, int, int]:
        if self.schedule is None:
            self.schedule = retry_settings(self.context.cwd)
        return self.schedule

    def _retry(self, attempt: int, message: str) -> list[tuple[int, bytes]]:
        """A retry with its schedule: the `system/retry` line and qwen's stderr line. The delay is
        printed, not waited (the fake's turn lasts no longer for it)."""
        limit, first, most = self._schedule()
        delay = min(first * 2 ** min(attempt - 1, 62), most)
        data = {
            "reason": "retry",
            "attempt": attempt,
            "maxRetries": limit,
            "delayMs": delay,
            "discardedToolCalls": 0,
            "preserveText": False,
        }
        # whole seconds only were seen (1 s, 2 s, 60 s, 120 s); a fraction is rounded
        notice = f"Retrying in {(delay + 500) // 1000}s (attempt {attempt}/{limit}): {message}"
        return [
            event(self._head("system", "retry", parent_tool_use_id=None, data=data)),
            text_line(notice, 2),
        ]

    def _provider_retry(self) -> list[tuple[int, bytes]]:
        """A retry without a schedule (the request asked again at once): a `system/retry` line
        without attempt numbers, and qwen's stderr line."""
        data = {"reason": "retry", "discardedToolCalls": 0, "preserveText": False}
        return [
            event(self._head("system", "retry", parent_tool_use_id=None, data=data)),
            text_line("Retrying provider attempt (0 buffered tool call(s) discarded).", 2),
        ]

    def api_error(self, message: str, code: Any) -> list[tuple[int, bytes]]:
        text = _failure_text(code, message)
        self.errors[-1:] = [text]
        return [self._assistant({"type": "text", "text": text}, spent=False)]

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """0.24.4 (corpus/qwen/real-0.24.4-hazard-*). A cut answer is never printed: qwen asks again
        at once (a provider retry each time) as often as it does whatever its retry limit, 8 times for
        a body that ends without its end-of-answer event and 2 for a dropped connection, then gives up
        with `[API Error: Model stream ended without a finish reason.]` or `[API Error: terminated
        (cause: UND_ERR_SOCKET: other side closed)]`; a retry that succeeds (`recovers`, `retries`
        within that count) prints the answer. A rate limit is retried on the settings' schedule, at
        most `maxRetries` times (each retry announced, then asked again: a provider retry); a 5xx is
        retried inside the request, silently. Giving up: `[API Error: …]` and the failed `result`,
        exit 1. A script that asks for more retries than qwen makes gives up where qwen does."""
        lines: list[tuple[int, bytes]] = []
        message = provider_message(spec)
        retries = spec["retries"]
        if spec["cut"]:
            most = DROPPED_RETRIES if spec.get("dropped") else ENDED_CUT_RETRIES
            recovers = spec["recovers"] and retries <= most
            for _ in range(retries if recovers else most):
                lines += self._provider_retry()
            if recovers:
                for step in answer:
                    if id(step) not in self.cut_answers:
                        continue  # printed already (an answer an earlier retry brought)
                    self.cut_answers.discard(id(step))
                    if "say" in step:
                        lines.append(self._text("".join(step["say"]), step))
                    elif "think" in step:
                        lines.append(self._thinking(step["think"]))
                return lines, RECOVERED
            text = f"[API Error: {STREAM_DROPPED if spec.get('dropped') else GEMINI_STREAM_CUT}]"
        else:
            recovers = spec["recovers"]
            if spec["status"] == 429:
                limit = self._schedule()[0]
                recovers = recovers and retries <= limit
                for attempt in range(1, (retries if recovers else min(retries, limit)) + 1):
                    lines += self._retry(attempt, f"[API Error: 429 {message}]")
                    lines += self._provider_retry()
            if recovers:
                return lines, RECOVERED
            text = _failure_text(spec["status"], message)
        self.errors.append(text)
        lines.append(self._assistant({"type": "text", "text": text}, spent=False))
        lines.append(self.error_result_event(text))
        return lines, 1

    def reply_text(self) -> str:
        # BaseJsonOutputAdapter.buildResultMessage: the text blocks of the last assistant message
        return self.last_message_text

    def _usage(self) -> dict[str, int]:
        prompt, reply = self.input_tokens() * max(self.requests, 1), self.output_tokens()
        return {
            "input_tokens": prompt,
            "output_tokens": reply,
            "cache_read_input_tokens": 0,
            "total_tokens": prompt + reply,
        }

    def result_event(self) -> tuple[int, bytes]:
        elapsed = self.context.clock.elapsed_ms()
        return event(
            self._head(
                "result",
                "success",
                is_error=False,
                duration_ms=elapsed,
                duration_api_ms=elapsed // 2,
                num_turns=max(self.requests, 1),
                result=self.reply_text(),
                usage=self._usage(),
                permission_denials=[],
            )
        )

    def error_result_event(self, message: str) -> tuple[int, bytes]:
        return event(
            self._head(
                "result",
                "error_during_execution",
                is_error=True,
                duration_ms=self.context.clock.elapsed_ms(),
                duration_api_ms=0,
                num_turns=max(self.requests, 1),
                # the answers that came before the failure count, as in a success (the capture of
                # engine-fault/failed-after-marker/rate-limited, live fidelity run of 2026-11-25)
                usage=self._usage()
                if self.answered
                else {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0},
                permission_denials=[],
                error={"message": message},
            )
        )


def _failure_text(code: Any, message: str) -> str:
    """The text of a request qwen gave up on: `[API Error: …]`, with its advice under a 429."""
    text = f"[API Error: {_with_code(code, message)}]"
    return f"{text}\n{RATE_LIMIT_ADVICE}" if code == 429 and not isinstance(code, bool) else text


def _with_code(code: Any, message: str) -> str:
    return f"{code} {message}" if isinstance(code, int) and not isinstance(code, bool) else message
