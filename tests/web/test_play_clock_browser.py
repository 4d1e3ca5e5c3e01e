"""The web client shows both clocks of a clocked match and counts the running one down
(protocol/clock.md, "Showing it"): a CLIP bot invites a browser user with `set clock`,
the browser joins, and whoever is to act sees his reserve go down once his delay is used,
while the other clock stays where it is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.test_browser import CHROMIUM, DRIVER, Browser
from tests.web.test_play_browser import open_and_register

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not DRIVER.exists(),
    reason="Chromium is not installed (apt-get install chromium chromium-driver; "
           ".ci/run does it before the tests)")

CLOCKS = """
const shown = (id) => { const e = document.getElementById(id);
                        return [e.textContent, e.classList.contains('running')]; };
return {top: shown('top-clock'), bottom: shown('bottom-clock'),
        names: [document.getElementById('top-name').textContent,
                document.getElementById('bottom-name').textContent]};
"""


@pytest_twisted.async_yield_fixture
async def site(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    running = await start_web(database)
    running.service.shared.lobby.dice = rolls(11)
    running.service.shared.lobby.coin = lambda: 0
    yield running
    await stop_web(running)


@pytest_twisted.ensureDeferred
async def test_the_web_client_shows_both_clocks_counting_down(site: Web, tmp_path: Path) -> None:
    browser = await deferToThread(Browser, tmp_path / "profile-ann")
    alice: Bot | None = None
    try:
        ann = await open_and_register(browser, site.base, "ann")
        await ann.click("#ready")
        alice = await connect(site.game_port, "alice")  # never acts: her clock runs
        alice.send("set clock 5s+1m")
        alice.send("toggle ready")
        await alice.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        alice.send("invite ann 1")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.querySelectorAll('#invitations li[data-name=alice] button.join')"
            ".length"), "alice's invitation")
        await ann.click("#invitations li[data-name=alice] button.join")
        match = site.service.shared.lobby.matches
        await browser.wait_for(lambda: "ann" in match and browser.driver.execute_script(
            CLOCKS)["top"][0] == "1:00", "both clocks at 1:00")
        first = await browser.script(CLOCKS)
        assert first["names"][0].startswith("alice") and first["names"][1].startswith("ann")
        assert first["top"][0] == first["bottom"][0] == "1:00"
        live = match["ann"]
        running = "top" if live.names[live.rules.to_act] == "alice" else "bottom"
        still = "bottom" if running == "top" else "top"

        def counting() -> bool:
            clocks = browser.driver.execute_script(CLOCKS)
            return (clocks[running][1] and clocks[running][0] not in ("1:00", "")
                    and clocks[still] == ["1:00", False])

        await browser.wait_for(counting, f"the {running} clock counting down", seconds=30)
        shown = (await browser.script(CLOCKS))[running][0]
        server = live.clocks.left()[live.rules.to_act]
        assert abs(int(shown.split(":")[1]) - server) <= 2, (shown, server)
    finally:
        if alice is not None and alice.transport is not None:
            alice.transport.loseConnection()
        await deferToThread(browser.driver.quit)
