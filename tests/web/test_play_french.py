"""/play and the pages in French in Chromium (issue 20, languages): the browser asks for
French in Accept-Language; the pages, the client's labels and the game lines it shows
are French while the wire stays English; the switch in the navigation bar goes back to
English and the choice is kept. axe-core checks the French pages when it is installed
(``<html lang>`` must say French)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.play_actions import first_play, play_by_clicking
from tests.web.test_accessibility import AXE, violations
from tests.web.test_browser import PHONE, Browser
from tests.web.test_play_browser import pytestmark, shots_dir
from tests.web.test_play_client import DESKTOP, Client, log_in

__all__ = ["pytestmark"]

FRENCH = {"accept-language": "fr-FR,fr;q=0.9,en;q=0.5"}
# The status line while the match starts and is played, as say.js writes it in French.
FRENCH_STATUS = re.compile(r"^(À vous|Vous |Déplacez |Nouvelle partie|bob (fait|joue|ne peut))")


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
    await deferToThread(opened.driver.execute_cdp_cmd, "Network.enable", {})
    await deferToThread(opened.driver.execute_cdp_cmd, "Network.setExtraHTTPHeaders",
                        {"headers": FRENCH})
    yield opened
    await deferToThread(opened.driver.quit)


async def text_of(browser: Browser, css: str) -> str:
    found: str = await browser.script(
        f"return document.querySelector({css!r}).textContent.trim()")
    return found


async def french_invitation(player: Client, bot: Bot) -> None:
    """``bot`` invites the player, who is ready ("prêt") and clicks Accepter."""
    bot.send("toggle ready")
    await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
    await player.click("#ready")
    await player.browser.wait_for(lambda: player.browser.driver.execute_script(
        f"const r = document.querySelector('#who-rows tr[data-name={player.name}]');"
        "return r && r.cells[3].textContent === 'prêt'"), "prêt, as the server says")
    bot.active = True
    bot.send(f"invite {player.name} 3")
    await player.browser.wait_for(lambda: player.browser.driver.execute_script(
        f"return document.querySelectorAll('#invitations li[data-name={bot.name}] "
        "button.join').length"), f"{bot.name}'s invitation")
    terms = await text_of(player.browser, f"#invitations li[data-name={bot.name}]")
    assert terms == "bob vous invite à un match en 3 points. AccepterDécliner"
    await player.click(f"#invitations li[data-name={bot.name}] button.join")
    await player.wait_until(lambda s: s["state"] == "playing" and s["slots"], "the new match")


@pytest_twisted.ensureDeferred
async def test_play_in_french_then_switch_back_to_english(
        site: Web, browser: Browser, tmp_path: Path, match_ids: list[int]) -> None:
    shots = shots_dir(tmp_path)
    axe = AXE.exists()
    found = {}
    await browser.open(site.base + "/ratings")
    assert await browser.script("return document.documentElement.lang") == "fr"
    assert await browser.texts("header nav a") == [
        "fibsd", "Jouer", "Qui est là", "Classement", "Classement PR", "Tournois", "English"]
    for path in ("/", "/ratings", "/players/alice", f"/matches/{match_ids[0]}", "/live/alice",
                 "/nothing"):
        await browser.open(site.base + path)
        assert await browser.script("return document.documentElement.lang") == "fr", path
        if axe:
            found[path] = await violations(browser)
    # The live board's stream says it in every language; the page shows its own.
    await browser.open(site.base + "/live/alice")
    assert await browser.text("#live") == "alice ne joue pas en ce moment."
    await browser.run(browser.driver.set_window_size, *DESKTOP)
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        assert await browser.script("return document.documentElement.lang") == "fr"
        assert await browser.script("return document.title") == "fibsd : jouer au backgammon"
        assert [await text_of(browser, f"#{id}") for id in ("roll", "double", "resign", "logout")] \
            == ["Lancer les dés", "Doubler", "Abandonner", "Se déconnecter"]
        assert await text_of(browser, "#settings summary") == "Réglages"
        assert await browser.texts("#who thead th") == ["Nom", "Cote", "Exp.", "État", ""]
        await french_invitation(alice, bob)
        summary = await alice.wait_until(lambda s: s["movable"] or s["roll"], "alice's turn")
        if summary["roll"]:
            await alice.click("#roll")
            await alice.wait_until(lambda s: s["movable"], "alice's roll")
        message = await text_of(browser, "#message")
        assert FRENCH_STATUS.match(message), message
        assert await text_of(browser, "#turn") == "À vous"
        assert re.fullmatch(r"match en 3 points, videau à 1", await text_of(browser, "#match"))
        assert re.fullmatch(r"[0-9]+ pips", await text_of(browser, "#bottom-pips"))
        label = await browser.script(
            "return document.querySelector('#board .point[data-point=\"6\"]')"
            ".getAttribute('aria-label')")
        assert label.startswith("flèche 6, ") and " à vous" in label, label
        await browser.script("document.getElementById('reader').click()")
        position = await text_of(browser, "#position-text")
        assert re.fullmatch(r"alice : [0-9]+ sur la [0-9]+(, [0-9]+ sur la [0-9]+)*\. "
                            r"bob : [0-9]+ sur la [0-9]+(, [0-9]+ sur la [0-9]+)*\. "
                            r"Dés [1-6] et [1-6], à jouer [1-6](, [1-6])*\. À vous\.",
                            position), position
        if axe:
            found["/play match"] = await violations(browser)
        await browser.script("document.getElementById('reader').click()")
        await alice.shot(shots / "french-desktop.png")
        await browser.run(browser.driver.set_window_size, *PHONE)
        await alice.shot(shots / "french-phone.png")
        await play_by_clicking(alice, await first_play(alice))
        await alice.wait_until(lambda s: not s["movable"], "alice's play sent")
        moved = await text_of(browser, "#last-move")
        assert moved.startswith("Vous avez joué "), moved
    finally:
        bob.transport.loseConnection()
    await browser.click("header nav a.lang[hreflang=en]")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "login", "the login form in English")
    assert await browser.script("return document.documentElement.lang") == "en"
    assert await text_of(browser, "#login") == "Log in"
    assert await browser.texts("header nav a") == ["fibsd", "Play", "Who", "Ratings", "PR ladder",
                                                      "Tournaments", "Français"]
    await browser.open(site.base + "/ratings")  # the browser still asks for French
    assert await browser.script("return document.documentElement.lang") == "en"
    assert (await browser.texts("h1")) == ["Ratings"]
    assert {path: v for path, v in found.items() if v} == {}
