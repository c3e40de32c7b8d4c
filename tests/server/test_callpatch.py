"""The patch a black-box server wrote, read from the fake engines' call log.

(turngate/judge/connectors/callpatch.py)
"""

from __future__ import annotations

from pathlib import Path

from turngate.engines.fake.calllog import skill_files
from turngate.judge.connectors.callpatch import as_patch, patch_from_calls
from turngate.judge.skill_writer import write_skill
from turngate.protocol.skill_patch import PATCH_BANNER, patch_sections

ORIGINAL = "---\nname: s\n---\n\n# Greet\n"
ADDED = (
    "# Runtime Output Overrides\n- greeting.txt -> artifacts/greeting.txt\n\n"
    "## Runtime Completion Contract\nThe only marker is __SKILL_DONE__.\n\n"
    "# Automation Context\nYou MAY ask for user input when required.\n"
)
MODULES = {
    "# Runtime Output Overrides": "artifact-redirection",
    "## Runtime Completion Contract": "runtime-enforcement",
    "You MAY ask for user input": "interactive-mode",
}


def test_the_servers_modules_are_named_in_the_order_they_appear() -> None:
    patch = as_patch(ORIGINAL, ORIGINAL + "\n" + ADDED, MODULES)
    assert patch_sections(patch) == ("artifact-redirection", "runtime-enforcement", "interactive-mode")
    assert patch.split(PATCH_BANNER)[1].count("__SKILL_DONE__") == 1


def test_without_a_map_the_added_text_is_kept_and_no_module_is_named() -> None:
    patch = as_patch(ORIGINAL, ORIGINAL + "\n" + ADDED, {})
    assert patch_sections(patch) == ()
    assert "Runtime Completion Contract" in patch.split(PATCH_BANNER)[1]


def test_a_rewritten_skill_md_counts_as_added_text_entire() -> None:
    patch = as_patch(ORIGINAL, "# Something else\n" + ADDED, MODULES)
    assert "# Something else" in patch.split(PATCH_BANNER)[1]


def test_the_call_log_scan_finds_the_patched_skill_of_this_case(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "mine", {}, name="s")
    run_dir = tmp_path / "run"
    served = write_skill(run_dir / ".codex" / "skills", {}, name="s")
    write_skill(run_dir / ".codex" / "skills", {}, name="other")
    (served / "SKILL.md").write_text(skill.joinpath("SKILL.md").read_text() + "\n" + ADDED)
    calls = [{"action": "run", "skills": skill_files(str(run_dir))}]
    patch = patch_from_calls(calls, skill, MODULES)
    assert patch is not None
    assert patch_sections(patch)[0] == "artifact-redirection"
    assert patch_from_calls([{"action": "help", "skills": calls[0]["skills"]}], skill) is None
