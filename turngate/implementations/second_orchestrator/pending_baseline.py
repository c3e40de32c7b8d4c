"""The backend-owned pending baseline (Decision 5), optionally enriched from a clean hint.

interaction_id is the attempt number (monotonic, backend-generated), never the hint's; the
prompt is the final assistant message (hint text removed), else the clean hint's prompt, else a
fallback; kind defaults to open_text; default_decision_policy is always present (004).
"""

from __future__ import annotations

from typing import Any, Final

from .ask_user_hints import Hint
from .bugs import bug

FALLBACK_PROMPT: Final = "The skill is waiting for your input."
DEFAULT_KIND: Final = "open_text"
DEFAULT_POLICY: Final = "engine_judgement"
MAX_PROMPT: Final = 8000


def baseline(
    attempt: int, message: str, hint: Hint | None, previous: dict[str, Any] | None
) -> dict[str, Any]:
    prompt = message.strip()[:MAX_PROMPT] or (hint.prompt if hint is not None else "") or FALLBACK_PROMPT
    interaction_id = attempt
    if bug("hint_id_as_pending_id") and hint is not None and hint.interaction_id is not None:
        interaction_id = hint.interaction_id
    if previous is not None:
        # A later question of the same run: the previous pending is only consulted by the bugs.
        if bug("pending_prompt_stale"):
            prompt = previous["prompt"]
        if bug("pending_id_reused"):
            interaction_id = previous["interaction_id"]
    policy: str | None = DEFAULT_POLICY
    if hint is not None and hint.default_decision_policy:
        policy = hint.default_decision_policy
    elif bug("pending_policy_null"):
        policy = None
    pending: dict[str, Any] = {
        "interaction_id": interaction_id,
        "prompt": prompt,
        "kind": (hint.kind if hint is not None and hint.kind else DEFAULT_KIND),
        "default_decision_policy": policy,
    }
    if hint is not None:
        if hint.options is not None:
            pending["options"] = list(hint.options)
        if hint.ui_hints is not None:
            pending["ui_hints"] = hint.ui_hints
        if hint.context is not None:
            pending["context"] = hint.context
    return pending
