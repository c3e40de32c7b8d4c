"""turngate's import graph, read from the source (no import runs): modules, arrows, layers.

The layers, top to bottom; an arrow may only point down (or stay inside its own
folder). ``protocol`` and ``engines`` are siblings: neither imports the other.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
PACKAGE: Final = ROOT / "turngate"

# Each folder of turngate/ with its layer: higher numbers may import lower ones.
LAYERS: Final = {
    "turngate.cli": 6,
    "turngate.pytest_plugin": 7,
    "turngate.__main__": 7,
    "turngate.tools": 5,
    "turngate.judge": 4,
    "turngate.implementations": 3,
    "turngate.protocol": 2,
    "turngate.engines": 2,
    "turngate.base": 1,
    "turngate": 0,  # the package itself: its version
}


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    line: int
    lazy: bool  # inside a function: runs when called, not when the module is imported


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


@functools.cache  # the source does not change while the tests run; each test reads the same graph
def arrows() -> tuple[Arrow, ...]:
    return tuple(_arrows(modules()))


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement, and whether it sits inside a function (lazy), in one walk."""
    found = []
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, lazy = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, lazy))
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _arrows(known: dict[str, Path]) -> Iterator[Arrow]:
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node, lazy in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                # ``from package import module`` names a module; ``from module import name`` does not
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                    for alias in node.names
                ]
            for target in dict.fromkeys(targets):
                if target not in known or target == name:
                    continue
                yield Arrow(name, target, node.lineno, lazy)
                # importing a.b.c runs a/b/__init__.py first: an arrow to each package on the way,
                # except those the importing module sits in (already running by then)
                parts = target.split(".")
                for size in range(2, len(parts)):
                    parent = ".".join(parts[:size])
                    if parent in known and not (name + ".").startswith(parent + "."):
                        yield Arrow(name, parent, node.lineno, lazy)


def folder(module: str) -> str:
    """The folder (layer entry) a module belongs to: its longest prefix in LAYERS."""
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return prefix
    raise KeyError(module)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
