"""The runtime patch appended to SKILL.md: modules in a fixed order, the mode patch exclusive.

Spec 003 "运行时 skill patch 注入 MUST 模块化且顺序固定", in this order:

1. runtime enforcement
2. artifact redirection           (only if the skill declares artifacts)
3. output format contract
4. output schema specification    (only if the skill has an output schema)
5. mode patch                     (auto *or* interactive, never both: 003 "mode 注入互斥")

Spec 003 "运行时补丁 MUST 与执行模式一致" and 004: the interactive patch allows
asking the user, requires no ask_user structure (the YAML block is offered as an
optional hint, in a form that cannot be mistaken for the business JSON: 003
"ask_user 可选增强优先使用非 JSON 结构"), and forbids ``__SKILL_DONE__`` before the
task is really complete. The auto patch keeps the automatic-execution rules and
says nothing about questions: no ask_user, no ``kind``/``prompt``/``options``/
``ui_hints`` (004 "auto 模式保持自动执行语义"). That holds for the whole auto patch,
not only its mode module, since the engine reads all of it.

Each module starts with a marker line ``<!-- turngate:patch:<module> -->`` and a
Markdown heading, so tests and audits can read the order back (`patch_sections`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from turngate.protocol.skill_patch import (
    ARTIFACT_REDIRECTION,
    AUTO_MODE,
    INTERACTIVE_MODE,
    MODES,
    OUTPUT_FORMAT_CONTRACT,
    OUTPUT_SCHEMA,
    PATCH_BANNER,
    RUNTIME_ENFORCEMENT,
)

_RUNTIME_ENFORCEMENT_TEXT: Final = """\
## Runtime enforcement

These rules come from the orchestrator running this skill. Where they differ
from the instructions above, these rules win.

- Your working directory is this run's folder. Read and write files only inside it.
- The run's inputs are in `input.json` in that folder. Do not invent inputs that are not there.
- Do not change the skill's own files."""

_ARTIFACT_REDIRECTION_TEXT: Final = """\
## Artifact redirection

Write the files this skill produces into the `artifacts/` folder of the run
folder, at exactly these paths, whatever paths the instructions above use:

{listing}

Files written anywhere else are not collected. The run fails if one of these
files is missing when you finish."""

_OUTPUT_FORMAT_CONTRACT_TEXT: Final = """\
## Output format contract

- When you finish the task, your final message is one JSON object holding the
  result, and nothing else: no text before or after it, no code fence around it.
- {marker_rule}
- `__SKILL_DONE__` is a control field, not part of the result: the orchestrator
  removes it before it validates the object."""

_MARKER_RULE: Final = {
    # No "optional" here: the auto patch stays clear of anything that reads like `options`.
    "auto": 'You may include `"__SKILL_DONE__": true` in that object; this run does not require it.',
    "interactive": (
        'Put `"__SKILL_DONE__": true` in that object to say the task is complete;\n'
        "  it is how this run knows you are done."
    ),
}

_OUTPUT_SCHEMA_TEXT: Final = """\
## Output schema

The final JSON object, without `__SKILL_DONE__`, must be valid against this JSON Schema:

{fence}json
{schema}
{fence}"""

_AUTO_MODE_TEXT: Final = """\
## Execution mode: auto

- Nobody will answer during this run: do not ask the user anything and do not
  wait for a reply.
- Where the instructions leave a choice open, choose a reasonable default
  yourself and carry on.
- Run the task to completion in this one turn, then finish with the final JSON
  object described above."""

_INTERACTIVE_MODE_TEXT: Final = """\
## Execution mode: interactive

- A person takes part in this run. When you need information or a decision
  that the inputs do not give, you may ask the user for it: write the question
  in plain words in your reply and end your turn. Their answer comes back as
  the next message.
- A question needs no special format; plain text is enough. Optionally, to
  help the interface show it, you may add a YAML block after the question:

  <ASK_USER_YAML>
  ask_user:
    prompt: Which of the two drafts should I keep?
    kind: choose_one
    options:
      - {label: First draft, value: first}
      - {label: Second draft, value: second}
  </ASK_USER_YAML>

  Such a block is only a hint for display. Do not write a question as a JSON
  object: a JSON object in your reply may be taken for the final result.
- Only when the task is really complete, include `"__SKILL_DONE__": true` in the
  final JSON object. Do not write `__SKILL_DONE__` before the task is really
  complete, and never in a message that asks the user something."""


def build_patch(mode: str, *, artifacts: Sequence[str], output_schema: Mapping[str, Any] | None) -> str:
    """The patch text for one run: the applicable modules, in the spec's order."""
    if mode not in MODES:
        raise ValueError(f"execution mode: {mode!r}: known: {', '.join(MODES)}")
    if isinstance(artifacts, str):  # a str is a Sequence[str] too; one path would become many
        raise TypeError(f"artifacts: {artifacts!r}: a sequence of paths, not one string")
    modules = [(RUNTIME_ENFORCEMENT, _RUNTIME_ENFORCEMENT_TEXT)]
    if artifacts:
        listing = "\n".join(f"- `artifacts/{path}`" for path in artifacts)
        modules.append((ARTIFACT_REDIRECTION, _ARTIFACT_REDIRECTION_TEXT.format(listing=listing)))
    modules.append(
        (OUTPUT_FORMAT_CONTRACT, _OUTPUT_FORMAT_CONTRACT_TEXT.format(marker_rule=_MARKER_RULE[mode]))
    )
    if output_schema is not None:
        modules.append((OUTPUT_SCHEMA, _output_schema_text(output_schema)))
    if mode == "auto":
        modules.append((AUTO_MODE, _AUTO_MODE_TEXT))
    else:
        modules.append((INTERACTIVE_MODE, _INTERACTIVE_MODE_TEXT))
    return "\n\n".join(f"<!-- turngate:patch:{name} -->\n{text}" for name, text in modules) + "\n"


def patch_skill_md(original: str, patch: str) -> str:
    """The skill's own text, unchanged, then the banner, then the patch."""
    if PATCH_BANNER in original:
        raise ValueError("SKILL.md already carries a runtime patch; patch the original text")
    return f"{original.rstrip()}\n\n{PATCH_BANNER}\n\n{patch}"


def _output_schema_text(output_schema: Mapping[str, Any]) -> str:
    schema = json.dumps(dict(output_schema), indent=2, ensure_ascii=False)
    # A fence longer than any backtick run in the schema (descriptions may quote code),
    # so the block cannot end early (CommonMark fenced code blocks).
    longest = max((len(run) for run in re.findall(r"`+", schema)), default=0)
    return _OUTPUT_SCHEMA_TEXT.format(fence="`" * max(3, longest + 1), schema=schema)
