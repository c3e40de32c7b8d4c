"""Where a request stands: which case, which turn, which round, from the conversation the CLI sent.

Every CLI sends the whole conversation with each request (a resumed session
included). A user message that follows anything the model did (an answer, a
tool result) starts a new turn; within a turn, each model answer that made a
tool call is one round done. So the place is read off the history alone, no
server state: a restarted server, or a second CLI resuming the session, finds
the same place, and a turn whose last answer was empty (a tool call, then
nothing) still counts. A turn that failed (a 4xx) left no model entry, so the
next user message replays it: failed turns end runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

CASE_TOKEN: Final = re.compile(r"tg-case-([A-Za-z0-9_-]+)")
# How each CLI names its working directory to the model (its system prompt or context message), as
# logged from the real CLIs against this server (November 2026).
WORKDIR_PATTERNS: Final = (
    re.compile(r"<cwd>([^<\n]+)</cwd>"),  # codex: <environment_context>
    re.compile(r"[Ww]orking directory: (/[^\n]*)"),  # opencode, kilo, codebuddy; claude "Primary w..."
    re.compile(r"Workspace Directories:\*\*\n  - (/[^\n]*)"),  # gemini
    re.compile(r"I'm currently working in the directory: (/[^\n]*)"),  # qwen: its context message
)

# One history entry, as the protocols reduce it: the model's (with or without a tool call), a tool's
# result, or a user's (or system/developer) message.
Entry = Literal["answer", "answer_with_call", "result", "user"]


@dataclass(frozen=True, slots=True)
class Position:
    turn: int  # 0-based turn of the script
    round: int  # 0-based round within the turn


def position(entries: Iterable[Entry]) -> Position:
    """Consecutive model entries are one answer; a user message after model work starts a turn."""
    turn = rounds = 0
    worked = in_answer = called = False
    for entry in [*entries, None]:  # None: the end, which only closes an answer
        if entry in ("answer", "answer_with_call"):
            in_answer = worked = True
            called = called or entry == "answer_with_call"
            continue
        if in_answer:
            rounds += called
            in_answer = called = False
        if entry == "result":
            worked = True
        elif entry == "user" and worked:  # a user message after the model's work: the next turn
            turn, rounds, worked = turn + 1, 0, False
    return Position(turn, rounds)


def case_of(body_text: str) -> str | None:
    """The case the conversation plays: the first ``tg-case-<id>`` token in it."""
    found = CASE_TOKEN.search(body_text)
    return found.group(1) if found else None


def working_directory(body: Any) -> str | None:
    """The CLI's working directory as its request names it (WORKDIR_PATTERNS), or None."""
    for text in _strings(body):
        for pattern in WORKDIR_PATTERNS:
            found = pattern.search(text)
            if found:
                return found.group(1).rstrip()
    return None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)
