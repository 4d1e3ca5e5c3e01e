"""The web client at /play against a CLIP bot, on the four ways it froze (issue 20):
Undo, an opponent who cannot move, an account set to ``boardstyle 2``, and the one
status line that other lines overwrote; and the who list, which must not be rebuilt
under the pointer.

The browser plays the first legal play of every roll (the bot's own choice, read from
the page's board line) by clicking its points, so a dice script gives the same match
every time: with ``rolls(18)`` bob cannot move at alice's 18th roll.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_twisted
from passlib.hash import argon2
from twisted.internet.threads import deferToThread

from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.board import parse_board
from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.play_actions import drag, first_play, play_by_clicking
from tests.web.test_browser import Browser
from tests.web.test_play_browser import SUMMARY, Player, pytestmark, shots_dir

__all__ = ["pytestmark"]

DESKTOP = (1280, 900)

# Counts the checkers the page moves by itself (animated moves of the other side).
MOVING = """
window.moving = 0;
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.classList && n.classList.contains('moving')) window.moving++;
  }
}).observe(document.getElementById('board'), {childList: true});
"""

GAME_LOG = "return [...document.querySelectorAll('#game-log li')].map(e => e.textContent)"
# The page's summary with the last lines of the game under the board.
WITH_LOG = SUMMARY.replace("return {", "return { log: [...document.querySelectorAll("
                           "'#game-log li')].slice(-4).map(e => e.textContent),", 1)


class Client(Player):
    async def summary(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.browser.script(WITH_LOG)
        return result


def log_lines(kind: str) -> str:
    return (f"return [...document.querySelectorAll('#log li.{kind}')]"
            ".map(e => e.textContent)")


@pytest_twisted.async_yield_fixture
async def site(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    store = SQLiteStore(database)
    password = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for name in ("dave", "erin"):
        store.create_user(name, password, 1_700_000_000)
    # erin reads boards as pictures on telnet and asked for nothing else.
    store.save_settings("erin", {"set.boardstyle": "2", "toggle.autoboard": "0",
                                  "toggle.moreboards": "0", "toggle.notify": "0"})
    store.close()
    running = await start_web(database)
    running.service.shared.lobby.coin = lambda: 0
    yield running
    await stop_web(running)


@pytest_twisted.async_yield_fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    opened = await deferToThread(Browser, tmp_path / "profile")
    yield opened
    await deferToThread(opened.driver.quit)


async def log_in(browser: Browser, base: str, name: str) -> Client:
    await browser.open(base + "/play")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "login", "the login form")
    await browser.run(lambda: browser.driver.execute_script(
        "document.getElementById('name').value = arguments[0];"
        "document.getElementById('password').value = 'secret';", name))
    await browser.click("#login")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "lobby", f"{name}'s lobby")
    return Client(browser, name)


async def invited_by(player: Player, bot: Bot, length: int) -> None:
    """``bot`` invites the browser's player, who clicks Join."""
    bot.send("toggle ready")
    await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
    await player.click("#ready")
    await player.browser.wait_for(lambda: player.browser.driver.execute_script(
        f"const r = document.querySelector('#who-rows tr[data-name={player.name}]');"
        "return r && r.cells[3].textContent === 'ready'"), "ready, as the server says")
    bot.active = True
    bot.send(f"invite {player.name} {length}")
    await player.browser.wait_for(lambda: player.browser.driver.execute_script(
        f"return document.querySelectorAll('#invitations li[data-name={bot.name}] "
        "button.join').length"), f"{bot.name}'s invitation")
    await player.click(f"#invitations li[data-name={bot.name}] button.join")
    await player.wait_until(lambda s: s["state"] == "playing" and s["slots"], "the new match")





async def play_until(player: Player, done: Any, what: str, moves: int = 60) -> None:
    """Rolls and plays the first legal play until ``done(summary)``."""
    for _ in range(moves):
        s = await player.wait_until(lambda t: t["roll"] or t["movable"] or done(t), what)
        if done(s):
            return
        if s["roll"]:
            await player.click("#roll")
        else:
            await play_by_clicking(player, await first_play(player))
        await player.wait_until(lambda t, b=s: t != b, "the answer to a click")
    raise AssertionError(f"{player.name} never saw {what}")


