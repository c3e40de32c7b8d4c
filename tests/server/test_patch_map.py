"""Patch modules a server names in its own words: learned by the probe, never a verdict without them.

The miniature Skill-Runner patches SKILL.md with headings that are not turngate's (and not the
spec's words), and runs the real fake codex in a run folder, which records the SKILL.md it read;
so the probe, the HTTP connector and the verdict run exactly as against a real server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.server.miniatures.app import PATCH_WORDS, Behaviour, serve
from tests.turngate_cli import in_process as cli
from turngate.engines.fake.install import install
from turngate.judge.connectors.callpatch import split_patched
from turngate.judge.patchmap import PROBE_ARTIFACT, PROBE_PROPERTY, learn
from turngate.judge.probe import probe_server
from turngate.judge.report import read_report

ORDER_SENTENCE = "interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed#then"
PATCH_CASES = "interactive-engine-turn-protocol/skill-patch-order/*"


@pytest.fixture
def engines(tmp_path: Path) -> Path:
    """The fake engines' launchers, their scripts folder and call log baked in, as a server has them."""
    install(tmp_path / "bin", scripts=tmp_path / "scripts", call_log=tmp_path / "calls.jsonl")
    (tmp_path / "scripts").mkdir()
    return tmp_path


def _probe(url: str, root: Path) -> tuple[dict[str, Any], str]:
    found = probe_server(
        url, scripts=root / "scripts", call_log=root / "calls.jsonl", workdir=root / "probe", models={},
        engines=("codex",), timeout_probe=False,
    )  # fmt: skip
    return found.target, "\n".join(found.lines)


