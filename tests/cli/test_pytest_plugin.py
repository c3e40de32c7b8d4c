"""``pytest --turngate-target ...`` in a folder with no tests of its own: the catalog as pytest items.

Each run is a real pytest in a temporary folder, as an implementer would type
it; the broken target is the reference with its gate ignoring ``max_attempt``,
behind the command protocol (tests/cli/ignores_max_attempt.py); the partial one
cannot show its history (tests/cli/hides_history.py).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.cli.conftest import BROKEN, HERE, ONE, implementer_pytest, implementer_pytest_here
from turngate.judge.catalog import CATALOG_DIR, ENGINES, load_catalog

# The four max-attempt scenarios this file was written for (the catalog has more that say max-attempt).
FOUR = "max-attempt and not sticky and not limit-one and not automatic-decision and not attempt-limit"
# A target that cannot show its history: the case below checks it (MUST), so it is partial.
PARTIAL = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'hides_history.py'))}"
PARTIAL_CASE = "interactive-decision-policy/free-text-reply/any-kind-free-text"
# Two engines, each given as pytest's own option: the counts below are theirs (two, not the spec's
# four: each case starts an implementation process, and which engines matters little here).
TWO_ENGINES = ("--turngate-engine", "codex", "--turngate-engine", "iflow")
CAUGHT_BY = (  # the scenarios that catch the bug, each on both engines
    ONE,
    "design/decision-6/max-attempt-interactive-only",
    "interactive-decision-policy/max-attempt-stop/exceeded-without-evidence",
)


def test_the_reference_passes_its_cases_by_scenario_id_and_engine(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "--turngate-target", "reference", "-k", "exceeded-fails", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    for engine in ENGINES:
        assert f"turngate::{ONE}[{engine}] PASSED" in done.stdout
    assert f"{len(ENGINES)} passed" in done.stdout


def test_pytest_counts_and_lists_the_cases_it_collects_beside_a_users_own_tests(tmp_path: Path) -> None:
    """The catalog is collected by pytest as its own: counted in the header, listed by --collect-only,
    chosen by -k and -m (the marker's arguments), beside a test of the user's own."""
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    pass\n", encoding="utf-8")
    cases = sum(len(scenario.engines) for scenario in load_catalog())
    everything = cases + 1

    def collected(*args: str) -> str:
        done = implementer_pytest(tmp_path, "--turngate-target", "reference", "-p", "no:cacheprovider", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    listed = collected("--collect-only", "-q")
    assert f"\n{everything} tests collected in " in listed, listed[-300:]
    ids = [line for line in listed.splitlines() if line.startswith("turngate::")]
    assert len(set(ids)) == len(ids) == cases
    assert f"turngate::{ONE}[codex]" in ids
    assert "test_mine.py::test_mine" in listed
    ran = collected("-k", "exceeded-fails or test_mine")
    chosen = len(ENGINES) + 1  # the scenario on every engine, and the user's test
    assert f"collected {everything} items / {everything - chosen} deselected / {chosen} selected" in ran, ran
    assert f"{chosen} passed" in ran
    marked = collected("--collect-only", "-q", "-m", "turngate(engine='codex', level='MUST')", "-k", ONE)
    assert marked.startswith(f"turngate::{ONE}[codex]\n\n1/{everything} tests collected ({cases} deselected)")
    assert f"1/{everything} tests collected ({cases} deselected)" in collected("--co", "-m", "not turngate")


def test_a_failure_is_named_by_its_node_id_in_a_subfolder_of_the_rootdir(tmp_path: Path) -> None:
    """pytest names a test relative to the folder it was started in; a case names no file, so its
    node ID reads the same wherever pytest starts (not ../turngate::…)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    below = tmp_path / "below"
    below.mkdir()
    done = implementer_pytest(below, "--turngate-target", BROKEN, "-k", f"{ONE} and codex", "-v")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"rootdir: {tmp_path}" in done.stdout
    assert f"\nturngate::{ONE}[codex] FAILED" in done.stdout
    summary = done.stdout[done.stdout.index("short test summary info") :]
    assert f"\nFAILED turngate::{ONE}[codex]" in summary
    assert "../turngate" not in done.stdout
    again = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "--lf")  # the rootdir's cache
    assert "run-last-failure: rerun previous 1 failure" in again.stdout, again.stdout
    assert re.search(r"\b1 failed, \d+ deselected", again.stdout), again.stdout


