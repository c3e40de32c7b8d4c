"""kilo `run --format json` (Kilo CLI 7.7.7, an opencode fork): opencode's NDJSON events, kilo's way.

The events are opencode's (`step_start`, `text`, `reasoning`, `tool_use`,
`step_finish`, `error`), written by the same `JSON.stringify({type, timestamp,
sessionID, ...})` and with the same step rule (a tool call ends its step with
`step_finish` reason `tool-calls`), so this format is the opencode one
(`turngate.engines.fake.formats.opencode`) with what the real 7.7.7 was seen to do
otherwise (captures in `corpus/kilo/`):

- a part's keys are `id, sessionID, messageID, type, ...` (opencode 1.18.33:
  `id, messageID, sessionID`), its ids `prt_`/`msg_` and 26 characters;
- `step_finish` has `metrics{generation, source}` (output tokens a second) and
  `time{start, end, elapsed}`, and `cost` before `tokens`;
- a tool's state is `status, input, output, title, metadata{output, exit,
  description, truncated, approval}, time` (an error: `status, input, error,
  metadata{approval}, time`);
- a step starts when the model answers: a turn whose first request fails
  prints its `error` alone, no `step_start` (variant `error_before_step`);
- reasoning only with `--thinking` (`context.reasoning`);
- every error also goes to stderr as UI.error writes it (`Error: ` in bold
  bright red) before its line on stdout;
- a failed model request (`model_error`): retries are silent, then an
  APIError with `isRetryable: true` and exit 1, the provider's `statusCode`,
  `responseHeaders`, `responseBody` and `metadata.url` for a status (a message
  that is only the reason phrase followed by the body); a body that ends
  without its end-of-answer event is a finished answer (`step_finish` reason
  `other`, exit 0); for a connection dropped mid-body, `Connection reset by
  server` with the socket's metadata, after the `step_start` of the answer that
  was cut and before its text, and no `step_finish` (7.7.2's captures).

Variants (`variants: {kilo: {...}}`): `text_after_error` holds each text part
until the next line (an error goes first: the cut hazard's `step_start`,
`error`, `text`); `error_string` ends a failed turn that wrote no error as
kilo's run does when the model answered nothing: an empty step, then
`"error": "run ended without an assistant message\\n the model returned no output"`;
`cut_ends_step` ends a dropped connection too as an ended cut ends (never observed: every
ended cut ends so without it, 7.7.2 and 7.7.7, `corpus/kilo/real-*-hazard-cut*`): no error
at all, the answer's text, then `step_finish` reason `other` with no `metrics` and zero
tokens (no `total`), and exit 0.
"""

from __future__ import annotations

import sys
import time

from turngate.engines.fake.formats import (
    REASONS,
    RECOVERED,
    TurnContext,
    last_error_message,
    opencode,
    provider_message,
    text_line,
    tokens,
)
from turngate.engines.fake.jsonline import dumps
from turngate.engines.fake.sessions import fnv64, opencode_style_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# UI.error: bold bright red "Error: ", even when stderr is not a terminal (as opencode's).
ERROR_PREFIX = "\x1b[91m\x1b[1mError: \x1b[0m"
# What run prints when the model answered nothing (the bundled run command, 7.7.7).
NO_ASSISTANT_MESSAGE = "run ended without an assistant message\n the model returned no output"
# A model stream cut short, as 7.7.7 reported it (Bun's fetch: the socket closed mid-stream).
STREAM_CUT = "Connection reset by server"
SOCKET_CLOSED = (
    "The socket connection was closed unexpectedly. For more information, pass `verbose: true`"
    " in the second argument to fetch()"
)
# The provider's error body per status (OpenAI-compatible `error.type` and `error.code`).
_ERROR_TYPES = {429: "rate_limit_exceeded"}


def make(context: TurnContext) -> EventFormat | TextFormat:
    if context.output_format == "json":
        return EventFormat(context)
    return TextFormat(context)


