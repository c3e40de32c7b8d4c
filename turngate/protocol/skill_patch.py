"""The runtime patch's vocabulary: the spec's module names and order, and reading a patch's modules back.

Spec 003 "运行时 skill patch 注入 MUST 模块化且顺序固定" names the modules and their
order. The reference writes each module under a marker line
``<!-- turngate:patch:<module> -->``; the judge reads the order back with
`patch_sections` (or, for a server writing its own headings, with a learned map:
``turngate.judge.patchmap``). Both share these names, so neither imports the other.
"""

from __future__ import annotations

import re
from typing import Final

MODES: Final = ("auto", "interactive")

RUNTIME_ENFORCEMENT: Final = "runtime-enforcement"
ARTIFACT_REDIRECTION: Final = "artifact-redirection"
OUTPUT_FORMAT_CONTRACT: Final = "output-format-contract"
OUTPUT_SCHEMA: Final = "output-schema"
AUTO_MODE: Final = "auto-mode"
INTERACTIVE_MODE: Final = "interactive-mode"
# The spec's order; exactly one of the two mode modules ends every patch.
MODULE_ORDER: Final = (
    RUNTIME_ENFORCEMENT,
    ARTIFACT_REDIRECTION,
    OUTPUT_FORMAT_CONTRACT,
    OUTPUT_SCHEMA,
    AUTO_MODE,
    INTERACTIVE_MODE,
)

# Between the skill's own text and the patch. Its name is not a module's, so
# `patch_sections` never counts it; it also lets `patch_skill_md` refuse to patch twice.
PATCH_BANNER: Final = "<!-- turngate:runtime-patch: added by the orchestrator for this run -->"
_MODULE_MARKER: Final = re.compile(r"^<!-- turngate:patch:([a-z0-9-]+) -->$", re.MULTILINE)


def patch_sections(text: str) -> tuple[str, ...]:
    """The patch modules in a patch or a patched SKILL.md, in the order they appear.

    In a patched SKILL.md only the text after the banner counts, so marker-like
    lines in the skill's own instructions are not taken for modules.
    """
    _, banner, patch = text.partition(PATCH_BANNER)
    return tuple(_MODULE_MARKER.findall(patch if banner else text))
