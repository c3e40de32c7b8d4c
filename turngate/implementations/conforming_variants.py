"""Conforming variants of the reference: implementations that are right but different.

Each variant is a small, named change of what the reference *shows*, made
where the spec leaves room (HTTP_API.md: "endpoint shapes, other codes and
other event names ... are conventions of servers of this family, which a
verdict must not demand as if the spec said them"). They are the harness's
own check on its verdicts, like Bowtie's miniatures: the whole catalog against
each must give no ``failed`` and no ``non-strict``.

A variant is applied at the boundary where a target shows its runs: the
in-process connector's observation (`variant_observation`) and the answers of
``turngate serve``'s job service (`VariantView`). The gate, the store and the
lifecycle are untouched, so a variant can only change names and exposure, never
a decision. Construction refuses a variant that would rename what the spec
does name (its three codes, ``user.input.required``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from turngate.protocol.connector import Observation

# What the spec names and no variant may rename (HTTP_API.md, first paragraph).
SPEC_CODES: Final = frozenset(
    {
        "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER",
        "INTERACTIVE_MAX_ATTEMPT_EXCEEDED",
        "INTERACTION_WAIT_TIMEOUT",
    }
)
SPEC_EVENTS: Final = frozenset({"user.input.required"})
REFERENCE_FALLBACK_PROMPT: Final = "The skill is waiting for your input."
OUTPUT_REPAIRED_GENERIC: Final = "OUTPUT_REPAIRED_GENERIC"
REPLY_PREVIEW_CHARS: Final = 80

_NONE: Final[Mapping[str, Any]] = MappingProxyType({})


class UnknownVariant(ValueError):
    """A ``--variant`` name turngate does not know; the message lists the known ones."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One conforming variant: what it renames, adds or hides. The default changes nothing."""

    name: str
    summary: str
    room: str  # where the spec leaves room for this difference
    codes: Mapping[str, str] = field(default_factory=lambda: _NONE)  # reason, error and reply codes
    events: Mapping[str, str] = field(default_factory=lambda: _NONE)  # FCMP event types
    reply_preview: bool = False  # the reply event carries response_preview, not the response
    fallback_prompt: str | None = None  # the pending prompt when the turn said nothing usable
    context: Mapping[str, str] = field(default_factory=lambda: _NONE)  # extra pending.context keys
    policies: Mapping[str, str] = field(default_factory=lambda: _NONE)  # default_decision_policy names
    gemini_json_warning: bool = False  # OUTPUT_REPAIRED_GENERIC on every gemini json document
    history: bool = True  # the interaction history is shown
    protocol_events: bool = True  # the protocol events are shown
    id_offset: int = 0  # shown interaction ids are the reference's plus this (still monotonic)
    answered_rounds_only: bool = False  # the history lists answered rounds, not the ask still open

    def __post_init__(self) -> None:
        renamed = sorted(SPEC_CODES & set(self.codes))
        if renamed:
            raise ValueError(f"variant {self.name}: codes: {renamed[0]!r} is named by the spec")
        if SPEC_EVENTS & set(self.events):
            raise ValueError(f"variant {self.name}: events: user.input.required is named by the spec")
        unknown = sorted(set(self.context.values()) - set(CONTEXT_SOURCES))
        if unknown:
            raise ValueError(
                f"variant {self.name}: context: {unknown[0]!r}: known: {', '.join(CONTEXT_SOURCES)}"
            )

    @property
    def hidden(self) -> frozenset[str]:
        """What this variant does not show (its checks are unverified, never failed)."""
        return frozenset(
            name for name, shown in (("history", self.history), ("events", self.protocol_events)) if not shown
        )

    # One value at a time ------------------------------------------------------------------

    def code(self, value: str | None) -> str | None:
        return None if value is None else self.codes.get(value, value)

    def event_type(self, value: str) -> str:
        return self.events.get(value, value)

    def prompt(self, value: Any) -> Any:
        if self.fallback_prompt is not None and value == REFERENCE_FALLBACK_PROMPT:
            return self.fallback_prompt
        return value

    def shown_id(self, value: Any) -> Any:
        """An interaction id as the variant numbers it."""
        return value + self.id_offset if isinstance(value, int) and not isinstance(value, bool) else value

    def own_id(self, value: int | None) -> int | None:
        """An interaction id a client sent, back in the reference's numbering (None: the pending one)."""
        return None if value is None else value - self.id_offset

    def pending(self, pending: Mapping[str, Any] | None, engine: str) -> dict[str, Any] | None:
        if pending is None:
            return None
        shown = dict(pending)
        if "interaction_id" in shown:
            shown["interaction_id"] = self.shown_id(shown["interaction_id"])
        shown["prompt"] = self.prompt(shown.get("prompt"))
        policy = shown.get("default_decision_policy")
        if isinstance(policy, str):
            shown["default_decision_policy"] = self.policies.get(policy, policy)
        if self.context:
            context = dict(shown.get("context") or {})
            facts = {"engine": engine, "interaction_id": shown.get("interaction_id"), "variant": self.name}
            for key, source in self.context.items():
                context.setdefault(key, facts[source])  # the hint's own keys win: enrichment, not override
            shown["context"] = context
        return shown

    def event_data(self, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
        shown = dict(data)
        if "interaction_id" in shown:
            shown["interaction_id"] = self.shown_id(shown["interaction_id"])
        match kind:
            case "user.input.required":
                shown["prompt"] = self.prompt(shown.get("prompt"))
            case "user.input.replied" if self.reply_preview:
                response = str(shown.pop("response", ""))
                shown["response_preview"] = response[:REPLY_PREVIEW_CHARS]
            case "conversation.completed":
                shown["reason_code"] = self.code(shown.get("reason_code"))
            case "conversation.failed":
                error = dict(shown.get("error") or {})
                error["code"] = self.code(error.get("code"))
                shown["error"] = error
            case "diagnostic.warning":
                shown["code"] = self.code(shown.get("code"))
        return shown

    def warnings(
        self, warnings: tuple[str, ...], *, engine: str, gemini_format: str | None, state: str
    ) -> tuple[str, ...]:
        shown = tuple(self.code(warning) or warning for warning in warnings)
        # Skill-Runner marks every gemini json document as repaired output, valid or not (HTTP_API.md).
        document = engine == "gemini" and gemini_format in (None, "json") and state == "succeeded"
        if self.gemini_json_warning and document and OUTPUT_REPAIRED_GENERIC not in shown:
            shown += (OUTPUT_REPAIRED_GENERIC,)
        return shown

    def history_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **row,
            "prompt": self.prompt(row.get("prompt")),
            "interaction_id": self.shown_id(row.get("interaction_id")),
        }

    def history_rows(self, rows: Any) -> tuple[dict[str, Any], ...]:
        """The history as shown: each row renamed, the open ask left out where the variant does."""
        kept = (row for row in rows if not (self.answered_rounds_only and row.get("response") is None))
        return tuple(self.history_row(row) for row in kept)

    def decision(self, decision: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **decision,
            "reason_code": self.code(decision.get("reason_code")),
            "error_code": self.code(decision.get("error_code")),
        }


