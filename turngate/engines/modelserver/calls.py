"""Which tool the model calls for a round, and with which arguments, from the tools the CLI declared.

- a ``tool`` step: the CLI's own shell tool (toolargs.py), running ``cat`` of a file holding the
  scripted output, so an echo of the output is the CLI's real echo; tools named in the server's
  ``named_tools`` (exploration: codex's ``request_user_input``, an MCP tool) are called by their own
  name with the script's input instead;
- a ``file_change`` step: the CLI's own file-writing tool (codex ``apply_patch``, a freeform patch;
  gemini and qwen ``write_file``, opencode and kilo ``write``, claude and codebuddy ``Write``);
- a final answer whose text is one JSON object, when the CLI declared ``StructuredOutput`` (claude
  and codebuddy under ``--json-schema``): a call of that tool with the object, and no text, as a
  model does (the CLI takes the tool's input as the structured result).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

from turngate.engines.modelserver.reply import Call, Declared
from turngate.engines.modelserver.rounds import FileChange, Round, joined
from turngate.engines.modelserver.toolargs import MissingTool, fit_schema

STRUCTURED_OUTPUT: Final = "StructuredOutput"
# File-writing tools by preference; the first one the request declares is used.
WRITE_TOOLS: Final = ("apply_patch", "write_file", "write", "Write")
_PATH_FIELDS: Final = ("file_path", "filePath", "absolute_path", "path")


class NoWriteTool(MissingTool):
    """The request declared none of the file-writing tools this server knows."""


class CannotPatch(MissingTool):
    """A file change the declared tool cannot express (an update of a file the server cannot read)."""


def structured_payload(step: Round, declared: Iterable[Declared]) -> dict[str, Any] | None:
    """The object a final round answers through StructuredOutput, or None (no such tool, not an object)."""
    if not step.final or step.error is not None or not any(t.name == STRUCTURED_OUTPUT for t in declared):
        return None
    try:
        value = json.loads(joined(step.text))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def write_call(change: FileChange, declared: Iterable[Declared], workdir: str | None) -> Call:
    """A call of the CLI's file-writing tool that writes ``change`` (``workdir``: the CLI's working
    directory as its request names it, for tools that want an absolute path; None if it names none)."""
    tools = {tool.name: tool for tool in declared}
    name = next((name for name in WRITE_TOOLS if name in tools), None)
    if name is None:
        raise NoWriteTool(f"tools: {sorted(tools)}: none of {', '.join(WRITE_TOOLS)}")
    tool = tools[name]
    if tool.freeform:
        return Call(name, freeform=_patch(change, workdir))
    properties: Mapping[str, Any] = tool.schema.get("properties") or {}
    path_field = next((field for field in _PATH_FIELDS if field in properties), "file_path")
    path = os.path.join(workdir, change.path) if workdir else change.path
    arguments: dict[str, Any] = {path_field: path, "content": change.content}
    for required in tool.schema.get("required") or ():
        if required not in arguments:
            arguments[required] = fit_schema(properties.get(required) or {}, {})
    return Call(name, arguments)


def _patch(change: FileChange, workdir: str | None) -> str:
    """codex's apply_patch text: an added file, or an update replacing every line of the old one."""
    added = "".join(f"+{line}\n" for line in change.content.splitlines())
    if change.kind != "update":
        return f"*** Begin Patch\n*** Add File: {change.path}\n{added}*** End Patch\n"
    if workdir is None:
        raise CannotPatch(f"file_change {change.path}: an update needs the old content: no working directory")
    try:
        with open(os.path.join(workdir, change.path), encoding="utf-8") as old:
            removed = "".join(f"-{line}\n" for line in old.read().splitlines())
    except (OSError, UnicodeDecodeError) as error:
        raise CannotPatch(f"file_change {change.path}: an update needs the old content: {error}") from None
    return f"*** Begin Patch\n*** Update File: {change.path}\n@@\n{removed}{added}*** End Patch\n"
