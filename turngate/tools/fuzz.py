"""Fuzzing the gate: seeded mutations of the corpus streams through readers, gate, audit and replay.

Every stream is one capture of ``corpus/`` mutated by a few operators drawn from
a seeded ``random.Random`` (byte noise, cuts, line edits, splices from another
capture, and hostile fragments: deep nesting, lone surrogate escapes, invalid
UTF-8, escape sequences, hint and fence openers, markers, long runs). Each
stream must hold three properties:

- no crash: ``replay`` (the live gate's ``turn.assess``) returns a decision;
- gate = audit: ``audit.classify`` on the same bytes, called from a deeper
  call stack (as a server thread would), finds the same marker evidence and
  the same output verdict (Decision 3.1: one detector for both);
- replay prints safely: the text and JSON views encode as strict UTF-8 and
  hold no raw control character, bidirectional control or lone surrogate.

The generator is deterministic: stream ``n`` of engine ``e`` with seed ``s``
is always the same bytes, so a failure is reproduced by its three numbers
(`stream`). ``python -m turngate.tools.fuzz`` (``nox -s fuzz``) runs a number of
streams per engine and writes streams/s, crashes and disagreements to JSON;
``tests/fuzz/`` runs a bounded number in the default test run.
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing
import os
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Final

from turngate.engines.readers import _bounded_json
from turngate.implementations.reference import audit
from turngate.tools.drift.capture import ENGINES, Capture
from turngate.tools.drift.gate_replay import Replay, as_json, printable_json, render, replay
from turngate.tools.drift.sources import corpus_captures

# Fragments a misbehaving engine (or a hostile prompt) puts in its output.
HOSTILE: Final[tuple[bytes, ...]] = (
    b'{"a":' * 1200 + b"1" + b"}" * 1200,
    b"[" * 20_000,
    b"{" * 5_000,
    b'{"a":x' * 500,
    b"\\ud800",
    b"\\udfff\\ud800",
    b"\xff\xfe\xed\xa0\x80",
    b"\x1b[31m\x1b]0;title\x07\x9b2J",
    b"\xe2\x80\xae",  # U+202E, a right-to-left override
    b"\x00",
    b"\r",
    b"<ASK_USER_YAML>",
    b"</ASK_USER_YAML>",
    b"\n```ask_user_yaml\n",
    b"\n```\n",
    b"\n```x\n" * 200,
    b"\nask_user: {prompt: p, kind: confirm}\n",
    b"\nask_user: {a: b}\n" * 300,
    b'{"outcome": "ask_user", "interaction": {"prompt": "p"}}',
    b'{"outcome": "ask_user", ',
    b'"__SKILL_DONE__": true',
    b'\\"__SKILL_DONE__\\": true',
    b'{"greeting": "Hi", "__SKILL_DONE__": true}',
    b"\n<Execution Info>\n",
    b"\n</Execution Info>\n",
    b'\n{"type":"turn.completed"}\n',
    b"a\n" * 2_000,
    b"\\",
    b'"',
    b"\n",
)
# Fragments for inside a JSON string: the escaped forms that decode to something hostile.
HOSTILE_IN_STRING: Final[tuple[str, ...]] = (
    "\ud800",
    "\udc00x\ud800",
    "\x1b[2J",
    "\u202e",
    '{"a":' * 300,
    '<ASK_USER_YAML>\nask_user:\n  prompt: "\\ud800"\n</ASK_USER_YAML>',
    'ask_user: {prompt: "p\\ud800"}',
    '{"outcome": "ask_user", "interaction": {"prompt": "\\ud800"}}',
    '"__SKILL_DONE__": true',
    '```json\n{"greeting": "Hi"}\n```',
    "```x\n" * 50,
    "\x00\x7f\x85",
)


@dataclass(frozen=True, slots=True)
class Stream:
    """Stream ``index`` of ``engine`` under ``seed``: enough to make its bytes again."""

    engine: str
    seed: int
    index: int


@dataclass(frozen=True, slots=True)
class Finding:
    """A stream that broke a property: which, what, and the bytes (base64) to replay it."""

    stream: Stream
    kind: str  # crash | disagreement | unsafe-print
    detail: str
    capture: str
    stdout_b64: str
    stderr_b64: str


@dataclass
class Tally:
    streams: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for finding in self.findings if finding.kind == kind)


@cache
def _seeds(engine: str) -> tuple[Capture, ...]:
    """The corpus captures of one engine, read as the live gate reads them (no forced reader mode)."""
    return tuple(replace(capture, reader_options={}) for capture in corpus_captures(engines=[engine]))


def generate(stream: Stream) -> Capture:
    """The capture for one stream: a corpus capture of the engine, mutated 1 to 4 times."""
    rng = random.Random(f"{stream.seed}/{stream.engine}/{stream.index}")
    seeds = _seeds(stream.engine)
    capture = rng.choice(seeds)
    stdout, stderr = capture.stdout, capture.stderr
    for _ in range(rng.randint(1, 4)):
        operator = rng.choice(_OPERATORS)
        if rng.random() < 0.85:
            stdout = operator(rng, stdout, seeds)
        else:
            stderr = operator(rng, stderr, seeds)
    return replace(capture, stdout=stdout, stderr=stderr, name=f"fuzz/{stream.engine}/{stream.index}")


# --- mutation operators: (rng, data, seeds of the engine) -> data -------------------------------


def _insert_hostile(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + rng.choice(HOSTILE) + data[at:]


def _flip_bytes(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    mutable = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        mutable[rng.randrange(len(mutable))] = rng.randrange(256)
    return bytes(mutable)


def _cut(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    return data[: rng.randint(0, len(data))]


def _line_edit(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    index = rng.randrange(len(lines))
    match rng.randrange(4):
        case 0:
            del lines[index]
        case 1:
            lines.insert(index, lines[index])
        case 2:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        case _:
            lines[index] = lines[index] * rng.randint(2, 50)
    return b"".join(lines)


def _splice(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    donor = rng.choice(seeds).stdout.splitlines(keepends=True)
    if not donor:
        return data
    lines = data.splitlines(keepends=True)
    at = rng.randint(0, len(lines))
    start = rng.randrange(len(donor))
    return b"".join([*lines[:at], *donor[start : start + rng.randint(1, 4)], *lines[at:]])


def _json_string_edit(rng: random.Random, data: bytes, seeds: Sequence[Capture]) -> bytes:
    """Decode a JSON line, put a hostile fragment into one of its strings, encode it again."""
    lines = data.splitlines(keepends=True)
    candidates = [index for index, line in enumerate(lines) if line.lstrip().startswith(b"{")]
    if not candidates:
        return _insert_hostile(rng, data, seeds)
    index = rng.choice(candidates)
    try:
        value = _bounded_json.loads(lines[index].decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, or nested too deeply to edit
        return _flip_bytes(rng, data, seeds)
    holders = list(_string_holders(value))
    if not holders:
        return data
    holder, key = rng.choice(holders)
    text = holder[key]
    at = rng.randint(0, len(text))
    holder[key] = text[:at] + rng.choice(HOSTILE_IN_STRING) + text[at:]
    ending = b"\n" if lines[index].endswith(b"\n") else b""
    encoded = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    lines[index] = encoded + ending
    return b"".join(lines)


def _string_holders(value: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every string in a decoded JSON value, walked without recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(inner, str):
                    yield item, key
                else:
                    pending.append(inner)
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    yield item, index
                else:
                    pending.append(inner)


_OPERATORS: Final[tuple[Callable[[random.Random, bytes, Sequence[Capture]], bytes], ...]] = (
    _insert_hostile,
    _insert_hostile,
    _flip_bytes,
    _cut,
    _line_edit,
    _splice,
    _json_string_edit,
    _json_string_edit,
)


# --- the properties ---------------------------------------------------------------------------

_AUDIT_STACK_FRAMES: Final = 300
_UNSAFE: Final = frozenset(
    [
        *(chr(code) for code in range(0x20) if chr(code) != "\n"),
        *(chr(code) for code in range(0x7F, 0xA0)),
        *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    ]
)


def _deeper(frames: int, work: Callable[[], Any]) -> Any:
    """``work()`` called from ``frames`` frames further down the stack."""
    return work() if frames == 0 else _deeper(frames - 1, work)


def unsafe_in(text: str) -> str | None:
    """What makes a printed text unsafe for a terminal, or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"not encodable: {error.reason} at {error.start}"
    found = _UNSAFE.intersection(text)
    return f"raw control characters {sorted(found)!r}" if found else None