# What an extra context key may hold.
CONTEXT_SOURCES: Final = ("engine", "interaction_id", "variant")

REFERENCE: Final = Variant("reference", "turngate's own names and exposure", "-")

SKILL_RUNNER_CODES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "DONE_MARKER_FOUND": "DONE_SIGNAL_FOUND",
        "OUTPUT_VALIDATED": "OUTPUT_SCHEMA_PASSED",
        "WAITING_FOR_USER": "AWAITING_USER_INPUT",
        "OUTPUT_INVALID": "OUTPUT_VALIDATION_FAILED",
        "OUTPUT_NOT_FOUND": "OUTPUT_MISSING",
        "OUTPUT_SCHEMA_INVALID": "OUTPUT_VALIDATION_FAILED",
        "ENGINE_FAILED": "ENGINE_EXIT_NONZERO",
        "ENGINE_TURN_INCOMPLETE": "ENGINE_STREAM_TRUNCATED",
        "PROCESS_INTERRUPTED": "PROCESS_FAILED",
        "INTERACTION_STALE": "INTERACTION_ID_MISMATCH",
        "RUN_NOT_WAITING": "JOB_NOT_WAITING",
        "CANCELED_BY_USER": "USER_CANCELED",
    }
)
SKILL_RUNNER_FALLBACK: Final = "Please provide your reply to continue."

