"""One finished turn's bytes -> evidence: transcript, process outcome, marker, hint, output.

The same ``evaluate`` serves the live gate and ``audit`` (the after-the-fact classification of
stored turns), so both use one detector and one reader (Decision 3.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import engine_streams
from .ask_user_hints import HintScan, scan
from .bugs import bug
from .done_marker import any_marker, has_marker
from .engine_process import TurnBytes
from .output_check import OutputCheck, check


@dataclass(frozen=True)
class TurnEvidence:
    transcript: engine_streams.Transcript
    process_error: str | None
    marker: bool
    hints: HintScan
    output: OutputCheck


def process_error(raw: TurnBytes, transcript: engine_streams.Transcript) -> str | None:
    """Why the engine's turn counts as interrupted, or None when it ran to its own end."""
    if raw.timed_out:
        return "ENGINE_TIMEOUT"
    if raw.exited and raw.exit_code not in (0, None):
        return "ENGINE_FAILED"
    if transcript.failed:
        return "ENGINE_FAILED"
    if not transcript.ended:
        return "ENGINE_TURN_INCOMPLETE"
    return None


def evaluate(
    engine: str, gemini_format: str, raw: TurnBytes, schema: dict[str, Any] | None, mode: str
) -> TurnEvidence:
    transcript = read(engine, gemini_format, raw.stdout, raw.stderr)
    marker = any_marker(transcript.replies)
    if bug("marker_in_stderr") and has_marker(raw.stderr.decode("utf-8", "replace")):
        marker = True
    final = transcript.replies[-1] if transcript.replies else ""
    hints = scan(final)
    return TurnEvidence(
        transcript, process_error(raw, transcript), marker, hints, check(hints.rest, schema, mode)
    )


def read(engine: str, gemini_format: str, stdout: bytes, stderr: bytes) -> engine_streams.Transcript:
    if engine == "gemini" and gemini_format == "text":
        text = stdout.decode("utf-8", "replace").strip()
        return engine_streams.Transcript((text,) if text else (), None, True, False)
    return engine_streams.read(engine, gemini_format, stdout, stderr)


def has_end_signal(engine: str, gemini_format: str) -> bool:
    """Whether the format says when a turn is over (gemini's plain text does not)."""
    return not (engine == "gemini" and gemini_format == "text")


def turn_over(engine: str, gemini_format: str) -> Any:
    """Has the engine signalled the end (or failure) of the current turn?

    A resident engine's turn ends there; a one-shot engine is given a little time to exit after
    it, and is stopped if it lingers (``EngineProcess.wait_turn``)."""

    def over(stdout: bytes, stderr: bytes) -> bool:
        transcript = read(engine, gemini_format, stdout, stderr)
        return transcript.ended or transcript.failed

    return over
