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
from pathlib import Path

import pytest

from tests.cli.conftest import BROKEN
from tests.turngate_cli import turngate as _turngate
from turngate.judge.html_report import ReportColumns, render

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
)  # fmt: skip


# The four max-attempt scenarios this file was written for (the catalog has more that say max-attempt).
FOUR = (
    *("-k", "design/decision-6/max-attempt-interactive-only", "-k", "max-attempt-stop/exceeded-without"),
    *("-k", "max-attempt/exceeded-fails", "-k", "max-attempt/unbounded-without"),
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
    assert text.count('class="cell passed"') == 4
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
