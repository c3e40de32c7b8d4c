"""Whether a real CLI played its case's script before the orchestrator stopped it.

A case of `turngate run --engines real` is judged on what the orchestrator made of the real CLI's
turns. When the orchestrator stops a CLI (its turn watchdog) before the model server has answered
the last round of the turn that CLI was playing, the verdict is about the stop, not the script: a
real opencode takes about 3 s to ask the model anything, so a scenario whose turn budget is 1 s
(the never-ending engines of engine-fault/failed-after-marker/opencode-loop and its kin) "passed"
with no model request at all, and a real kilo slowed past the 30 s budget on a loaded machine
"failed" with TIMEOUT. Such a case is skipped with this reason instead: which turn and round the CLI
had reached when it was stopped.

A CLI that ends by itself before its last round (it gives up after a model error) is not this: that
is the CLI's behaviour, and the verdict stands. So is a CLI stopped after its turn's last answer (it
never exits: opencode asking the model again for ever after a cut stream).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from turngate.engines.modelserver.rounds import rounds_of


def not_played(
    engine: str,
    script: Mapping[str, Any],
    calls: Iterable[Mapping[str, Any]],
    requests: Sequence[Mapping[str, Any]],
) -> str | None:
    """Why the real ``engine`` did not play ``script`` (compiled), or None.

    ``calls``: the case's call log (the launchers' lines: ``engine``, ``real``, ``action``,
    ``outcome``, ``signal``, ``passed_on``, ``start``, ``end``); ``requests``: the model server's log lines
    (``time`` an answer was written, ``turn`` and ``round`` it was placed at, 1-based, or None)."""
    turns = script["turns"]
    runs = [c for c in calls if c.get("engine") == engine and c.get("real") and c.get("action") == "run"]
    for call in runs:
        # Stopped from outside: the launcher passed a signal on (a CLI may exit 0 on a SIGTERM, and a
        # CLI dying of its own SIGSEGV was not stopped); a line from before `passed_on`: died of one.
        if "passed_on" in call:
            signal = call["passed_on"]
        else:
            signal = call.get("signal") if call.get("outcome") == "signal" else None
        if signal is None:
            continue
        start, end = call.get("start"), call.get("end")
        if not isinstance(start, int | float) or not isinstance(end, int | float):
            continue
        answered = [
            (r["turn"], r["round"])
            for r in requests
            if isinstance(r.get("turn"), int)
            and isinstance(r.get("round"), int)
            and isinstance(r.get("time"), int | float)
            and start <= r["time"] <= end
        ]
        stopped = f"stopped (signal {signal})"
        if not answered:
            return f"{stopped} before the model server answered any request of its turn"
        turn = max(number for number, _ in answered)
        if turn > len(turns):
            continue  # past the script: the server refused it, and the verdict says so
        rounds = len(rounds_of(turns[turn - 1]))
        reached = max(round_ for number, round_ in answered if number == turn)
        if reached < rounds:
            return f"{stopped} in turn {turn} after the model server answered round {reached} of {rounds}"
    return None