def check(stream: Stream) -> list[Finding]:
    """Run one stream through gate, audit and replay; the properties it broke."""
    return check_capture(generate(stream), stream)


def check_capture(capture: Capture, stream: Stream) -> list[Finding]:
    """The properties one capture breaks (``stream`` names it in the findings)."""

    def finding(kind: str, detail: str) -> Finding:
        return Finding(
            stream,
            kind,
            detail,
            capture.name,
            base64.b64encode(capture.stdout).decode("ascii"),
            base64.b64encode(capture.stderr).decode("ascii"),
        )

    try:
        result: Replay = replay(capture)
        found, completion = _deeper(
            _AUDIT_STACK_FRAMES,
            lambda: audit.classify(
                capture.engine, capture.stdout, capture.stderr, output_schema=capture.schema()
            ),
        )
        shown = render(result)
        shown_json = printable_json(as_json(result))
    except Exception:  # a crash is what we look for: keep its last frames
        return [finding("crash", "".join(traceback.format_exc(limit=-4)))]
    findings = []
    assessment = result.assessment
    gate_completion = "strong" if assessment.marker.found else ("soft" if assessment.output.valid else "none")
    if (found, completion) != (assessment.marker.found, gate_completion):
        findings.append(
            finding(
                "disagreement",
                f"gate {assessment.marker.found}/{gate_completion}, audit {found}/{completion}",
            )
        )
    for view, text in (("text", shown), ("json", shown_json.replace("\n", " "))):
        problem = unsafe_in(text)
        if problem is not None:
            findings.append(finding("unsafe-print", f"{view}: {problem}"))
    return findings


