"""A script turn as model rounds: what the model answers to each request a real CLI makes in one turn.

A fake engine writes a whole turn at once; a real CLI asks the model, runs the
tool calls it is given, and asks again with their results. So a turn's steps
are cut after every ``tool`` (and ``file_change``) step: each piece is one
model answer (a *round*), the last one carries the final reply. ``ask_user``
steps were compiled to ``say`` text (turngate/engines/fake/compiler.py), which
is exactly what a model writes. An ``error`` step makes its round an HTTP 4xx
the CLI reports; a ``model_error`` step makes it a *fault*: a 429/5xx, or a
stream cut after the answer so far, on every attempt or (``recovers``) on the
first ``retries`` attempts only.

A ``sleep`` before a round's answer is the model answering slowly: the server
waits that long. Anything a model cannot produce (raw bytes, crashes, hangs,
truncation, stderr noise, a daemonised descendant, a process that lingers, a
pause inside one answer, a tool call that never finishes, engine-specific
variants) makes a turn *unplayable* by a real engine: `playable` says why,
naming the step, so fidelity runs and `--engines real` skip the case with
the reason instead of playing the script without it and calling that a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from turngate.engines.fake.compiler import VARIANT_DEFAULTS as _DEFAULT_VARIANTS

# Steps that only shape how the engine's process behaves (its bytes, its exit, its descendants); a
# model server cannot make a real CLI do them.
_PROCESS_STEPS: Final = frozenset({"raw", "crash", "hang", "truncate", "stderr", "split", "pad", "detach"})
# Steps the model server plays. A step kind in neither set is refused by name too, so a step the fake
# engines learn later is never dropped silently from a real engine's play (which would make the case
# pass without testing what it is about).
_PLAYED: Final = frozenset({"say", "think", "tool", "error", "model_error", "file_change", "sleep"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str  # the script's tool name (bash, shell, read_file, an MCP tool...)
    input: Mapping[str, Any]
    output: str  # what the command the CLI runs prints
    exit_code: int  # what that command exits with


@dataclass(frozen=True, slots=True)
class FileChange:
    """A ``file_change`` step: the model calls the CLI's own file-writing tool."""

    path: str  # relative to the CLI's working directory (the script schema keeps it inside)
    kind: str  # add or update
    content: str


@dataclass(frozen=True, slots=True)
class Fault:
    """A ``model_error`` step: the model request fails, as a status or as a stream cut short."""

    status: int | None  # an HTTP status (429, 5xx); None: a cut stream
    message: str | None  # the provider's message (None: the reason phrase)
    retries: int  # how many times the CLI asks again (the launcher sets the CLI's retry limit to it)
    recovers: bool  # the attempt after `retries` failed ones succeeds
    thinking: tuple[str, ...]  # what the model streamed before a cut
    text: tuple[tuple[str, ...], ...]
    dropped: bool = False  # a cut whose connection is dropped mid-body (else the server's cut_style)


@dataclass(frozen=True, slots=True)
class Round:
    """One model answer: reasoning, reply text pieces, then at most one call (a tool or a file
    change) or an error; a fault may fail the request instead."""

    thinking: tuple[str, ...] = ()
    text: tuple[tuple[str, ...], ...] = ()  # one entry per say step, as its chunks
    tool: ToolCall | None = None
    error: str | None = None  # answer with a 4xx carrying this message
    change: FileChange | None = None
    fault: Fault | None = None
    delay: float = 0.0  # seconds the model takes before it answers (the round's leading sleep steps)

    @property
    def final(self) -> bool:
        return self.tool is None and self.change is None