def _patch_differences(root: Path, target: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Run the patch-order scenarios on codex against ``target``: each case's ``patch`` differences."""
    (root / "target.yaml").write_text(yaml.safe_dump(target), encoding="utf-8")
    report = root / "run.jsonl"
    code, _, err = cli(
        "run", "--target", str(root / "target.yaml"), "-k", PATCH_CASES, "--engine", "codex",
        "--report-json", str(report),
    )  # fmt: skip
    assert code in (0, 1), err
    _, cases, _ = read_report(report)
    assert len(cases) == 2
    return {
        case["scenario_id"]: [item for item in case["differences"] if item["key"].startswith("patch")]
        for case in cases
    }


@pytest.fixture
def seed_order(engines: Path) -> Iterator[str]:
    with serve(Behaviour(engine_bin=str(engines / "bin"), patch="seed")) as (url, _mini):
        yield url


def test_the_probe_learns_headings_that_are_not_ours_and_the_order_checks_then_hold(
    seed_order: str, engines: Path
) -> None:
    target, said = _probe(seed_order, engines)
    assert target["patch_modules"] == {
        "## Laufzeitregeln": "runtime-enforcement",
        "## Dateiablage": "artifact-redirection",
        "## Antwortformat": "output-format-contract",
        "## Felder": "output-schema",
        "## Modus: selbstaendig": "auto-mode",
        "## Modus: im Gespraech": "interactive-mode",
    }
    assert "patch module output-schema: '## Felder' (it carries the skill's output schema)" in said
    assert "patch modules: 6 learned, written as patch_modules" in said
    # The miniature's patch is in the spec's order: no patch difference at all, with no hand-written map.
    assert _patch_differences(engines, target) == {
        "interactive-engine-turn-protocol/skill-patch-order/mode-exclusive": [],
        "interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed": [],
    }


def test_a_learned_map_fails_a_patch_whose_mode_module_comes_first(engines: Path) -> None:
    with serve(Behaviour(engine_bin=str(engines / "bin"), patch="mode-first")) as (url, _mini):
        target, _ = _probe(url, engines)
        found = _patch_differences(engines, target)
    order = found["interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed"]
    assert [(item["severity"], item["authority"]) for item in order] == [("failed", ORDER_SENTENCE)]
    assert order[0]["actual"][0] == "interactive-mode"
    # the right mode module, in the wrong place: the order's sentence alone breaks, not mode-exclusive
    assert found["interactive-engine-turn-protocol/skill-patch-order/mode-exclusive"] == []


def test_without_a_map_the_order_is_unverified_never_failed(seed_order: str, engines: Path) -> None:
    target, _ = _probe(seed_order, engines)
    del target["patch_modules"]  # what a target file written by hand, or by an older probe, holds
    for differences in _patch_differences(engines, target).values():
        assert [item["severity"] for item in differences] == ["unverified"]
        assert "patch_modules" in differences[0]["note"]
        assert "turngate probe" in differences[0]["note"]


def test_a_server_that_shows_the_engine_no_skill_md_leaves_the_patch_unverified(engines: Path) -> None:
    with serve(Behaviour(engine_bin=str(engines / "bin"), patch="none")) as (url, _mini):
        target, said = _probe(url, engines)
        found = _patch_differences(engines, target)
    assert "patch_modules" not in target
    assert "patch modules: not read: the engine found no SKILL.md" in said
    for differences in found.values():
        assert [item["severity"] for item in differences] == ["unverified"]


# The learner alone, on the shapes real servers write ------------------------------------------------


def _modes(common: str, auto: str, interactive: str, after: str = "") -> tuple[str, str]:
    return common + auto + after, common + interactive + after


def test_mode_text_without_a_heading_after_a_shared_line_is_its_own_module() -> None:
    # Skill-Runner at 7d8914d: one heading, a shared format line, then each mode's own lines.
    common = (
        f"# Runtime Output Overrides\n- {PROBE_ARTIFACT}\n\n"
        "## Completion Contract\nEmit __SKILL_DONE__ once.\n\n"
        "# Automation Context\nYou must ensure that the output is a schema-compatible JSON.\n"
    )
    learned = learn(*_modes(common, "Never ask the user.\nProceed.\n", "You MAY ask the user.\nRules:\n"))
    assert learned.problem is None
    assert learned.modules == {
        "# Runtime Output Overrides": "artifact-redirection",
        "## Completion Contract": "runtime-enforcement",
        "# Automation Context": "output-format-contract",
        "Never ask the user.": "auto-mode",
        "You MAY ask the user.": "interactive-mode",
    }
    assert "patch module output-schema: none found although the probe skill declares one" in learned.said


def test_two_parts_claiming_one_module_leave_no_map_rather_than_a_guess() -> None:
    common = "## Rules A\nEmit __SKILL_DONE__ at the end.\n\n## Rules B\nNever emit __SKILL_DONE__ twice.\n"
    learned = learn(*_modes(common, "## Auto\nNever ask.\n", "## Chat\nAsk.\n"))
    assert learned.modules == {}
    assert learned.problem is not None
    assert "two parts look like runtime-enforcement" in learned.problem


def test_mode_modules_with_one_shared_heading_are_told_apart_by_their_first_own_line() -> None:
    common = f"## Output Format\nOne JSON object.\n\n## Fields\n- `{PROBE_PROPERTY}`\n\n"
    learned = learn(*_modes(common, "## Mode\nNobody answers.\n", "## Mode\nSomebody answers.\n"))
    assert learned.modules["Nobody answers."] == "auto-mode"
    assert learned.modules["Somebody answers."] == "interactive-mode"
    assert learned.modules["## Fields"] == "output-schema"


def test_the_words_of_the_miniature_are_not_the_spec_words_the_heading_rule_knows() -> None:
    # The miniature must exercise recognition by content, not by heading.
    headings = [text.splitlines()[0].lower() for text in PATCH_WORDS.values()]
    for words in ("enforcement", "artifact", "output format", "schema", "auto", "interactive"):
        assert not any(words in heading for heading in headings), words
    assert json.dumps(PATCH_WORDS)  # plain text only


PATCHES = Path(__file__).parent / "patches"
PROBE_SKILL_MD = "---\nname: turngate-probe-patch\n---\n\n# Greet\n\nGreet the user.\n"


def test_skill_runner_v0_6_0s_patch_is_learned_by_sections_its_per_mode_subsections_no_mode_module() -> None:
    # The SKILL.md each of two probe jobs' codex read at Skill-Runner v0.6.0 (abe8626), as they were:
    # the run folder's id differs between them, and the output contract words its fields per mode in
    # "####" subsections that restate the done marker.
    auto, interactive = (
        split_patched(
            PROBE_SKILL_MD, (PATCHES / f"skill-runner-v0.6.0.{mode}.md").read_text(encoding="utf-8")
        )[1]
        for mode in ("auto", "interactive")
    )
    learned = learn(auto, interactive)
    assert learned.problem is None
    assert learned.modules == {
        "# ⚠ Runtime Enforcement (Injected by Skill Runner — HIGHEST PRIORITY)": "runtime-enforcement",
        "## Runtime Output Overrides": "artifact-redirection",
        "## Output Format Contract": "output-format-contract",
        "### Output Contract Details": "output-schema",
        "## Execution Mode: AUTO (Non-Interactive)": "auto-mode",
        "## Execution Mode: INTERACTIVE": "interactive-mode",
    }
    assert (
        "patch part '#### Final Branch Contract': a subsection, left with the module it is in" in learned.said
    )


def test_a_line_naming_the_run_folder_is_not_mode_text() -> None:
    folder = "/data/runs/{}/artifacts/"
    common = (
        "## Enforcement\nEmit __SKILL_DONE__.\n\n## Files\nWrite {artifact} under {folder}\n\n"
        "## Format\nJSON only.\n"
    )
    one = common.format(artifact=PROBE_ARTIFACT, folder=folder.format("98d96177-b5fe-4ea2-820f-570ddf2fdd40"))
    two = common.format(artifact=PROBE_ARTIFACT, folder=folder.format("d6e0d41c-f320-4b4a-8c10-977b2d7f3dc6"))
    learned = learn(one + "## Auto\nNever ask.\n", two + "## Chat\nAsk.\n")
    assert learned.problem is None
    assert learned.modules["## Files"] == "artifact-redirection"
    assert learned.modules["## Auto"] == "auto-mode"


def test_a_subsection_restating_another_module_stays_with_its_module_but_two_peers_still_conflict() -> None:
    common = (
        "# Enforcement\nEmit __SKILL_DONE__ at the end.\n\n## Format\nOne JSON object.\n\n"
        "### Final branch\nSet __SKILL_DONE__ to true.\n"
    )
    learned = learn(*_modes(common, "## Auto\nNever ask.\n", "## Chat\nAsk.\n"))
    assert learned.problem is None
    assert learned.modules["# Enforcement"] == "runtime-enforcement"
    assert "### Final branch" not in learned.modules
    # the same two parts as peers: which one is the module is a guess, so no map
    peers = (
        "## Enforcement\nEmit __SKILL_DONE__ at the end.\n\n## Final branch\nSet __SKILL_DONE__ to true.\n"
    )
    assert learn(*_modes(peers, "## Auto\nNever ask.\n", "## Chat\nAsk.\n")).problem is not None
