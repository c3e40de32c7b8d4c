"""The backend-owned pending interaction (Decision 5), enriched from a clean hint only.

The baseline never depends on the model:

- ``interaction_id`` is the attempt number: backend-generated, monotonic,
  attempt-based. A hint's own ``interaction_id`` is read but never used, so an
  engine repeating the same id cannot stall or rewind the count.
- ``prompt`` is the turn's final assistant message with every hint cut out
  and whitespace trimmed; when that is empty, the clean hint's prompt; else
  `FALLBACK_PROMPT`. A hint is never the prompt text verbatim.
- ``kind`` is advisory compatibility metadata (004): the clean hint's kind when
  it is one of `KINDS`, else `DEFAULT_KIND`. An unknown kind is a diagnostic,
  not a reason to drop the rest of the enrichment.
- ``default_decision_policy`` is always present (004), `DEFAULT_DECISION_POLICY`
  unless a clean hint names another.

``options``, ``ui_hints``, ``context``, ``required_fields`` and the policy come
from a clean hint only. A malformed hint changes nothing but the enrichment:
the payload is the baseline and the hint's problems become ``diagnostics``
(003 "ask_user 载荷不完整"; Decision 4).

Replies are free text whatever ``kind`` says (004 "各 kind 下均可提交自由文本");
the one reason to refuse one is a stale ``interaction_id`` (`accepts_reply`).
An empty reply is accepted: the spec names no rule against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from turngate.implementations.reference.hints import HintScan, scan_hints

KINDS: Final = ("choose_one", "confirm", "fill_fields", "open_text", "risk_ack")
DEFAULT_KIND: Final = "open_text"
FALLBACK_PROMPT: Final = "The skill is waiting for your input."

# Automatic decision policies (strict=false, after the wait deadline), see `auto_decision_reply`.
ENGINE_JUDGEMENT: Final = "engine_judgement"
FIRST_OPTION: Final = "first_option"
SAFE_DEFAULT: Final = "safe_default"
DENY: Final = "deny"
DEFAULT_DECISION_POLICY: Final = ENGINE_JUDGEMENT
DECISION_POLICIES: Final = (ENGINE_JUDGEMENT, FIRST_OPTION, SAFE_DEFAULT, DENY)

SOURCE_BASELINE: Final = "baseline"

# Stable codes.
INTERACTION_STALE: Final = "INTERACTION_STALE"
ASK_USER_KIND_UNKNOWN: Final = "ASK_USER_KIND_UNKNOWN"
ASK_USER_POLICY_UNKNOWN: Final = "ASK_USER_POLICY_UNKNOWN"

NO_REPLY: Final = "No reply from the user within the time limit."

OptionValue = str | int | float | bool

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Option:
    label: str
    value: OptionValue


@dataclass(frozen=True, slots=True)
class Pending:
    """One pending interaction. ``ui_hints`` and ``context`` are deep read-only views."""

    interaction_id: int
    kind: str
    prompt: str
    options: tuple[Option, ...] = ()
    ui_hints: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    context: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    required_fields: tuple[str, ...] = ()
    default_decision_policy: str = DEFAULT_DECISION_POLICY
    source: str = SOURCE_BASELINE
    diagnostics: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A plain dict in the job API's ``pending`` shape (HTTP_API.md), plus ``source``, ``diagnostics``."""
        return {
            "interaction_id": self.interaction_id,
            "kind": self.kind,
            "prompt": self.prompt,
            "options": [{"label": option.label, "value": option.value} for option in self.options],
            "ui_hints": _thaw(self.ui_hints),
            "context": _thaw(self.context),
            "required_fields": list(self.required_fields),
            "default_decision_policy": self.default_decision_policy,
            "source": self.source,
            "diagnostics": list(self.diagnostics),
        }


