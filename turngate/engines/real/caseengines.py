"""Real engines for one case of `turngate run --engines real`: a model server and launchers over the fakes.

Each case gets its own model server (a thread on 127.0.0.1, port 0) reading
that case's scripts folder, and real launchers written over the fake ones in
the case's ``bin``; engines without a pin (iflow) stay fake. A scenario whose
script a real CLI cannot play (process-level steps, format variants: see
turngate/engines/modelserver/rounds.py) is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from turngate.base.json_lines import logged_objects
from turngate.engines.fake.compiler import check, normalise
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.modelserver.endpoint import ModelServer
from turngate.engines.modelserver.rounds import playable, retry_limit
from turngate.engines.real.lock import Pin
from turngate.engines.real.npm_install import write_launchers
from turngate.engines.real.played import not_played

REQUEST_LOG: Final = "model-requests.jsonl"  # the case's model server log, in its folder
# The turn budget the reference gives a real CLI in a case that sets none: the reference's own default
# (turngate/implementations/reference/lifecycle.py, EngineSetup), not the 30 s the harness gives the
# fakes. A real CLI takes seconds a turn (kilo 10-15 s, twice that on a loaded machine).
REAL_TURN_TIMEOUT_SEC: Final = 120.0


@dataclass(frozen=True, slots=True)
class RealEngines:
    """Which real builds replace the fakes, and where they are installed."""

    pins: tuple[Pin, ...]
    cache: Path

    def engines(self) -> frozenset[str]:
        return frozenset(pin.engine for pin in self.pins)

    def missing(self) -> list[Pin]:
        """Pins not installed in the cache (`turngate engines real install` first)."""
        return [pin for pin in self.pins if not pin.executable(self.cache).exists()]

    def unplayable(self, engine: str, case: str, script: Mapping[str, Any]) -> str | None:
        """Why the real ``engine`` cannot play this scenario script, or None (also None for fake engines)."""
        if engine not in self.engines():
            return None
        document = {"case": case, **script}
        try:
            check(document, case)
        except ScriptProblem as problem:
            return problem.message
        return playable(normalise(document, case))

    def not_played(
        self, engine: str, case: str, script: Mapping[str, Any], workdir: Path, call_log: Path
    ) -> str | None:
        """Why the real ``engine`` did not play this scenario script before the orchestrator stopped it
        (turngate/engines/real/played.py), or None (also None for fake engines)."""
        if engine not in self.engines():
            return None
        try:
            compiled = normalise({"case": case, **script}, case)
        except ScriptProblem:
            return None  # unplayable() has refused it with the reason already
        return not_played(engine, compiled, logged_objects(call_log), logged_objects(workdir / REQUEST_LOG))

    def retries(self, case: str, script: Mapping[str, Any]) -> int:
        """The retry limit the CLIs get for this scenario script: its model_error steps' `retries`,
        so a real CLI asks again as often as the script says (0 when it has none)."""
        try:
            return retry_limit(normalise({"case": case, **script}, case))
        except ScriptProblem:
            return 0  # unplayable() has refused it with the reason already

    @contextmanager
    def for_case(
        self, workdir: Path, scripts: Path, call_log: Path, *, retries: int = 0
    ) -> Iterator[ModelServer]:
        with ModelServer(scripts, workdir / REQUEST_LOG, workdir / "model-data") as server:
            write_launchers(
                workdir / "bin",
                self.pins,
                self.cache,
                model_url=server.url,
                scripts=scripts,
                call_log=call_log,
                retries=retries,
            )
            yield server
