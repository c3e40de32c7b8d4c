"""Engine output formats: each turns content steps into the lines its real CLI writes.

A format object lives for one turn. `begin()` gives the lines that open the
turn, `step()` those of one content step (`say`, `think`, `tool`, `error`),
`end()` those that close it (`completed`, `failed` or `none`). Exact shapes:
docs/fake-engines.md.
"""

from __future__ import annotations

import time

from turngate.engines.fake.frozen import value
from turngate.engines.fake.jsonline import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Clock:
    """Milliseconds for event timestamps; fixed and ticking by 1 when reproducibility is asked for."""

    def __init__(self, fixed_start_ms: int | None) -> None:
        self.fixed = fixed_start_ms is not None
        self.current = fixed_start_ms if fixed_start_ms is not None else int(time.time() * 1000)
        self.start = self.current

    def ms(self) -> int:
        if self.fixed:
            self.current += 1
        else:
            self.current = int(time.time() * 1000)
        return self.current

    def iso(self) -> str:
        now = self.ms()
        seconds, millis = divmod(now, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"

    def elapsed_ms(self) -> int:
        return self.current - self.start


@value
class TurnContext:
    """Everything a format needs to know about the turn it writes."""

    engine: str
    case_id: str
    session_id: str
    turn_number: int  # 1-based
    resumed: bool
    prompt: str
    model: str
    cwd: str
    output_format: str
    variant: dict[str, Any]
    clock: Clock
    # The repair resume this turn answers (1, 2, …; turngate.engines.fake.repair), 0 for a turn.
    repair_round: int = 0
    # Invocation.reasoning: "" the format's own rule, "shown"/"hidden" as the emulated build decides.
    reasoning: str = ""
    # The command line asked for structured output: claude and codebuddy --json-schema with a JSON
    # object, which makes the model answer a final or pending branch through a StructuredOutput call.
    structured: bool = False
    # Which turn of this process it is: 1 for the first, more in a resident process.
    process_turn: int = 1
    # The command line's call-log fields (Invocation.log_fields): claude's permission_mode, qwen's
    # approval_mode, which some events repeat.
    command_fields: tuple[tuple[str, Any], ...] = ()
    # The real build emulated (TURNGATE_EMULATE, e.g. "2.1.326" for claude@2.1.326); "" the format's own.
    build: str = ""

    @property
    def id_seed(self) -> str:
        """What a format derives this turn's ids from: the session and the turn, and the repair
        round for a repair answer (a real engine's later message has new ids)."""
        base = f"{self.session_id}:{self.turn_number}"
        return f"{base}:repair{self.repair_round}" if self.repair_round else base


def json_line(document: Any, fd: int = 1) -> tuple[int, bytes]:
    return fd, (dumps(document) + "\n").encode("utf-8")


def text_line(text: str, fd: int = 1) -> tuple[int, bytes]:
    line = text if text.endswith("\n") else text + "\n"
    try:
        return fd, line.encode("utf-8")
    except UnicodeEncodeError:
        return fd, _as_printed(line)


def _as_printed(text: str) -> bytes:
    """Text with lone surrogates as a real CLI prints it: one kept by ``surrogateescape``
    (``\\udc80``..``\\udcff``) is the undecodable byte it stands for, any other (a string cut inside
    an emoji) U+FFFD, as Node writes a lone surrogate to a stream."""
    return b"".join(
        bytes([ord(char) - 0xDC00])
        if "\udc80" <= char <= "\udcff"
        else "\ufffd".encode()
        if "\ud800" <= char <= "\udfff"
        else char.encode("utf-8")
        for char in text
    )


def tokens(text: str) -> int:
    """A plausible, deterministic token count."""
    return max(1, len(text) // 4)


def last_error_message(errors: list[str]) -> str:
    return errors[-1] if errors else "turn failed"


# Failed model requests (the `model_error` step), as the real CLIs were seen to report them in
# November 2026 against a scripted model that cut its stream after a complete answer or answered
# 429 (codex 0.169.0, gemini 0.61.0, opencode 1.18.33; docs/fake-engines.md, "Model errors").
REASONS = {
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
CODEX_STREAM_CUT = "stream disconnected before completion: stream closed before response.completed"
# A connection dropped mid-body (model_error dropped: corpus/codex/real-0.169.0-hazard-drop, 0.146.1's too).
CODEX_STREAM_DROPPED = (
    "stream disconnected before completion: Transport error: network error: error decoding response body"
)
# What codex says for a 500 instead of the status (corpus/codex/real-*-hazard-500): 0.169.0 with a
# typographic apostrophe, 0.146.1 with a plain one.
CODEX_HIGH_DEMAND = "We{}re currently experiencing high demand, which may cause temporary errors."
# codex's default stream_max_retries: the N of "Reconnecting... n/N" on a turn that recovers.
CODEX_STREAM_RETRIES = 5
GEMINI_STREAM_CUT = "Model stream ended without a finish reason."
GEMINI_DROPPED = (
    "terminated"  # undici's error for a connection dropped mid-body (corpus/gemini/*-hazard-drop)
)
OPENCODE_DROPPED = "Connection reset by server"  # corpus/opencode/real-1.18.33-hazard-drop
OPENCODE_DROPPED_METADATA = {
    "code": "ECONNRESET",
    "syscall": "",
    "message": "The socket connection was closed unexpectedly. For more information, pass `verbose: true` in"
    " the second argument to fetch()",
}
GEMINI_QUOTA_ADVICE = (
    "Please wait and try again later. To increase your limits, request a quota increase through AI Studio,"
    " or switch to another /auth method"
)
# What a format's model_error answers instead of an exit code (turngate/engines/fake/plan.py).
RECOVERED = "recovered"
HANG = "hang"


def provider_message(spec: dict[str, Any]) -> str:
    """The provider's error message of a model_error: the script's, else the HTTP reason phrase."""
    if spec["message"] is not None:
        return str(spec["message"])
    return REASONS.get(spec["status"] or 0, "Model stream cut short")
