"""The FIBS protocol over WebSocket: one protocol line per text message, each way.

A WebSocket connection is bound to the very ``FibsProtocol`` a telnet connection gets,
built by the same ``FibsFactory``: ``MessageTransport`` stands in for its TCP transport,
handing each incoming text message over as one line (``message + LF``) and sending each
line the session writes as one text message without its CR LF.  So the session, its
limits (line length, users, login attempts, the bounded input queue), its logging and
its shutdown are those of telnet, and there is no second command path.

What is WebSocket's own: autobahn refuses frames and messages longer than
``limits.websocket_max_message`` (close code 1009) before buffering them, checks UTF-8
(1007) and framing (1002); a binary message is answered with one ``**`` line and
otherwise ignored.  Telnet echo switches around password prompts mean nothing here and
are dropped.  Flow control carries over: the protocol registers itself as the producer
of the real socket, so a browser that stops reading stops being read.
"""

from __future__ import annotations

from typing import Any

from autobahn.twisted.resource import WebSocketResource
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet.interfaces import IPushProducer, ITCPTransport
from twisted.python.failure import Failure

from fibsd.server.protocol import FibsFactory, FibsProtocol
from fibsd.wire.input import WILL_ECHO, WONT_ECHO

TEXT_ONLY = "** This server takes text messages only: one command per message."


def text_frame(line: bytes) -> bytes:
    """One final, unmasked text frame (RFC 6455 5.2) holding ``line``."""
    size = len(line)
    if size < 126:
        return bytes((0x81, size)) + line
    if size < 1 << 16:
        return b"\x81\x7e" + size.to_bytes(2, "big") + line
    return b"\x81\x7f" + size.to_bytes(8, "big") + line


class MessageTransport:
    """What a ``FibsProtocol`` needs of a transport, over one WebSocket connection."""

    def __init__(self, socket: FibsWebSocket) -> None:
        self.socket = socket

    def write(self, data: bytes) -> None:
        """Each line (CR LF ended) becomes a message; a prompt left after the last line
        (``login: ``, ``> ``) becomes a message of its own.

        The frames are built here and written at once: a broadcast reaches each session
        as one batch of lines (fibsd.server.feed), and one ``sendMessage`` per line
        would cost autobahn's per-message work thousands of times per login or shout
        (benchmarks/README.md, WebSocket).  Server frames are unmasked, unfragmented
        text frames (no extension is negotiated), so a frame is a header and the line."""
        if self.socket.state != WebSocketServerProtocol.STATE_OPEN:
            return
        text = data.replace(WILL_ECHO, b"").replace(WONT_ECHO, b"")
        *lines, rest = text.split(b"\r\n")
        if rest:
            lines.append(rest)
        self.socket.transport.write(b"".join(map(text_frame, lines)))

    def registerProducer(self, producer: IPushProducer, streaming: bool) -> None:
        real = self.socket.transport
        if real is not None:
            real.unregisterProducer()  # Twisted Web's channel, done with this socket
            real.registerProducer(producer, streaming)

    def unregisterProducer(self) -> None:
        if self.socket.transport is not None:
            self.socket.transport.unregisterProducer()

    def pauseProducing(self) -> None:
        if self.socket.transport is not None:
            self.socket.transport.pauseProducing()

    def resumeProducing(self) -> None:
        if self.socket.transport is not None:
            self.socket.transport.resumeProducing()

    def loseConnection(self) -> None:
        self.socket.sendClose(1000)

    def abortConnection(self) -> None:
        if self.socket.transport is not None:
            self.socket.transport.abortConnection()

    def getPeer(self) -> Any:
        return self.socket.transport.getPeer()

    def getHost(self) -> Any:
        return self.socket.transport.getHost()


class FibsWebSocket(WebSocketServerProtocol):  # type: ignore[misc]
    factory: FibsWebSocketFactory

    def __init__(self) -> None:
        super().__init__()
        self.fibs: FibsProtocol | None = None

    def onOpen(self) -> None:
        if ITCPTransport.providedBy(self.transport):
            self.transport.setTcpNoDelay(True)
        self.fibs = self.factory.sessions.buildProtocol(self.transport.getPeer())
        self.fibs.makeConnection(MessageTransport(self))  # type: ignore[arg-type]
        if self.fibs.session is not None:  # may ask for a session token (fibsd.server.tokens)
            self.fibs.session.web = True

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        if self.fibs is None:
            return
        if isBinary:
            self.sendMessage(TEXT_ONLY.encode(), isBinary=False)
            return
        self.fibs.dataReceived(payload + b"\n")

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        fibs, self.fibs = self.fibs, None
        if fibs is not None:
            fibs.connectionLost(Failure(ConnectionError(reason or "WebSocket closed")))


class FibsWebSocketFactory(WebSocketServerFactory):  # type: ignore[misc]
    protocol = FibsWebSocket

    def __init__(self, sessions: FibsFactory, max_message: int) -> None:
        super().__init__()
        self.sessions = sessions
        self.setProtocolOptions(maxFramePayloadSize=max_message,
                                maxMessagePayloadSize=max_message,
                                failByDrop=False)


def websocket_resource(sessions: FibsFactory, max_message: int) -> WebSocketResource:
    """The ``/ws`` resource the web face mounts: sessions of ``sessions`` over WebSocket."""
    return WebSocketResource(FibsWebSocketFactory(sessions, max_message))


def logged_in(protocol: object) -> bool:
    """Whether ``protocol`` (what took over a web connection) is a WebSocket whose
    player has logged in: the web port's cap per address then no longer counts it, as
    the game port counts only connections not logged in (fibsd.web.gate)."""
    fibs = protocol.fibs if isinstance(protocol, FibsWebSocket) else None
    return fibs is not None and not fibs.logging_in
