"""The web client at /play in two headless Chromium sessions: they register, one
invites the other, and they play a whole 1-point match and a whole 3-point match with
the cube, one by clicking, the other (phone-sized) by dragging checkers with a finger,
while a CLIP user on the game port watches and checks that every board line he gets is a
position the browsers showed. And a telnet user, a CLIP bot
and a browser user see one another in ``who``.

Screenshots of each stage (login, lobby, a position with highlighted moves, the match
end) go to ``$FIBSD_SCREENSHOTS`` if set, else to the test's temporary directory; the
test prints where.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThread

from fibsd.wire.board import parse_board
from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.play_actions import first_play, play_by_dragging
from tests.web.test_browser import CHROMIUM, DRIVER, Browser

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not DRIVER.exists(),
    reason="Chromium is not installed (apt-get install chromium chromium-driver; "
           ".ci/run does it before the tests)")

STEP_WAIT = 20.0  # seconds a browser may take to show the answer to one click

# One call per poll: what the page offers now.
SUMMARY = """
const b = document.getElementById('board');
const on = (id) => { const e = document.getElementById(id); return !!e && !e.disabled && !e.hidden; };
return {
  state: document.body.dataset.state,
  roll: on('roll'), double: on('double'), accept: on('accept'), join: on('join-next'),
  movable: document.querySelectorAll('#board .point.movable').length,
  dests: document.querySelectorAll('#board .point.dest').length,
  slots: b.dataset.slots || '', score: b.dataset.score || '', cube: b.dataset.cube || '',
  turn: b.dataset.turn || '', shown: b.dataset.shown || '',
  message: document.getElementById('message').textContent,
};
"""


# Keeps every position the page draws: a forced play is sent as soon as its roll is
# drawn, so its position may be gone before the next poll.
DRAWN = """
const b = document.getElementById('board');
window.drawn = [];
new MutationObserver(() => window.drawn.push([b.dataset.slots, b.dataset.score, b.dataset.cube]))
  .observe(b, {attributes: true, attributeFilter: ['data-slots']});
"""


def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FIBSD_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the web client: {folder}")
    return folder


class Player:
    """One browser on /play, logged in as ``name``."""

    def __init__(self, browser: Browser, name: str) -> None:
        self.browser = browser
        self.name = name

    async def summary(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.browser.script(SUMMARY)
        return result

    async def click(self, css: str) -> None:
        """Clicks ``css``; once more if the page redrew it between finding and clicking
        (the who list is redrawn whenever someone's status changes)."""
        from selenium.common.exceptions import StaleElementReferenceException

        for _ in range(5):
            try:
                await self.browser.click(css)
                return
            except StaleElementReferenceException:
                continue
        await self.browser.click(css)

    async def shot(self, path: Path) -> None:
        await self.browser.run(self.browser.driver.save_screenshot, str(path))

    async def wait_until(self, check: Any, what: str) -> dict[str, Any]:
        for _ in range(int(STEP_WAIT * 25)):
            summary = await self.summary()
            if check(summary):
                return summary
            await deferLater(reactor, 0.04)
        raise AssertionError(f"{self.name}'s browser never showed {what}: {await self.summary()}")


async def open_and_register(browser: Browser, base: str, name: str,
                            login_shot: Path | None = None) -> Player:
    await browser.open(base + "/play")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "login", "the login form")
    await browser.script("localStorage.setItem('fibsd.speed', 'off')")  # whole matches: quick
    await browser.run(lambda: browser.driver.find_element("id", "name").send_keys(name))
    await browser.run(lambda: browser.driver.find_element("id", "password").send_keys("secret"))
    if login_shot is not None:
        await browser.run(browser.driver.save_screenshot, str(login_shot))
    await browser.click("#register")
    await browser.wait_for(lambda: browser.driver.execute_script(
        "return document.body.dataset.state") == "lobby", f"{name}'s lobby")
    return Player(browser, name)


WHO = "return [...document.querySelectorAll('#who-rows tr')].map(r => r.dataset.name)"


