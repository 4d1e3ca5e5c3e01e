"""axe-core (npm, tests/web/js/package.json) in headless Chromium: no serious or critical
accessibility violation on the web face's pages, nor on /play from its login form to a
match being played."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.server.test_match_restart import connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.test_browser import Browser
from tests.web.test_play_browser import pytestmark as needs_chromium
from tests.web.test_play_client import invited_by, log_in

AXE = Path(__file__).resolve().parent / "js" / "node_modules" / "axe-core" / "axe.min.js"

pytestmark = [needs_chromium, pytest.mark.skipif(
    not AXE.exists(), reason="axe-core is not installed (npm ci --prefix tests/web/js; "
                             ".ci/run does it before the tests)")]

RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then((result) => done(
  result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => [v.id, v.impact, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));
"""


async def violations(browser: Browser) -> list[Any]:
    await browser.run(browser.driver.execute_script, AXE.read_text())
    found: list[Any] = await browser.run(browser.driver.execute_async_script, RUN)
    return found


@pytest_twisted.async_yield_fixture
async def site(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    running = await start_web(database)
    running.service.shared.lobby.dice = rolls(18)
    running.service.shared.lobby.coin = lambda: 0
    yield running
    await stop_web(running)


@pytest_twisted.async_yield_fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    opened = await deferToThread(Browser, tmp_path / "profile")
    await deferToThread(opened.driver.set_script_timeout, 60)
    yield opened
    await deferToThread(opened.driver.quit)


@pytest_twisted.ensureDeferred
async def test_no_serious_accessibility_violation_anywhere(
        site: Web, browser: Browser, match_ids: list[int]) -> None:
    found = {}
    for path in ("/", "/ratings", "/players/alice", f"/matches/{match_ids[0]}", "/live/alice",
                 "/nothing"):
        await browser.open(site.base + path)
        found[path] = await violations(browser)
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await browser.run(browser.driver.execute_script, "window.scrollTo(0, 0)")
        found["/play lobby"] = await violations(browser)
        await invited_by(alice, bob, 5)
        await alice.wait_until(lambda t: t["movable"] or t["roll"], "alice's turn")
        found["/play match"] = await violations(browser)
    finally:
        bob.transport.loseConnection()
    await browser.open(site.base + "/play")
    found["/play login"] = await violations(browser)
    assert {path: v for path, v in found.items() if v} == {}
