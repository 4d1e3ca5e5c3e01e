"""The web client's "Play a bot" (issue 24): a newcomer in Chromium picks a resident bot
(a real fibsd-bot process the server started), the bot joins at once, and the 1-point
match is played to its end by clicking; the ladder and the profile show the bot."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.residents.test_resident_bots import HEURISTIC, ready_bot, until
from tests.web.conftest import Web, seed, start_web, stop_web
from tests.web.test_browser import Browser
from tests.web.test_play_browser import pytestmark, shots_dir
from tests.web.test_play_client import DESKTOP, log_in, play_until

__all__ = ["pytestmark"]


@pytest_twisted.async_yield_fixture
async def site(tmp_path: Path) -> AsyncIterator[Web]:
    database = tmp_path / "fibsd.sqlite"
    seed(database)
    running = await start_web(database, data_dir=str(tmp_path), **{
        "bots.enabled": True, "bots.resident": [HEURISTIC]})
    yield running
    await stop_web(running)


@pytest_twisted.async_yield_fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    opened = await deferToThread(Browser, tmp_path / "profile")
    yield opened
    await deferToThread(opened.driver.quit)


@pytest_twisted.ensureDeferred
async def test_play_a_bot_from_the_web_client(site: Web, browser: Browser,
                                              tmp_path: Path) -> None:
    shots = shots_dir(tmp_path)
    await browser.run(browser.driver.set_window_size, *DESKTOP)
    await until(ready_bot(site.service, "HeuristicBot"), "the resident bot")
    alice = await log_in(browser, site.base, "alice")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return !document.getElementById('bots').hidden"), "the Play a bot choice")
    assert await browser.texts("#bot-choice option") == [
        "HeuristicBot (fibsd's heuristic, the weakest)"]
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return !!document.querySelector('#who-rows tr[data-name=HeuristicBot]')"),
        "the bot in the who list")
    # the who list marks the bot, its strength in the row's title
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.querySelector('#who-rows tr[data-name=HeuristicBot]').className")
        == "bot", "the bot's mark in the who list")
    assert await browser.script(
        "const r = document.querySelector('#who-rows tr[data-name=HeuristicBot]');"
        "return [r.title, getComputedStyle(r.cells[0], '::after').content]") == [
        "fibsd's heuristic, the weakest", '" · Bot"']
    assert await browser.script(
        "return document.querySelector('#who-rows tr[data-name=alice]').className") == ""
    await browser.run(browser.driver.save_screenshot, str(shots / "play-a-bot-lobby.png"))
    await browser.run(lambda: browser.driver.execute_script(
        "document.getElementById('length').value = '1';"))
    await alice.click("#play-bot")
    await alice.wait_until(lambda t: t["state"] == "playing" and t["slots"], "the bot's match")
    await browser.run(browser.driver.save_screenshot, str(shots / "play-a-bot-match.png"))
    await play_until(alice, lambda t: t["state"] == "match-over", "the end of the match",
                     moves=200)
    end = await alice.summary()
    assert re.fullmatch(r"(You win|HeuristicBot wins) the 1 point match [12]-0 \.",
                        end["message"])  # a gammon scores 2
    await browser.run(browser.driver.save_screenshot, str(shots / "play-a-bot-end.png"))
    finished = await site.service.db.finished_matches("alice")
    assert {finished[-1].winner, finished[-1].loser} == {"alice", "HeuristicBot"}
    # the profile says a program plays the account, and which
    await browser.open(site.base + "/players/HeuristicBot")
    assert await browser.text("dd.bot") == (
        "A program plays this account (fibsd's heuristic, the weakest)")
    await browser.open(site.base + "/ratings")
    assert await browser.texts("table.bots td a") == ["HeuristicBot"]
    assert "HeuristicBot" not in await browser.texts("table.ladder:not(.bots) td a")
    await browser.run(browser.driver.save_screenshot, str(shots / "play-a-bot-ladder.png"))
