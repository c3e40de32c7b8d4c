"""Learn a server's patch-module map from the patched SKILL.md its engine read, by what each part says.

The spec (003 "运行时 skill patch 注入 MUST 模块化且顺序固定") names five modules and their order but
not their words, so each server writes its own headings. To judge the order, turngate must know which
part of a server's patch is which module: the target file's ``patch_modules`` (phrase that opens a
module -> the module's name, see callpatch.py). ``turngate probe`` learns it from two probe jobs of one
skill that declares an artifact and an output schema with names no server would invent, one job per
mode, and recognises each part by evidence, strongest first:

1. a part that differs between the auto and the interactive patch is the mode module of its mode
   (003 "mode 注入互斥": each patch holds exactly one); where several do, the one under the shallowest
   heading (Skill-Runner v0.6.0 also words its output contract's fields per mode, in subsections);
2. a part that names the probe's artifact file is the artifact redirection;
3. a part that carries the probe schema's property is the output schema specification;
4. a heading in the spec's own words names its module (``runtime enforcement``, ``output format``);
5. of what is left: the part that states the done-marker rules is the runtime enforcement (the
   completion contract), the part that demands JSON output is the output format contract.

Parts open at each Markdown heading and wherever the text turns from common to mode-specific. A part
its own text does not recognise is recognised by its section (its text and its subsections'); one
nothing recognises is reported and left unnamed (it stays with the module before it). A subsection
of a recognised module that claims a module already claimed stays with its module (v0.6.0's
"#### Final Branch Contract" restates the done marker under the output contract). Two parts otherwise
claiming one module, or a part whose opening line is the probe's own words, make the map unlearnable:
no map is written, and the order checks stay ``unverified`` rather than judged on a guess.

Run folders differ between the two jobs: ids in them (UUIDs) are compared as one word, so a line that
names the run folder is not mode-specific.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from turngate.protocol.skill_patch import (
    ARTIFACT_REDIRECTION,
    AUTO_MODE,
    INTERACTIVE_MODE,
    OUTPUT_FORMAT_CONTRACT,
    OUTPUT_SCHEMA,
    RUNTIME_ENFORCEMENT,
)

# The probe skill's own names: in no server's template, so a part holding one was rendered for it.
PROBE_ARTIFACT: Final = "turngate-probe-artifact.txt"
PROBE_PROPERTY: Final = "turngate_probe_word"
DONE_MARKER: Final = "__SKILL_DONE__"

_HEADING: Final = re.compile(r"^(#{1,6})\s+\S")
# A part that opens at no heading sits deeper than any heading.
_NO_HEADING_LEVEL: Final = 7
# A run's id in the paths a patch names (a run folder): the same word in both modes' patches.
_RUN_ID: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# The spec's module names as a heading may say them (rule 4); mode modules are found by difference.
_HEADING_WORDS: Final = (
    (re.compile(r"runtime\s+enforcement", re.IGNORECASE), RUNTIME_ENFORCEMENT),
    (re.compile(r"artifact", re.IGNORECASE), ARTIFACT_REDIRECTION),
    (re.compile(r"output\s+format", re.IGNORECASE), OUTPUT_FORMAT_CONTRACT),
    (re.compile(r"output\s+schema|schema\s+specification", re.IGNORECASE), OUTPUT_SCHEMA),
)
_JSON: Final = re.compile(r"\bJSON\b")


@dataclass(frozen=True, slots=True)
class Part:
    """A run of lines of one patch: opens at a heading or where mode-specific text starts or ends."""

    lines: tuple[str, ...]
    mode_specific: bool

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def opening(self) -> str:
        return next((line.strip() for line in self.lines if line.strip()), "")

    @property
    def heading(self) -> str | None:
        first = self.opening
        return first if _HEADING.match(first) else None

    @property
    def level(self) -> int:
        """Its heading's level (``#`` is 1); a part without a heading sits below every heading."""
        opened = _HEADING.match(self.opening)
        return len(opened.group(1)) if opened else _NO_HEADING_LEVEL


@dataclass(frozen=True, slots=True)
class Learned:
    """What the probe found: the map to write (empty when unlearnable), and a line per finding."""

    modules: dict[str, str]
    said: tuple[str, ...]
    problem: str | None = None


def parts(added: str, specific: set[int]) -> list[Part]:
    """The parts of one patch's added text; ``specific``: indexes of its mode-specific lines.

    A part opens at every heading, and where mode-specific text starts after common text; common
    text after mode-specific text opens a part only at a heading, so a line the two mode modules
    happen to share (``Rules:``) does not cut a mode module in two.
    """
    found: list[Part] = []
    current: list[str] = []
    current_specific = False
    for index, line in enumerate(added.splitlines()):
        mine = index in specific
        opens = bool(_HEADING.match(line.strip())) or (mine and not current_specific)
        if opens:  # what came before closes; with no words in it, it was layout (a ``---`` rule)
            if _has_words(current):
                found.append(Part(tuple(current), current_specific))
            current = []
        if line.strip() and not _has_words(current):
            current_specific = mine  # the first line with words says whose part it is
        current.append(line)
    if _has_words(current):
        found.append(Part(tuple(current), current_specific))
    # A part with no word in it (a rule line ``---``, a lone fence) is layout, not a module.
    return [part for part in found if _has_words(part.lines)]


def _has_words(lines: Sequence[str]) -> bool:
    return any(re.search(r"\w", line) for line in lines)