def rounds_of(turn: Mapping[str, Any]) -> tuple[Round, ...]:
    """The rounds of one compiled turn (turngate/engines/fake/compiler.py shape); at least one."""
    rounds: list[Round] = []
    thinking: list[str] = []
    text: list[tuple[str, ...]] = []
    error: str | None = None
    fault: Fault | None = None
    delay = 0.0

    def close(tool: ToolCall | None = None, change: FileChange | None = None) -> None:
        nonlocal thinking, text, error, fault, delay
        rounds.append(Round(tuple(thinking), tuple(text), tool, error, change, fault, delay))
        thinking, text, error, fault, delay = [], [], None, None, 0.0

    for step in turn["steps"]:
        match step:
            case {"think": str(thought)}:
                thinking.append(thought)
            case {"say": list(chunks)}:
                text.append(tuple(chunks))
            case {"tool": dict(spec)}:
                close(tool=ToolCall(spec["name"], spec["input"], spec["output"], spec["exit_code"]))
            case {"file_change": dict(spec)}:
                close(change=FileChange(spec["path"], spec["kind"], spec["content"]))
            case {"error": {"message": str(message)}}:
                error = error or message  # the first error of the round is the one the CLI sees
            case {"model_error": dict(spec)} if fault is None:
                fault = Fault(
                    spec.get("status"),
                    spec.get("message"),
                    int(spec.get("retries") or 0),
                    bool(spec.get("recovers")),
                    tuple(thinking),
                    tuple(text),
                    bool(spec.get("dropped")),
                )
                if not fault.recovers:
                    break  # a fault the CLI does not get past ends the turn (as in the fake engines)
            case {"sleep": int(seconds) | float(seconds)}:
                delay += seconds  # playable() refuses a sleep after the answer began
            case _:
                pass  # process steps: refused by playable()
    close()
    # A failed turn with no error step still fails: the model answers the last round with a 4xx.
    if turn.get("end") == "failed" and not any(r.error or r.fault for r in rounds):
        last = rounds[-1]
        rounds[-1] = Round(last.thinking, last.text, None, "turn failed", last.change, None, last.delay)
    return tuple(rounds)


def retry_limit(script: Mapping[str, Any]) -> int:
    """How many times a real CLI should retry a failed model request to play ``script`` as written:
    the largest ``retries`` of its ``model_error`` steps (0 without one)."""
    return max(
        (
            int(step["model_error"].get("retries") or 0)
            for turn in script["turns"]
            for step in turn["steps"]
            if "model_error" in step
        ),
        default=0,
    )


def playable(script: Mapping[str, Any]) -> str | None:
    """None when a real engine can play every turn of this compiled script, else why not."""
    if script.get("resident"):
        return "resident (sticky) mode: a real CLI's stdin protocol is not scripted"
    for engine, variant in script.get("variants", {}).items():
        default = _DEFAULT_VARIANTS.get(engine, variant)
        if variant != default:
            chosen = ", ".join(
                f"{key}: {value!r}" for key, value in variant.items() if default.get(key) != value
            )
            return (
                f"format variant for {engine} ({chosen}): a real CLI's output format is its own,"
                " not the model's to choose"
            )
    for number, turn in enumerate(script["turns"], 1):
        if turn.get("start", "engine") != "engine" or turn.get("end") == "none":
            return f"turn {number}: start/end none (a raw capture)"
        if turn.get("end") == "completed" and turn.get("exit_code", 0) != 0:
            return f"turn {number}: exit code {turn['exit_code']} after a completed turn"
        linger = turn.get("linger")
        if linger is not None and linger["seconds"] != 0:  # None: forever
            return f"turn {number}: linger (the process lives on after its turn): a real CLI exits when done"
        if turn.get("repair") is not None:
            return f"turn {number}: repair answers: the server cannot tell a repair resume from a turn"
        answering = False  # whether the current round's answer has begun
        for step in turn["steps"]:
            kind = next(iter(step))
            if kind in _PROCESS_STEPS:
                return f"turn {number}: step {kind!r} shapes the engine's process, not a model answer"
            if kind not in _PLAYED:
                return f"turn {number}: step {kind!r} is not played by the model server"
            if kind == "error" and step["error"].get("transient"):
                return f"turn {number}: transient error (a reconnect loop needs 5xx, which CLIs retry)"
            if kind == "sleep" and answering:
                return f"turn {number}: step 'sleep' inside an answer (only a pause before one is played)"
            if kind == "tool" and step["tool"].get("running"):
                return f"turn {number}: step 'tool' that never finishes (a real CLI's command ends)"
            if kind == "say" and not all(_encodable(chunk) for chunk in step["say"]):
                return f"turn {number}: step 'say' with text that is not Unicode (a lone surrogate)"
            answering = kind not in ("tool", "file_change", "sleep")
        if turn.get("end") == "completed" and any("error" in step for step in turn["steps"]):
            return f"turn {number}: an error step in a turn that completes"
    return None


def _encodable(text: str) -> bool:
    """Whether the text can travel as UTF-8 JSON (a lone surrogate cannot: the answer would break)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def joined(text: Sequence[tuple[str, ...]]) -> str:
    """The reply text of a round as one message (say steps separated by a blank line)."""
    return "\n\n".join("".join(chunks) for chunks in text)
