"""YAML from outside turngate (an engine's ask-user hint, a package's SKILL.md front matter), read within
bounds, and values from outside shown within bounds.

PyYAML shares an aliased node among every place that names it, so a 600-byte document can stand for
10^9 values (an "alias bomb"): reading it is cheap, but whatever then walks the value as a tree (a
``repr``, a copy, a check) pays for the expanded size, and a server doing it holds the GIL for
minutes. Here the document is measured as the tree it stands for *before* it is built: more values
or deeper nesting than allowed, or an alias that contains itself, is refused with `YamlTooLarge`.
Measuring is linear in the document's nodes (each aliased node is measured once), and so is building
it afterwards.
"""

from __future__ import annotations

import itertools
import reprlib
from typing import Any, Final

import yaml

MAX_VALUES: Final = 10_000  # scalars, sequences and mappings, counted as the expanded tree has them
MAX_DEPTH: Final = 32


class YamlTooLarge(yaml.YAMLError):
    """The document stands for more values, or deeper nesting, than the reader allows."""


def load_bounded(text: str, *, max_values: int = MAX_VALUES, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document, safely (no tags that build objects), refused if its expanded tree is too big.

    The pure-Python safe loader, as ``yaml.safe_load``: it reads a ``"\\ud83d"`` escape (text a CLI
    cut inside an emoji), which libyaml refuses. Raises ``yaml.YAMLError`` (`YamlTooLarge` for the
    bounds) and nothing else."""
    loader = _DepthBoundLoader(text, max_depth)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlTooLarge(f"nested deeper than {max_depth}") from None
        if node is None:
            return None
        _measure(node, max_values, max_depth)
        return loader.construct_document(node)
    finally:
        loader.dispose()


class _DepthBoundLoader(yaml.SafeLoader):
    """The safe loader, refusing nesting deeper than ``max_depth`` as it composes: PyYAML's composer
    recurses once per level, so ``[[[[…`` 5,000 deep otherwise cost 0.8 s of recursion before the
    interpreter's limit stopped it."""

    def __init__(self, text: str, max_depth: int) -> None:
        super().__init__(text)
        self._depth = 0
        self._max_depth = max_depth

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                raise YamlTooLarge(f"nested deeper than {self._max_depth}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _measure(root: yaml.Node, max_values: int, max_depth: int) -> None:
    """Raise `YamlTooLarge` when the tree ``root`` stands for passes a bound (or holds itself)."""
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) of its expanded tree
    open_nodes: set[int] = set()  # being measured: met again below itself, an alias holds itself
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            below = [measured[id(child)] for child in _children(node)]
            values = 1 + sum(count for count, _ in below)
            depth = 1 + max((deep for _, deep in below), default=0)
            if values > max_values:
                raise YamlTooLarge(f"more than {max_values} values once its aliases are expanded")
            if depth > max_depth:
                raise YamlTooLarge(f"nested deeper than {max_depth}")
            measured[key] = (values, depth)
            continue
        if key in measured:
            continue
        if key in open_nodes:
            raise YamlTooLarge("an alias that contains itself")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in measured)


def _children(node: yaml.Node) -> list[yaml.Node]:
    match node:
        case yaml.SequenceNode(value=items):
            return list(items)
        case yaml.MappingNode(value=pairs):
            return [part for pair in pairs for part in pair]
        case _:
            return []


_SHOWN_LIMIT: Final = 60


class _Shown(reprlib.Repr):
    """reprlib's bounds, but a mapping's keys in their own order, as ``repr`` shows them (reprlib
    sorts them)."""

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(x[key], level - 1)}"
            for key in itertools.islice(x, self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"


_REPR = _Shown()  # (keyword arguments only from Python 3.12)
_REPR.maxlevel = 3
_REPR.maxtuple = _REPR.maxlist = _REPR.maxarray = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 6
_REPR.maxdeque = 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 80


def short_repr(value: object, limit: int = _SHOWN_LIMIT, *, cut: str = "…") -> str:
    """``repr(value)`` cut to ``limit`` characters, in time bounded by ``limit`` for any container: a
    container is shown a few levels and items deep (reprlib), never walked whole."""
    try:
        shown = repr(value) if isinstance(value, str | int | float | bool | None) else _REPR.repr(value)
    except Exception:  # a repr may fail on exotic values; a diagnostic must not
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= limit else shown[: limit - len(cut)] + cut
