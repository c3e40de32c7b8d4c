"""A script turn as model rounds: what the model answers to each request a real CLI makes in one turn.

A fake engine writes a whole turn at once; a real CLI asks the model, runs the
tool calls it is given, and asks again with their results. So a turn's steps
are cut after every ``tool`` step: each piece is one model answer (a
*round*), the last one carries the final reply. ``ask_user`` steps were
compiled to ``say`` text (turngate/engines/fake/compiler.py), which is exactly what a
model writes. An ``error`` step makes its round an HTTP 4xx the CLI reports.

Steps a model cannot produce (raw bytes, crashes, hangs, truncation, stderr
noise, engine-specific variants) make a turn *unplayable* by a real engine:
`playable` says why, so fidelity runs and `--engines real` skip it with the
reason instead of pretending.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from turngate.engines.fake.compiler import VARIANT_DEFAULTS as _DEFAULT_VARIANTS

# Steps that only shape how a process writes bytes; a model server cannot make a real CLI do them.
_PROCESS_STEPS: Final = frozenset({"raw", "crash", "hang", "truncate", "stderr", "split", "pad"})
# Steps the model server does not play yet: a cut stream or an HTTP 429 (model_error), a patch
# tool's call (file_change). A turn with one is skipped with the reason, never played without it.
_NOT_YET_PLAYED: Final = frozenset({"model_error", "file_change"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str  # the script's tool name (bash, shell, read_file, an MCP tool...)
    input: Mapping[str, Any]
    output: str  # what the command the CLI runs prints
    exit_code: int  # what that command exits with


@dataclass(frozen=True, slots=True)
class Round:
    """One model answer: reasoning, reply text pieces, then at most one tool call or an error."""

    thinking: tuple[str, ...] = ()
    text: tuple[tuple[str, ...], ...] = ()  # one entry per say step, as its chunks
    tool: ToolCall | None = None
    error: str | None = None  # answer with a 4xx carrying this message

    @property
    def final(self) -> bool:
        return self.tool is None


def rounds_of(turn: Mapping[str, Any]) -> tuple[Round, ...]:
    """The rounds of one compiled turn (turngate/engines/fake/compiler.py shape); at least one."""
    rounds: list[Round] = []
    thinking: list[str] = []
    text: list[tuple[str, ...]] = []
    error: str | None = None
    for step in turn["steps"]:
        match step:
            case {"think": str(thought)}:
                thinking.append(thought)
            case {"say": list(chunks)}:
                text.append(tuple(chunks))
            case {"tool": dict(spec)}:
                call = ToolCall(spec["name"], spec["input"], spec["output"], spec["exit_code"])
                rounds.append(Round(tuple(thinking), tuple(text), call, error))
                thinking, text, error = [], [], None
            case {"error": {"message": str(message)}}:
                error = error or message  # the first error of the round is the one the CLI sees
            case _:
                pass  # sleep: timing only; process steps are refused by playable()
    rounds.append(Round(tuple(thinking), tuple(text), None, error))
    # A failed turn with no error step still fails: the model answers the last round with a 4xx.
    if turn.get("end") == "failed" and not any(r.error for r in rounds):
        rounds[-1] = Round(rounds[-1].thinking, rounds[-1].text, None, "turn failed")
    return tuple(rounds)


def playable(script: Mapping[str, Any]) -> str | None:
    """None when a real engine can play every turn of this compiled script, else why not."""
    if script.get("resident"):
        return "resident (sticky) mode: a real CLI's stdin protocol is not scripted"
    for engine, variant in script.get("variants", {}).items():
        if variant != _DEFAULT_VARIANTS.get(engine, variant):
            return f"format variant for {engine} ({variant}): a real CLI prints only its own format"
    for number, turn in enumerate(script["turns"], 1):
        if turn.get("start", "engine") != "engine" or turn.get("end") == "none":
            return f"turn {number}: start/end none (a raw capture)"
        if turn.get("end") == "completed" and turn.get("exit_code", 0) != 0:
            return f"turn {number}: exit code {turn['exit_code']} after a completed turn"
        for step in turn["steps"]:
            kind = next(iter(step))
            if kind in _PROCESS_STEPS:
                return f"turn {number}: step {kind!r} shapes process output, not a model answer"
            if kind in _NOT_YET_PLAYED:
                return f"turn {number}: step {kind!r} is not played by the model server yet"
            if kind == "error" and step["error"].get("transient"):
                return f"turn {number}: transient error (a reconnect loop needs 5xx, which CLIs retry)"
        if turn.get("end") == "completed" and any("error" in step for step in turn["steps"]):
            return f"turn {number}: an error step in a turn that completes"
    return None


def joined(text: Sequence[tuple[str, ...]]) -> str:
    """The reply text of a round as one message (say steps separated by a blank line)."""
    return "\n\n".join("".join(chunks) for chunks in text)
