"""Recognising Skill-Runner's output-repair resumes, so they do not consume the user's next turn.

From v0.6.0 (c626d95, "unified structured output contract & in-attempt output
repair") Skill-Runner checks an attempt's output against the JSON union
contract and, when it fails, resumes the engine's session up to
`MAX_REPAIR_ROUNDS = 3` times within the same attempt, with a prompt of its
own (`__prompt_override`) instead of a user reply. The prompt is built by
`_build_repair_prompt` in `server/services/orchestration/run_output_convergence_service.py`;
both editions open with the same sentence:

v0.6.0 (abe8626), lines 920-957, the sentence at line 937::

    Your previous output did not satisfy the Skill Runner output contract.

    Previous candidate:
    <the previous output's JSON candidate, or "No valid JSON object was extracted from the previous output.">

    Validation errors:
    - <error>

    <branch line: "For interactive mode, return exactly one JSON object that matches either the final
    branch (`__SKILL_DONE__ = true`) or the pending branch (`__SKILL_DONE__ = false` with `message`
    and `ui_hints`)." or "Return exactly one final JSON object with `__SKILL_DONE__ = true`.">
    Do not output explanations.
    Do not output Markdown fences.

    Target output contract details:
    <the skill's output contract summary, when there is one>

v0.7.9 (c79d774), lines 898-930, the sentence at line 913: the same text without the
"Previous candidate:" block.

The prompt carries no case token, but a user's reply on a resume carries none either
(`_build_reply_prompt` in `server/services/orchestration/job_orchestrator.py` sends the reply
text as is, or its JSON), and the v0.6.0 prompt quotes the previous output, which may hold one:
the absence of a token tells nothing. So a resume is a repair resume when its prompt, leading
whitespace aside, opens with that sentence (its closing full stop optional). A user who replies
with that sentence is taken for a repair; turngate's replies never do.
"""

from __future__ import annotations

# The sentence both editions open the repair prompt with (see the module docstring).
REPAIR_PROMPT_OPENING = "Your previous output did not satisfy the Skill Runner output contract"


def is_repair_prompt(prompt: str) -> bool:
    """Whether a resume's prompt is Skill-Runner's output-repair prompt."""
    return prompt.lstrip().startswith(REPAIR_PROMPT_OPENING)
