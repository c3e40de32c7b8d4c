"""Deliberate format changes to the real captures: what fidelity must flag whatever the named variants say.

Each change is what a new build of a real CLI could do to its output: rename an event type, drop
the reply's text, move its document to the other stream, add a key, move a field, print a stderr
line no variant names. A change makes one or more *mutants* of a saved real turn (one per event,
per object, per field it can touch); fidelity compares each mutant with the fake's same turn
(saved.saved_fidelity), and a mutant no unexplained difference flags is a variant hiding a
format change. ``python -m turngate.tools.realengines.format_changes [CORPUS]`` prints the matrix;
tests/realengines/test_variants_cannot_hide_format_changes.py holds it to "every mutant flagged".

Named maps (``models``, ``byName``, ``files``, ``metadata``, claude's ``modelUsage``: their keys are
data, turngate/engines/real/shapes.py) are never changed inside: fidelity does not compare their keys,
by design.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from turngate.engines.real.shapes import NAMED_MAPS, line_label
from turngate.tools.realengines.fidelity import FIDELITY_ENGINES
from turngate.tools.realengines.saved import FakePlayer, SavedCapture, saved_captures, saved_fidelity
from turngate.tools.realengines.variants import stderr_parts

_NAMED_MAPS: Final = NAMED_MAPS
EXTRA_KEY: Final = "turngate_extra"
UNKNOWN_LINE: Final = "Notice: a line no variant names (a deliberate change)"


@dataclass(frozen=True, slots=True)
class Mutant:
    what: str  # where the change was made, in words
    stdout: bytes
    stderr: bytes


Json = Any
Change = Callable[[SavedCapture], list[Mutant]]


# Reading and writing a stream: JSON lines, one document, or text -----------------------------------------


@dataclass(frozen=True, slots=True)
class _Stream:
    lines: list[str]  # text lines before the JSON (stderr notices), as printed
    events: list[Json]  # JSON lines, or the one document
    document: bool  # a (pretty) document rather than JSON lines

    def dump(self) -> bytes:
        if self.document:
            body = [json.dumps(event, indent=2, ensure_ascii=False) for event in self.events]
        else:
            body = [json.dumps(event, ensure_ascii=False) for event in self.events]
        return "".join(f"{line}\n" for line in [*self.lines, *body]).encode()


def _read(data: bytes) -> _Stream | None:
    """A stream whose JSON part is JSON lines or one document after its text lines; None otherwise
    (interleaved text and JSON: no change is made there)."""
    texts, structured = stderr_parts(data)
    text = structured.decode()
    if not text.strip():
        return _Stream(texts, [], False)
    try:
        return _Stream(texts, [json.loads(line) for line in text.splitlines() if line.strip()], False)
    except ValueError:
        pass
    try:
        return _Stream(texts, [json.loads(text)], True)
    except ValueError:
        return None


def _with_events(stream: _Stream, events: list[Json]) -> bytes:
    return _Stream(stream.lines, events, stream.document).dump()


def _copy(value: Json) -> Json:
    return json.loads(json.dumps(value))


def _objects(value: Json, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every object in ``value`` (not inside a named map), with its path of keys and list indexes."""
    if isinstance(value, dict):
        yield path, value
        for key, inner in value.items():
            if key not in _NAMED_MAPS:
                yield from _objects(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _objects(inner, (*path, index))


def _at(value: Json, path: tuple[Any, ...]) -> Json:
    for part in path:
        value = value[part]
    return value


def _where(path: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in path) or "(top)"


def _each_event(capture: SavedCapture) -> Iterator[tuple[str, _Stream, int, Json]]:
    """(stream name, stream, index, event) for every JSON event of the real turn, on either stream."""
    for name, data in (("stdout", capture.output.stdout), ("stderr", capture.output.stderr)):
        stream = _read(data)
        if stream is not None:
            for index, event in enumerate(stream.events):
                yield name, stream, index, event


def _mutant(capture: SavedCapture, stream_name: str, data: bytes, what: str) -> Mutant:
    if stream_name == "stdout":
        return Mutant(what, data, capture.output.stderr)
    return Mutant(what, capture.output.stdout, data)


def _replace_event(
    capture: SavedCapture, name: str, stream: _Stream, index: int, event: Json, what: str
) -> Mutant:
    events = list(stream.events)
    events[index] = event
    return _mutant(capture, name, _with_events(stream, events), what)


# The changes -----------------------------------------------------------------------------------------------


def renamed_event_type(capture: SavedCapture) -> list[Mutant]:
    """Each event's type renamed, and each item's or part's type (one mutant each)."""
    found = []
    for name, stream, index, event in _each_event(capture):
        if not isinstance(event, dict):
            continue
        label = line_label(event)
        if isinstance(event.get("type"), str):
            changed = _copy(event)
            changed["type"] = changed["type"] + "_renamed"
            found.append(_replace_event(capture, name, stream, index, changed, f"{name} {label}: type"))
        for holder in ("item", "part"):
            inner = event.get(holder)
            if isinstance(inner, dict) and isinstance(inner.get("type"), str):
                changed = _copy(event)
                changed[holder]["type"] = inner["type"] + "_renamed"
                found.append(
                    _replace_event(capture, name, stream, index, changed, f"{name} {label}: {holder}.type")
                )
    return found


def _is_reply_text(event: Json) -> bool:
    """An event carrying the assistant's reply text, in each engine's format."""
    if not isinstance(event, dict):
        return False
    item = event.get("item")
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        (isinstance(item, dict) and item.get("type") == "agent_message")  # codex
        or (event.get("type") == "message" and event.get("role") == "assistant")  # gemini stream-json
        or event.get("type") == "text"  # opencode, kilo
        or (  # claude, qwen, codebuddy: an assistant event with a text block
            event.get("type") == "assistant"
            and isinstance(content, list)
            and any(isinstance(block, dict) and block.get("type") == "text" for block in content)
        )
    )


