"""Editions of the spec (turngate/judge/catalog/editions.yaml): the texts are the upstream files they
name, a sentence belongs to the editions whose text says it, and a run is judged by one edition: a
rule another edition does not state is never held against a target judged by it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.test_verdict import checks, observed
from tests.turngate_cli import in_process
from turngate.implementations.reference_connector import ReferenceConnector
from turngate.judge.case_run import run_case
from turngate.judge.catalog import CATALOG_DIR, load_catalog
from turngate.judge.catalog.editions import (
    EditionProblem,
    default_edition,
    edition_named,
    editions,
    sentence_problems,
    text_problems,
)
from turngate.judge.catalog.sentences import sentences
from turngate.judge.pool import cases
from turngate.judge.verdict import judge

SEED = "seed-7d8914d+4cb89ba"
OWN = "skill-runner-7d8914d"
TOOL_ECHO = "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and2"
ROOT = Path(__file__).resolve().parents[2]
CATALOG = {scenario.id: scenario for scenario in load_catalog(ROOT / "scenarios")}


def test_every_shipped_text_is_the_upstream_file_it_names() -> None:
    assert text_problems() == []
    assert default_edition().name == SEED


def test_the_seed_says_every_sentence_and_7d8914d_lacks_what_4cb89ba_added_to_003() -> None:
    seed, own = edition_named(SEED), edition_named(OWN)
    written_from_the_seed = [sentence for sentence in sentences().values() if sentence.edition is None]
    assert all(seed.has(sentence) for sentence in written_from_the_seed)
    lacking = sorted(sentence.id for sentence in written_from_the_seed if not own.has(sentence))
    assert lacking == sorted(
        [
            "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and1",
            TOOL_ECHO,
            "interactive-engine-turn-protocol/skill-patch-order#req",
            "interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed#then",
            "interactive-engine-turn-protocol/skill-patch-order/mode-exclusive#then",
            "interactive-engine-turn-protocol/skill-patch-order/mode-exclusive#and1",
        ]
    )
    assert {prefix for prefix in seed.texts if seed.texts[prefix] != own.texts[prefix]} == {"003"}


def test_a_check_citing_a_sentence_the_edition_lacks_is_reported_never_failed() -> None:
    case = checks({"state": "waiting_user"}, {"state": TOOL_ECHO})
    step = observed(state="succeeded")
    (seed,) = judge(case, [step]).differences
    assert seed.severity == "failed"
    under_own = judge(case, [step], edition=OWN)
    assert under_own.outcome == "passed"
    (reported,) = under_own.differences
    assert (reported.severity, reported.note) == ("informational", f"not in edition {OWN}")
    assert f"(not in edition {OWN})" in str(reported)


@pytest.mark.parametrize(
    ("scenario_id", "why"),
    [
        ("engine-format/tool-echo/codex", f"its step 0 decision rests on {TOOL_ECHO}"),
        (
            "interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed",
            "words 'patch 顺序固定' otherwise",
        ),
    ],
)
def test_a_scenario_whose_rule_the_edition_words_otherwise_is_not_run_under_it(
    scenario_id: str, why: str
) -> None:
    scenario = CATALOG[scenario_id]
    skipped = run_case(scenario, "codex", ReferenceConnector(), edition=OWN)
    assert skipped.outcome == "skipped"
    assert skipped.message.startswith(f"not in edition {OWN}: ")
    assert why in skipped.message
    assert run_case(scenario, "codex", ReferenceConnector()).outcome == "passed"


def test_a_mutant_that_counts_tool_echoes_fails_the_seed_not_7d8914d_which_says_any_string_field() -> None:
    scenario = CATALOG["engine-format/tool-echo/codex"]
    mutant = "marker-from-tool-output"
    assert run_case(scenario, "codex", ReferenceConnector(mutant=mutant)).outcome == "failed"
    assert run_case(scenario, "codex", ReferenceConnector(mutant=mutant), edition=OWN).outcome == "skipped"


def test_turngate_editions_lists_each_with_its_sources() -> None:
    code, out, _ = in_process("editions")
    assert code == 0
    assert f"{SEED} (default): " in out
    assert (
        "003  leike0813/Skill-Runner@4cb89ba:openspec/specs/interactive-engine-turn-protocol/spec.md" in out
    )
    assert f"not in this edition: {TOOL_ECHO}" in out
    code, out, _ = in_process("editions", "--json")
    listed = {item["name"]: item for item in json.loads(out)}
    assert set(listed) == set(editions())
    from_the_seed = [sentence for sentence in sentences().values() if sentence.edition is None]
    assert listed[OWN]["sentences"] == len(from_the_seed) - 6  # and none of the later editions' own
    # the contract files of the releases that have them, with how many rules are checked, and the
    # scenarios each edition's run does not skip
    assert listed[SEED]["contracts"] == {} and listed[OWN]["contracts"] == {}
    assert set(listed["skill-runner-v0.7.9"]["contracts"]) == {
        "agent_output_protocol_invariants.yaml",
        "runtime_event_ordering_contract.yaml",
        "session_fcmp_invariants.yaml",
    }
    rules = listed["skill-runner-v0.7.9"]["contract_rules"]
    assert 0 < rules["checked"] < rules["all"]
    applying = {name: item["scenarios"] for name, item in listed.items()}
    assert applying[SEED] == sum(1 for scenario in load_catalog(CATALOG_DIR) if not scenario.editions)
    assert all(
        0 < count < applying[SEED] for name, count in applying.items() if name.startswith("skill-runner-v")
    )


def test_the_run_says_which_edition_judged_it_and_report_judge_keeps_it(tmp_path: Path) -> None:
    report, junit = tmp_path / "run.jsonl", tmp_path / "run.xml"
    args = ["run", "-k", "patch-order-fixed", "--engine", "codex", "--jobs", "1"]
    code, _, _ = in_process(*args, "--edition", OWN, "--report-json", str(report), "--junit", str(junit))
    assert code == 5  # the one case is not this edition's: nothing was verified (pytest's "no tests ran")
    header = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert header["edition"] == OWN
    assert f'<property name="edition" value="{OWN}"' in junit.read_text(encoding="utf-8")
    code, out, _ = in_process("report", "judge", str(report))
    assert f"by edition {OWN}" in out


def test_an_unknown_edition_is_one_line_naming_the_known_ones() -> None:
    code, _, err = in_process("run", "--edition", "v9", "-k", "tool-echo")
    assert code == 2
    assert err.strip() == f"turngate: --edition: 'v9': known editions: {', '.join(editions())}"
    assert list(editions())[:2] == [SEED, OWN]
    with pytest.raises(EditionProblem):
        edition_named("v9")


def test_one_run_judged_by_two_editions_side_by_side_in_html(tmp_path: Path) -> None:
    seed_report, own_report, page = tmp_path / "seed.jsonl", tmp_path / "own.jsonl", tmp_path / "page.html"
    args = ["run", "-k", "engine-format/tool-echo/codex", "--engine", "codex", "--jobs", "1"]
    code, _, _ = in_process(*args, "--mutant", "marker-from-tool-output", "--report-json", str(seed_report))
    assert code == 1  # the seed: a marker in a tool echo is no evidence
    code, out, _ = in_process("report", "judge", str(seed_report), "--edition", OWN, "-o", str(own_report))
    # judged again by 7d8914d, the case is not one of its cases: its decision rests on a sentence
    # 7d8914d does not have (there, a marker in any string field counts)
    assert code == 0 and f"by edition {OWN}" in out
    header, case = (json.loads(line) for line in own_report.read_text(encoding="utf-8").splitlines()[:2])
    assert header["edition"] == OWN
    assert (case["outcome"], case["message"]) == (
        "skipped",
        f"not in edition {OWN}: its step 0 decision rests on {TOOL_ECHO}",
    )
    code, _, _ = in_process("report", "html", str(seed_report), str(own_report), "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert f"seed.jsonl: reference:mutant by {SEED}" in html or f"by {SEED}" in html
    assert f"by {OWN}" in html


def test_the_releases_have_only_their_own_specs_and_today_s_is_v0_6_0_s_text() -> None:
    """Later releases: their lifecycle, turn protocol and decision policy as each release has them;
    the dual gate's design and proposal (000, 002) belong to the change that shipped it."""
    releases = [edition for name, edition in editions().items() if name.startswith("skill-runner-v")]
    assert [edition.name for edition in releases] == [
        "skill-runner-v0.4.0",
        "skill-runner-v0.4.3",
        "skill-runner-v0.6.0",
        "skill-runner-v0.7.9",
    ]
    assert all(sorted(edition.texts) == ["001", "003", "004"] for edition in releases)
    today, six = editions()["skill-runner-v0.7.9"], editions()["skill-runner-v0.6.0"]
    assert {prefix: text.md5 for prefix, text in today.texts.items()} == {
        prefix: text.md5 for prefix, text in six.texts.items()
    }
    design = CATALOG["design/decision-1/dual-track-gate"]
    assert today.missing_source(design.source) == (
        f"not in edition {today.name}: it has no {design.source['file']} (its spec is {today.title})"
    )
    # a scenario from ENGINE_FORMATS.md is no edition's text: only its decision's sentence can rule it out
    assert today.missing_source(CATALOG["engine-format/tool-echo/codex"].source) is None