def run(engine: str, seed: int, first: int, count: int) -> Tally:
    """Streams ``first`` .. ``first + count - 1`` of one engine."""
    tally = Tally()
    started = time.perf_counter()
    for index in range(first, first + count):
        tally.findings.extend(check(Stream(engine, seed, index)))
        tally.streams += 1
    tally.seconds = time.perf_counter() - started
    return tally


def _run_part(part: tuple[str, int, int, int]) -> Tally:
    return run(*part)


def fuzz(engines: Sequence[str], streams: int, seed: int, jobs: int) -> dict[str, Any]:
    """``streams`` streams per engine over ``jobs`` processes; figures per engine and in total."""
    per_part = max(1, streams // max(1, jobs * 4))
    parts = [
        (engine, seed, first, min(per_part, streams - first))
        for engine in engines
        for first in range(0, streams, per_part)
    ]
    started = time.perf_counter()
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            tallies = pool.map(_run_part, parts, chunksize=1)
    else:
        tallies = [_run_part(part) for part in parts]
    wall = time.perf_counter() - started
    by_engine: dict[str, Tally] = {engine: Tally() for engine in engines}
    for (engine, *_), tally in zip(parts, tallies, strict=True):
        total = by_engine[engine]
        total.streams += tally.streams
        total.seconds += tally.seconds
        total.findings.extend(tally.findings)
    findings = [finding for tally in by_engine.values() for finding in tally.findings]
    return {
        "seed": seed,
        "jobs": jobs,
        "streams": sum(tally.streams for tally in by_engine.values()),
        "wall_sec": round(wall, 2),
        "streams_per_sec": round(sum(tally.streams for tally in by_engine.values()) / wall, 1),
        "engines": {
            engine: {
                "streams": tally.streams,
                "streams_per_sec_per_process": round(tally.streams / tally.seconds, 1)
                if tally.seconds
                else None,
                "crashes": tally.count("crash"),
                "disagreements": tally.count("disagreement"),
                "unsafe_prints": tally.count("unsafe-print"),
            }
            for engine, tally in by_engine.items()
        },
        "crashes": sum(1 for finding in findings if finding.kind == "crash"),
        "disagreements": sum(1 for finding in findings if finding.kind == "disagreement"),
        "unsafe_prints": sum(1 for finding in findings if finding.kind == "unsafe-print"),
        "findings": [_finding_json(finding) for finding in findings[:50]],
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "engine": finding.stream.engine,
        "seed": finding.stream.seed,
        "index": finding.stream.index,
        "kind": finding.kind,
        "detail": finding.detail,
        "capture": finding.capture,
        "stdout_b64": finding.stdout_b64,
        "stderr_b64": finding.stderr_b64,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m turngate.tools.fuzz", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--streams", type=int, default=100_000, help="streams per engine")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--engine", action="append", choices=ENGINES, help="default: every engine")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path("fuzz-results.json"))
    args = parser.parse_args(argv)
    results = fuzz(args.engine or ENGINES, args.streams, args.seed, args.jobs)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    summary = {key: value for key, value in results.items() if key != "findings"}
    print(json.dumps(summary, indent=2))
    for item in results["findings"][:10]:
        print(
            f"{item['kind']}: {item['engine']} seed {item['seed']} stream {item['index']}: {item['detail']}"
        )
    print(f"written to {args.out}", file=sys.stderr)
    clean = results["crashes"] == results["disagreements"] == results["unsafe_prints"] == 0
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
