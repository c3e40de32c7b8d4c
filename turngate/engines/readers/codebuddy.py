"""codebuddy ``-p --output-format stream-json``: the SDK message stream (``_sdk_messages``).

CodeBuddy Code may print a reply only as ``result.result`` (then it is the reply), reports
a failed request as an assistant text ending ``(<request id>/<session id>)`` and a
``result`` ``error_during_execution`` (``errors``) while exiting 0, and answers an unknown
session with one ``{"type":"error",…}`` line. Its ``file-history-snapshot`` line has no
``session_id``. docs/fake-engines.md, "codebuddy".
"""

from __future__ import annotations

import re
from typing import Final

from turngate.engines.readers import _sdk_messages
from turngate.engines.readers._stream import JsonObject
from turngate.engines.readers.events import Transcript

# The end of codebuddy's report of a failed request: (32 hex digits of request id/session id).
_FAILURE_END: Final = re.compile(r" \([0-9a-f]{32}/([^()/]+)\)\Z")


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    return _sdk_messages.read("codebuddy", stdout, stderr, _is_failure)


def _is_failure(text: str, record: JsonObject, session_id: str | None) -> bool:
    """codebuddy's words for a failed request: the provider's message, then (request/session), the
    session the one this stream runs in."""
    found = _FAILURE_END.search(text)
    return found is not None and session_id is not None and found.group(1) == session_id