PENDING_BRANCH = "interactive-engine-turn-protocol/formal-branches/pending-branch-is-the-waiting-source"


def test_sentences_of_a_later_edition_are_verbatim_in_its_text_and_not_the_seed_s() -> None:
    assert sentence_problems() == []
    later = [sentence for sentence in sentences().values() if sentence.edition is not None]
    assert later and all(not edition_named(SEED).has(sentence) for sentence in later)
    assert all(edition_named("skill-runner-v0.7.9").has(sentence) for sentence in later)


def test_a_scenario_of_later_editions_is_planned_only_under_them_and_catches_a_seed_only_server() -> None:
    scenario = CATALOG[PENDING_BRANCH]
    assert cases([scenario], None) == []  # the seed does not plan it
    planned = cases([scenario], ["codex"], "skill-runner-v0.6.0")
    assert planned == [(scenario, "codex")]
    # the reference implements the seed: it shows the whole JSON reply as the prompt (the generic
    # fallback), where v0.6.0 projects the branch's message
    result = run_case(scenario, "codex", ReferenceConnector(), edition="skill-runner-v0.6.0")
    assert result.outcome == "failed"
    # its spec sentence's break (the seed's FCMP breaks v0.6.0's contract rules too: test_invariants.py)
    (broken,) = [
        item
        for item in result.differences
        if item["severity"] == "failed" and item["authority"] in sentences()
    ]
    assert (broken["key"], broken["authority"]) == ("pending.prompt", f"{PENDING_BRANCH}#and1")