def build_pending(
    *, attempt_number: int, final_message: str | None, hints: HintScan | None = None
) -> Pending:
    """The pending interaction for a turn that ends without completion evidence.

    ``hints`` is the caller's `scan_hints` of the same message, when it has one.
    """
    if isinstance(attempt_number, bool) or not isinstance(attempt_number, int) or attempt_number < 1:
        raise ValueError(f"attempt_number: {attempt_number!r}: must be an integer >= 1")
    if hints is None:
        hints = scan_hints(final_message or "")
    hint = hints.last
    message_prompt = hints.stripped.strip()
    if hint is None or not hint.clean:
        return Pending(
            interaction_id=attempt_number,
            kind=DEFAULT_KIND,
            prompt=message_prompt or FALLBACK_PROMPT,
            diagnostics=hint.problems if hint is not None else (),
        )
    fields = hint.fields
    diagnostics: list[str] = []
    kind = fields.get("kind", DEFAULT_KIND)
    if kind not in KINDS:
        diagnostics.append(f"{ASK_USER_KIND_UNKNOWN}: {kind!r}: shown as {DEFAULT_KIND}")
        kind = DEFAULT_KIND
    options = tuple(Option(option["label"], option["value"]) for option in fields.get("options", ()))
    policy = fields.get("default_decision_policy", DEFAULT_DECISION_POLICY)
    if policy not in DECISION_POLICIES and _option_named(options, policy) is None:
        diagnostics.append(f"{ASK_USER_POLICY_UNKNOWN}: {policy!r}: decided as {ENGINE_JUDGEMENT}")
    return Pending(
        interaction_id=attempt_number,  # never the hint's own id (Decision 5)
        kind=kind,
        prompt=message_prompt or fields["prompt"].strip(),
        options=options,
        ui_hints=_freeze_mapping(fields.get("ui_hints", _EMPTY)),
        context=_freeze_mapping(fields.get("context", _EMPTY)),
        required_fields=tuple(fields.get("required_fields", ())),
        default_decision_policy=policy,
        source=f"{SOURCE_BASELINE}+{hint.form}",
        diagnostics=tuple(diagnostics),
    )


def pending_from_json(document: Mapping[str, Any]) -> Pending:
    """A stored payload (`Pending.to_json`) back as a value; absent optional fields take their defaults."""
    interaction_id = document["interaction_id"]
    if isinstance(interaction_id, bool) or not isinstance(interaction_id, int):
        raise ValueError(f"interaction_id: {interaction_id!r}: not an integer")
    return Pending(
        interaction_id=interaction_id,
        kind=str(document.get("kind") or DEFAULT_KIND),
        prompt=str(document.get("prompt") or FALLBACK_PROMPT),
        options=tuple(Option(str(item["label"]), item["value"]) for item in document.get("options") or ()),
        ui_hints=_freeze_mapping(document.get("ui_hints") or _EMPTY),
        context=_freeze_mapping(document.get("context") or _EMPTY),
        required_fields=tuple(str(name) for name in document.get("required_fields") or ()),
        default_decision_policy=str(document.get("default_decision_policy") or DEFAULT_DECISION_POLICY),
        source=str(document.get("source") or SOURCE_BASELINE),
        diagnostics=tuple(str(line) for line in document.get("diagnostics") or ()),
    )


def auto_decision_reply(pending: Pending) -> str:
    """The reply sent for the user when strict=false and the wait deadline passed (001; 004).

    Policies, checked in this order:

    - the value of one of the options (e.g. ``formal``): choose that option;
    - ``first_option``: choose the first option (no options: as ``engine_judgement``);
    - ``safe_default``: take the most conservative choice, nothing irreversible;
    - ``deny``: treat the question as declined;
    - ``engine_judgement`` (the default) and any other value: the engine decides.
    """
    policy = pending.default_decision_policy
    named = _option_named(pending.options, policy)
    if named is not None:
        return f"{NO_REPLY} Proceed with the option {_describe(named)} and continue."
    if policy == FIRST_OPTION and pending.options:
        return f"{NO_REPLY} Proceed with the first option, {_describe(pending.options[0])}, and continue."
    if policy == SAFE_DEFAULT:
        return f"{NO_REPLY} Take the safest, most conservative choice, do nothing irreversible, and continue."
    if policy == DENY:
        return f"{NO_REPLY} Treat the question as declined: do not take the action asked about, and continue."
    return f"{NO_REPLY} Decide by your own best judgement and continue."


def accepts_reply(pending: Pending, interaction_id: object, response: str) -> str | None:
    """None when a reply to ``pending`` is accepted, else a stable code.

    Only the id matters: any free text (empty included) is accepted whatever
    the ``kind`` (004). An id that is not the pending one, or not an integer
    (a boolean is not one), is `INTERACTION_STALE`.
    """
    del response  # free text: never checked against a fixed structure
    if isinstance(interaction_id, bool) or not isinstance(interaction_id, int):
        return INTERACTION_STALE
    if interaction_id != pending.interaction_id:
        return INTERACTION_STALE
    return None


def _option_named(options: Sequence[Option], policy: str) -> Option | None:
    for option in options:
        if isinstance(option.value, str) and option.value == policy:
            return option
    return None


def _describe(option: Option) -> str:
    return f'"{option.label}" (value: {option.value})'


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({str(key): _freeze(inner) for key, inner in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(inner) for inner in value)
    return value


def _freeze_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    frozen: Mapping[str, Any] = _freeze(value)
    return frozen


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _thaw(inner) for key, inner in value.items()}
    if isinstance(value, tuple):
        return [_thaw(inner) for inner in value]
    return value
