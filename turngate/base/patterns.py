"""Regular expressions from a skill's schemas (``pattern``, ``patternProperties``), matched in time linear
in the text, whatever the pattern.

A skill's pattern meets model-written text, and Python's backtracking ``re`` gives some patterns
exponential time: ``^(a+)+$`` against a 27-character answer held a whole server for 4.3 s, four
times longer for every two more characters. RE2 (google-re2) matches in linear time, with no time
limit to tune and no verdict that depends on the machine's speed. What it gives up is what needs
backtracking: lookaround and backreferences. A schema whose pattern uses them is refused when the
package is installed (`unmatchable`), with the reason, rather than matched slowly at every turn.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Final

import jsonschema.validators
import re2
from jsonschema.exceptions import ValidationError

from turngate.base.hostile_text import surrogates_escaped

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern to stderr


def unmatchable(pattern: str) -> str | None:
    """Why ``pattern`` cannot be matched in linear time (None: it can)."""
    try:
        _compiled(pattern)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        return f"not a pattern that can be matched in linear time (RE2: {text})"
    return None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's reading: unanchored). A pattern
    `unmatchable` refuses matches nothing: the package holding it was refused at install."""
    try:
        # RE2 reads UTF-8, which has no lone surrogate: it meets one as the text we keep (six characters)
        return _compiled(pattern).search(surrogates_escaped(text)) is not None
    except re2.error:
        return False


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, _OPTIONS)


@functools.cache  # extend builds a class: 3 % of a reference run's CPU when built for each output
def linear_time(validator_class: Any) -> Any:
    """``validator_class`` (a jsonschema validator) with every keyword that matches a pattern against
    an instance (``pattern``, ``patternProperties``, ``additionalProperties``) matching by `search`.
    ``unevaluatedProperties`` still uses ``re``: a schema may not use it with catastrophic patterns."""
    return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        validator_class,
        {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional},
    )


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's own keyword, with its ``find_additional_properties`` matching by `search`."""
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in declared and not any(search(p, key) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            shown = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            listed = ", ".join(repr(extra) for extra in extras)
            yield ValidationError(error % (listed, "was" if len(extras) == 1 else "were"))
