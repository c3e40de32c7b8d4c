"""The runtime patch a black-box server gave its engine, read from the fake engines' call log.

A server that shows no patch still hands the engine a patched SKILL.md in its
working directory; the fake engine records every SKILL.md it finds there
(``turngate.engines.fake.calllog.skill_files``). The patch is what the server added to
the SKILL.md turngate wrote, shown in the reference's form (original, banner,
added text) so the patch expectations judge the added text only.

A server names its patch modules in its own words; the target file's
``patch_modules`` maps a phrase that opens a module (a heading, say) to the
spec's module name (runtime-enforcement, artifact-redirection,
output-format-contract, output-schema, auto-mode, interactive-mode), and each
module found is marked as the reference marks its own, so the order can be
judged. Without a map (or with one whose phrases this patch does not hold) the
modules are not named: the connector declares ``patch.modules`` unobservable and
the order checks are unverified, never failed; the text checks still hold.
``turngate probe`` learns a server's map by itself (``turngate/judge/patchmap.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from turngate.judge.connectors.call_log import calls_since
from turngate.protocol.skill_patch import PATCH_BANNER, patch_sections


def patch_in_call_log(
    log: Path, start: int, case: str, skill_dir: Path, modules: Mapping[str, str] | None = None
) -> str | None:
    """The patch of this case's latest engine run in the call log past byte ``start`` (where the case's
    part begins), else None."""
    if not log.exists():
        return None
    calls = [call for call in calls_since(log, start) if call.get("case") == case]
    return patch_from_calls(calls, skill_dir, modules)


def patch_from_calls(
    calls: Sequence[Mapping[str, Any]], skill_dir: Path, modules: Mapping[str, str] | None = None
) -> str | None:
    """The patched SKILL.md of this case's skill in the latest engine run that saw one, else None."""
    original = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    for call in reversed(calls):
        skills = call.get("skills")
        if call.get("action") != "run" or not isinstance(skills, Mapping):
            continue
        for folder, found in skills.items():
            text = found.get("text") if isinstance(found, Mapping) else None
            if Path(str(folder)).name == skill_dir.name and isinstance(text, str):
                return as_patch(original, text, modules or {})
    return None


def as_patch(original: str, patched: str, modules: Mapping[str, str]) -> str:
    """``patched`` with the banner between the original text and what the server added."""
    if PATCH_BANNER in patched:
        return patched  # turngate's own reference: already in this form
    head, added = split_patched(original, patched)
    return f"{head}\n\n{PATCH_BANNER}\n\n{named_modules(added, modules)}"


def split_patched(original: str, patched: str) -> tuple[str, str]:
    """(the skill's own text, what the server added). A server that rewrote the file rather than
    appending to it: all of it is the server's text."""
    head = original.rstrip()
    if patched.startswith(head):
        return head, patched[len(head) :].strip()
    return "", patched


def named_modules(added: str, modules: Mapping[str, str]) -> str:
    """The added text with the reference's module marker before each phrase the map names."""
    found = sorted((position, phrase) for phrase in modules if (position := added.find(phrase)) >= 0)
    if not found:
        return added
    pieces = [added[: found[0][0]]]
    for index, (position, phrase) in enumerate(found):
        end = found[index + 1][0] if index + 1 < len(found) else len(added)
        pieces.append(f"\n<!-- turngate:patch:{modules[phrase]} -->\n{added[position:end]}")
    return "".join(pieces)


def modules_unnamed(patch: str) -> bool:
    """Whether the server added text to SKILL.md but none of it could be named as a module: its order
    cannot be judged. An empty addition is an observation (no modules at all), not an unnamed one."""
    added = patch.partition(PATCH_BANNER)[2] if PATCH_BANNER in patch else patch
    return bool(added.strip()) and not patch_sections(patch)
