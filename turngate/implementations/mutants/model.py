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
from typing import Any


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


def activate(mutant: Mutant) -> Callable[[], None]:
    """Apply the mutant's replacements; the returned function takes them back (in reverse order)."""
    undo: list[tuple[Any, str, Any]] = []
    with _LOCK:
        for change in mutant.replacements:
            owner, attribute = _owner(change.target)
            original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
            replacement = change.make(getattr(owner, attribute))
            setattr(owner, attribute, replacement)
            undo.append((owner, attribute, original))

    def restore() -> None:
        with _LOCK:
            for owner, attribute, original in reversed(undo):
                setattr(owner, attribute, original)
            undo.clear()

    return restore