def test_a_broken_target_fails_with_the_specs_words_and_every_difference(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "-k", f"{FOUR} and codex", "-n", "2",
                   f"--junitxml={junit}")  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "3 failed, 1 passed" in out  # unbounded-without-max-attempt does not touch the bug
    assert f"FAILED: {ONE} [codex] (MUST)" in out
    assert "spec: 001_" in out
    assert "> - **AND** 失败原因 MUST 包含 `INTERACTIVE_MAX_ATTEMPT_EXCEEDED`" in out
    # every difference, each with its severity and the sentence behind it
    assert "[failed] step 1 (reply): state\n     expected: 'failed'\n     actual:   'waiting_user'" in out
    assert "[failed] step 1 (reply): error_code" in out
    assert "backed by: MUST " in out
    assert "       > - **THEN** run MUST 进入 `failed`" in out
    failures = ElementTree.parse(junit).getroot().findall(".//testcase/failure")
    assert len(failures) == 3
    assert all("INTERACTIVE_MAX_ATTEMPT_EXCEEDED" in (f.text or "") for f in failures)


def test_x_stops_at_the_first_failure_and_lf_reruns_only_the_failures(tmp_path: Path) -> None:
    first = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "-k", FOUR, *TWO_ENGINES)
    assert first.returncode == 1, first.stdout
    assert "6 failed, 2 passed" in first.stdout, first.stdout
    # on two xdist workers, the same cases pass and fail (each worker collects the same IDs)
    parallel = implementer_pytest(
        tmp_path, "--turngate-target", BROKEN, "-k", FOUR, *TWO_ENGINES, "-n", "2", "-p", "no:cacheprovider"
    )
    assert "2 workers [8 items]" in parallel.stdout, parallel.stdout
    assert "6 failed, 2 passed" in parallel.stdout, parallel.stdout
    assert _failed(parallel.stdout) == _failed(first.stdout)
    again = implementer_pytest(tmp_path, "--turngate-target", BROKEN, "--lf", "-q", *TWO_ENGINES)
    # --lf reruns the 6 failures and deselects every other case of the catalog, whatever its size
    assert again.returncode == 1, again.stdout
    assert re.search(r"6 failed, \d+ deselected", again.stdout), again.stdout
    assert _failed(again.stdout) == _failed(first.stdout)
    assert {line.split("[")[0] for line in again.stdout.splitlines() if line.startswith("FAILED ")} == {
        f"FAILED turngate::{scenario}" for scenario in CAUGHT_BY
    }
    stopped = implementer_pytest(
        tmp_path, "--turngate-target", BROKEN, "-k", FOUR, *TWO_ENGINES, "-x", "-p", "no:cacheprovider"
    )
    assert stopped.returncode == 1
    assert "1 failed" in stopped.stdout
    assert "stopping after 1 failures" in stopped.stdout


