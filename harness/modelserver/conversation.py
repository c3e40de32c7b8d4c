"""Where a request stands: which case, which turn, which round, from the conversation the CLI sent.

Every CLI sends the whole conversation with each request (a resumed session
included). Each model answer shows up in it as a run of assistant-side items;
an answer without a tool call ended a turn. So the number of finished turns
and of tool rounds since is read off the history alone, no server state: a
restarted server, or a second CLI resuming the session, finds the same place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

CASE_TOKEN: Final = re.compile(r"tg-case-([A-Za-z0-9_-]+)")

# One history entry, as the protocols reduce it: the model's own (with or without a tool call), or not.
Entry = Literal["answer", "answer_with_call", "other"]


@dataclass(frozen=True, slots=True)
class Position:
    turn: int  # 0-based turn of the script
    round: int  # 0-based round within the turn


def position(entries: Iterable[Entry]) -> Position:
    """Consecutive model entries are one answer; an answer with no tool call ended a turn."""
    turn = rounds = 0
    group: list[Entry] | None = None
    for entry in [*entries, "other"]:
        if entry == "other":
            if group is not None:
                if "answer_with_call" in group:
                    rounds += 1
                else:
                    turn, rounds = turn + 1, 0
            group = None
        else:
            group = [*(group or []), entry]
    return Position(turn, rounds)


def case_of(body_text: str) -> str | None:
    """The case the conversation plays: the first ``tg-case-<id>`` token in it."""
    found = CASE_TOKEN.search(body_text)
    return found.group(1) if found else None
