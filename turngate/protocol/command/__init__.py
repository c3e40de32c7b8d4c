"""The line-JSON command protocol: drive an implementation in any language over its stdin and stdout.

turngate launches the implementation's command once, then writes one JSON
request per line and reads exactly one JSON answer line per request (``stop``
excepted). The messages are pinned by the JSON Schemas in ``schemas/``
(shipped inside the package so other tools can validate against the same
files); ``docs/command-protocol.md`` is the prose contract and
``turngate.implementations.command_example`` a working implementation.
"""

from __future__ import annotations

from typing import Final

from turngate.protocol.command.messages import (
    REQUEST_COMMANDS,
    ProtocolError,
    check_request,
    check_response,
    schema,
)
from turngate.protocol.connector import CAPABILITIES

PROTOCOL_VERSION: Final = 1

# The capability words an implementation may declare (turngate/protocol/connector.py); unknown words are
# ignored. ``http`` is not here: it names a job-API surface, which a program spoken to over pipes lacks.
KNOWN_CAPABILITIES: Final = CAPABILITIES

__all__ = [
    "KNOWN_CAPABILITIES",
    "PROTOCOL_VERSION",
    "REQUEST_COMMANDS",
    "ProtocolError",
    "check_request",
    "check_response",
    "schema",
]