def test_partial_fails_naming_the_checks_not_shown_unless_the_user_accepts_it(tmp_path: Path) -> None:
    """verdict.fails_run: a partial case fails, saying which MUST checks the target could not show and
    why, and which option accepts them; accepted, it passes with a warning. JUnit has one testcase per
    case, a failure for the failed one (a scenario of the user's own catalog) and the partial one."""
    wrong = tmp_path / "mine/my-team/max-attempt/wrong.yaml"
    wrong.parent.mkdir(parents=True)
    text = (CATALOG_DIR / f"{ONE}.yaml").read_text(encoding="utf-8")
    text = text.replace(f"id: {ONE}", "id: my-team/max-attempt/wrong").replace(
        "      state: failed\n", "      state: succeeded\n"
    )
    wrong.write_text(text.replace("engines: [codex, gemini, iflow, opencode]", "engines: [codex]"), "utf-8")
    chosen = ("--turngate-target", PARTIAL, "--turngate-catalog", "mine", "-k", f"{PARTIAL_CASE} or my-team")
    chosen += ("--turngate-engine", "codex", "-p", "no:cacheprovider")

    done = implementer_pytest(tmp_path, *chosen, "--junitxml=junit.xml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 failed" in done.stdout, done.stdout
    assert (
        f"PARTIAL: {PARTIAL_CASE} [codex] (MUST)\nnever a pass: MUST checks the target could not show:"
        in done.stdout
    )
    assert (
        " step 2 history_timestamps, step 2 history (unverified: why below); --turngate-allow-partial"
        " accepts them\n" in done.stdout
    )
    assert "     unverified: the target does not show history\n" in done.stdout
    assert "FAILED: my-team/max-attempt/wrong [codex] (MUST)" in done.stdout
    cases = {case.get("name"): case for case in ElementTree.parse(tmp_path / "junit.xml").iter("testcase")}
    assert set(cases) == {f"{PARTIAL_CASE}[codex]", "my-team/max-attempt/wrong[codex]"}
    assert {case.get("classname") for case in cases.values()} == {"turngate"}
    partial = cases[f"{PARTIAL_CASE}[codex]"].find("failure")
    assert partial is not None
    assert "--turngate-allow-partial accepts them" in (partial.text or "")
    assert cases["my-team/max-attempt/wrong[codex]"].find("failure") is not None

    accepted = implementer_pytest(tmp_path, *chosen, "--turngate-allow-partial", "--junitxml=accepted.xml")
    assert accepted.returncode == 1, accepted.stdout + accepted.stderr  # the failed one still fails
    assert re.search(r"\b1 failed, 1 passed, \d+ deselected, 1 warning\b", accepted.stdout), accepted.stdout
    assert (
        f"{PARTIAL_CASE}[codex]: partial (accepted: --turngate-allow-partial): [unverified]"
        in accepted.stdout
    )
    cases = {case.get("name"): case for case in ElementTree.parse(tmp_path / "accepted.xml").iter("testcase")}
    assert cases[f"{PARTIAL_CASE}[codex]"].find("failure") is None
    assert cases["my-team/max-attempt/wrong[codex]"].find("failure") is not None


def _failed(out: str) -> set[str]:
    """The node IDs of the short test summary's failures."""
    return {line.split()[1] for line in out.splitlines() if line.startswith("FAILED turngate::")}


def test_without_the_option_nothing_is_collected(tmp_path: Path) -> None:
    done = implementer_pytest(tmp_path, "-p", "no:cacheprovider")
    assert done.returncode == 5
    assert "no tests ran" in done.stdout


# turngate run's own options: a message of the plugin names the plugin's (--turngate-target, ...).
RUNS_OPTIONS = re.compile(r"--(target|target-options|catalog|engine|no-shipped)\b")
TARGET = "--turngate-target"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((TARGET, "cmd:/nonexistent"), f"{TARGET} cmd:/nonexistent: /nonexistent: no such file"),
        ((TARGET, "cmd:true"), f"{TARGET} cmd:true: "),  # starts, but never shakes hands
        ((TARGET, "cmd:"), f"{TARGET} cmd:: no command after 'cmd:'"),
        ((TARGET, "nowhere"), f"{TARGET}: 'nowhere': expected reference, http://HOST:PORT, cmd:COMMAND"),
        ((TARGET, "reference:nope"), f"{TARGET} reference:nope: 'nope': no such variant of the reference"),
        ((TARGET, "http://127.0.0.1:9"), f"{TARGET} http://127.0.0.1:9: an HTTP target needs its options"),
        (
            (TARGET, "http://127.0.0.1:9", "--turngate-target-options", "t.yaml"),
            f"{TARGET} http://127.0.0.1:9: ",
        ),
        ((TARGET, "t.yaml"), f"{TARGET} t.yaml: http://127.0.0.1:9: "),  # nothing answers there
        (
            (TARGET, "http://127.0.0.1:8", "--turngate-target-options", "t.yaml"),
            "--turngate-target-options: t.yaml: base_url: 'http://127.0.0.1:9' differs from"
            " --turngate-target 'http://127.0.0.1:8'",
        ),
        (
            (TARGET, "reference", "--turngate-target-options", "t.yaml"),
            "--turngate-target-options: only for an HTTP target (--turngate-target http://HOST:PORT)",
        ),
        ((TARGET, "reference", "--turngate-engine", "codx"), "--turngate-engine: 'codx': known: codex,"),
        ((TARGET, "reference", "--turngate-reading", "nope"), "--turngate-reading: 'nope': the catalog's"),
        ((TARGET, "reference", "--turngate-catalog", "missing"), "--turngate-catalog: missing: not a folder"),
        (
            (TARGET, "reference", "--turngate-catalog", "mine"),
            f"--turngate-catalog: mine/{ONE}.yaml: id '{ONE}': already used by {CATALOG_DIR / ONE}.yaml",
        ),
    ],
)
def test_a_bad_option_is_a_usage_error_naming_the_plugins_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    """One line, exit 4, before any case: each problem names the option of the plugin it is about.
    (In this process: test_a_usage_error_is_the_same_in_a_process_of_its_own runs one as a process.)"""
    (tmp_path / "t.yaml").write_text("base_url: http://127.0.0.1:9\nscripts_dir: .\n", encoding="utf-8")
    shipped = tmp_path / f"mine/{ONE}.yaml"  # the same path in its folder: the same ID
    shipped.parent.mkdir(parents=True)
    shipped.write_text((CATALOG_DIR / f"{ONE}.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    done = implementer_pytest_here(tmp_path, capsys, *args, "-p", "no:cacheprovider")
    assert done.status == 4, done.stdout + done.stderr
    assert done.stderr.startswith(f"ERROR: turngate: {said}"), done.stderr
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert not RUNS_OPTIONS.search(done.stderr), done.stderr


def test_a_usage_error_is_the_same_in_a_process_of_its_own(tmp_path: Path) -> None:
    """What an implementer sees: the usage error of a real pytest process, its stream and status."""
    done = implementer_pytest(
        tmp_path, TARGET, "reference", "--turngate-engine", "codx", "-p", "no:cacheprovider"
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.startswith("ERROR: turngate: --turngate-engine: 'codx': known: codex,"), done.stderr
    assert done.stderr.strip().count("\n") == 0, done.stderr
