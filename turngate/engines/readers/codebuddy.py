"""codebuddy ``-p --output-format stream-json``: the SDK message stream (``_sdk_messages``).

CodeBuddy Code may print a reply only as ``result.result`` (then it is the reply), ends a
failed turn with ``result`` ``error_during_execution`` (``errors``) while exiting 0, and
answers an unknown session with one ``{"type":"error","error":…}`` line. Its
``file-history-snapshot`` line has no ``session_id``. docs/fake-engines.md, "codebuddy".
"""

from __future__ import annotations

from turngate.engines.readers import _sdk_messages
from turngate.engines.readers.events import Transcript


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    return _sdk_messages.read("codebuddy", stdout, stderr)