@pytest_twisted.ensureDeferred
async def test_undo_gives_back_the_whole_roll(site: Web, browser: Browser,
                                             tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    await browser.run(browser.driver.set_window_size, *DESKTOP)
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await invited_by(alice, bob, 5)
        s = await alice.wait_until(lambda t: t["movable"] or t["roll"], "alice's turn")
        if s["roll"]:
            await alice.click("#roll")
            await alice.wait_until(lambda t: t["movable"], "alice's dice")
        steps = await first_play(alice)
        assert len(steps) == 2
        before = await alice.summary()
        await play_by_clicking(alice, steps[:1])
        moved = await alice.wait_until(lambda t: t["shown"] != before["shown"], "the step")
        assert await browser.script("return document.getElementById('undo').disabled") is False
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "undo-1-one-step.png"))
        await alice.click("#undo")
        undone = await alice.wait_until(lambda t: t["shown"] == before["shown"], "the undo")
        assert undone["movable"] == before["movable"]
        # Both dice are back: the whole play goes through.
        start = len(bob.lines)
        await play_by_clicking(alice, steps)
        await bob.wait(lambda: any(line.startswith("alice moves ") for line in bob.lines[start:]),
                       "alice's move")
        await alice.wait_until(lambda t: t["turn"] != before["turn"] or t["roll"],
                               "the turn passing to bob")
        assert moved["shown"] != before["shown"]
        assert not [line for line in bob.lines[start:] if line.startswith("** ")]
        assert not await browser.script(
            "return [...document.querySelectorAll('#game-log li.error')].length")
    finally:
        bob.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_roll_after_the_opponent_cannot_move(site: Web, browser: Browser,
                                                   tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await browser.script(MOVING)
        await invited_by(alice, bob, 5)
        await play_until(alice, lambda t: "bob can't move." in t["log"]
                         or t["state"] != "playing", "bob unable to move", moves=80)
        s = await alice.wait_until(lambda t: t["roll"], "the Roll button")
        assert s["message"] == "It's your turn to roll or double."
        # bob's moves were shown checker by checker: a ghost moved for each of his moves.
        bob_moves = sum(1 for line in await browser.script(GAME_LOG)
                        if line.startswith("bob moves "))
        assert bob_moves > 5
        assert await browser.script("return window.moving") >= bob_moves
        assert await browser.script(GAME_LOG + ".slice(-2)") == [
            "bob can't move.", "It's your turn to roll or double."]
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "cannot-move-phone.png"))
        assert await browser.fits_the_phone()
        await alice.click("#roll")
        rolled = await alice.wait_until(lambda t: t["movable"], "alice's roll")
        assert any(line.startswith("You roll ") for line in rolled["log"])
    finally:
        bob.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_an_account_with_boardstyle_2_gets_a_board_and_keeps_its_settings(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    bob = await connect(site.game_port, "bob")
    try:
        erin = await log_in(browser, site.base, "erin")
        await invited_by(erin, bob, 1)
        await play_until(erin, lambda t: any(line.startswith("bob moves ") for line in t["log"]),
                         "bob's move")
        # The board after bob's move: autoboard was off on the account.
        s = await erin.wait_until(lambda t: t["roll"] or t["movable"], "erin's next turn")
        assert s["slots"] and s["turn"] != "0"
        assert not await browser.script(
            "return [...document.querySelectorAll('#log li:not(.motd)')].filter("
            "e => e.textContent.includes('|')).length")  # no ASCII board in the chat
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "boardstyle-2-phone.png"))
        await browser.click("#logout")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.body.dataset.state") == "login", "the login form again")
    finally:
        bob.transport.loseConnection()
    # The account is as erin left it on telnet.
    check = await connect(site.game_port, "erin")
    try:
        [own] = [line for line in check.lines if line.startswith("2 erin ")]
        fields = own.split()
        assert (fields[3], fields[12], fields[14]) == ("0", "0", "0")  # autoboard moreboards notify
        check.send("set boardstyle")
        await check.wait_line(lambda line: line == "Value of 'boardstyle' is 2", "boardstyle 2")
    finally:
        check.transport.loseConnection()
    # Leaving the page without logging out gives them back too (pagehide).
    carol = await connect(site.game_port, "carol")
    try:
        await log_in(browser, site.base, "erin")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.body.dataset.settings") == "forced", "the forced settings")
        start = len(carol.lines)
        await browser.open(site.base + "/ratings")
        await carol.wait(lambda: any(line.startswith("8 erin ") for line in carol.lines[start:]),
                         "erin gone")
    finally:
        carol.transport.loseConnection()
    again = await connect(site.game_port, "erin")
    try:
        [own] = [line for line in again.lines if line.startswith("2 erin ")]
        fields = own.split()
        assert (fields[3], fields[12], fields[14]) == ("0", "0", "0")
        again.send("set boardstyle")
        await again.wait_line(lambda line: line == "Value of 'boardstyle' is 2", "boardstyle 2")
    finally:
        again.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_the_status_line_keeps_your_game_and_notices_are_not_errors(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = None  # fair dice: the seed is told at the end
    bob = await connect(site.game_port, "bob")
    carol = await connect(site.game_port, "carol")
    dave = await connect(site.game_port, "dave")
    try:
        alice = await log_in(browser, site.base, "alice")
        await invited_by(alice, bob, 1)
        # Another match starts: a notice in the chat panel, the status line stays.
        for bot in (carol, dave):
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        carol.send("invite dave 1")
        await dave.wait_line(lambda line: line == "Type 'join carol' to accept.", "invitation")
        dave.send("join carol")
        await browser.wait_for(lambda: "carol and dave start a 1 point match." in
                               browser.driver.execute_script(log_lines("notice")),
                               "the announcement as a notice")
        message = await browser.script("return document.getElementById('message').textContent")
        assert not message.startswith("carol")
        # carol's Watch button stays the same element while the who list changes.
        await browser.wait_for(lambda: browser.driver.execute_script(
            "const b = document.querySelector('#who-rows tr[data-name=carol] button.watch');"
            "window.watchCarol = b; return b && !b.hidden;"), "Watch carol")
        bob.send("toggle ready")  # a status change: bob's who line
        await bob.wait_line(lambda line: line.startswith("5 bob "), "bob's who line")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.querySelector('#who-rows tr[data-name=bob] td:nth-child(4)')"
            ".textContent") == "playing alice", "bob's new status")
        assert await browser.script(
            "return window.watchCarol.isConnected && window.watchCarol === "
            "document.querySelector('#who-rows tr[data-name=carol] button.watch')")
        # bob gives up: alice accepts and wins the match.
        bob.active = False
        bob.send("resign n")
        await alice.wait_until(lambda t: t["accept"], "bob's resignation")
        await alice.click("#accept")
        await alice.wait_until(lambda t: t["state"] == "match-over", "the end of the match")
        assert await browser.script(
            "return document.getElementById('message').textContent"
        ) == "You win the 1 point match 1-0 ."
        notices = await browser.script(log_lines("notice"))
        assert any(line.startswith("fairdice: server seed ") for line in notices)
        assert "** You're now ready to invite or join someone." in notices
        assert not await browser.script(log_lines("error"))
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "match-end-phone.png"))
        assert await browser.fits_the_phone()
        # An error is one: in the chat panel, where the command was typed.
        await browser.run(lambda: browser.driver.execute_script(
            "document.getElementById('chat-mode').value = 'command';"
            "document.getElementById('chat-text').value = 'move 1-2';"))
        await browser.click("#chat-form button[type=submit]")
        await browser.wait_for(lambda: browser.driver.execute_script(log_lines("error")) == [
            "** You're not playing."], "the error")
        # The match is over: a click on Watch watches carol.
        await alice.click("#who-rows tr[data-name=carol] button.watch")
        watching = await alice.wait_until(lambda t: t["state"] == "watching", "watching carol")
        assert watching["message"] == "You're now watching carol."
        assert (await browser.script(GAME_LOG))[-1] == "You're now watching carol."
        await browser.run(browser.driver.set_window_size, *DESKTOP)
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "watching-desktop.png"))
    finally:
        for bot in (bob, carol, dave):
            bot.transport.loseConnection()


