"""The pinned engine versions (``engines.lock.json`` beside this module, in the wheel) and where
they install.

A pin comes from a package registry through its ordinary client: npm (the default) for the
Node.js CLIs, or pip for a CLI shipped inside a Python wheel (codebuddy's ``codebuddy-headless``,
whose npm package answers 404): then ``package_version`` is the wheel's version, ``version`` the
CLI's own, and ``bin`` the CLI's path inside the installed package.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from turngate.base.pathnames import turngate_cache

LOCK_FILE: Final = Path(__file__).with_name("engines.lock.json")
# iflow is not installable (its npm package answers 404): it stays fake.
REAL_ENGINES: Final = ("codex", "gemini", "opencode", "claude", "qwen", "kilo", "codebuddy")
SOURCES: Final = ("npm", "pip")
PIP_FOLDER: Final = "site"  # pip --target puts the package here, inside the pin's folder

Source = Literal["npm", "pip"]


class LockProblem(ValueError):
    """A bad lock file or an engine/version it does not pin; names the file, field and value."""


@dataclass(frozen=True, slots=True)
class Pin:
    engine: str
    package: str
    version: str  # the CLI's own version (`--version`), which names the pin
    bin: str
    source: Source = "npm"
    package_version: str = ""  # the registry's version of `package` ("": the CLI's version)
    note: str = ""

    @property
    def name(self) -> str:
        return f"{self.engine}@{self.version}"

    @property
    def requirement(self) -> str:
        """What the registry client is asked for."""
        version = self.package_version or self.version
        return f"{self.package}=={version}" if self.source == "pip" else f"{self.package}@{version}"

    def folder(self, cache: Path) -> Path:
        return cache / self.name

    def executable(self, cache: Path) -> Path:
        if self.source == "pip":
            return self.folder(cache) / PIP_FOLDER / self.bin
        return self.folder(cache) / "node_modules" / ".bin" / self.bin


def default_cache() -> Path:
    return Path(os.environ.get("TURNGATE_ENGINE_CACHE") or os.path.join(turngate_cache(), "engines"))


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
            pins.append(_pin(engine, entry, f"{path}: engines.{engine}[{index}]"))
    return tuple(pins)


def _pin(engine: str, entry: object, where: str) -> Pin:
    if not isinstance(entry, dict):
        raise LockProblem(f"{where}: {entry!r}: a mapping")
    for key in ("package", "version", "bin"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise LockProblem(f"{where}.{key}: {entry.get(key)!r}: a non-empty string")
    source = entry.get("source", "npm")
    if source not in SOURCES:
        raise LockProblem(f"{where}.source: {source!r}: one of {', '.join(SOURCES)}")
    for key in ("package_version", "note"):
        if not isinstance(entry.get(key, ""), str):
            raise LockProblem(f"{where}.{key}: {entry[key]!r}: a string")
    if source == "pip" and not entry.get("package_version"):
        raise LockProblem(f"{where}.package_version: missing: the wheel's version (pip source)")
    bin_path = PurePosixPath(entry["bin"])
    if bin_path.is_absolute() or ".." in bin_path.parts or (source == "npm" and len(bin_path.parts) != 1):
        raise LockProblem(f"{where}.bin: {entry['bin']!r}: a command name (npm) or a path inside the package")
    return Pin(
        engine,
        entry["package"],
        entry["version"],
        entry["bin"],
        source,
        entry.get("package_version", ""),
        entry.get("note", ""),
    )


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
