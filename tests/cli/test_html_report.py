"""The HTML report in a real headless Chromium (Debian's package, driven by its chromedriver).

Two real runs side by side, the reference and a broken target (the reference
whose gate ignores max_attempt): the test opens the file, counts the cells of
each column set, opens a failed cell and reads the spec's quote, filters by
outcome and capability, and takes a screenshot. Selenium rather than a
hand-made DevTools client: it is well kept, and clicks and reads the page as
a person would.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cli.conftest import BROKEN
from tests.turngate_cli import turngate as _turngate
from turngate.judge.catalog import ENGINES
from turngate.judge.html_report import SYMBOLS, ReportColumns, cell_anchor, render

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
)  # fmt: skip


# The four max-attempt scenarios this file was written for (the catalog has more that say max-attempt).
FOUR = (
    *("-k", "design/decision-6/max-attempt-interactive-only", "-k", "max-attempt-stop/exceeded-without"),
    *("-k", "max-attempt/exceeded-fails", "-k", "max-attempt/unbounded-without"),
    # on the spec's four engines: the page's counts below are theirs
    *("--engine", "codex", "--engine", "gemini", "--engine", "iflow", "--engine", "opencode"),
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    assert _turngate("run", *FOUR, "--report-json", "good.jsonl", cwd=folder).returncode == 0
    broken = _turngate("run", *FOUR, "--target", BROKEN, "--report-json", "broken.jsonl", cwd=folder)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    done = _turngate("report", "html", "good.jsonl", "broken.jsonl", "-o", "page.html", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "page.html"


def test_the_page_is_one_self_contained_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "<style>" in text
    assert "<script>" in text
    for outside in ('src="http', "src='http", 'href="http', "@import", "url(http"):
        assert outside not in text


def test_run_writes_the_page_too(tmp_path: Path) -> None:
    done = _turngate("run", "-k", "max-attempt/exceeded-fails", "--html", "run.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert text.count('class="cell passed"') == len(ENGINES)  # the scenario runs on every engine
    assert "interactive-run-lifecycle/max-attempt/exceeded-fails" in text


def test_a_hostile_message_is_escaped_not_run() -> None:
    difference = {
        "step": 0,
        "key": "state",
        "expected": "x",
        "actual": "<img src=x onerror=alert(1)>",
        "severity": "failed",
        "authority": "s1",
        "quote": "</blockquote><script>bad()</script>",
    }
    case = {
        "scenario_id": "a/b/c",
        "engine": "codex",
        "capability": "a",
        "outcome": "failed",
        "level": "MUST",
        "message": "<script>alert(1)</script>",
        "differences": [difference],
    }
    text = render([ReportColumns("<b>label</b>", {"target": "<i>t</i>"}, [case], {})])
    assert "<img src=x" not in text
    assert "<script>bad" not in text
    assert "<b>label" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "&lt;/blockquote&gt;&lt;script&gt;bad()" in text


def _browser():  # type: ignore[no-untyped-def]
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        if os.environ.get("CI"):
            pytest.fail("CI needs /usr/bin/chromium and /usr/bin/chromedriver (scripts/ensure-chromium)")
        pytest.skip("no /usr/bin/chromium or /usr/bin/chromedriver: run scripts/ensure-chromium as root")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    return options, Service(executable_path=str(CHROMEDRIVER))


def test_in_chromium_the_cells_open_their_differences_and_the_filters_hide_rows(
    page: Path, tmp_path: Path
) -> None:
    options, service = _browser()
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.get(page.as_uri())
        sets = driver.find_elements(By.CSS_SELECTOR, "th.set")
        assert len(sets) == 2
        assert "good.jsonl" in sets[0].text
        assert "broken.jsonl" in sets[1].get_attribute("title")
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.case")
        assert len(rows) == 4  # the four max-attempt scenarios, each on 4 engines in 2 column sets
        cells = driver.find_elements(By.CSS_SELECTOR, "td.cell")
        assert len(cells) == 32
        failed = driver.find_elements(By.CSS_SELECTOR, "td.cell.failed")
        assert len(failed) == 12
        assert len(driver.find_elements(By.CSS_SELECTOR, "td.cell.passed")) == 20

        target = next(cell for cell in failed if "exceeded-fails" in cell.find_element(By.XPATH, "..").text)
        target.click()
        panel = driver.find_element(By.ID, "panel")
        assert "interactive-run-lifecycle/max-attempt/exceeded-fails" in panel.text
        quotes = [quote.text for quote in panel.find_elements(By.CSS_SELECTOR, "blockquote.quote")]
        assert any("INTERACTIVE_MAX_ATTEMPT_EXCEEDED" in quote for quote in quotes), panel.text
        assert "waiting_user" in panel.text  # what the broken target did instead

        driver.find_element(By.CSS_SELECTOR, "input[name=outcome][value=passed]").click()
        visible = [row for row in rows if row.is_displayed()]
        assert len(visible) == 3  # the rows with a failed cell
        assert driver.find_element(By.ID, "shown").text == "3 of 4 scenarios shown"
        Select(driver.find_element(By.ID, "capability")).select_by_value("design")
        assert [row.find_element(By.CSS_SELECTOR, "th").text for row in rows if row.is_displayed()] == [
            "design/decision-6/max-attempt-interactive-only"
        ]
        Select(driver.find_element(By.ID, "capability")).select_by_value("")
        driver.find_element(By.CSS_SELECTOR, "input[name=outcome][value=passed]").click()
        screenshot = tmp_path / "report.png"
        assert driver.save_screenshot(str(screenshot))
        assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert screenshot.stat().st_size > 10_000
    finally:
        driver.quit()


# Pages made here, from reports written by hand: what opens first, the "changed" filter, the anchors.


def _case(scenario_id: str, engine: str, outcome: str) -> dict[str, object]:
    return {
        "scenario_id": scenario_id,
        "engine": engine,
        "capability": scenario_id.split("/")[0],
        "outcome": outcome,
        "level": "MUST",
        "differences": [],
    }


def _report(label: str, outcomes: dict[tuple[str, str], str], **header: object) -> ReportColumns:
    cases = [_case(scenario, engine, outcome) for (scenario, engine), outcome in outcomes.items()]
    return ReportColumns(label, {"target": "reference", **header}, cases, {})


# A partial cell comes first in the page (a/r/one on codex), a failed one after it (a/r/two on gemini).
BEFORE = {
    ("a/r/one", "codex"): "partial",
    ("a/r/one", "gemini"): "passed",
    ("a/r/two", "codex"): "passed",
    ("a/r/two", "gemini"): "failed",
    ("b/r/three", "codex"): "passed",
    ("b/r/three", "gemini"): "passed",
}
AFTER = {**BEFORE, ("a/r/two", "gemini"): "passed", ("b/r/three", "codex"): "non-strict"}


def _write(folder: Path, name: str, *reports: ReportColumns) -> Path:
    path = folder / name
    path.write_text(render(list(reports)), encoding="utf-8")
    return path


def test_a_partial_cell_fails_unless_its_run_accepts_partial_and_stays_visibly_partial() -> None:
    failing = render([_report("r.jsonl", BEFORE)])
    assert '<td id="r1/codex/a/r/one" class="cell partial fails"' in failing
    assert '<td id="r1/gemini/a/r/two" class="cell failed fails"' in failing
    for accepted in ("true", True):  # the run's properties (run --html), a saved JSON Lines header
        page = render([_report("r.jsonl", BEFORE, allow_partial=accepted)])
        assert '<td id="r1/codex/a/r/one" class="cell partial"' in page
        assert '<td id="r1/gemini/a/r/two" class="cell failed fails"' in page
    assert 'class="cell partial fails"' in render([_report("r.jsonl", BEFORE, allow_partial="false")])


def test_the_legend_explains_every_mark_and_colour_on_the_page() -> None:
    page = render([_report("before.jsonl", BEFORE), _report("after.jsonl", AFTER, allow_partial="true")])
    legend = page[page.index('<div class="legend"') : page.index("</div>", page.index('<div class="legend"'))]
    for outcome in (
        "failed",
        "errored",
        "unreached",
        "partial",
        "non-strict",
        "ambiguous",
        "passed",
        "skipped",
    ):
        assert f"{SYMBOLS[outcome]}</span> <b>{outcome}" in legend
    assert "<b>partial, accepted</b>" in legend  # after.jsonl accepts partial, before.jsonl does not
    assert "·</span> <b>no case</b>" in legend
    assert "<b>red bar</b>: under a cell: that case fails its run" in legend
    assert "<b>blue outline</b>" in legend
    assert "known (baseline)" not in legend  # no baseline here


def test_every_cell_has_a_stable_anchor_a_link_and_hostile_ids_cannot_break_out() -> None:
    assert cell_anchor(0, "codex", "a/r/one") == "r1/codex/a/r/one"
    hostile = cell_anchor(1, "codex", 'x" onmouseover="alert(1) \ud800#')
    assert hostile.startswith("r2/codex/x%22%20onmouseover%3D")
    assert all(char.isalnum() or char in "/._-%" for char in hostile)
    page = render([_report("r.jsonl", BEFORE)])
    assert 'href="#r1/gemini/a/r/two" title="a link to this cell: the page opens it"' in page
    # Stable: the same anchors every time the page is made, and a report's stay when another joins it.
    anchors = re.findall(r'<td id="([^"]+)"', page)
    assert len(anchors) == len(BEFORE)
    assert re.findall(r'<td id="([^"]+)"', render([_report("r.jsonl", BEFORE)])) == anchors
    two = re.findall(r'<td id="([^"]+)"', render([_report("r.jsonl", BEFORE), _report("s.jsonl", AFTER)]))
    assert set(anchors) < set(two)


def test_rows_are_marked_changed_only_where_an_outcome_differs_between_the_reports() -> None:
    page = render([_report("before.jsonl", BEFORE), _report("after.jsonl", AFTER)])
    changed = [line for line in page.split("<tr ") if "data-changed" in line.split(">", 1)[0]]
    assert [line.split('class="sid">', 1)[1].split("<", 1)[0] for line in changed] == ["a/r/two", "b/r/three"]
    assert 'id="changed"' in page
    assert 'id="changed"' not in render([_report("before.jsonl", BEFORE)])  # one report: nothing to compare


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    options, service = _browser()
    from selenium import webdriver

    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('profile')}")
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def _chosen(driver: WebDriver) -> list[str | None]:
    from selenium.webdriver.common.by import By

    return [cell.get_attribute("id") for cell in driver.find_elements(By.CSS_SELECTOR, "td.cell.chosen")]


def test_in_chromium_the_page_opens_the_first_failed_cell_not_the_first_partial_one(
    chromium: WebDriver, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    chromium.get(_write(tmp_path, "page.html", _report("before.jsonl", BEFORE)).as_uri())
    assert _chosen(chromium) == ["r1/gemini/a/r/two"]
    assert "a/r/two [gemini]" in chromium.find_element(By.ID, "panel").text
    # Nothing failed: the first partial cell opens.
    no_failure = {**BEFORE, ("a/r/two", "gemini"): "passed"}
    chromium.get(_write(tmp_path, "partial.html", _report("p.jsonl", no_failure)).as_uri())
    assert _chosen(chromium) == ["r1/codex/a/r/one"]
    # An errored or unreached cell is a failure too, ahead of a partial one before it.
    unreached = {**no_failure, ("b/r/three", "gemini"): "unreached"}
    chromium.get(_write(tmp_path, "unreached.html", _report("u.jsonl", unreached)).as_uri())
    assert _chosen(chromium) == ["r1/gemini/b/r/three"]


def test_in_chromium_the_changed_filter_shows_only_the_rows_that_differ(
    chromium: WebDriver, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    page = _write(tmp_path, "two.html", _report("before.jsonl", BEFORE), _report("after.jsonl", AFTER))
    chromium.get(page.as_uri())
    rows = chromium.find_elements(By.CSS_SELECTOR, "tr.case")
    assert len([row for row in rows if row.is_displayed()]) == 3
    chromium.find_element(By.ID, "changed").click()
    shown = [row.find_element(By.CSS_SELECTOR, "th").text for row in rows if row.is_displayed()]
    assert shown == ["a/r/two", "b/r/three"]
    assert chromium.find_element(By.ID, "shown").text == "2 of 3 scenarios shown"
    # With an outcome filter too: the changed rows that have a non-strict cell.
    for outcome in ("failed", "partial", "passed"):
        chromium.find_element(By.CSS_SELECTOR, f"input[name=outcome][value={outcome}]").click()
    assert [row.find_element(By.CSS_SELECTOR, "th").text for row in rows if row.is_displayed()] == [
        "b/r/three"
    ]
    groups = [
        group.text for group in chromium.find_elements(By.CSS_SELECTOR, "tr.group") if group.is_displayed()
    ]
    assert groups == ["B"]  # a capability with no row left is hidden with its rows (shown upper-case)
    chromium.find_element(By.ID, "changed").click()
    assert chromium.find_element(By.ID, "shown").text == "1 of 3 scenarios shown"


def test_in_chromium_an_anchor_opens_its_cell_and_a_chosen_cell_becomes_the_address(
    chromium: WebDriver, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    page = _write(tmp_path, "anchors.html", _report("before.jsonl", BEFORE), _report("after.jsonl", AFTER))
    chromium.get(page.as_uri() + "#r2/codex/b/r/three")
    assert _chosen(chromium) == ["r2/codex/b/r/three"]  # not the first failed cell: the link wins
    panel = chromium.find_element(By.ID, "panel")
    assert "b/r/three [codex]" in panel.text
    assert "after.jsonl" in panel.text
    link = panel.find_element(By.CSS_SELECTOR, "a.cell-link")
    assert link.get_attribute("href") == page.as_uri() + "#r2/codex/b/r/three"
    # The same page, another fragment (no reload): that cell opens.
    chromium.get(page.as_uri() + "#r1/codex/a/r/one")
    assert _chosen(chromium) == ["r1/codex/a/r/one"]
    # A cell the reader picks is the page's address from then on, to copy and share.
    chromium.find_element(By.ID, "r2/gemini/a/r/one").click()
    assert chromium.execute_script("return window.location.hash") == "#r2/gemini/a/r/one"
    assert _chosen(chromium) == ["r2/gemini/a/r/one"]
    # A fragment that names no cell: the first failed cell, as without one.
    chromium.get(page.as_uri() + "#no/such/cell")
    chromium.refresh()
    assert _chosen(chromium) == ["r1/gemini/a/r/two"]
