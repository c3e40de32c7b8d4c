"""The arguments of a shell tool call, fitted to the tool's own parameter schema as the CLI declared it.

Each CLI declares its shell tool in the request (codex ``exec_command`` or
``shell``, gemini and qwen ``run_shell_command``, opencode and kilo ``bash``,
claude and codebuddy ``Bash``), with a JSON Schema
for its arguments. Reading that schema, rather than hard-coding one build's
argument names, keeps the server working when a CLI renames a field: the
command goes into the field that holds it, other required fields get a value
of their type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from turngate.engines.modelserver.reply import Declared

# Shell tools by preference: the first one the request declares is used. Names are case-sensitive,
# as the CLIs match them: claude and codebuddy call theirs `Bash`.
SHELL_TOOLS: Final = ("exec_command", "shell_command", "shell", "run_shell_command", "bash", "Bash")
_COMMAND_FIELDS: Final = ("command", "cmd")
DESCRIPTION: Final = "turngate scripted tool call"


class MissingTool(ValueError):
    """The request declared none of the tools this server would call for a step; says which."""


class NoShellTool(MissingTool):
    """The request declared none of the shell tools this server knows."""


def pick_shell_tool(declared: Iterable[Declared]) -> Declared:
    """The preferred shell tool among the declared ones."""
    tools = {tool.name: tool for tool in declared if not tool.freeform}
    for name in SHELL_TOOLS:
        if name in tools:
            return tools[name]
    raise NoShellTool(f"tools: {sorted(tools)}: none of {', '.join(SHELL_TOOLS)}")


def shell_arguments(schema: Mapping[str, Any], command: str) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    field = next((name for name in _COMMAND_FIELDS if name in properties), "command")
    if (properties.get(field) or {}).get("type") == "array":
        arguments[field] = ["bash", "-lc", command]
    else:
        arguments[field] = command
    for name in schema.get("required") or ():
        if name not in arguments:
            arguments[name] = _value_of((properties.get(name) or {}), name)
    if "description" in properties and "description" not in arguments:
        arguments["description"] = DESCRIPTION
    return arguments


def _value_of(schema: Mapping[str, Any], name: str) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    match kind:
        case "integer" | "number":
            return schema.get("minimum", 1)
        case "boolean":
            return False
        case "array":
            return []
        case "object":
            return {}
        case _:
            return DESCRIPTION if name == "description" else ""


def fit_schema(schema: Mapping[str, Any], overrides: Mapping[str, Any]) -> Any:
    """A value fitting ``schema`` (a JSON Schema, or Gemini's OpenAPI subset with upper-case types).

    ``overrides`` names preferred values per property name (e.g. ``next_speaker: user``).
    Numbers get their minimum, or 1; enums their first member unless overridden.
    """
    kind = schema.get("type")
    kind = kind.lower() if isinstance(kind, str) else kind
    if isinstance(kind, list):
        kind = next((str(k).lower() for k in kind if k != "null"), "string")
    if kind == "object" or (kind is None and "properties" in schema):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        value = {}
        for name, sub in properties.items():
            if name in overrides and (not sub.get("enum") or overrides[name] in sub["enum"]):
                value[name] = overrides[name]
            else:
                value[name] = fit_schema(sub, overrides)
        return value
    if schema.get("enum"):
        return schema["enum"][0]
    match kind:
        case "integer":
            low = max(int(schema.get("minimum", 1)), 1)
            return min(low, int(schema["maximum"])) if "maximum" in schema else low
        case "number":
            return float(max(schema.get("minimum", 1), 1))
        case "boolean":
            return False
        case "array":
            items = schema.get("items")
            return [fit_schema(items, overrides)] * int(schema.get("minItems", 0)) if items else []
        case _:
            return overrides.get("reasoning", "scripted by turngate")
