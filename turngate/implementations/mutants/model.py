"""A spec mutant: the reference with one function replaced so that it breaks named spec sentences.

A mutant is data: its name, the sentence IDs it breaks (from
``turngate/judge/catalog/sentences.yaml``), one line saying what it does, and the
replacements that make it, each replacing one attribute of one reference module
(``module:name`` or ``module:Class.name``) by a function of the original.
Replacements go where the attribute is looked up (``turngate.implementations.reference.turn:marker_evidence``
changes the live gate only; ``turngate.implementations.reference.marker:find_markers`` changes the
gate and the audit). They are applied in the process that runs the case and
taken back when the case ends (`activate`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Replacement:
    """Replace ``target`` (``module:attr`` or ``module:Class.attr``) by ``make(original)``."""

    target: str
    make: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str
    sentences: tuple[str, ...]  # the sentence IDs this mutant breaks
    summary: str
    replacements: tuple[Replacement, ...]
    reading: str | None = None  # judge under this reading (the sentence holds under it only)

    def __post_init__(self) -> None:
        if not self.sentences or not self.replacements:
            raise ValueError(f"mutant {self.name}: needs sentences and replacements")


_LOCK = threading.Lock()


def _owner(target: str) -> tuple[Any, str]:
    module_name, _, path = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *parents, attribute = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    if not hasattr(owner, attribute):
        raise AttributeError(f"replacement target {target!r}: no attribute {attribute!r}")
    return owner, attribute


class _Applied:
    """The mutant applied in this process, and how many cases are running under it.

    Cases run in parallel threads share the process: the replacements are made when the first of them
    starts and taken back when the last one ends. (Each case applying and taking back its own would
    wrap the replacement in itself, and the first case to end would take the mutant away from the
    others while they run: under ``--jobs`` a killed mutant could pass.)"""

    name: ClassVar[str | None] = None
    users: ClassVar[int] = 0
    undo: ClassVar[list[tuple[Any, str, Any]]] = []


def activate(mutant: Mutant) -> Callable[[], None]:
    """Apply the mutant's replacements (once for all the cases running under it); the returned function
    takes them back (in reverse order) when the last of those cases calls it."""
    with _LOCK:
        if _Applied.users and _Applied.name != mutant.name:
            raise RuntimeError(f"mutant {mutant.name}: {_Applied.name} is applied in this process already")
        if not _Applied.users:
            undo: list[tuple[Any, str, Any]] = []
            for change in mutant.replacements:
                owner, attribute = _owner(change.target)
                original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
                replacement = change.make(getattr(owner, attribute))
                setattr(owner, attribute, replacement)
                undo.append((owner, attribute, original))
            _Applied.name, _Applied.undo = mutant.name, undo
        _Applied.users += 1
    released = False

    def restore() -> None:
        nonlocal released
        with _LOCK:
            if released:
                return
            released = True
            _Applied.users -= 1
            if _Applied.users == 0:
                for owner, attribute, original in reversed(_Applied.undo):
                    setattr(owner, attribute, original)
                _Applied.name, _Applied.undo = None, []

    return restore
