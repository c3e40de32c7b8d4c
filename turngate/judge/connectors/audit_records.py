"""Evidence a job-API server shows besides the job API: where the target file says it is.

A server may keep more than its job endpoints show: Skill-Runner writes each attempt's audit
record (``.audit/meta.N.json``: the completion classification, the done marker found or not) and
serves the run folder's files through its management API. The target file names such a source in
general terms, so that ``unverified`` means "this server cannot show it", not "turngate did not look":

```yaml
audit_source:
  path: /v1/management/runs/{job}/file?path=.audit/meta.{attempt}.json   # GET, one per attempt
  content: preview.content                  # where the record is in the answer (JSON text or object)
  marker_found: completion.done_marker_found  # the audit's own done-marker classification
```

``turngate probe`` tries the shapes it knows (``AUDIT_CANDIDATES``) and writes the one that answers.

The live gate's marker evidence is read from what the run did, only where the spec leaves no doubt:
an interactive attempt the run waited after found no marker (a marker found never waits: Decisions 1
and 8), and a final interactive success with the ``INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER``
warning found none (Decision 7); a final interactive success without it found one. Auto attempts
and failed endings are not compared: their gate does not say what it found.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

SOFT_WARNING: Final = "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"
MAX_AUDITED_ATTEMPTS: Final = 50  # a run with more attempts has its first 50 compared (bounded work)

# Shapes of servers of this family, tried by the probe in this order.
AUDIT_CANDIDATES: Final[tuple[Mapping[str, str], ...]] = (
    {
        "path": "/v1/management/runs/{job}/file?path=.audit/meta.{attempt}.json",
        "content": "preview.content",
        "marker_found": "completion.done_marker_found",
    },
    # Skill-Runner v0.7.9: a run's audit under its workspace namespace, "<skill id>.<n>", n = 1 for a
    # run's own workspace (server/runtime/workspace_layout.py default_namespace_for_run at c79d774)
    {
        "path": "/v1/management/runs/{job}/file?path=.audit/{skill}.1/meta.{attempt}.json",
        "content": "preview.content",
        "marker_found": "completion.done_marker_found",
    },
)
# What a path may name: the job, the attempt (both required) and the case's skill id.
_PLACES: Final = ("{job}", "{attempt}", "{skill}")


class EvidenceProblem(ValueError):
    """An ``audit_source`` that cannot be used; names the field and value."""


@dataclass(frozen=True, slots=True)
class AuditSource:
    path: str  # with {job} and {attempt}, and maybe {skill}
    marker_found: str  # dotted path in the record
    content: str | None = None  # dotted path to the record in the answer; None: the answer is it

    @classmethod
    def parse(cls, raw: Any, where: str) -> AuditSource:
        if not isinstance(raw, Mapping):
            raise EvidenceProblem(f"{where}: audit_source: {raw!r}: a mapping with path and marker_found")
        path, marker, content = raw.get("path"), raw.get("marker_found"), raw.get("content")
        if not isinstance(path, str) or "{job}" not in path or "{attempt}" not in path:
            raise EvidenceProblem(
                f"{where}: audit_source.path: {path!r}: a path with {{job}} and {{attempt}}"
            )
        leftover = path
        for place in _PLACES:
            leftover = leftover.replace(place, "")
        if "{" in leftover or "}" in leftover:
            raise EvidenceProblem(
                f"{where}: audit_source.path: {path!r}: it may name only {', '.join(_PLACES)}"
            )
        if not isinstance(marker, str) or not marker:
            raise EvidenceProblem(f"{where}: audit_source.marker_found: {marker!r}: a dotted field path")
        if content is not None and not isinstance(content, str):
            raise EvidenceProblem(f"{where}: audit_source.content: {content!r}: a dotted field path")
        unknown = sorted(set(raw) - {"path", "marker_found", "content"})
        if unknown:
            raise EvidenceProblem(f"{where}: audit_source.{unknown[0]}: unknown field")
        return cls(path, marker, content)

    def url(self, *, job: str, attempt: int, skill: str) -> str:
        """The path of one attempt's record of one job."""
        return self.path.format(job=job, attempt=attempt, skill=skill)

    def to_json(self) -> dict[str, str]:
        shown = {"path": self.path, "content": self.content, "marker_found": self.marker_found}
        return {name: value for name, value in shown.items() if value is not None}

    def marker_in(self, answer: Any) -> bool | None:
        """The audit's marker classification in one answer; None when it is not there."""
        record = dig(answer, self.content) if self.content else answer
        if isinstance(record, str):
            try:
                record = json.loads(record)
            except ValueError:
                return None
        found = dig(record, self.marker_found)
        return found if isinstance(found, bool) else None


def dig(value: Any, dotted: str) -> Any:
    for name in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def gate_marker(attempt: int, last: int, *, mode: str, state: str, warnings: tuple[str, ...]) -> bool | None:
    """What the live gate found in ``attempt``, where the run's course says it (see the module doc)."""
    if mode != "interactive":
        return None
    if attempt < last or (attempt == last and state == "waiting_user"):
        return False
    if attempt == last and state == "succeeded":
        return SOFT_WARNING not in warnings
    return None


def audit_items(
    fetch: Callable[[int], bool | None],
    last: int,
    *,
    mode: str,
    state: str,
    warnings: tuple[str, ...],
) -> list[dict[str, Any]] | None:
    """The ``audit`` observation: per comparable attempt, the audit's marker and whether it agrees with
    the gate's; None when no attempt could be compared (the check is then unverified)."""
    items = []
    for attempt in range(1, min(last, MAX_AUDITED_ATTEMPTS) + 1):
        gate = gate_marker(attempt, last, mode=mode, state=state, warnings=warnings)
        if gate is None:
            continue
        found = fetch(attempt)
        if found is None:
            continue
        items.append(
            {
                "attempt": attempt,
                "marker_found": found,
                "gate_marker_found": gate,
                "agrees_with_gate": found == gate,
            }
        )
    return items or None
