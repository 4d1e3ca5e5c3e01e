"""A CLIP bot over WebSocket (autobahn's Twisted client): the loopback bot of
``tests.server.test_match_restart`` with one protocol line per text message."""

from __future__ import annotations

from typing import Any

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

from tests.server.test_match_restart import Bot


class Messages:
    """The bot's transport: each line it sends, CR LF cut, is one text message."""

    def __init__(self, socket: BotSocket) -> None:
        self.socket = socket

    def write(self, data: bytes) -> None:
        assert data.endswith(b"\r\n"), data
        self.socket.sendMessage(data[:-2], isBinary=False)

    def loseConnection(self) -> None:
        self.socket.sendClose(1000)


class BotSocket(WebSocketClientProtocol):  # type: ignore[misc]
    def __init__(self, bot: Bot) -> None:
        super().__init__()
        self.bot = bot
        self.opened: Deferred[None] = Deferred()
        self.closed: Deferred[tuple[bool, int | None, str | None]] = Deferred()
        self.text_messages: list[str] = []

    def onOpen(self) -> None:
        self.opened.callback(None)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        assert not isBinary
        self.text_messages.append(payload.decode("ascii"))
        self.bot.dataReceived(payload + b"\r\n")

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        if not self.opened.called:
            self.opened.errback(ConnectionError(f"no WebSocket: {code} {reason}"))
        self.bot.connectionLost()
        self.closed.callback((wasClean, code, reason))


async def open_socket(web_port: int, bot: Bot, **options: Any) -> BotSocket:
    factory = WebSocketClientFactory(f"ws://127.0.0.1:{web_port}/ws")
    if options:
        factory.setProtocolOptions(**options)
    socket = BotSocket(bot)
    socket.factory = factory
    bot.transport = Messages(socket)  # type: ignore[assignment]
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", web_port), socket)
    await socket.opened
    return socket


async def ws_connect(web_port: int, name: str, password: str = "secret") -> tuple[Bot, BotSocket]:
    """``name`` logged in with CLIP over WebSocket."""
    bot = Bot(name)
    socket = await open_socket(web_port, bot)
    bot.send(f"login wsbot 1008 {name} {password}")
    await bot.wait_line(lambda line: line == "6", "login")
    return bot, socket