LOOK = """
const h = document.querySelector('header');
return [getComputedStyle(h).backgroundColor, getComputedStyle(document.body).backgroundColor,
        [...document.querySelectorAll('header nav a')].map(a => a.textContent)];
"""


@pytest_twisted.ensureDeferred
async def test_the_pages_and_play_are_one_site(site: Web, browser: Browser,
                                               tmp_path: Path) -> None:
    shots = shots_dir(tmp_path)
    await browser.open(site.base + "/")
    looks = [await browser.script(LOOK)]
    await browser.run(browser.driver.save_screenshot, str(shots / "site-who-phone.png"))
    await browser.click("a.play")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "login", "the login form")
    looks.append(await browser.script(LOOK))
    await browser.run(browser.driver.save_screenshot, str(shots / "site-play-phone.png"))
    assert await browser.script("return document.getElementById('in-clear').hidden")  # loopback
    assert await browser.fits_the_phone()
    await browser.run(browser.driver.set_window_size, *DESKTOP)
    await browser.click("header nav a[href='/ratings']")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.querySelector('h1') && document.querySelector('h1').textContent"
    ) == "Ratings", "the ladder")
    looks.append(await browser.script(LOOK))
    await browser.run(browser.driver.save_screenshot, str(shots / "site-ratings-desktop.png"))
    assert looks[0] == looks[1] == looks[2]
    assert looks[0][2] == ["fibsd", "Play", "Who", "Ratings", "PR ladder", "Tournaments",
                            "Français"]


