"""The web client comes back by itself after a dropped WebSocket (issue 23): a headless
Chromium plays a match against a CLIP bot; the server cuts the browser's WebSocket in the
middle of it (an abort, as a lost network does); the page reconnects with its session
token, without asking for the password and without a new invitation, and the match
goes on.  Then a new password revokes the token: the next cut brings the login form
back, and logging in with the password resumes the match as well.  Screenshots go to ``$FIBSD_SCREENSHOTS`` or the test's
temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThread

from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import start_web, stop_web
from tests.web.test_browser import CHROMIUM, DRIVER, Browser
from tests.web.test_play_browser import open_and_register, shots_dir

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not DRIVER.exists(),
    reason="Chromium is not installed (apt-get install chromium chromium-driver)")

# Every state the page goes through, and whether the password field was ever shown.
RECORD = """
window.states = [];
new MutationObserver(() => window.states.push(document.body.dataset.state))
  .observe(document.body, {attributes: true, attributeFilter: ['data-state']});
"""
STATE = """
return {state: document.body.dataset.state,
        reconnecting: !document.getElementById('reconnecting').hidden,
        loginShown: !document.getElementById('login-view').hidden,
        roll: !document.getElementById('roll').disabled,
        movable: document.querySelectorAll('#board .point.movable').length,
        invitations: document.querySelectorAll('#invitations li').length,
        states: window.states, stored: sessionStorage.getItem('fibsd.session'),
        log: document.getElementById('game-log').textContent};
"""


@pytest_twisted.ensureDeferred
async def test_a_websocket_cut_mid_match_reconnects_and_the_match_goes_on(
        tmp_path: Path) -> None:
    shots = shots_dir(tmp_path)
    database = tmp_path / "fibsd.sqlite"
    from tests.web.conftest import seed
    seed(database)
    site = await start_web(database, admins=("alice",), **{"pace.drop_grace": 60})
    site.service.shared.lobby.dice = rolls(11)
    site.service.shared.lobby.coin = lambda: 0  # the inviter, alice, plays O
    browser = await deferToThread(Browser, tmp_path / "profile")
    alice: Bot | None = None
    try:
        ann = await open_and_register(browser, site.base, "ann")
        stored = await browser.script("return sessionStorage.getItem('fibsd.session')")
        assert stored is not None and '"name":"ann"' in stored and "secret" not in stored
        await ann.click("#ready")
        alice = await connect(site.game_port, "alice")
        alice.send("toggle ready")
        await alice.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        alice.active = True  # rolls, moves, takes and joins by herself
        alice.send("invite ann 5")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.querySelectorAll('#invitations li[data-name=alice] button.join')"
            ".length"), "alice's invitation")
        await ann.click("#invitations li[data-name=alice] button.join")
        await ann.wait_until(lambda s: s["state"] == "playing" and s["slots"], "the match")
        await play_a_turn(ann, browser)

        await browser.script(RECORD)
        session = site.service.shared.lobby.find("ann").session
        start = len(alice.lines)
        cut = reactor.seconds()
        session.connection.transport.abortConnection()  # the network is gone
        await alice.wait_line(
            lambda line: line == "** ann lost the connection; the match waits 60 seconds "
                                 "for ann to log in again.", "the grace line")
        await browser.wait_for(lambda: browser.driver.execute_script(STATE)["reconnecting"]
                               or site.service.shared.lobby.find("ann") is not None,
                               "the page reconnecting")
        await ann.shot(shots / "reconnect-1-reconnecting.png")
        await alice.wait_line(lambda line: line == "** ann is back; the match goes on.",
                              "ann back")
        print(f"the page was back in the match {reactor.seconds() - cut:.1f} s after the cut")
        page = await browser.wait_for(lambda: (lambda s: s if s["state"] == "playing"
                                               and not s["reconnecting"] else None)(
            browser.driver.execute_script(STATE)), "the match resumed")
        assert not page["loginShown"] and "login" not in page["states"]
        assert page["invitations"] == 0
        assert "You are now playing with alice. Your running match was loaded." in page["log"]
        assert "8 ann ann drops connection." in alice.lines[start:]
        assert site.service.shared.lobby.graces == {}
        await ann.shot(shots / "reconnect-2-resumed.png")

        moves = sum(1 for line in alice.lines if line.startswith("ann moves "))
        await play_a_turn(ann, browser)
        await alice.wait(lambda: sum(1 for line in alice.lines
                                     if line.startswith("ann moves ")) > moves,
                         "a move of ann's after the reconnection")
        await ann.shot(shots / "reconnect-3-goes-on.png")

        # A new password (set by an administrator) revokes the token: the next cut
        # brings the login form back, and the password logs in and resumes the match.
        alice.send("admin password ann n3w-secret")
        await alice.wait_line(lambda line: line == "** Changed the password of ann.",
                              "the new password")
        site.service.shared.lobby.find("ann").session.connection.transport.abortConnection()
        page = await browser.wait_for(lambda: (lambda s: s if s["loginShown"] else None)(
            browser.driver.execute_script(STATE)), "the login form after a refused token")
        assert page["stored"] is None
        assert await browser.script("return document.getElementById('login-error')"
                                    ".textContent") == "Your session has ended; please log in again."
        await ann.shot(shots / "reconnect-4-token-refused.png")
        await browser.run(lambda: browser.driver.find_element("id", "password").send_keys(
            "n3w-secret"))
        await browser.click("#login")
        await ann.wait_until(lambda s: s["state"] == "playing" and s["slots"],
                             "the match, resumed at the password login")
        assert site.service.shared.lobby.graces == {}

        await ann.click("#logout")  # bye: the token is revoked and forgotten
        await browser.wait_for(lambda: browser.driver.execute_script(STATE)["loginShown"],
                               "the login form after Log out")
        assert await browser.script("return sessionStorage.getItem('fibsd.session')") is None
    finally:
        if alice is not None and alice.transport is not None:
            alice.transport.loseConnection()
        await deferToThread(browser.driver.quit)
        await stop_web(site)
    store_check = __import__("fibsd.store.sqlite", fromlist=["SQLiteStore"]).SQLiteStore(database)
    try:
        assert store_check.count_tokens() == 0
    finally:
        store_check.close()


async def play_a_turn(ann: object, browser: Browser) -> None:
    """Waits for ann's turn, then rolls (unless the opening roll is hers) and plays
    one checker after another, by clicking, until none is left to move."""
    rolled = moved = False
    for _ in range(400):
        page = await browser.script(STATE)
        if page["roll"] and not rolled and not moved:
            await ann.click("#roll")  # type: ignore[attr-defined]
            rolled = True
        elif page["movable"]:
            await ann.click("#board .point.movable")  # type: ignore[attr-defined]
            await browser.wait_for(lambda: browser.driver.execute_script(
                "return document.querySelectorAll('#board .point.dest').length"), "destinations")
            await ann.click("#board .point.dest")  # type: ignore[attr-defined]
            moved = True
        elif moved:
            return
        await deferLater(reactor, 0.05)
    raise AssertionError(f"ann never had a turn to play: {await browser.script(STATE)}")