def _without_reply_echo(event: Json) -> Json:
    """A `result` without the reply it repeats (claude, qwen, codebuddy `result.result`): a build that
    drops the reply drops it there too (codebuddy prints a reply only there at times, a known variant)."""
    if isinstance(event, dict) and event.get("type") == "result" and isinstance(event.get("result"), str):
        return {key: value for key, value in event.items() if key != "result"}
    return event


def dropped_text(capture: SavedCapture) -> list[Mutant]:
    """The reply's text gone: its events dropped, and the reply a `result` repeats (JSON lines), its
    ``response`` dropped (a document)."""
    stream = _read(capture.output.stdout)
    if stream is None:
        return []
    if stream.document:
        document = _copy(stream.events[0])
        if not isinstance(document, dict) or "response" not in document:
            return []
        del document["response"]
        return [_mutant(capture, "stdout", _with_events(stream, [document]), "stdout document: response")]
    kept = [_without_reply_echo(event) for event in stream.events if not _is_reply_text(event)]
    if len(kept) == len(stream.events):
        return []
    dropped = len(stream.events) - len(kept)
    return [_mutant(capture, "stdout", _with_events(stream, kept), f"stdout: {dropped} text event(s)")]


def document_moved_to_stderr(capture: SavedCapture) -> list[Mutant]:
    """Everything stdout printed, printed on stderr instead (after stderr's own lines)."""
    if not capture.output.stdout.strip():
        return []
    stderr = capture.output.stderr
    if stderr and not stderr.endswith(b"\n"):
        stderr += b"\n"
    return [Mutant("stdout moved to stderr", b"", stderr + capture.output.stdout)]


def extra_key(capture: SavedCapture) -> list[Mutant]:
    """A key more in each object of each event (one mutant per object)."""
    found = []
    for name, stream, index, event in _each_event(capture):
        for path, _ in _objects(event):
            changed = _copy(event)
            _at(changed, path)[EXTRA_KEY] = "x"
            what = f"{name} {line_label(event)}: {_where(path)}.{EXTRA_KEY}"
            found.append(_replace_event(capture, name, stream, index, changed, what))
    return found