def _specific_lines(mine: Sequence[str], other: Sequence[str]) -> set[int]:
    """Indexes of ``mine``'s lines that the other mode's patch does not share (blank lines never)."""
    matcher = difflib.SequenceMatcher(
        a=[_RUN_ID.sub("<id>", line) for line in mine],
        b=[_RUN_ID.sub("<id>", line) for line in other],
        autojunk=False,
    )
    shared = {
        index for block in matcher.get_matching_blocks() for index in range(block.a, block.a + block.size)
    }
    return {index for index, line in enumerate(mine) if line.strip() and index not in shared}


def learn(auto_added: str, interactive_added: str) -> Learned:
    """The map from the text each mode's probe job added to SKILL.md (the probe's skill declares
    ``PROBE_ARTIFACT`` and an output schema with ``PROBE_PROPERTY``)."""
    auto_lines, interactive_lines = auto_added.splitlines(), interactive_added.splitlines()
    auto_parts = parts(auto_added, _specific_lines(auto_lines, interactive_lines))
    interactive_parts = parts(interactive_added, _specific_lines(interactive_lines, auto_lines))
    said: list[str] = []
    named: dict[str, tuple[str, str]] = {}  # module -> (phrase, why)
    problems: list[str] = []

    def claim(module: str, part: Part, why: str, whole: str) -> None:
        if module in named:
            problems.append(f"two parts look like {module}: {named[module][0]!r} and {part.opening!r}")
            return
        phrase = _phrase(part, whole)
        if PROBE_ARTIFACT in phrase or PROBE_PROPERTY in phrase:
            problems.append(f"{module} opens with the probe's own words ({phrase!r}): name it by hand")
            return
        named[module] = (phrase, why)

    for mode, mode_parts, whole in (
        (AUTO_MODE, auto_parts, auto_added),
        (INTERACTIVE_MODE, interactive_parts, interactive_added),
    ):
        specific = [part for part in mode_parts if part.mode_specific]
        if specific:  # the part only this mode's patch has, under the shallowest heading, opens its module
            top = min(part.level for part in specific)
            first = next(part for part in specific if part.level == top)
            claim(mode, first, f"only the {mode.split('-')[0]} patch has it", whole)
    claimed_sections: list[int] = []  # levels of the open sections that are claimed modules
    for index, part in enumerate(auto_parts):
        claimed_sections = [level for level in claimed_sections if level < part.level]
        if part.mode_specific:
            continue
        module, why = _recognise(part, _section(auto_parts, index))
        if module is None:
            said.append(f"patch part {part.opening!r}: not a module turngate recognises (left unnamed)")
            continue
        if module in named and claimed_sections:  # a subsection restating its module's neighbour
            said.append(f"patch part {part.opening!r}: a subsection, left with the module it is in")
            continue
        claim(module, part, why, auto_added)
        if module in named and named[module][0] == _phrase(part, auto_added):
            claimed_sections.append(part.level)
    if problems:
        return Learned({}, (*said, *problems), problems[0])
    ordered = sorted(named.items(), key=lambda item: _position(item[1][0], auto_added, interactive_added))
    for module, (phrase, why) in ordered:
        said.append(f"patch module {module}: {phrase!r} ({why})")
    for module in (OUTPUT_SCHEMA, ARTIFACT_REDIRECTION):
        if module not in named:
            said.append(f"patch module {module}: none found although the probe skill declares one")
    return Learned({phrase: module for module, (phrase, _why) in ordered}, tuple(said))


def _section(found: Sequence[Part], index: int) -> str:
    """A part's text with its subsections': the parts after it under deeper headings."""
    level = found[index].level
    end = next((at for at in range(index + 1, len(found)) if found[at].level <= level), len(found))
    return "\n".join(part.text for part in found[index:end])


def _recognise(part: Part, section: str) -> tuple[str | None, str]:
    """Rules 2 to 5 for a part both modes' patches share: by its own text, else by its section's."""
    module, why = _recognised(part, part.text)
    if module is None and section != part.text:
        module, why = _recognised(part, section)
        why = f"its section: {why}" if module else why
    return module, why


def _recognised(part: Part, text: str) -> tuple[str | None, str]:
    if PROBE_ARTIFACT in text:
        return ARTIFACT_REDIRECTION, "it names the skill's artifact"
    if PROBE_PROPERTY in text:
        return OUTPUT_SCHEMA, "it carries the skill's output schema"
    if part.heading is not None:
        for words, module in _HEADING_WORDS:
            if words.search(part.heading):
                return module, "its heading says so"
    if DONE_MARKER in text:
        return RUNTIME_ENFORCEMENT, "it states the done-marker rules (the completion contract)"
    if _JSON.search(text):
        return OUTPUT_FORMAT_CONTRACT, "it demands JSON output"
    return None, ""


def _phrase(part: Part, whole: str) -> str:
    """The part's opening line, extended line by line until it occurs once in the patch."""
    lines = list(part.lines)
    while lines and not lines[0].strip():
        lines.pop(0)
    for count in range(1, len(lines) + 1):
        phrase = "\n".join(lines[:count]).strip()
        if phrase and whole.count(phrase) == 1:
            return phrase
    return "\n".join(lines).strip()


def _position(phrase: str, *texts: str) -> int:
    return min((at for text in texts if (at := text.find(phrase)) >= 0), default=0)