def test_an_edition_that_settles_decision_4_1_by_its_heading_holds_a_body_reading_server_to_it() -> None:
    """v0.4.3 wrote Decision 4.1's heading reading into its lifecycle text: ask_user evidence blocks
    soft completion. The seed keeps both readings (design/decision-4.1/soft-completion-ask-user); the
    reference follows the body by default, which v0.4.3 and later do not allow."""
    scenario = CATALOG[
        "interactive-run-lifecycle/completion-gate-by-mode/ask-user-evidence-blocks-soft-completion"
    ]
    assert [edition for edition in editions() if cases([scenario], ["codex"], edition)] == [
        "skill-runner-v0.4.3",
        "skill-runner-v0.6.0",
        "skill-runner-v0.7.9",
    ]
    result = run_case(scenario, "codex", ReferenceConnector(), edition="skill-runner-v0.4.3")
    assert result.outcome == "failed"
    (broken,) = [
        item
        for item in result.differences
        if item["severity"] == "failed" and item["authority"] in sentences()
    ]
    assert (broken["key"], broken["actual"]) == ("state", "succeeded")
    assert broken["authority"] == f"{scenario.id}#then"


def test_choosing_only_scenarios_of_other_editions_is_one_line_and_list_shows_their_editions() -> None:
    code, _, err = in_process("run", "-k", "formal-branches")
    assert code == 2
    assert err.strip() == (
        f"turngate: --edition {SEED}: the scenarios chosen belong to other editions:"
        " skill-runner-v0.6.0, skill-runner-v0.7.9"
    )
    code, out, _ = in_process("list", "--json", "-k", "formal-branches")
    (listed,) = json.loads(out)
    assert listed["editions"] == ["skill-runner-v0.6.0", "skill-runner-v0.7.9"]
