"""claude ``-p --output-format stream-json --verbose``: the SDK message stream (``_sdk_messages``).

Claude Code prints the ``type`` of its ``result`` late (after ``result``), says
``subtype: "success"`` with ``is_error: true`` for a failed request, writes that failure
as an ``assistant`` text flagged ``is_api_error_message`` (an error here, not a reply),
and with ``--json-schema`` answers through a ``StructuredOutput`` tool call whose input is
``result.structured_output`` (the reply) and ``result.result`` (its JSON, not a second
reply). docs/fake-engines.md, "claude".
"""

from __future__ import annotations

from turngate.engines.readers import _sdk_messages
from turngate.engines.readers._stream import JsonObject
from turngate.engines.readers.events import Transcript


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    return _sdk_messages.read("claude", stdout, stderr, _is_failure)


def _is_failure(text: str, record: JsonObject, session_id: str | None) -> bool:
    """claude's synthetic text for a request it gave up on: flagged on its event."""
    return record.get("is_api_error_message") is True