DICE = "return document.querySelectorAll('#board .dice.used').length"
SAYS_READY = ("const r = document.querySelector('#who-rows tr[data-name=alice]');"
              "return r && r.cells[3].textContent")


@pytest_twisted.ensureDeferred
async def test_confirm_dimmed_dice_turn_title_decline_and_rematch(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    shots = shots_dir(tmp_path)
    await browser.run(browser.driver.set_window_size, *DESKTOP)
    bob = await connect(site.game_port, "bob")
    carol = await connect(site.game_port, "carol")
    try:
        alice = await log_in(browser, site.base, "alice")
        # An invitation shows its terms; Decline removes it and tells the sender.
        carol.send("toggle ready")
        await carol.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        await alice.click("#ready")
        await browser.wait_for(lambda: browser.driver.execute_script(SAYS_READY) == "ready",
                               "ready, as the server says")
        carol.send("invite alice 3")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "const i = document.querySelector('#invitations li[data-name=carol]');"
            "return i && i.textContent"), "carol's invitation")
        assert await browser.text("#invitations li[data-name=carol] span") == (
            "carol wants to play a 3 point match.")
        assert await browser.texts("#invitations li[data-name=carol] button") == [
            "Join", "Decline"]
        start = len(carol.lines)
        await alice.click("#invitations li[data-name=carol] button.decline")
        await carol.wait(lambda: "12 alice No, thank you: I decline your invitation." in
                         carol.lines[start:], "alice's answer")
        assert await browser.script("return document.getElementById('invitations-box').hidden")
        await alice.click("#ready")  # off: invited_by turns it on again
        await browser.wait_for(lambda: browser.driver.execute_script(SAYS_READY) == "not ready",
                               "not ready, as the server says")
        # Moves wait for Confirm; used dice are dimmed; the tab says whose turn it is.
        await alice.click("#settings summary")
        await alice.click("#confirm-moves")
        await alice.click("#sound-move")  # off; dice and your turn stay on
        await invited_by(alice, bob, 1)
        s = await alice.wait_until(lambda t: t["movable"] or t["roll"], "alice's turn")
        if s["roll"]:
            await alice.click("#roll")
            await alice.wait_until(lambda t: t["movable"], "alice's dice")
        assert (await browser.script("return document.title")).startswith("Your turn · ")
        assert await browser.script("return document.getElementById('matches-box').hidden")
        assert await browser.script(DICE) == 0
        steps = await first_play(alice)
        await play_by_clicking(alice, steps[:1])
        assert await browser.script(DICE) == 1
        start = len(bob.lines)
        await play_by_clicking(alice, steps[1:])
        assert await browser.script(DICE) == 2
        assert await browser.script("return document.getElementById('confirm').disabled") is False
        await browser.run(browser.driver.save_screenshot, str(shots / "confirm-desktop.png"))
        await alice.click("#undo")
        assert await browser.script(DICE) == 0
        await play_by_clicking(alice, steps)
        assert not [line for line in bob.lines[start:] if line.startswith("alice moves ")]
        bob.active = False  # bob stays on roll: the turn is his
        await alice.click("#confirm")
        await bob.wait(lambda: any(line.startswith("alice moves ") for line in bob.lines[start:]),
                       "alice's move")
        await browser.wait_for(lambda: not browser.driver.execute_script(
            "return document.title").startswith("Your turn"), "the title without the turn")
        sounds = (await browser.script("return document.body.dataset.sounds")).split()
        assert "dice" in sounds and "turn" in sounds and "move" not in sounds
        # bob gives up; Rematch invites him to the same match again.
        bob.send("resign n")
        await alice.wait_until(lambda t: t["accept"], "bob's resignation")
        await alice.click("#accept")
        await alice.wait_until(lambda t: t["state"] == "match-over", "the end of the match")
        start = len(bob.lines)
        await alice.click("#rematch")
        await bob.wait(lambda: "alice wants to play a 1 point match with you." in bob.lines[start:],
                       "the rematch")
        await browser.run(browser.driver.set_window_size, 390, 844)
        await browser.run(browser.driver.save_screenshot, str(shots / "rematch-phone.png"))
        assert await browser.fits_the_phone()
    finally:
        for bot in (bob, carol):
            bot.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_a_play_by_dragging_with_the_mouse_and_a_finger(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await invited_by(alice, bob, 1)
        s = await alice.wait_until(lambda t: t["movable"], "alice's dice")
        (a, b), (c, d) = await first_play(alice)
        start = len(bob.lines)
        await browser.run(drag, browser.driver, a, b, False)
        dragged = await alice.wait_until(lambda t: t["shown"] != s["shown"], "the mouse's step")
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "drag-phone.png"))
        await browser.run(drag, browser.driver, c, d, True)
        await bob.wait(lambda: any(line.startswith("alice moves ") for line in bob.lines[start:]),
                       "alice's move")
        assert dragged["shown"] != s["shown"]
        assert not [line for line in bob.lines[start:] if line.startswith("** ")]
    finally:
        bob.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_saved_matches_resume_matches_to_watch_and_the_replay_link(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    bob = await connect(site.game_port, "bob")
    carol = await connect(site.game_port, "carol")
    dave = await connect(site.game_port, "dave")
    try:
        alice = await log_in(browser, site.base, "alice")
        assert await browser.script("return document.getElementById('saved-box').hidden")
        await invited_by(alice, bob, 1)
        # bob leaves: the match is saved, and listed with Resume.
        bob.active = False
        bob.send("leave")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return [...document.querySelectorAll('#saved-list li')].map(e => e.textContent)"
        ) == ["bob, 1 point match, 0-0 Resume"], "the saved match")
        assert await browser.script(
            "return !document.querySelector('#who-rows tr[data-name=bob] button.resume').hidden"
            " && document.querySelector('#who-rows tr[data-name=carol] button.resume').hidden")
        # Another match: listed to watch.
        for bot in (carol, dave):
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        carol.send("invite dave 1")
        await dave.wait_line(lambda line: line == "Type 'join carol' to accept.", "invitation")
        dave.send("join carol")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return [...document.querySelectorAll('#matches li')].map(e => e.textContent)"
        ) == ["carol – dave Watch"], "carol and dave's match")
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "saved-and-matches-phone.png"))
        assert await browser.fits_the_phone()
        start = len(bob.lines)
        await alice.click("#saved-list li button.resume")
        await bob.wait(lambda: "alice wants to resume a saved match with you." in
                       bob.lines[start:], "the invitation to resume")
        bob.send("join alice")
        await alice.wait_until(lambda t: t["state"] == "playing", "the resumed match")
        await browser.wait_for(lambda: "match length: 1" in browser.driver.execute_script(
            GAME_LOG), "the resumed match's state under the board")
        bob.send("resign n")
        await alice.wait_until(lambda t: t["accept"], "bob's resignation")
        await alice.click("#accept")
        await alice.wait_until(lambda t: t["state"] == "match-over", "the end of the match")
        href = await browser.wait_for(lambda: browser.driver.execute_script(
            "const a = document.getElementById('replay'); return !a.hidden && a.href"),
            "the link to the replay")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.getElementById('saved-box').hidden"), "no saved match left")
        assert not [line for line in await browser.script(
            "return [...document.querySelectorAll('#log li')].map(e => e.textContent)")
            if line.startswith(("#", "Finished matches", "  opponent", "**bob"))]
        await browser.run(browser.driver.set_window_size, *DESKTOP)
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "replay-link-desktop.png"))
        await alice.click("#replay")
        await browser.wait_for(lambda: browser.driver.current_url == href, "the replay page")
        assert await browser.text("h1") == "alice - bob"
    finally:
        for bot in (bob, carol, dave):
            bot.transport.loseConnection()


