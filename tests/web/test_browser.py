"""The web face in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by Selenium through ``/usr/bin/chromedriver``, so nothing
is downloaded) loads the ladder, a profile, a replay and a live board while a match
is played over telnet, and checks what a person sees.

Selenium's calls block, and the server runs on this test's reactor, so every browser
call runs in a thread (``deferToThread``) while the reactor serves the pages.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThread

from tests.web.conftest import Web, start_web, stop_web
from tests.web.live_match import start_match

CHROMIUM = shutil.which("chromium")
DRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
PHONE = (390, 844)  # CSS pixels of a common phone

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not DRIVER.exists(),
    reason="Chromium is not installed (apt-get install chromium chromium-driver; "
           ".ci/run does it before the tests)")

T = TypeVar("T")


class Browser:
    """A Chromium session whose every call runs in a thread."""

    def __init__(self, profile: Path) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_argument(f"--window-size={PHONE[0]},{PHONE[1]}")
        self.driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)

    async def run(self, call: Callable[..., T], *args: Any) -> T:
        result: T = await deferToThread(call, *args)
        return result

    async def open(self, url: str) -> None:
        await self.run(self.driver.get, url)

    async def text(self, css: str) -> str:
        from selenium.webdriver.common.by import By

        return await self.run(lambda: self.driver.find_element(By.CSS_SELECTOR, css).text)

    async def texts(self, css: str) -> list[str]:
        from selenium.webdriver.common.by import By

        return await self.run(lambda: [e.text for e in
                                       self.driver.find_elements(By.CSS_SELECTOR, css)])

    async def script(self, source: str) -> Any:
        return await self.run(self.driver.execute_script, source)

    async def click(self, css: str) -> None:
        from selenium.webdriver.common.by import By

        await self.run(lambda: self.driver.find_element(By.CSS_SELECTOR, css).click())

    async def fits_the_phone(self) -> bool:
        """No sideways scrolling at phone width."""
        return bool(await self.script(
            "return document.documentElement.scrollWidth <= window.innerWidth"))

    async def wait_for(self, check: Callable[[], Any], what: str, seconds: float = 15) -> Any:
        """Ask ``check`` (in a thread) until it returns something true."""
        for _ in range(int(seconds * 20)):
            value = await self.run(check)
            if value:
                return value
            await deferLater(reactor, 0.05)
        raise AssertionError(f"the browser never showed {what}")


@pytest_twisted.async_yield_fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    opened = await deferToThread(Browser, tmp_path / "chromium-profile")
    yield opened
    await deferToThread(opened.driver.quit)


@pytest_twisted.async_yield_fixture
async def site(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    running = await start_web(database)
    yield running
    await stop_web(running)


@pytest_twisted.ensureDeferred
async def test_the_ladder_and_a_profile_read_well_on_a_phone(browser: Browser, site: Web) -> None:
    await browser.open(site.base + "/ratings")
    assert await browser.text("h1") == "Ratings"
    assert await browser.texts("table.ladder tbody tr") == ["1 alice 1512.25 60",
                                                           "2 bob 1490.00 55"]
    assert await browser.fits_the_phone()
    await browser.click("table.ladder tbody tr a")  # alice
    assert await browser.text("h1") == "alice"
    assert await browser.text("dd.rating") == "1512.25"
    chart = await browser.script(
        "var c = document.querySelector('svg.chart'); var r = c.getBoundingClientRect();"
        "return [c.getAttribute('data-points'), r.width > 100, r.height > 40];")
    assert chart == ["5", True, True]
    assert await browser.fits_the_phone()
    hostile = await browser.texts("table.list tbody tr td:nth-child(2)")
    assert hostile[0] == "<b>x</b>&\"'"  # shown as the text it is, not as markup
    assert await browser.script("return document.querySelectorAll('main b').length") == 0


@pytest_twisted.ensureDeferred
async def test_a_replay_steps_forward_and_back(browser: Browser, site: Web,
                                               match_ids: list[int]) -> None:
    await browser.open(f"{site.base}/matches/{match_ids[0]}?step=0")
    assert await browser.text("#caption") == "The match is about to start."
    start_board = await browser.script(
        "return document.querySelector('svg.board').getAttribute('data-board')")
    visible = await browser.script(
        "var r = document.querySelector('svg.board').getBoundingClientRect();"
        "return r.width > 300 && r.height > 200 && r.right <= window.innerWidth;")
    assert visible
    assert await browser.script("return document.querySelectorAll('svg.board circle.o').length"
                                ) == 15  # O's checkers, none stacked over 5 high
    await browser.click("#next")
    assert "rolled" in await browser.text("#caption")
    await browser.click("#next")
    assert " moves " in await browser.text("#caption")
    moved = await browser.script(
        "return document.querySelector('svg.board').getAttribute('data-board')")
    assert moved != start_board
    await browser.click("#prev")
    assert "rolled" in await browser.text("#caption")
    await browser.click("a[rel=last]")
    assert "wins the game" in await browser.text("#caption")
    assert await browser.fits_the_phone()


@pytest_twisted.ensureDeferred
async def test_the_live_board_changes_after_a_move_over_telnet(browser: Browser,
                                                              site: Web) -> None:
    await browser.open(site.base + "/live/alice")
    assert await browser.text("#live") == "alice is not playing now."
    players = await start_match(site.service, site.game_port)

    def board() -> Any:
        return browser.driver.execute_script(
            "var b = document.querySelector('#live svg.board');"
            "return b && b.getAttribute('data-board');")

    first = await browser.wait_for(board, "the board of the new match")
    assert first == "0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
    assert "alice (O) 0 - bob (X) 0, 3 point match" in await browser.text("#live")
    await players.one_move(players.bob)
    second = await browser.wait_for(lambda: (b := board()) != first and b, "the moved board")
    # bob (X) made the opening move: X's checkers moved, O's (alice's) did not.
    before = [int(n) for n in first.split(":")]
    after = [int(n) for n in second.split(":")]
    assert [max(n, 0) for n in after] == [max(n, 0) for n in before]
    assert [min(n, 0) for n in after] != [min(n, 0) for n in before]
    assert sum(after) == sum(before) == 0
    await browser.open(site.base + "/")
    assert "alice – bob" in await browser.text("ul.matches")