class EventFormat(opencode.EventFormat):
    # A dropped connection's answer is held back (render_turn) and printed after the error, as 7.7.2
    # and 7.7.7 printed it (corpus/kilo/real-*-hazard-drop*: step_start, error, text).
    drop_withholds_answer = True

    def __init__(self, context: TurnContext) -> None:
        super().__init__(context)
        self.error_before_step = bool(context.variant["error_before_step"])
        self.text_after_error = bool(context.variant["text_after_error"])
        self.error_string = bool(context.variant["error_string"])
        self.cut_ends_step = bool(context.variant["cut_ends_step"])
        self.step_open = False
        self.step_started_ms = 0
        self.held: list[tuple[int, bytes]] = []  # a text part not written yet (text_after_error)

    # ids and parts --------------------------------------------------------------------------------

    def _next_message_id(self) -> str:
        self.message_count += 1
        return opencode_style_id("msg", f"{self.context.id_seed}:message:{self.message_count}")

    def _part_id(self) -> str:
        self.part_count += 1
        return opencode_style_id("prt", f"{self.context.id_seed}:{self.part_count}")

    def _part(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": self._part_id(),
            "sessionID": self.context.session_id,
            "messageID": self.message_id,
            "type": kind,
            **fields,
        }

    # steps --------------------------------------------------------------------------------------

    def _step_start(self) -> tuple[int, bytes]:
        line = self._event("step_start", part=self._part("step-start"))
        self.step_open = True
        self.step_started_ms = self.context.clock.current
        return line

    def _close_tool_step(self) -> list[tuple[int, bytes]]:
        """A tool call's step ends once the tool has run (unless a pause already ended it)."""
        if not self.after_tool:
            return []
        self.after_tool = False
        lines = [] if self.step_finished else [self._step_finish("tool-calls")]
        self.step_finished = False
        self.step_open = False
        self.message_id = self._next_message_id()
        return lines

    def _new_step_after_tool(self) -> list[tuple[int, bytes]]:
        """Before an answer's first part: its step starts (only now: the model has answered)."""
        lines = self._close_tool_step()
        if not self.step_open:
            lines.append(self._step_start())
        return lines

    def _step_finish(self, reason: str, *, counted: bool = True) -> tuple[int, bytes]:
        # a cut stream's step ends with nothing counted (the usage comes last, and never came)
        input_tokens, output_tokens = (
            (1000 + tokens(self.context.prompt), tokens(self.reply)) if counted else (0, 0)
        )
        end = self.context.clock.ms()
        elapsed = max(1, end - self.step_started_ms)
        part = self._part(
            "step-finish",
            reason=reason,
            **(
                {"metrics": {"generation": _js_number(output_tokens * 1000 / elapsed), "source": "computed"}}
                if counted
                else {}
            ),
            time={"start": self.step_started_ms, "end": end, "elapsed": elapsed},
            cost=0,
            tokens={
                **({"total": input_tokens + output_tokens} if counted else {}),
                "input": input_tokens,
                "output": output_tokens,
                "reasoning": 0,
                "cache": {"read": 0, "write": 0},
            },
        )
        self.step_open = False
        return self._event("step_finish", part=part)

    def _flush(self) -> list[tuple[int, bytes]]:
        held, self.held = self.held, []
        return held

    def begin(self) -> list[tuple[int, bytes]]:
        return [] if self.error_before_step else [self._step_start()]

    def before_pause(self) -> list[tuple[int, bytes]]:
        return [*self._flush(), *super().before_pause()]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"error": {"message": message, "code": code, "transient": transient}}:
                self.errors.append(message)
                lines = self._close_tool_step()
                return [*lines, *self._api_error(message, code, transient), *self._flush()]
            case {"say": chunks}:
                lines = [*self._flush(), *self._new_step_after_tool()]
                text = "".join(chunks)
                self.reply += text
                line = self._event("text", part=self._part("text", text=text, time=self._time()))
                if self.text_after_error:
                    self.held = [line]
                    return lines
                return [*lines, line]
            case {"think": text} if self.context.reasoning == "shown":
                lines = [*self._flush(), *self._new_step_after_tool()]
                part = self._part("reasoning", text=text, time=self._time())
                return [*lines, self._event("reasoning", part=part)]
            case {"think": _}:
                return self._flush()  # `run` without --thinking prints no reasoning
            case {"tool": tool} if not tool.get("running"):
                return [*self._flush(), *self._tool(tool)]
        # a running tool (never printed) and a file change (the `write` tool): opencode's
        return [*self._flush(), *super().step(step)]

    def _tool(self, tool: dict[str, Any]) -> list[tuple[int, bytes]]:
        lines = self._new_step_after_tool()
        self.after_tool = True
        given = tool["input"] if isinstance(tool["input"], dict) else {}
        # The shell tool's title is the description the model gave its call, else the command.
        title = next(
            (given[key] for key in ("description", "command") if isinstance(given.get(key), str)),
            tool["name"],
        )
        rule = {"permission": tool["name"], "pattern": "*", "action": "allow"}
        approval = {"source": "project", "rule": rule}  # the config's rule that let the call run
        state: dict[str, Any] = {"status": "completed" if tool["ok"] else "error", "input": tool["input"]}
        if tool["ok"]:
            state["output"] = tool["output"]
            state["title"] = title
            state["metadata"] = {
                "output": tool["output"],
                "exit": tool["exit_code"],
                "description": title,
                "truncated": False,
                "approval": approval,
            }
        else:
            state["error"] = tool["output"]
            state["metadata"] = {"approval": approval}
        state["time"] = self._time()
        call_id = f"call_{fnv64(self._part_id()):016x}"
        part = self._part("tool", callID=call_id, tool=tool["name"], state=state)
        return [*lines, self._event("tool_use", part=part)]

    # errors -------------------------------------------------------------------------------------

    def _error_lines(self, error: Any, shown: str) -> list[tuple[int, bytes]]:
        """An error as run writes it: UI.error's line on stderr, then the event on stdout."""
        self.errors_written += 1
        return [text_line(ERROR_PREFIX + shown, 2), self._event("error", error=error)]

    def _api_error(
        self,
        message: str,
        code: Any,
        retryable: bool,
        metadata: dict[str, Any] | None = None,
    ) -> list[tuple[int, bytes]]:
        """kilo's APIError. A provider message that is only the status's reason phrase is followed by
        the response body, `<reason>: <body>` (opencode's ProviderError message(), which kilo keeps:
        corpus/kilo/real-7.7.2-hazard-429 and -500, on stdout and on UI.error's stderr line); any other
        message stands alone (real-7.7.2-error, the research captures real-7.7.7-hazard-429, -500)."""
        data: dict[str, Any] = {"message": message}
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        if status is not None:
            data["statusCode"] = status
        data["isRetryable"] = retryable
        if status is not None:  # the provider answered: its response comes with the error
            response = self._response(message, status)
            if REASONS.get(status) == message:
                data["message"] = f"{message}: {response['responseBody']}"
            data.update(response)
        if metadata is not None:
            data["metadata"] = metadata
        return self._error_lines({"name": "APIError", "data": data}, data["message"])

    def _response(self, message: str, status: int) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        # The body and headers as turngate's model server sends them (Python's `", "` and `": "`, its
        # `turngate_scripted` code, http.server's `server` header), which kilo passes on whole.
        fields = f'"message": {dumps(message)}, "type": {dumps(kind)}, "code": "turngate_scripted"'
        body = f'{{"error": {{{fields}}}}}'
        headers = {
            "content-length": str(len(body.encode("utf-8"))),
            "content-type": "application/json",
            "date": _http_date(self.context.clock.current),
        }
        if status == 429:
            headers["retry-after"] = "1"
        headers["server"] = f"BaseHTTP/0.6 Python/{sys.version.split()[0]}"
        provider = self.context.model.split("/", 1)[0]
        return {
            "responseHeaders": headers,
            "responseBody": body,
            "metadata": {"url": f"https://{provider}.invalid/v1/chat/completions"},
        }

    def model_error(
        self, spec: dict[str, Any], answer: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, bytes]], int | str]:
        """7.7.2 and 7.7.7 (corpus/kilo/real-*-hazard-*). A body that ends without its end-of-answer
        event is a finished answer: its text, then `step_finish` reason `other` with nothing counted,
        exit 0, never asked again. A connection dropped mid-body is retried without a word, then the
        step the answer began, the `error` `Connection reset by server` and only then the answer's
        text (held back by render_turn: ``drop_withholds_answer``), exit 1. A refused request is
        retried without a word (a 429 as its retry-after says, a 500 with a growing back-off), then
        the APIError (its reason phrase followed by the body), exit 1. A request that succeeds on a retry goes
        on with the turn."""
        if spec["recovers"]:
            return [], RECOVERED
        if spec["cut"] and (self.cut_ends_step or not spec.get("dropped")):
            lines = [*self._new_step_after_tool(), *self._flush()]
            for step in answer if spec.get("dropped") else []:  # held back for a drop: printed here
                lines += [*self.step(step), *self._flush()]
            return [*lines, self._step_finish("other", counted=False)], 0
        if spec["cut"]:
            socket = {"code": "ECONNRESET", "syscall": "", "message": SOCKET_CLOSED}
            message = spec["message"] if spec["message"] is not None else STREAM_CUT
            lines = self._new_step_after_tool()  # the answer was streaming: its step had started
            lines += self._api_error(message, None, True, metadata=socket)
            for step in answer:  # the answer's parts, finalised after the error
                lines += [*self.step(step), *self._flush()]
            return lines, 1
        lines = self._close_tool_step()
        lines += self._api_error(provider_message(spec), spec["status"], True)
        return [*lines, *self._flush()], 1

    def end(self, end: str) -> list[tuple[int, bytes]]:
        if end == "completed":
            return [*self._flush(), *self._new_step_after_tool(), self._step_finish("stop")]
        if end == "none":
            # The turn never ends, but a tool call's step did when the tool ran (kilo writes its
            # step_finish "tool-calls" then): a stream that stops after a tool ends with it.
            return [*self._flush(), *self._close_tool_step()]
        if self.errors_written:
            return self._flush()
        if self.error_string:
            lines = [*self._flush(), *self._new_step_after_tool(), self._step_finish("stop")]
            return [*lines, *self._error_lines(NO_ASSISTANT_MESSAGE, NO_ASSISTANT_MESSAGE)]
        lines = self._close_tool_step()
        return [*lines, *self._api_error(last_error_message(self.errors), None, False), *self._flush()]


class TextFormat:
    """`--format default`, stdout not a terminal: each text trimmed on a line of its own, reasoning as
    `Thinking: <text>` with --thinking, errors on stderr (the bundled run command)."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context

    def begin(self) -> list[tuple[int, bytes]]:
        return []

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        match step:
            case {"say": chunks} if "".join(chunks).strip():
                return [text_line("".join(chunks).strip())]
            case {"think": text} if self.context.reasoning == "shown" and text.strip():
                return [text_line(f"Thinking: {text.strip()}")]
            case {"error": {"message": message}}:
                return [text_line(ERROR_PREFIX + message, 2)]
        return []  # tools and file changes: not shown here

    def end(self, end: str) -> list[tuple[int, bytes]]:
        return []


def _js_number(value: float) -> int | float:
    """A number as JavaScript prints it: a whole one without `.0`."""
    return int(value) if value.is_integer() else value


def _http_date(ms: int) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(ms // 1000))
