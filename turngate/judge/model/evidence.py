"""Evidence: what one scripted engine turn means to the spec, read from the script, not from bytes.

The model never parses an engine's stream (that is the readers' job, and the reference's); it reads
the fake engines' script (docs/fake-engines.md) for what each step *is*: assistant reply text
(``say``, ``ask_user``), an echo the spec excludes from evidence (``tool``, ``think``, ``stderr``),
or an interruption of the process (``crash``, ``hang``, ``truncate``, a turn with no end, a failed
model request: ``model_error``). A step
whose meaning depends on the bytes (``raw``) or that the spec says nothing about (an engine
``error`` event) is :class:`Unmodelled`: the model declines rather than guesses.

Marker and output are the spec's own words: the done marker is the JSON text
``"__SKILL_DONE__": true``, plain or escaped inside a string (Decision 3.1), found only in the
assistant's reply (003, escaped-marker detection); the output is the business JSON object the reply
carries, with the marker stripped before schema validation (Decision 3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import jsonschema

MARKER_KEY: Final = "__SKILL_DONE__"

# The literal reading: the key exactly, a JSON boolean true, plain or with escaped quotes.
_LITERAL: Final = re.compile(r'\\?"__SKILL_DONE__\\?"[ \t\r\n]*:[ \t\r\n]*true(?![A-Za-z0-9_])')
# The lenient reading (engine-format/marker-look-alikes): any letter case of the key, and a value
# that is true in any case, the string "true", or a word beginning with true.
_LENIENT: Final = re.compile(r'\\?"__skill_done__\\?"[ \t\r\n]*:[ \t\r\n]*(\\?"true\\?"|true)', re.IGNORECASE)

Interruption = Literal["none", "crash", "signal", "hang", "truncated", "no-end"]
MarkerReading = Literal["marker-literal", "marker-lenient"]
# Decision 3.1's escaped marker (design/decision-3.1/escaped-marker-invalid-output): a reply that itself
# quotes the marker escaped (\"__SKILL_DONE__\": true, after the stream line is decoded) counts, or
# only the stream line's own escaping is meant (the decoded reply must show it plain).
EscapedReading = Literal["quoted-in-reply-counts", "wire-escape-only"]
_LITERAL_PLAIN: Final = re.compile(_LITERAL.pattern.replace("\\\\?", ""))
_LENIENT_PLAIN: Final = re.compile(_LENIENT.pattern.replace("\\\\?", ""), re.IGNORECASE)


class Unmodelled(ValueError):
    """A script the model does not predict (raw bytes, engine error events): said, never guessed."""


@dataclass(frozen=True, slots=True)
class Hint:
    """An ask_user hint as the script wrote it; ``valid`` is False for any defect (003: malformed
    payload falls back to the backend's baseline)."""

    form: str
    valid: bool
    prompt: str | None
    kind: str | None
    options: tuple[Mapping[str, Any], ...] | None
    ui_hints: Mapping[str, Any] | None
    context: Mapping[str, Any] | None
    # Cut off mid-payload: what survived may still parse, so whether it enriches the pending is the
    # implementation's call ("optional enriched fields if safe to parse").
    partial: bool = False


@dataclass(frozen=True, slots=True)
class TurnEvidence:
    """One engine turn, as the gate sees it."""

    messages: tuple[str, ...]  # the assistant's reply texts, in order (say, ask_user prose)
    final_message: str | None  # the final assistant message, when it is prose the baseline can quote
    hint: Hint | None
    interruption: Interruption
    output: Mapping[str, Any] | None  # the business JSON object, marker stripped; None: none found
    output_found: bool
    output_in_final: bool  # the object is in the final assistant message
    echoes: tuple[str, ...] = ()  # where the marker text shows outside the reply: tool, think, stderr
    raw_output: Mapping[str, Any] | None = None  # the output object as written, marker key and all

    def marker(self, reading: MarkerReading = "marker-literal", *, quoted: bool = True) -> bool:
        """The marker in the reply; ``quoted``: also where the decoded reply quotes it escaped."""
        if quoted:
            pattern = _LITERAL if reading == "marker-literal" else _LENIENT
        else:
            pattern = _LITERAL_PLAIN if reading == "marker-literal" else _LENIENT_PLAIN
        return any(pattern.search(text) for text in self.messages)

    def near_miss(self, reading: MarkerReading = "marker-literal") -> str | None:
        """What looks like the marker but is not evidence: ``tool``, ``think`` or ``stderr`` echoes,
        or a ``look-alike`` in the reply (under the literal reading); None when there is none."""
        if self.echoes:
            return self.echoes[0]
        if reading == "marker-literal" and not self.marker() and self.marker("marker-lenient"):
            return "look-alike"
        return None

    def valid_only_when_stripped(self, schema: Mapping[str, Any] | None) -> bool:
        """The output passes the schema with the marker stripped, and fails it without: the decision
        hinges on Decision 3 (the marker is removed before validation)."""
        if self.raw_output is None or MARKER_KEY not in self.raw_output or not self.output_valid(schema):
            return False
        validator = jsonschema.Draft202012Validator(schema if schema is not None else {"type": "object"})
        return not validator.is_valid(self.raw_output)

    def output_valid(self, schema: Mapping[str, Any] | None) -> bool:
        if self.output is None:
            return False
        validator = jsonschema.Draft202012Validator(schema if schema is not None else {"type": "object"})
        return bool(validator.is_valid(self.output))

    @property
    def interrupted(self) -> bool:
        return self.interruption != "none"


def turn_evidence(turn: Mapping[str, Any], *, reply_is_last_message: bool = False) -> TurnEvidence:
    """A script turn (``{steps: [...], end?, exit_code?}``) as evidence. ``reply_is_last_message``: the
    engine prints each message apart and its reply is the last one (ENGINE_FORMATS.md: codex's
    commentary before the final answer, opencode's "only the last step's text is the reply"), so the
    output is looked for there; otherwise the reply is one document holding every message."""
    messages: list[str] = []
    echoes: list[str] = []
    final: str | None = None
    hint: Hint | None = None
    interruption: Interruption = "none"
    answer: list[str] = []  # the reply texts since the last tool call: what a retried request repeats
    for step in turn.get("steps", ()):
        ((kind, value),) = step.items()
        match kind:
            case "say":
                text = _say_text(value)
                messages.append(text)
                answer.append(text)
                final = text
            case "ask_user":
                hint = _hint(value)
                # The hint is its own assistant message (its prose, then the block): what comes
                # before it is no longer the final message. The block itself is never output.
                messages.append(str(value.get("text") or ""))
                # The reply's final message holds the hint block: the baseline's prompt is then the
                # implementation's to derive (the hint's prompt, or the prose), not a value to pin.
                final = None
            case "tool" | "think" | "stderr" | "file_change":
                # echoes and noise: never evidence (003, escaped-marker detection); noted, so that a
                # decision that hinges on leaving them out can say which sentence does. A patch tool's
                # file (file_change) is a tool call like any other.
                if _LITERAL.search(json.dumps(value, ensure_ascii=False).replace('\\"', '"')):
                    echoes.append("tool" if kind == "file_change" else kind)
                if kind != "think":
                    answer = []
            case "sleep" | "split" | "detach" | "pad":
                pass
            case "model_error":
                # the model request failed (a cut stream, a status the CLI gave up on); a retry streams
                # the answer again, a message of its own. Unless the last retry succeeded, the CLI ends
                # the turn as failed (or never ends it): an interrupted process, as a failed turn is.
                messages.extend(answer * int(value.get("retries", 0)))
                if not value.get("recovers"):
                    interruption = "no-end"
                    break
            case "crash":
                interruption = "signal" if "signal" in value else "crash"
                break
            case "hang":
                interruption = "hang"
                break
            case "truncate":
                interruption = "truncated"
                break
            case "raw" | "error":
                raise Unmodelled(f"a `{kind}` step: its meaning is in its bytes or the spec is silent")
            case _:
                raise Unmodelled(f"an unknown step {kind!r}")
    end = turn.get("end", "completed")
    if interruption == "none" and end != "completed":
        interruption = "no-end"
    if interruption == "none" and int(turn.get("exit_code", 0)) != 0:
        interruption = "crash"
    output, found, raw = _output(messages[-1:] if reply_is_last_message else messages)
    in_final = (
        bool(messages)
        and found
        and any(candidate.get("outcome") != "ask_user" for candidate in _objects(messages[-1]))
    )
    return TurnEvidence(
        tuple(messages), _prose(final), hint, interruption, output, found, in_final, tuple(echoes), raw
    )


def _say_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if "chunks" in value:
        return "".join(str(chunk) for chunk in value["chunks"])
    return str(value["text"])


def _prose(message: str | None) -> str | None:
    """The final message, when it is plain prose: a message carrying JSON is output, not a question."""
    if message is None or "{" in message:
        return None
    return message.strip() or None


def _hint(value: Mapping[str, Any]) -> Hint:
    options = value.get("options")
    return Hint(
        form=str(value.get("form", "yaml_block")),
        valid=value.get("defect") is None and bool(value.get("prompt")),
        prompt=value.get("prompt"),
        kind=value.get("kind"),
        options=tuple(options) if isinstance(options, list) else None,
        ui_hints=value.get("ui_hints"),
        context=value.get("context"),
        partial=value.get("defect") == "truncated",
    )


def _output(messages: Sequence[str]) -> tuple[Mapping[str, Any] | None, bool, Mapping[str, Any] | None]:
    """The last JSON object of the reply (an ask_user envelope is a hint, never output: Decision 4),
    with the marker key removed (Decision 3)."""
    found: Mapping[str, Any] | None = None
    for message in messages:
        for candidate in _objects(message):
            if candidate.get("outcome") == "ask_user":
                continue
            found = candidate
    if found is None:
        return None, False, None
    return {key: value for key, value in found.items() if key != MARKER_KEY}, True, found


def _objects(text: str) -> list[dict[str, Any]]:
    """Top-level JSON objects in a text, left to right."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found
