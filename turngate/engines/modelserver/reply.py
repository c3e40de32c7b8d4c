"""One model answer as the protocol modules write it, whatever the protocol: reasoning, text, one call.

The endpoint decides *what* the model answers (turngate/engines/modelserver/calls.py picks the tool
and its arguments from the tools the CLI declared); a protocol module only decides *how* its wire
format says it. A cut reply is the content the model streamed before its stream was cut short (a
``model_error`` cut): the module leaves out its end-of-answer events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Declared:
    """A tool as the CLI declared it in the request: its name and its argument schema."""

    name: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    freeform: bool = False  # a tool whose input is free text, not JSON arguments (codex apply_patch)
    namespace: str | None = None  # a tool loaded by a tool search, in its namespace (codex: mcp__SERVER)
    search: bool = False  # the CLI's tool search itself (codex 0.169.0 defers MCP tools behind it)


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    freeform: str | None = None  # the text input of a freeform tool (then `arguments` is unused)
    namespace: str | None = None  # the namespace a searched-for tool was loaded in
    search: bool = False  # a call of the CLI's tool search (`arguments` is the query)


@dataclass(frozen=True, slots=True)
class Reply:
    thinking: tuple[str, ...] = ()
    text: tuple[tuple[str, ...], ...] = ()  # one entry per say step, as its chunks
    call: Call | None = None
    cut: bool = False
