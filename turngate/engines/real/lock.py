"""The pinned engine versions (``engines.lock.json`` beside this module, in the wheel) and where
they install."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

LOCK_FILE: Final = Path(__file__).with_name("engines.lock.json")
REAL_ENGINES: Final = ("codex", "gemini", "opencode")  # iflow is not installable: it stays fake


class LockProblem(ValueError):
    """A bad lock file or an engine/version it does not pin; names the file, field and value."""


@dataclass(frozen=True, slots=True)
class Pin:
    engine: str
    package: str
    version: str
    bin: str

    @property
    def name(self) -> str:
        return f"{self.engine}@{self.version}"

    def folder(self, cache: Path) -> Path:
        return cache / self.name

    def executable(self, cache: Path) -> Path:
        return self.folder(cache) / "node_modules" / ".bin" / self.bin


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(os.environ.get("TURNGATE_ENGINE_CACHE") or os.path.join(base, "turngate", "engines"))


def read_lock(path: Path = LOCK_FILE) -> tuple[Pin, ...]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LockProblem(f"{path}: {error}") from None
    engines = document.get("engines") if isinstance(document, dict) else None
    if not isinstance(engines, dict):
        raise LockProblem(f"{path}: engines: {engines!r}: a mapping of engine to pins")
    pins = []
    for engine, entries in engines.items():
        if engine not in REAL_ENGINES:
            raise LockProblem(f"{path}: engines.{engine}: not installable (known: {', '.join(REAL_ENGINES)})")
        for index, entry in enumerate(entries if isinstance(entries, list) else [entries]):
            where = f"{path}: engines.{engine}[{index}]"
            if not isinstance(entry, dict):
                raise LockProblem(f"{where}: {entry!r}: a mapping")
            for key in ("package", "version", "bin"):
                if not isinstance(entry.get(key), str) or not entry[key]:
                    raise LockProblem(f"{where}.{key}: {entry.get(key)!r}: a non-empty string")
            pins.append(Pin(engine, entry["package"], entry["version"], entry["bin"]))
    return tuple(pins)


def select(pins: tuple[Pin, ...], wanted: list[str] | None) -> tuple[Pin, ...]:
    """Pins named ``engine`` (its default, the first pinned) or ``engine@version``; all when none named."""
    if not wanted:
        return pins
    chosen = []
    for word in wanted:
        engine, _, version = word.partition("@")
        matching = [pin for pin in pins if pin.engine == engine and (not version or pin.version == version)]
        if not matching:
            known = ", ".join(pin.name for pin in pins)
            raise LockProblem(f"{LOCK_FILE}: {word!r}: not pinned (pinned: {known})")
        chosen.append(matching[0])
    return tuple(chosen)