class Watcher:
    """carol, a CLIP user on the game port, watching ``ann``; keeps every board line."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def boards(self) -> list[str]:
        return [line for line in self.bot.lines if line.startswith("board:")]

    async def sees(self, slots: str, score: str | None, cube: str) -> None:
        """Waits until carol's latest board shows this position (ann's score first;
        None: any score)."""
        def same() -> bool:
            boards = self.boards()
            if not boards:
                return False
            got = facts(boards[-1])
            return (got[0], got[2]) == (slots, cube) and score in (None, got[1])
        await self.bot.wait(same, f"the board {slots} {score} cube {cube}")


def facts(line: str) -> tuple[str, str, str]:
    view = parse_board(line)
    return (",".join(map(str, view.board)), f"{view.player_score}-{view.opponent_score}",
            str(view.cube))


async def play_match(ann: Player, ben: Player, watcher: Watcher, length: int,
                     shots: Path, label: str, cube: bool) -> dict[str, Any]:
    """ann invites ben to a ``length`` point match and both click until it is over.
    With ``cube``, ann doubles at her first chance and ben takes."""
    await ann.browser.run(lambda: ann.browser.driver.execute_script(
        f"document.getElementById('length').value = '{length}';"))
    await ann.browser.wait_for(lambda: ann.browser.driver.execute_script(
        "return document.querySelector('#who-rows tr[data-name=ben] td:nth-child(4)')"
        ".textContent") == "ready", "ben ready in ann's who")
    await ann.click("#who-rows tr[data-name=ben] button.invite")
    await ben.browser.wait_for(lambda: ben.browser.driver.execute_script(
        "return document.querySelectorAll('#invitations li[data-name=ann] button.join').length"),
        "ann's invitation")
    await ben.click("#invitations li[data-name=ann] button.join")
    for player in (ann, ben):
        await player.wait_until(lambda s: s["state"] == "playing" and s["slots"], "the new match")
    first_board = len(watcher.boards())
    watcher.bot.send("watch ann")
    seen: set[tuple[str, str, str]] = set()
    for player in (ann, ben):  # every board drawn, also one shown for a moment only
        await player.browser.script(DRAWN)
    doubled = False
    highlighted = False
    actions = 0
    while True:
        actions += 1
        assert actions < 3000, "the match does not end"
        acted = False
        for player, other in ((ann, ben), (ben, ann)):
            s = await player.summary()
            if s["state"] == "match-over":
                continue
            if s["slots"]:
                # The board shown is ann's view or ben's; positions are absolute.
                score = s["score"] if player is ann else "-".join(s["score"].split("-")[::-1])
                seen.add((s["slots"], score, s["cube"]))
            if s["accept"]:
                await player.click("#accept")
            elif s["double"] and cube and player is ann and not doubled:
                doubled = True
                await player.click("#double")
            elif s["roll"]:
                await player.click("#roll")
            elif s["movable"] and player is ben:  # ben, on a phone, drags with a finger
                await watcher.sees(s["slots"], score, s["cube"])
                await play_by_dragging(ben, await first_play(ben), touch=True)
            elif s["movable"]:
                await watcher.sees(s["slots"], score, s["cube"])
                await player.click("#board .point.movable")
                if not highlighted:
                    await player.wait_until(lambda t: t["dests"], "highlighted destinations")
                    await player.shot(shots / f"{label}-3-highlighted-moves.png")
                    highlighted = True
                await player.click("#board .point.dest")
            elif s["join"]:
                await player.click("#join-next")
            else:
                continue
            acted = True
            before = s
            await player.wait_until(lambda t, b=before: t != b, "the answer to a click")
            break
        if not acted:
            a, b = await ann.summary(), await ben.summary()
            if a["state"] == b["state"] == "match-over":
                break
            await deferLater(reactor, 0.04)
    assert doubled == cube
    final = await ann.summary()
    seen.add((final["slots"], final["score"], final["cube"]))
    for player in (ann, ben):
        for slots, score, cube in await player.browser.script("return window.drawn"):
            mine = score if player is ann else "-".join(score.split("-")[::-1])
            seen.add((slots, mine, cube))
    # carol's last board came with the winning move: it still shows the score of the
    # game being played (protocol/board.md 3.1), the browsers the final one
    await watcher.sees(final["slots"], None, final["cube"])
    last_game = [line for line in watcher.boards() if parse_board(line).turn != 0]
    assert facts(watcher.boards()[-1])[1] == facts(last_game[-1])[1] != final["score"]
    await ann.shot(shots / f"{label}-4-match-end.png")
    await ben.shot(shots / f"{label}-4-match-end-phone.png")
    assert await ben.browser.fits_the_phone()
    # Every board line carol got shows a position one of the browsers showed.
    boards = watcher.boards()[first_board:]
    assert len(boards) > 20
    for line in boards:
        assert parse_board(line).match_length == length
        assert facts(line) in seen, line
    return final


@pytest_twisted.async_yield_fixture
async def site(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    running = await start_web(database)
    running.service.shared.lobby.dice = rolls(11)
    running.service.shared.lobby.coin = lambda: 0
    yield running
    await stop_web(running)


async def two_browsers(tmp_path: Path) -> tuple[Browser, Browser]:
    first = await deferToThread(Browser, tmp_path / "profile-ann")
    second = await deferToThread(Browser, tmp_path / "profile-ben")
    await deferToThread(first.driver.set_window_size, 1280, 900)  # ben stays phone-sized
    return first, second


@pytest_twisted.ensureDeferred
async def test_two_browsers_play_a_1_and_a_3_point_match_by_clicking(
        site: Web, tmp_path: Path) -> None:
    shots = shots_dir(tmp_path)
    first, second = await two_browsers(tmp_path)
    carol: Bot | None = None
    try:
        ann = await open_and_register(first, site.base, "ann", shots / "1-login.png")
        ben = await open_and_register(second, site.base, "ben")
        carol = await connect(site.game_port, "carol")
        for player in (ann, ben):
            await player.browser.wait_for(
                lambda p=player: {"ann", "ben", "carol"} <= set(p.browser.driver.execute_script(WHO)),
                "everyone in who")
            await player.click("#ready")
        await ann.browser.wait_for(lambda: ann.browser.driver.execute_script(
            "return [...document.querySelectorAll('#who-rows tr')].filter("
            "r => r.textContent.includes('ready') && !r.textContent.includes('not ready'))"
            ".length") == 2, "both ready")
        await ann.shot(shots / "2-lobby.png")
        await ben.shot(shots / "2-lobby-phone.png")
        assert await ben.browser.fits_the_phone()
        watcher = Watcher(carol)
        one = await play_match(ann, ben, watcher, 1, shots, "1-point", cube=False)
        assert one["score"] in ("1-0", "0-1")
        carol.send("unwatch")
        three = await play_match(ann, ben, watcher, 3, shots, "3-point", cube=True)
        assert three["score"].split("-")[0] >= "3" or three["score"].split("-")[1] >= "3"
        assert await ann.browser.script("return document.getElementById('message').textContent"
                                        ) in (f"You win the 3 point match {three['score']} .",
                                              f"ben wins the 3 point match "
                                              f"{three['score'].split('-')[1]}-"
                                              f"{three['score'].split('-')[0]} .")
    finally:
        if carol is not None and carol.transport is not None:
            carol.transport.loseConnection()
        for browser in (first, second):
            await deferToThread(browser.driver.quit)


class Telnet(Protocol):
    """A person at a telnet prompt: bytes in, waits for text."""

    def __init__(self) -> None:
        self.text = ""
        self.waiting: list[tuple[str, Deferred[None]]] = []

    def dataReceived(self, data: bytes) -> None:
        self.text += data.decode("ascii", "replace")
        for marker, d in list(self.waiting):
            if marker in self.text:
                self.waiting.remove((marker, d))
                d.callback(None)

    def type(self, line: str) -> None:
        assert self.transport is not None
        self.transport.write(line.encode() + b"\r\n")

    async def expect(self, marker: str) -> None:
        if marker in self.text:
            return
        d: Deferred[None] = Deferred()
        self.waiting.append((marker, d))
        call = reactor.callLater(STEP_WAIT, d.cancel)
        try:
            await d
        except Exception as error:
            raise AssertionError(f"telnet never got {marker!r}: {self.text[-500:]!r}") from error
        finally:
            if call.active():
                call.cancel()


@pytest_twisted.ensureDeferred
async def test_a_telnet_user_a_clip_bot_and_a_browser_user_see_one_another(
        site: Web, tmp_path: Path) -> None:
    browser = await deferToThread(Browser, tmp_path / "profile")
    telnet = Telnet()
    bot: Bot | None = None
    try:
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", site.game_port), telnet)
        await telnet.expect("login: ")
        telnet.type("bob")
        await telnet.expect("password: ")
        telnet.type("secret")
        await telnet.expect("> ")
        bot = await connect(site.game_port, "alice")
        # Clear errors first: a wrong password, a name already taken.
        await browser.open(site.base + "/play")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.body.dataset.state") == "login", "the login form")
        for name, password, button, error in (
                ("alice", "wrong", "#login", "Wrong name or password."),
                ("bob", "secret", "#register",
                 "Please use another name. 'bob' is already used by someone else.")):
            await browser.run(lambda n=name, p=password: browser.driver.execute_script(
                "document.getElementById('name').value = arguments[0];"
                "document.getElementById('password').value = arguments[1];", n, p))
            await browser.click(button)
            await browser.wait_for(lambda e=error: browser.driver.execute_script(
                "return document.getElementById('login-error').textContent") == e, error)
        dora = await open_and_register(browser, site.base, "dora")
        await dora.browser.wait_for(
            lambda: {"alice", "bob", "dora"} <= set(dora.browser.driver.execute_script(WHO)),
            "bob and alice in dora's who")
        telnet.text = ""
        telnet.type("who")
        await telnet.expect("dora")
        await telnet.expect("alice")
        start = len(bot.lines)
        bot.send("rawwho")
        await bot.wait(lambda: {"alice", "bob", "dora"} <= {
            line.split()[1] for line in bot.lines[start:] if line.startswith("5 ")},
            "bob, dora and herself in rawwho")
        # A shout from the browser reaches both.
        await browser.run(lambda: browser.driver.find_element("id", "chat-text").send_keys("hi all"))
        start = len(bot.lines)
        await browser.click("#chat-form button[type=submit]")
        await bot.wait(lambda: "13 dora hi all" in bot.lines[start:], "dora's shout")
        await telnet.expect("dora shouts: hi all")
        bot.send("tell dora welcome")
        await browser.wait_for(lambda: "alice tells: welcome" in browser.driver.execute_script(
            "return document.getElementById('log').textContent"), "alice's tell")
    finally:
        if bot is not None and bot.transport is not None:
            bot.transport.loseConnection()
        if telnet.transport is not None:
            telnet.transport.loseConnection()
        await deferToThread(browser.driver.quit)
