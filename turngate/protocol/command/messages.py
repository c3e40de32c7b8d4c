"""Validation of command-protocol messages, both directions, against the shipped JSON Schemas.

A message is checked against the schema of its own cmd (not the ``oneOf`` of
all of them) so that a broken message is reported by the field that is wrong,
``observation.state: 7 is not of type 'string'``, rather than by jsonschema's
"is not valid under any of the given schemas".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib.resources import files
from typing import Any, Final, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REQUEST_COMMANDS: Final = (
    "start",
    "run.start",
    "run.reply",
    "run.cancel",
    "run.advance_clock",
    "run.restart",
    "run.fill_slots",
    "run.free_slots",
    "run.settle",
    "run.observe",
    "run.close",
    "stop",
)

Direction = Literal["request", "response"]
_SCHEMA_FILES: Final[Mapping[Direction, str]] = {
    "request": "request.schema.json",
    "response": "response.schema.json",
}


class ProtocolError(ValueError):
    """A message that breaks the protocol: who sent it, for which cmd, which field, which value."""

    def __init__(self, direction: Direction, cmd: str, path: str, value: object, reason: str) -> None:
        who = "turngate sent" if direction == "request" else "implementation answered"
        where = f"{path}: " if path else ""
        super().__init__(f"{who} {cmd} with an invalid message: {where}{reason}")
        self.direction, self.cmd, self.path, self.value, self.reason = direction, cmd, path, value, reason


@cache
def schema(direction: Direction) -> Mapping[str, Any]:
    """The schema document for one direction, read from the package data."""
    text = (files("turngate.protocol.command") / "schemas" / _SCHEMA_FILES[direction]).read_text(
        encoding="utf-8"
    )
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def check_request(message: object) -> str:
    """Validate a request turngate is about to send; return its cmd."""
    cmd = message.get("cmd") if isinstance(message, Mapping) else None
    if not isinstance(message, Mapping) or not isinstance(cmd, str) or cmd not in REQUEST_COMMANDS:
        named = cmd if isinstance(cmd, str) else "(no cmd)"
        _raise_first("request", named, _validator("request", None).iter_errors(message))
        raise ProtocolError("request", named, "cmd", cmd, "not a known cmd")  # the schema says so first
    _raise_first("request", cmd, _validator("request", cmd).iter_errors(message))
    return cmd


def check_response(cmd: str, message: object) -> None:
    """Validate the answer to ``cmd``: the cmd's own answer, or an ``error`` answer."""
    kind = "error" if isinstance(message, Mapping) and "error" in message else cmd
    _raise_first("response", cmd, _validator("response", kind).iter_errors(message))


def field_path(parts: Iterable[str | int]) -> str:
    """``observation.events[0].type`` from jsonschema's path parts."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _raise_first(direction: Direction, cmd: str, errors: Iterable[ValidationError]) -> None:
    error = best_match(errors)
    if error is not None:
        raise ProtocolError(direction, cmd, field_path(error.absolute_path), error.instance, error.message)


@cache
def _validator(direction: Direction, definition: str | None) -> Draft202012Validator:
    """A validator for one ``$defs`` entry (None: only the request's ``cmd`` field)."""
    document = schema(direction)
    if definition is None:
        head = {key: document[key] for key in ("$schema", "type", "required", "properties")}
        return Draft202012Validator(head)
    registry: Registry[Any] = Registry().with_resource(
        document["$id"], Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return Draft202012Validator({"$ref": f"{document['$id']}#/$defs/{definition}"}, registry=registry)