def moved_field(capture: SavedCapture) -> list[Mutant]:
    """Each field moved: a nested one up into the object holding its object, a top-level one down into
    a sibling object (one mutant per field; skipped where the name is taken there)."""
    found = []
    for name, stream, index, event in _each_event(capture):
        for path, holder in _objects(event):
            for key in holder:
                if key in _NAMED_MAPS:
                    continue
                changed = _copy(event)
                source = _at(changed, path)
                if path and isinstance(path[-1], str):
                    target = _at(changed, path[:-1])
                    to = _where(path[:-1])
                else:
                    siblings = [
                        k
                        for k, v in source.items()
                        if isinstance(v, dict) and k != key and k not in _NAMED_MAPS
                    ]
                    if not siblings:
                        continue
                    target = source[siblings[0]]
                    to = _where((*path, siblings[0]))
                if not isinstance(target, dict) or key in target:
                    continue
                target[key] = source.pop(key)
                what = f"{name} {line_label(event)}: {_where((*path, key))} -> {to}"
                found.append(_replace_event(capture, name, stream, index, changed, what))
    return found


def unknown_stderr_line(capture: SavedCapture) -> list[Mutant]:
    """A stderr line no variant names: a new one, and a known notice with words added (first on stderr)."""
    known = stderr_parts(capture.output.stderr)[0]
    lines = [UNKNOWN_LINE] + ([known[0] + " (and more)"] if known else [])
    return [
        Mutant(f"stderr: {line!r}", capture.output.stdout, f"{line}\n".encode() + capture.output.stderr)
        for line in lines
    ]


CHANGES: Final[Mapping[str, Change]] = {
    "renamed-event-type": renamed_event_type,
    "dropped-text": dropped_text,
    "document-moved-to-stderr": document_moved_to_stderr,
    "extra-key": extra_key,
    "moved-field": moved_field,
    "unknown-stderr-line": unknown_stderr_line,
}


# The matrix -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell:
    """One change on one engine's captures: how many mutants, how many fidelity flagged, which not."""

    engine: str
    change: str
    captures: int  # captures the change applies to
    mutants: int
    flagged: int
    hidden: tuple[str, ...]  # "capture: what" for each mutant no unexplained difference flags


def flagged(capture: SavedCapture, mutant: Mutant, player: FakePlayer) -> bool:
    """Whether fidelity reports at least one unexplained difference for this mutant."""
    from turngate.tools.realengines.fidelity import TurnOutput

    changed = TurnOutput(mutant.stdout, mutant.stderr, capture.output.exit_code)
    reports = saved_fidelity([capture], player, change=lambda _: changed)
    return any(report.unexplained() for report in reports)


def matrix(corpus: Path, player: FakePlayer) -> list[Cell]:
    # Engines with no fake, or no fidelity variants yet, have nothing to hold their captures against.
    captures = [
        capture
        for capture in saved_captures(corpus)
        if player.has(capture.engine) and capture.engine in FIDELITY_ENGINES
    ]
    cells = []
    for engine in sorted({capture.engine for capture in captures}):
        for name, change in CHANGES.items():
            applied = mutants = hits = 0
            hidden: list[str] = []
            for capture in (c for c in captures if c.engine == engine):
                made = change(capture)
                applied += bool(made)
                for mutant in made:
                    mutants += 1
                    if flagged(capture, mutant, player):
                        hits += 1
                    else:
                        hidden.append(f"{capture.name}: {mutant.what}")
            cells.append(Cell(engine, name, applied, mutants, hits, tuple(hidden)))
    return cells


def render(cells: list[Cell]) -> str:
    lines = ["| engine | change | captures | mutants | flagged |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {c.engine} | {c.change} | {c.captures} | {c.mutants} | {c.flagged} |" for c in cells]
    lines += [f"HIDDEN {c.engine} {c.change}: {what}" for c in cells for what in c.hidden]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from turngate.tools.drift.sources import CORPUS_DIR

    corpus = Path(argv[0]) if argv else CORPUS_DIR
    with tempfile.TemporaryDirectory(prefix="turngate-format-changes-") as folder:
        cells = matrix(corpus, FakePlayer(Path(folder)))
    print(render(cells))
    return 1 if any(cell.hidden or not cell.mutants for cell in cells) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