ACTIVE = ("const a = document.activeElement;"
          "return [a.id || '', a.dataset ? (a.dataset.point || '') : '', a.className.baseVal"
          " !== undefined ? a.className.baseVal : a.className];")


def press_tab_until(driver: Any, wanted: Any, most: int = 400) -> None:
    """Presses Tab until ``wanted(id, point, class)`` holds for the focused element."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    for _ in range(most):
        if wanted(*driver.execute_script(ACTIVE)):
            return
        ActionChains(driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached it: {driver.execute_script(ACTIVE)}")


def press(driver: Any, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(*keys).perform()


@pytest_twisted.ensureDeferred
async def test_a_match_begun_and_played_from_the_keyboard_alone(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    site.service.shared.lobby.dice = rolls(18)
    driver = browser.driver
    bob = await connect(site.game_port, "bob")
    try:
        await browser.open(site.base + "/play")
        await browser.wait_for(lambda: driver.execute_script(
            "return document.body.dataset.state") == "login", "the login form")
        await browser.run(press_tab_until, driver, lambda i, p, c: i == "name")
        await browser.run(press, driver, "alice", Keys.TAB, "secret", Keys.ENTER)
        await browser.wait_for(lambda: driver.execute_script(
            "return document.body.dataset.state") == "lobby", "the lobby")
        alice = Client(browser, "alice")
        await browser.run(press_tab_until, driver, lambda i, p, c: i == "ready")
        await browser.run(press, driver, Keys.SPACE)
        await browser.wait_for(lambda: driver.execute_script(
            "const r = document.querySelector('#who-rows tr[data-name=alice]');"
            "return r && r.cells[3].textContent === 'ready'"), "ready, as the server says")
        bob.send("toggle ready")
        await bob.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        bob.active = True
        bob.send("invite alice 5")
        await browser.wait_for(lambda: driver.execute_script(
            "return document.querySelectorAll('#invitations button.join').length"), "the invitation")
        await browser.run(press_tab_until, driver, lambda i, p, c: "join" in c)
        await browser.run(press, driver, Keys.ENTER)
        s = await alice.wait_until(lambda t: t["movable"] or t["roll"], "alice's turn")
        # The board reads as text: each point says what it holds.
        assert await browser.script(
            "return document.querySelector('#board .point[data-point=\"6\"]')"
            ".getAttribute('aria-label')") == "point 6, 5 yours"
        start = len(bob.lines)
        for _ in range(3):  # three turns: r rolls, Tab and Enter move
            if s["roll"]:
                await browser.run(press, driver, "r")
                s = await alice.wait_until(lambda t: t["movable"], "alice's dice")
            for source, destination in await first_play(alice):
                await browser.run(press_tab_until, driver, lambda i, p, c, k=source: p == str(k))
                await browser.run(press, driver, Keys.ENTER)
                await browser.run(press_tab_until, driver,
                                  lambda i, p, c, k=destination: p == str(k) and "dest" in c)
                await browser.run(press, driver, Keys.ENTER)
            await bob.wait(lambda n=start: any(line.startswith("alice moves ")
                                               for line in bob.lines[n:]), "alice's move")
            start = len(bob.lines)
            s = await alice.wait_until(lambda t: t["roll"] or t["movable"], "alice's next turn")
        assert not await browser.script(log_lines("error"))
        assert not await browser.script("return document.querySelectorAll('#game-log .error').length")
    finally:
        bob.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_watching_a_whole_match_with_its_moves_animated(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    carol = await connect(site.game_port, "carol")
    dave = await connect(site.game_port, "dave")
    try:
        alice = await log_in(browser, site.base, "alice")
        await browser.script("localStorage.setItem('fibsd.speed', 'fast')")
        await browser.script(MOVING)
        for bot in (carol, dave):
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        for bot in (carol, dave):  # they play, but not before alice watches
            bot.active = True
            bot.moves_left = 0
        carol.send("invite dave 1")
        await dave.wait_line(lambda line: line == "Type 'join carol' to accept.", "invitation")
        await alice.click("#ready")  # a who change while the match list is shown
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.querySelectorAll('#matches li button.watch').length") == 0,
            "no match yet")
        dave.send("join carol")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.querySelectorAll('#matches li button.watch').length") == 1,
            "carol and dave's match")
        await alice.click("#matches li button.watch")
        await alice.wait_until(lambda t: t["state"] == "watching" and t["slots"], "carol's board")
        for bot in (carol, dave):
            bot.moves_left = 10_000
            view = parse_board(bot.board)
            if view.turn == view.colour and view.player_dice[0]:
                bot.move()  # the opening roll's winner
        end = await alice.wait_until(lambda t: t["state"] == "match-over", "the end of the match")
        assert end["message"] in ("carol wins the 1 point match 1-0 .",
                                  "dave wins the 1 point match 1-0 .")
        # Bots move faster than checkers glide: a move that comes during an animation is
        # drawn at once, so the board never lags behind.
        moves = [line for line in await browser.script(GAME_LOG) if " moves " in line]
        assert len(moves) > 10 and 1 <= await browser.script("return window.moving") < len(moves)
        # The watcher's board ends where carol's does, once the last glide is over.
        last = [line for line in carol.lines if line.startswith("board:")][-1]
        final = ",".join(map(str, parse_board(last).board))
        await alice.wait_until(lambda t: t["slots"] == final, "the final position")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "const a = document.getElementById('replay'); return !a.hidden && a.href"),
            "the link to the replay")
        await browser.run(browser.driver.save_screenshot,
                          str(shots_dir(tmp_path) / "watched-match-end-phone.png"))
    finally:
        for bot in (carol, dave):
            bot.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_a_notification_when_the_turn_comes_in_a_hidden_tab(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    site.service.shared.lobby.dice = rolls(18)
    driver = browser.driver
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await browser.run(driver.execute_cdp_cmd, "Browser.grantPermissions",
                          {"origin": site.base, "permissions": ["notifications"]})
        await alice.click("#settings summary")
        await alice.click("#notify")
        await browser.wait_for(lambda: driver.execute_script(
            "return document.getElementById('notify').checked"
            " && Notification.permission === 'granted'"), "the permission")
        await invited_by(alice, bob, 1)
        bob.active = False  # bob waits until alice's tab is hidden
        await alice.wait_until(lambda t: t["movable"], "alice's dice")
        start = len(bob.lines)
        await play_by_clicking(alice, await first_play(alice))
        await bob.wait(lambda: any(line.startswith("Please move") for line in bob.lines[start:]),
                       "bob's turn")
        assert await browser.script("return document.body.dataset.notified") is None  # visible
        await browser.run(driver.minimize_window)
        assert await browser.script("return document.visibilityState") == "hidden"
        bob.active = True
        bob.move()
        await browser.wait_for(lambda: driver.execute_script(
            "return document.body.dataset.notified") == "1", "the notification")
        await browser.run(driver.set_window_size, 390, 844)
    finally:
        bob.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_the_screen_reader_mode_reads_the_position_and_takes_typed_commands(
        site: Web, browser: Browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    from fibsd.rules.movegen import legal_plays
    from fibsd.rules.notation import format_fibs_moves
    from fibsd.wire.board import Colour, view_position

    site.service.shared.lobby.dice = rolls(18)
    driver = browser.driver
    bob = await connect(site.game_port, "bob")
    try:
        alice = await log_in(browser, site.base, "alice")
        await alice.click("#settings summary")
        await alice.click("#reader")
        assert await browser.script("return document.getElementById('chat-mode').value") == \
            "command"
        await invited_by(alice, bob, 5)
        await alice.wait_until(lambda t: t["movable"], "alice's dice")
        text = await browser.script("return document.getElementById('position-text').textContent")
        assert text == ("alice: 2 on 24, 5 on 13, 3 on 8, 5 on 6. "
                        "bob: 5 on 19, 3 on 17, 5 on 12, 2 on 1. "
                        "Dice 3 and 5, to play 3, 5. Your turn.")
        line = await browser.script("return document.getElementById('board').dataset.line")
        view = parse_board(line)
        colour = Colour(view.colour)
        play = legal_plays(view_position(view, colour), view.player_dice)[0]
        command = "move " + format_fibs_moves(play.moves, colour.direction)
        start = len(bob.lines)
        field = await browser.run(driver.find_element, "id", "chat-text")
        await browser.run(field.send_keys, command, Keys.ENTER)
        await bob.wait(lambda: any(line.startswith("alice moves ") for line in bob.lines[start:]),
                       "alice's typed move")
        await browser.wait_for(lambda: not driver.execute_script(
            "return document.getElementById('position-text').textContent").startswith(
            "alice: 2 on 24, 5 on 13, 3 on 8, 5 on 6."), "the position after the move")
    finally:
        bob.transport.loseConnection()
