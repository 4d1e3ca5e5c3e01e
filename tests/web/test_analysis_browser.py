"""The engine analysis in a real browser (headless Chromium, tests/web/test_browser.py's
helpers): the replay shows a step's mark with its class, the best play and the equity
lost, both players' summaries and the error chart; the profile shows the PR chart; both
fit a phone.  Screenshots go to ``$FIBSD_SCREENSHOTS`` if set, else to the test's
temporary directory (printed)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted

from tests.web.conftest import Web, start_web, stop_web
from tests.web.test_analysis_pages import analysed  # noqa: F401 (fixture)
from tests.web.test_browser import Browser, browser, pytestmark  # noqa: F401 (fixtures)
from tests.web.test_play_browser import shots_dir


@pytest_twisted.async_yield_fixture
async def site(database: Path, analysed: dict[str, int]) -> AsyncIterator[Web]:  # noqa: F811
    running = await start_web(database, **{"analysis.ladder_min_matches": 2})
    yield running
    await stop_web(running)


@pytest_twisted.ensureDeferred
async def test_the_replay_shows_the_marks_and_the_summary(
        browser: Browser, site: Web, analysed: dict[str, int], tmp_path: Path) -> None:  # noqa: F811
    shots = shots_dir(tmp_path)
    await browser.open(f"{site.base}/matches/{analysed['done']}?step=0")
    assert await browser.texts("table.summary-table thead th") == ["Player", "alice", "bob"]
    assert await browser.texts("table.summary-table tbody tr") == [
        "PR 6.50 12.25", "Checker error rate 4.50 5.50", "Cube error rate 1.50 1.50",
        "Luck rate +0.25 -0.25", "Decisions 20 21", "Doubtful / bad / very bad 1 / 1 / 1 0 / 1 / 0"]
    assert await browser.texts("nav.marked a") != []
    bars = await browser.script(
        "var c = document.querySelector('svg.error-chart'); var r = c.getBoundingClientRect();"
        "return [c.querySelectorAll('rect.bar').length, r.width > 200, r.height > 60];")
    assert bars == [6, True, True]
    assert await browser.script("return document.querySelectorAll('.mark').length") == 0
    await browser.click("nav.marked a.very-bad")  # to the very bad play's step
    mark = await browser.text("p.mark.very-bad")
    assert re.fullmatch(r"very bad · alice played \S+ \S+ · best: \S+ \S+ · equity lost 0\.250",
                        mark), mark
    colour = await browser.script(
        "return getComputedStyle(document.querySelector('p.mark.very-bad')).borderLeftColor")
    assert colour == "rgb(179, 0, 27)"
    step = int(re.search(r"step=(\d+)", await browser.script("return location.search"))[1])
    now = await browser.script(
        "return document.querySelector('svg.error-chart line.now').getAttribute('x1')")
    assert float(now) > 34  # the chart marks the step shown
    assert step > 0
    assert await browser.fits_the_phone()
    await browser.script("document.querySelector('p.mark').scrollIntoView({block: 'center'})")
    await browser.run(browser.driver.save_screenshot, str(shots / "replay-marked-step.png"))
    await browser.script("document.querySelector('section.analysis').scrollIntoView()")
    await browser.run(browser.driver.save_screenshot, str(shots / "replay-summary.png"))


@pytest_twisted.ensureDeferred
async def test_the_profile_shows_the_pr_chart(browser: Browser, site: Web,
                                              analysed: dict[str, int],  # noqa: F811
                                              tmp_path: Path) -> None:
    shots = shots_dir(tmp_path)
    await browser.open(f"{site.base}/players/alice")
    assert await browser.text("dd.pr10") == "4.75 (2)"
    chart = await browser.script(
        "var c = document.querySelector('svg.pr-chart'); var r = c.getBoundingClientRect();"
        "return [c.getAttribute('data-points'), c.querySelectorAll('circle').length,"
        " r.width > 200, r.height > 60];")
    assert chart == ["2", 2, True, True]
    assert await browser.fits_the_phone()
    await browser.script("document.querySelector('svg.pr-chart').scrollIntoView()")
    await browser.run(browser.driver.save_screenshot, str(shots / "profile-pr.png"))
    await browser.click("dd.pr-worst a")
    assert await browser.text("h1") == "alice - bob"
    await browser.open(f"{site.base}/ratings/pr")
    assert await browser.texts("table.pr-ladder tbody tr") == ["1 alice 4.75 2",
                                                              "2 bob 10.62 2"]
    await browser.run(browser.driver.save_screenshot, str(shots / "pr-ladder.png"))


@pytest_twisted.ensureDeferred
async def test_no_serious_accessibility_violation_on_the_analysis(
        browser: Browser, site: Web, analysed: dict[str, int]) -> None:  # noqa: F811
    from tests.web.test_accessibility import AXE, violations

    if not AXE.exists():
        pytest.skip("axe-core is not installed (npm ci --prefix tests/web/js; .ci/run does it)")
    await browser.run(browser.driver.set_script_timeout, 60)
    found = {}
    for path in (f"/matches/{analysed['done']}?step=2", f"/matches/{analysed['failed']}",
                 "/players/alice", "/ratings/pr"):
        await browser.open(site.base + path)
        found[path] = await violations(browser)
    assert {path: v for path, v in found.items() if v} == {}
