"""Control steps woven into a turn, independent of the engine format."""

from __future__ import annotations

from typing import Any

from turngate.engines.fake.plan import Crash, Detach, Hang, Pause, Stop, Write, render_turn


class LinesFormat:
    """A stand-in format: each say becomes one stdout line, the end one more."""

    def begin(self) -> list[tuple[int, bytes]]:
        return [(1, b"begin\n")]

    def step(self, step: dict[str, Any]) -> list[tuple[int, bytes]]:
        return [(1, "".join(step["say"]).encode() + b"\n")]

    def end(self, end: str) -> list[tuple[int, bytes]]:
        return [(1, f"end {end}\n".encode())]


def turn(*steps: dict[str, Any], end: str = "completed") -> dict[str, Any]:
    return {"steps": list(steps), "end": end, "exit_code": 0}


def test_plain_turn_is_begin_steps_end() -> None:
    assert render_turn(turn({"say": ["hi"]}), LinesFormat()) == [
        Write(1, b"begin\n"),
        Write(1, b"hi\n"),
        Write(1, b"end completed\n"),
    ]


def test_split_cuts_only_the_next_line_into_parts() -> None:
    operations = render_turn(
        turn({"split": {"parts": 3, "pause": 0.5}}, {"say": ["abcdefgh"]}, {"say": ["x"]}), LinesFormat()
    )
    assert operations[1:6] == [Write(1, b"abc"), Pause(0.5), Write(1, b"def"), Pause(0.5), Write(1, b"gh\n")]
    assert operations[6] == Write(1, b"x\n")


def test_truncate_cuts_the_last_stdout_line_and_stops() -> None:
    operations = render_turn(
        turn({"say": ["0123456789"]}, {"truncate": {"at": 0.5, "exit_code": 9}}, {"say": ["no"]}),
        LinesFormat(),
    )
    assert operations == [Write(1, b"begin\n"), Write(1, b"01234"), Stop(9)]


def test_crash_and_hang_end_the_turn_without_its_end_line() -> None:
    crashed = render_turn(turn({"say": ["a"]}, {"crash": {"exit_code": 3, "signal": None}}), LinesFormat())
    assert crashed[-1] == Crash(3, None)
    assert Write(1, b"end completed\n") not in crashed
    hung = render_turn(turn({"hang": True}, {"say": ["b"]}), LinesFormat())
    assert hung == [Write(1, b"begin\n"), Hang()]


def test_detach_starts_its_descendant_where_it_stands_and_the_turn_goes_on() -> None:
    operations = render_turn(turn({"detach": 20.0}, {"say": ["a"]}), LinesFormat())
    assert operations == [Write(1, b"begin\n"), Detach(20.0), Write(1, b"a\n"), Write(1, b"end completed\n")]


def test_raw_and_stderr_steps_bypass_the_format() -> None:
    operations = render_turn(
        turn({"raw": {"data": b"\xff{", "stream": "stdout"}}, {"stderr": "warn"}), LinesFormat()
    )
    assert operations[1:3] == [Write(1, b"\xff{"), Write(2, b"warn\n")]
