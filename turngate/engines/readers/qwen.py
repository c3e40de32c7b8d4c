"""qwen ``--output-format stream-json``: the SDK message stream (``_sdk_messages``).

Qwen Code adds a ``stream_event`` (nothing for the turn) and ``system/retry`` notices (a
retry it makes itself), prints each content block as an event of its own, reports a failed
request as an assistant text of its own making, ``[API Error: …]`` (the whole text; under a
429, a line of advice follows it: corpus/qwen/real-0.24.4-hazard-429), and
ends that turn with ``result`` ``error_during_execution`` (``error.message``). Its
``result.result`` repeats the last assistant message: one reply, not two.
docs/fake-engines.md, "qwen".
"""

from __future__ import annotations

from turngate.engines.readers import _sdk_messages
from turngate.engines.readers._stream import JsonObject
from turngate.engines.readers.events import Transcript


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    return _sdk_messages.read("qwen", stdout, stderr, _is_failure)


# What 0.24.4 writes under `[API Error: 429 …]` when it gives up on a rate limit.
RATE_LIMIT_ADVICE = (
    "\nPossible quota limitations in place or slow response times detected. Please wait and try again later."
)


def _is_failure(text: str, record: JsonObject, session_id: str | None) -> bool:
    """qwen's words for a failed request: the whole text is ``[API Error: …]``, or ``[API Error: 429
    …]`` and qwen's advice."""
    if text.startswith("[API Error: 429 ") and text.endswith(RATE_LIMIT_ADVICE):
        text = text.removesuffix(RATE_LIMIT_ADVICE)
    return text.startswith("[API Error: ") and text.endswith("]")
