"""Sessions a fake engine has started, so a resume plays the case's next turn (or a repair answer).

State lives in files under the state folder, one per session, guarded by an
advisory lock, because several engines of one orchestrator may start and
resume at the same moment. Ids are derived from the engine, the case and a
per-folder counter: real-looking, unique within a state folder, and the same
again in a fresh folder, which keeps test output reproducible.
"""

from __future__ import annotations

import fcntl
import os

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


_MASK64 = 0xFFFFFFFFFFFFFFFF


def fnv64(text: str) -> int:
    """64-bit FNV-1a with a murmur3 finaliser: a stable, well-mixed hash that needs
    no import (hashlib costs 2 ms); the finaliser keeps seeds that differ in
    their last character from giving visibly related ids."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001B3) & _MASK64
    value ^= value >> 33
    value = (value * 0xFF51AFD7ED558CCD) & _MASK64
    value ^= value >> 33
    value = (value * 0xC4CEB9FE1A85EC53) & _MASK64
    return value ^ (value >> 33)


def _hex32(seed: str) -> str:
    return f"{fnv64(seed + '#1'):016x}{fnv64(seed + '#2'):016x}"


def uuid_shaped(seed: str, version: int) -> str:
    """A UUID-shaped string with the given version nibble and the RFC 4122 variant."""
    digits = _hex32(seed)
    variant = "89ab"[int(digits[16], 16) & 3]
    return f"{digits[:8]}-{digits[8:12]}-{version}{digits[13:16]}-{variant}{digits[17:20]}-{digits[20:32]}"


def session_id_for(engine: str, seed: str) -> str:
    """The session handle in the shape the real engine uses."""
    if engine == "codex":
        return uuid_shaped(seed, 7)  # codex thread ids are UUIDv7
    if engine in ("gemini", "claude", "qwen", "codebuddy"):
        return uuid_shaped(seed, 4)
    if engine == "iflow":
        return "session-" + uuid_shaped(seed, 4)
    return opencode_style_id("ses", seed)  # opencode, and kilo (its fork)


def opencode_style_id(prefix: str, seed: str) -> str:
    """An id as opencode and kilo write them (``ses_``, ``msg_``, ``prt_``): the prefix, 12 hex digits
    and 14 base-62 characters. The same seed gives the same id; sessions keep the seeds they always had
    (``#ses1``, ``#ses2``), so their ids stay as they were."""
    number = (fnv64(seed + "#ses1") << 64) | fnv64(seed + "#ses2")
    tail = ""
    for _ in range(14):
        number, digit = divmod(number, 62)
        tail += _BASE62[digit]
    return f"{prefix}_{_hex32(seed)[:12]}{tail}"


class Sessions:
    """The sessions of one engine in one state folder."""

    def __init__(self, state_dir: str, engine: str) -> None:
        self.engine = engine
        self.root = os.path.join(state_dir, "sessions")
        self.folder = os.path.join(self.root, engine)

    def _locked(self) -> int:
        os.makedirs(self.folder, exist_ok=True)
        descriptor = os.open(os.path.join(self.root, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        return descriptor

    def start(self, case_id: str) -> str:
        """A new session of `case_id` whose first turn is being played; its id."""
        lock = self._locked()
        try:
            counter_path = os.path.join(self.root, "counter")
            try:
                with open(counter_path, encoding="utf-8") as counter:
                    ordinal = int(counter.read() or "0") + 1
            except (OSError, ValueError):
                ordinal = 1
            self._write(counter_path, str(ordinal))
            session_id = session_id_for(self.engine, f"{self.engine}:{case_id}:{ordinal}")
            self._write(self._path(session_id), f"{case_id}\n1\n")
            self._write(os.path.join(self.folder, "LATEST"), session_id)
            return session_id
        finally:
            os.close(lock)

    def advance(self, session_id: str) -> tuple[str, int] | None:
        """(case id, 0-based turn index to play) for a resume, or None if unknown."""
        found = self._update(session_id, repair=False)
        return None if found is None else (found[0], found[1])

    def repair(self, session_id: str) -> tuple[str, int, int] | None:
        """(case id, 0-based index of the turn last played, 1-based repair round) for a repair
        resume (turngate.engines.fake.repair), or None if unknown. The turn counter stays: the
        user's reply, when it comes, still plays the next turn."""
        return self._update(session_id, repair=True)

    def _update(self, session_id: str, *, repair: bool) -> tuple[str, int, int] | None:
        # A session's file: its case, the turns played, and (third line, absent when none) the
        # repair resumes of the last played turn, which the next ordinary resume resets.
        if not session_id or "/" in session_id or session_id.startswith("."):
            return None
        lock = self._locked()
        try:
            try:
                with open(self._path(session_id), encoding="utf-8") as record:
                    lines = [*record.read().split("\n"), "", ""]
                case_id, played, repairs = lines[0], int(lines[1]), int(lines[2] or "0")
            except (OSError, ValueError):
                return None
            if repair:
                self._write(self._path(session_id), f"{case_id}\n{played}\n{repairs + 1}\n")
                found = (case_id, played - 1, repairs + 1)
            else:
                self._write(self._path(session_id), f"{case_id}\n{played + 1}\n")
                found = (case_id, played, 0)
            self._write(os.path.join(self.folder, "LATEST"), session_id)
            return found
        finally:
            os.close(lock)

    def latest(self) -> str | None:
        try:
            with open(os.path.join(self.folder, "LATEST"), encoding="utf-8") as latest:
                return latest.read().strip() or None
        except OSError:
            return None

    def _path(self, session_id: str) -> str:
        return os.path.join(self.folder, session_id)

    @staticmethod
    def _write(path: str, text: str) -> None:
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
