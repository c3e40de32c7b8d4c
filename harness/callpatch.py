"""The runtime patch a black-box server gave its engine, read from the fake engines' call log.

A server that shows no patch still hands the engine a patched SKILL.md in its
working directory; the fake engine records every SKILL.md it finds there
(``fake_engines.calllog.skill_files``). The patch is what the server added to
the SKILL.md turngate wrote, shown in the reference's form (original, banner,
added text) so the patch expectations judge the added text only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.reference.patch import PATCH_BANNER


def patch_from_calls(calls: Sequence[Mapping[str, Any]], skill_dir: Path) -> str | None:
    """The patched SKILL.md of this case's skill in the latest engine run that saw one, else None."""
    original = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    for call in reversed(calls):
        skills = call.get("skills")
        if call.get("action") != "run" or not isinstance(skills, Mapping):
            continue
        for folder, found in skills.items():
            text = found.get("text") if isinstance(found, Mapping) else None
            if Path(str(folder)).name == skill_dir.name and isinstance(text, str):
                return as_patch(original, text)
    return None


def as_patch(original: str, patched: str) -> str:
    """``patched`` with the banner between the original text and what the server added."""
    if PATCH_BANNER in patched:
        return patched  # turngate's own reference: already in this form
    head = original.rstrip()
    if patched.startswith(head):
        return f"{head}\n\n{PATCH_BANNER}\n\n{patched[len(head) :].strip()}"
    # The server rewrote the file rather than appending: all of it is the server's text.
    return f"\n\n{PATCH_BANNER}\n\n{patched}"
