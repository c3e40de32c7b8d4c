"""Expected drift between two real builds of one engine: the baseline `engines real drift` accepts.

`turngate engines real drift OLD NEW --fail-on-drift` fails on any change between two builds. A CI gate
needs the changes already looked at to pass, and only those: the baseline (``corpus/
real-drift-baseline.yaml`` by default, ``--baseline FILE``) lists them, one entry per change, each with

- ``id``: its name in the report;
- ``engine``, ``old``, ``new``: the pair of builds it is about (the versions exactly);
- ``capture``: the capture it is seen in (the saved captures' name, ``hazard-429``, or a live run's
  script, ``fid-message``; a glob, ``*`` for every capture), and ``mode`` (gemini's document format;
  absent: any);
- ``changes``: the difference texts, exactly as drift prints them (a text listed twice is accepted
  twice in one turn; a difference with a word more is not this entry's);
- ``cause``: ``build`` (the new build prints something else: a real change), ``timing`` (the capture
  varies between runs of one build: drift by timing, not by build) or ``recording`` (the two captures
  were recorded differently: not the CLIs' doing);
- ``what`` (what changed) and ``why`` (why it is accepted).

A difference is *known* when an entry of its pair names its capture, mode and exact text (each entry
accepts its texts once per turn of each capture it names); every other difference is drift the gate
fails on, named. An entry that matched nothing in a run is reported (``not seen``), never failed on:
a timing entry is not seen when the run happened to go the other way.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.base.data_yaml import load_data
from turngate.tools.realengines.fidelity import Difference

CAUSES: Final = {
    "build": "a change of the new build",
    "timing": "timing-dependent: the capture varies between runs of one build",
    "recording": "the two captures were recorded differently",
}
FIELDS: Final = ("id", "engine", "old", "new", "capture", "mode", "changes", "cause", "what", "why")
REQUIRED: Final = tuple(name for name in FIELDS if name != "mode")
# real-<version>-[<format>-]<name>: a saved capture's folder (saved.CAPTURE_FOLDER); live runs name scripts.
_FOLDER: Final = re.compile(r"real-\d+(?:\.\d+)+-(?:(?:stream-json|json)-)?(?P<name>[a-z][a-z0-9-]*)")


class BaselineProblem(ValueError):
    """A baseline file turngate cannot use: one line naming the file, the entry and the field."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    engine: str
    old: str
    new: str
    capture: str  # a capture or script name, or a glob
    mode: str | None
    changes: tuple[str, ...]
    cause: str
    what: str
    why: str

    def about(self, engine: str, old: str, new: str) -> bool:
        return (self.engine, self.old, self.new) == (engine, old, new)

    def names(self, capture: str, mode: str) -> bool:
        return fnmatch.fnmatchcase(capture, self.capture) and self.mode in (None, mode)


@dataclass(frozen=True, slots=True)
class Known:
    difference: Difference
    entry: Entry


@dataclass(frozen=True, slots=True)
class Judged:
    """One drift run held to the baseline: the differences it accepts, the others, the entries unseen."""

    known: tuple[Known, ...]
    unknown: tuple[Difference, ...]
    unseen: tuple[Entry, ...]


def capture_name(difference: Difference) -> str:
    """The capture a difference is in: a saved capture's name (its folder without the version and
    format), else the live run's script."""
    match = _FOLDER.fullmatch(difference.script)
    return match["name"] if match else difference.script


def judge(
    differences: Sequence[Difference], entries: Iterable[Entry], engine: str, old: str, new: str
) -> Judged:
    """Each difference of one pair's drift run, known (with its entry) or not; the entries unseen."""
    mine = [entry for entry in entries if entry.about(engine, old, new)]
    left: dict[tuple[str, str, str, int], Counter[str]] = {}
    known: list[Known] = []
    unknown: list[Difference] = []
    seen: set[str] = set()
    for difference in differences:
        capture = capture_name(difference)
        entry = None
        for candidate in mine:
            if not candidate.names(capture, difference.mode):
                continue
            key = (candidate.id, difference.script, difference.mode, difference.turn)
            texts = left.setdefault(key, Counter(candidate.changes))
            if texts[difference.text] > 0:
                texts[difference.text] -= 1
                entry = candidate
                break
        if entry is None:
            unknown.append(difference)
        else:
            known.append(Known(difference, entry))
            seen.add(entry.id)
    unseen = tuple(entry for entry in mine if entry.id not in seen)
    return Judged(tuple(known), tuple(unknown), unseen)


def load(path: Path) -> tuple[Entry, ...]:
    """The baseline's entries; BaselineProblem (one line) for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineProblem(f"{path}: cannot read: {error}") from None
    try:
        document = load_data(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise BaselineProblem(f"{path}: not YAML{where}") from None
    if document is None:
        return ()
    if not isinstance(document, list):
        raise BaselineProblem(f"{path}: a list of entries, not {type(document).__name__}")
    entries = tuple(_entry(path, index, item) for index, item in enumerate(document, 1))
    ids = Counter(entry.id for entry in entries)
    twice = sorted(name for name, count in ids.items() if count > 1)
    if twice:
        raise BaselineProblem(f"{path}: id {twice[0]!r}: named by two entries")
    return entries


def _entry(path: Path, index: int, item: Any) -> Entry:
    where = f"{path}: entry {index}"
    if not isinstance(item, dict):
        raise BaselineProblem(f"{where}: a mapping of {', '.join(REQUIRED)}, not {type(item).__name__}")
    unknown = sorted(str(key) for key in item if key not in FIELDS)
    if unknown:
        raise BaselineProblem(f"{where}: {unknown[0]!r}: not a field (fields: {', '.join(FIELDS)})")
    for name in REQUIRED:
        if name not in item:
            raise BaselineProblem(f"{where}: {name}: missing")
    for name in ("id", "engine", "old", "new", "capture", "cause", "what", "why", "mode"):
        value = item.get(name)
        if name in item and not (isinstance(value, str) and value.strip()):
            raise BaselineProblem(f"{where}: {name}: a non-empty text, not {_shown(value)}")
    where = f"{path}: entry {item['id']!r}"
    changes = item["changes"]
    if not (isinstance(changes, list) and changes and all(isinstance(c, str) and c for c in changes)):
        raise BaselineProblem(
            f"{where}: changes: a non-empty list of difference texts, not {_shown(changes)}"
        )
    if item["cause"] not in CAUSES:
        raise BaselineProblem(f"{where}: cause: {item['cause']!r}: one of {', '.join(CAUSES)}")
    return Entry(
        item["id"],
        item["engine"],
        item["old"],
        item["new"],
        item["capture"],
        item.get("mode"),
        tuple(changes),
        item["cause"],
        " ".join(item["what"].split()),
        " ".join(item["why"].split()),
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
