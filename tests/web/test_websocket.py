"""The game over WebSocket (``/ws`` on the web port): a real autobahn client on
loopback registers, logs in with CLIP, chats with and plays a telnet user; bad
messages and frames get the answers protocol/websocket.md promises."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol

from fibsd.server.websocket import TEXT_ONLY, text_frame
from tests.server.test_match_restart import Bot, connect, rolls
from tests.web.conftest import Web, start_web, stop_web
from tests.web.ws_client import open_socket, ws_connect

WAIT = 20.0


async def within(deferred: Deferred, what: str) -> object:  # type: ignore[type-arg]
    call = reactor.callLater(WAIT, deferred.cancel)
    try:
        return await deferred
    except Exception as error:
        raise AssertionError(f"no {what}") from error
    finally:
        if call.active():
            call.cancel()


def web_port(web: Web) -> int:
    return int(web.http.getHost().port)


@pytest_twisted.ensureDeferred
async def test_register_then_play_and_chat_with_a_telnet_user(database: Path,
                                                               match_ids: list[int]) -> None:
    web = await start_web(database)
    try:
        web.service.shared.lobby.dice = rolls(7)
        web.service.shared.lobby.coin = lambda: 0
        # Registration: the telnet-mode guest dialogue, one line (or prompt) per message.
        newcomer = Bot("dora")
        socket = await open_socket(web_port(web), newcomer)
        await newcomer.wait_line(lambda line: line == "login: ", "the login prompt")
        assert not any("\r" in message or "\n" in message for message in socket.text_messages)
        newcomer.send("guest")
        await newcomer.wait_line(lambda line: line == "ONE USERNAME PER PERSON ONLY!!!", "welcome")
        newcomer.send("name dora")
        await newcomer.wait_line(lambda line: line == "Your name will be dora", "name")
        newcomer.send("secret")
        await newcomer.wait_line(lambda line: line == "Please retype your password: ", "retype")
        newcomer.send("secret")
        await newcomer.wait_line(lambda line: line == "You are registered.", "registration")
        newcomer.send("bye")
        await within(socket.closed, "close after bye")
        assert "Thanks for playing backgammon here. Come back soon!" in newcomer.lines

        # Log in again with CLIP; a telnet (TCP) CLIP user sees her and chats.
        dora, dora_socket = await ws_connect(web_port(web), "dora")
        alice = await connect(web.game_port, "alice")
        alice.send("rawwho")
        await alice.wait_line(lambda line: line.startswith("5 dora "), "dora in rawwho")
        alice.send("tell dora hello over there")
        await dora.wait_line(lambda line: line == "12 alice hello over there", "alice's tell")
        long_text = "word " * 60  # a line over 125 bytes: a frame with a 16-bit length
        alice.send(f"tell dora {long_text.strip()}")
        await dora.wait_line(lambda line: line == f"12 alice {long_text.strip()}", "a long tell")
        dora.send("shout hi everyone")
        await alice.wait_line(lambda line: line == "13 dora hi everyone", "dora's shout")

        # A whole 1-point match, dora over WebSocket against alice over TCP.
        for bot in (dora, alice):
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
            bot.active = True
        alice.send("invite dora 1")
        await dora.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
        # Both ends are waited for from before the match: alice's line may come first.
        dora_end = dora.wait_line(lambda line: line.startswith(("You win the 1 point match",
                                                                "alice wins the 1 point match")),
                                  "the match end")
        alice_end = alice.wait_line(lambda line: line.startswith(("You win the 1 point match",
                                                                 "dora wins the 1 point match")),
                                    "the match end")
        dora.send("join alice")
        await dora_end
        await alice_end
        assert any(line.startswith("board:You:alice:1:") for line in dora.lines)
        dora_socket.sendClose(1000)
        await within(dora_socket.closed, "dora's close")
        await alice.wait_line(lambda line: line.startswith("8 dora "), "dora's logout")
        assert alice.transport is not None
        alice.transport.loseConnection()
    finally:
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_binary_and_overlong_messages_are_refused_and_the_session_goes_on(
        database: Path, match_ids: list[int]) -> None:
    web = await start_web(database, **{"limits.max_line_length": 100,
                                       "limits.websocket_max_message": 1000})
    try:
        bob, socket = await ws_connect(web_port(web), "bob")
        socket.sendMessage(b"rawwho", isBinary=True)
        await bob.wait_line(lambda line: line == TEXT_ONLY, "the text-only refusal")
        bob.send("tell alice " + "x" * 200)
        await bob.wait_line(lambda line: line == "** Your line was too long (more than 100 "
                            "characters) and was ignored.", "the too-long refusal")
        bob.send("rawwho")
        await bob.wait_line(lambda line: line.startswith("5 bob "), "rawwho still answered")
        # Past websocket_max_message the connection is closed before the message is read.
        socket.sendMessage(b"x" * 1001, isBinary=False)
        clean, code, _ = await within(socket.closed, "the close")  # type: ignore[misc]
        assert code == 1009
    finally:
        await stop_web(web)


class Raw(Protocol):
    """Bytes on the socket, for frames no WebSocket client library would send."""

    def __init__(self) -> None:
        self.data = b""
        self.lost: Deferred[None] = Deferred()
        self.waiting: tuple[bytes, Deferred[None]] | None = None

    def dataReceived(self, data: bytes) -> None:
        self.data += data
        if self.waiting is not None and self.waiting[0] in self.data:
            self.waiting[1].callback(None)
            self.waiting = None

    def wait_for(self, marker: bytes) -> Deferred[None]:
        d: Deferred[None] = Deferred()
        if marker in self.data:
            d.callback(None)
        else:
            self.waiting = (marker, d)
        return d

    def connectionLost(self, reason: object = None) -> None:
        self.lost.callback(None)


@pytest_twisted.ensureDeferred
async def test_an_unmasked_frame_closes_with_a_protocol_error(database: Path,
                                                              match_ids: list[int]) -> None:
    web = await start_web(database)
    try:
        raw = Raw()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", web_port(web)), raw)
        assert raw.transport is not None
        raw.transport.write(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            b"Sec-WebSocket-Version: 13\r\n\r\n")
        await within(raw.wait_for(b"login: "), "the login prompt")
        assert raw.data.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
        raw.transport.write(b"\x81\x03who")  # a client frame must be masked
        await within(raw.lost, "the connection closed")
        close = raw.data[raw.data.rindex(b"\x88"):]
        assert close[2:4] == (1002).to_bytes(2, "big"), close
        # Nothing was logged in and nothing is left behind.
        assert web.service.factory.connections == set()
    finally:
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_failed_logins_close_the_connection_as_on_telnet(database: Path,
                                                               match_ids: list[int]) -> None:
    web = await start_web(database, **{"limits.login_attempts": 2})
    try:
        bot = Bot("bob")
        socket = await open_socket(web_port(web), bot)
        for _ in range(2):
            bot.send("login wsbot 1008 bob wrong")
        await within(socket.closed, "the close after two failed logins")
        assert bot.lines.count("login: ") == 2, bot.lines
        assert web.service.factory.connections == set()
    finally:
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_the_web_client_is_served_at_play(database: Path, match_ids: list[int]) -> None:
    web = await start_web(database)
    try:
        page = await web.get("/play")
        assert page.code == 200
        assert page.header("content-type") == "text/html; charset=utf-8"
        assert '<script type="module" src="/play/main.js"></script>' in page.text
        for name in ("main.js", "clip.js", "board.js", "movegen.js"):
            module = await web.get(f"/play/{name}")
            assert module.code == 200, name
            assert module.header("content-type") == "text/javascript; charset=utf-8"
        style = await web.get("/play/play.css")
        assert style.header("content-type") == "text/css; charset=utf-8"
        assert (await web.get("/play/nothing.js")).code == 404
        assert (await web.get("/play/index.html")).code == 404  # the page is /play itself
        assert (await web.get("/ws/more")).code == 404
        # Everything else is still the web face.
        assert (await web.get("/ratings")).code == 200
    finally:
        await stop_web(web)


def test_frames_carry_their_length_in_the_form_rfc_6455_asks() -> None:
    assert text_frame(b"") == b"\x81\x00"
    assert text_frame(b"x" * 125)[:2] == b"\x81\x7d"
    assert text_frame(b"x" * 126)[:4] == b"\x81\x7e\x00\x7e"
    assert text_frame(b"x" * 65535)[:4] == b"\x81\x7e\xff\xff"
    assert text_frame(b"x" * 65536)[:10] == b"\x81\x7f" + (65536).to_bytes(8, "big")
    assert text_frame(b"abc")[2:] == b"abc"