VARIANTS: Final[Mapping[str, Variant]] = MappingProxyType(
    {
        variant.name: variant
        for variant in (
            REFERENCE,
            Variant(
                "reason-codes",
                "Skill-Runner's reason, error and reply codes (DONE_SIGNAL_FOUND, ...)",
                "the spec names three codes and no reason codes (HTTP_API.md)",
                codes=SKILL_RUNNER_CODES,
            ),
            Variant(
                "event-names",
                "the reply event is interaction.reply.accepted with a response_preview; other"
                " events renamed too; user.input.required kept",
                "the spec names only user.input.required (000 Architecture Notes 2)",
                events={
                    "user.input.replied": "interaction.reply.accepted",
                    "conversation.started": "run.started",
                    "assistant.message.final": "assistant.message.completed",
                    "diagnostic.warning": "run.warning",
                },
                reply_preview=True,
            ),
            Variant(
                "extra-warnings",
                "adds its own stable warning OUTPUT_REPAIRED_GENERIC to every gemini json document",
                "the spec requires INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER where it applies and"
                " forbids no other warning",
                gemini_json_warning=True,
            ),
            Variant(
                "rich-pending",
                "more pending enrichment: context carries engine, interaction_id, variant",
                "Decision 5: 'optional enriched fields if safe to parse'; 003: enrichment fields"
                " 'such as ui_hints/options/context'",
                context={"engine": "engine", "interaction": "interaction_id", "server": "variant"},
            ),
            Variant(
                "prose-fallback",
                "another fallback prompt when the turn left no text: Skill-Runner's",
                "Decision 5: prompt 'from final assistant message of the turn, else fallback prompt'"
                " (the text is not given)",
                fallback_prompt=SKILL_RUNNER_FALLBACK,
            ),
            Variant(
                "policy-names",
                "its own name for the default decision policy (auto_decide)",
                "004: the payload contains default_decision_policy; its values are not named",
                policies={"engine_judgement": "auto_decide"},
            ),
            Variant(
                "ids-from-101",
                "interaction ids numbered 101, 102, ... (the reference's plus 100)",
                "Decision 5: a 'backend-generated monotonic id (attempt-based)': a relation, not the"
                " numbers 1, 2, ...",
                id_offset=100,
            ),
            Variant(
                "answered-rounds-only",
                "the history lists the answered ask/reply rounds only, not the question still open",
                "001: the history records each completed ask/reply round (WHEN a round of ask_user"
                " and reply completes); an open question is the pending's",
                answered_rounds_only=True,
            ),
            Variant(
                "no-history",
                "keeps the interaction history but offers no endpoint for it",
                "001 asks that history be persisted 'for audit and replay', not that it be served",
                history=False,
            ),
            Variant(
                "no-events",
                "offers no protocol events at all",
                "the protocol translator is an architecture note (000), not a MUST of the specs",
                protocol_events=False,
            ),
            Variant(
                "skill-runner",
                "all of Skill-Runner's conventions at once (HTTP_API.md, commit 7d8914d)",
                "every difference above is a convention the spec leaves open",
                codes=SKILL_RUNNER_CODES,
                events={"user.input.replied": "interaction.reply.accepted"},
                reply_preview=True,
                fallback_prompt=SKILL_RUNNER_FALLBACK,
                gemini_json_warning=True,
                history=False,
            ),
        )
    }
)


def variant_named(name: str | None) -> Variant:
    if name is None:
        return REFERENCE
    variant = VARIANTS.get(name)
    if variant is None:
        raise UnknownVariant(f"--variant: {name!r}: known: {', '.join(VARIANTS)}")
    return variant


def variant_observation(
    variant: Variant, observation: Observation, *, engine: str, gemini_format: str | None
) -> Observation:
    """What a target built as ``variant`` shows instead of the reference's ``observation``."""
    if variant is REFERENCE:
        return observation
    decisions = [variant.decision(decision) for decision in observation.extra.get("decisions", ())]
    return replace(
        observation,
        error_code=variant.code(observation.error_code),
        warnings=variant.warnings(
            observation.warnings, engine=engine, gemini_format=gemini_format, state=observation.state
        ),
        reason_code=variant.code(observation.reason_code),
        pending=variant.pending(observation.pending, engine),
        # None: the target cannot show it, so its checks are unverified (never failed, never passed).
        history=None
        if not variant.history or observation.history is None
        else variant.history_rows(observation.history),
        events=None
        if not variant.protocol_events or observation.events is None
        else tuple(
            {
                "type": variant.event_type(event["type"]),
                "data": variant.event_data(event["type"], event["data"]),
            }
            for event in observation.events
        ),
        extra={
            **observation.extra,
            "decisions": decisions,
            # What it does not show, declared: its checks are unverified (a shown null would fail).
            "unobservable": sorted({*observation.extra.get("unobservable", ()), *variant.hidden}),
        },
    )
