"""The web port's limits: what a stranger can make the web face spend.

``WebGate`` wraps the twisted.web site on the web port, as ``FibsFactory.refusal``
guards the game port (protocol/access.md, protocol/web.md):

* Connections are counted per address and in all (``[web] connections_per_address``,
  ``[web] max_connections``; ``fibsd.server.access.connection_caps`` keeps the web
  port's and the game ports' caps together below the open-file limit).  One more is
  answered ``503`` before anything is read and closed.  A full port first makes room:
  the oldest connection of the address holding most of them is cut, if that address
  holds more than the newcomer's would.  The ``503`` costs a file until it is sent,
  and the reactor accepts connections in bursts of a hundred or more: while
  ``BUSY_AT_ONCE`` of them wait to be sent, further refusals are closed at once,
  unanswered, so that a flood never takes the files the caps keep free.  A WebSocket
  connection whose player has logged in no longer counts against its address (a club
  behind one address may all play), only in all.
* A request must arrive whole, request line, headers and body, within
  ``[web] request_timeout`` seconds of its first byte (``408``, then the connection
  closes, ``LINGER`` below): twisted.web's own timeout restarts with every byte, so a client sending a
  header line every few seconds could hold a connection for ever.  A connection
  waiting for its next request is closed after ``[web] idle_timeout`` seconds.  While
  a request is answered (a live board streams for hours, a WebSocket plays) neither
  clock runs.
* A body is kept in memory and only up to ``[web] max_body`` bytes: a larger
  ``Content-Length`` is refused with ``413`` as soon as the headers are read, before
  one byte of it is, and a chunked body as soon as it grows past the cap.  twisted.web
  would spool any body to a temporary file; no fibsd route takes one.

Refusals and cuts are ``connection_refused`` or ``limit`` events, each at most once a
minute per address and limit (the game's ``RefusalLog``, with ``count``).  fibsd/web
imports no server module: ``fibsd.app`` hands in the refusal log, how addresses are
grouped (an IPv6 /64 is one address) and how to tell a logged-in WebSocket player.
"""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from typing import Any, Protocol as Interface

from twisted.internet.interfaces import (
    IAddress, IDelayedCall, IProtocolNegotiationFactory, IReactorTime, ISSLTransport)
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory
from twisted.web.server import Request
from zope.interface import directlyProvidedBy, directlyProvides, implementer

from fibsd.config import Web

_log = Logger()

# Seconds a connection answered 408 or 413 is given to read the answer, then it is
# dropped.  Closing at once, with the client's bytes unread, would reset the connection
# and lose the answer; so up to ``DISCARD`` bytes more are read and thrown away, then
# the socket is no longer read (a client that goes on sending stalls; reading 2 GB
# only to throw it away would cost the server a core).
LINGER = 5.0
DISCARD = 1 << 18
# Refused connections answered 503 and not yet closed; beyond, refusals get no answer.
# Well below ``access.fd_reserve``.
BUSY_AT_ONCE = 16


def _plain(status: str, text: str) -> bytes:
    body = text.encode("ascii") + b"\n"
    return (f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("ascii") + body


BUSY = _plain("503 Service Unavailable", "Too many connections; try again later.")
TOO_SLOW = _plain("408 Request Timeout", "The request took too long to arrive.")
TOO_LARGE = _plain("413 Content Too Large", "Request bodies are not taken here.")


class RefusalLog(Interface):
    def due(self, limit: str, address: str) -> int | None: ...


@implementer(IProtocolNegotiationFactory)
class WebGate(WrappingFactory):
    """The web port's listening factory: the site behind the limits above."""

    noisy = False

    def __init__(self, site: Any, clock: IReactorTime, limits: Web, max_connections: int,
                 refusals: RefusalLog, network: Callable[[str], str] = str,
                 is_player: Callable[[Any], bool] = lambda protocol: False) -> None:
        super().__init__(site)
        self.clock = clock
        self.limits = limits
        self.max_connections = max_connections
        self.refusals = refusals
        self.network = network
        self.is_player = is_player  # a protocol that took over (a WebSocket) and logged in
        # Per address, its connections in the order they came (a dict keeps it).
        self._by_address: dict[str, dict[GatedConnection, None]] = {}
        self.busy = 0  # refused connections still being answered 503
        site.requestFactory = GatedRequest
        site.max_body = limits.max_body
        site.timeOut = None  # ours below: whole requests, not bytes

    def acceptableProtocols(self) -> list[bytes]:
        """What the HTTPS port ([web] tls) agrees to over ALPN: HTTP/1.1 only, the
        protocol the gate reads (an HTTP/2 stream would pass by its request clock).
        Without an answer Twisted's TLS fails the handshake of every client that offers
        ALPN, as every browser does."""
        return [b"http/1.1"]

    @property
    def count(self) -> int:
        return len(self.protocols)

    def buildProtocol(self, addr: IAddress) -> Protocol | None:
        host = str(getattr(addr, "host", "") or "-")
        key = self.network(host)
        limit = self._refusal(key)
        if limit is not None:
            self.log_refusal("connection from {address} refused ({limit}; {count} since the "
                             "last report)", "connection_refused", limit, host, key)
            if self.busy >= BUSY_AT_ONCE:
                return None  # the port closes the socket at once
            return _Busy(self)
        wrapped = self.wrappedFactory.buildProtocol(addr)
        return None if wrapped is None else GatedConnection(self, wrapped, host, key)

    def _refusal(self, key: str) -> str | None:
        waiting = self._strangers(key)
        if waiting >= self.limits.connections_per_address:
            return "web.connections_per_address"
        if self.count >= self.max_connections and not self._make_room(waiting):
            return "web.max_connections"
        return None

    def _strangers(self, key: str) -> int:
        return sum(1 for c in self._by_address.get(key, ()) if not self.is_player(c.wrappedProtocol))

    def _make_room(self, waiting: int) -> bool:
        """Cut the oldest connection of the address holding most (not counting logged-in
        players), if it holds more than the newcomer's address would."""
        counts = {key: self._strangers(key) for key in self._by_address}
        crowded = max(counts, key=counts.__getitem__, default=None)
        if crowded is None or counts[crowded] <= waiting + 1:
            return False
        oldest = next(c for c in self._by_address[crowded]
                      if not self.is_player(c.wrappedProtocol))
        self.log_refusal("web connection from {address} closed for a newcomer ({limit}; "
                         "{count} since the last report)", "limit", "web.max_connections",
                         oldest.host, crowded)
        self.unregisterProtocol(oldest)  # its place is free now, whenever its socket closes
        oldest.abortConnection()
        return True

    def registerProtocol(self, p: ProtocolWrapper) -> None:
        super().registerProtocol(p)
        assert isinstance(p, GatedConnection)
        self._by_address.setdefault(p.key, {})[p] = None

    def unregisterProtocol(self, p: ProtocolWrapper) -> None:
        if p not in self.protocols:  # made room for a newcomer: already forgotten
            return
        super().unregisterProtocol(p)
        assert isinstance(p, GatedConnection)
        same = self._by_address.get(p.key)
        if same is not None:
            same.pop(p, None)
            if not same:
                del self._by_address[p.key]

    def log_refusal(self, text: str, event: str, limit: str, host: str, key: str) -> None:
        """At most one event a minute per address and limit, with the refusals it stands
        for in ``count``."""
        count = self.refusals.due(limit, key)
        if count is not None:
            _log.info(text, event=event, limit=limit, address=host, count=count)


class _Busy(Protocol):
    """A connection the caps refuse: ``503``, closed, nothing read.  On the HTTPS port
    the answer waits for the client's handshake, which may never come: after
    ``LINGER`` seconds the connection is dropped, so that it cannot keep its file and
    its place among the ``BUSY_AT_ONCE``."""

    def __init__(self, gate: WebGate) -> None:
        self.gate = gate
        self._deadline: IDelayedCall | None = None

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.gate.busy += 1
        self.transport.write(BUSY)
        self.transport.loseConnection()
        self._deadline = self.gate.clock.callLater(LINGER, self.transport.abortConnection)

    def connectionLost(self, reason: Any = None) -> None:
        self.gate.busy -= 1
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()


class GatedConnection(ProtocolWrapper):
    """One web connection: the site's channel (or, after an upgrade, the WebSocket)
    inside, the request deadline and the idle timeout around it."""

    factory: WebGate

    def __init__(self, factory: WebGate, wrapped: Any, host: str, key: str) -> None:
        super().__init__(factory, wrapped)
        self.host = host
        self.key = key
        self._timer: IDelayedCall | None = None
        self._reading = False  # a request has begun and is not yet whole
        self._answering: Request | None = None  # the request being answered
        self._discarding = False  # answered 408 or 413: input is thrown away
        self._discarded = 0
        self.secure = False  # on the HTTPS port ([web] tls)

    def makeConnection(self, transport: Any) -> None:
        super().makeConnection(transport)
        # On the HTTPS port the requests learn it from ``secure`` (GatedRequest.isSecure).
        # ISSLTransport itself stops here: autobahn takes any transport providing it
        # for Twisted's TLS protocol (a channel binding fibsd does not use) and would
        # fail every WebSocket on /ws.
        self.secure = ISSLTransport.providedBy(self)
        if self.secure:
            directlyProvides(self, directlyProvidedBy(self) - ISSLTransport)
        self._start(self.factory.limits.idle_timeout, self._idle)

    def dataReceived(self, data: bytes) -> None:
        if self._discarding:
            self._discarded += len(data)
            if self._discarded > DISCARD:
                self.pauseProducing()
            return
        if self._answering is None and not self._reading:
            self._reading = True
            self._start(self.factory.limits.request_timeout, self._too_slow)
        super().dataReceived(data)

    def request_read(self, request: Request) -> None:
        """``request`` arrived whole: no clock runs until it is answered."""
        self._reading = False
        self._answering = request
        self._stop()
        request.notifyFinish().addBoth(self._answered, request)

    def _answered(self, _: object, request: Request) -> None:
        # The next request may already be read (pipelined): it is answered first.
        if self._answering is request:
            self._answering = None
            if self.transport is not None and not self.disconnecting:
                self._start(self.factory.limits.idle_timeout, self._idle)

    def refuse_body(self) -> None:
        """The request's body is larger than ``[web] max_body``: ``413``, closed."""
        self.factory.log_refusal("request body from {address} refused ({limit}; {count} "
                                 "since the last report)", "limit", "web.max_body",
                                 self.host, self.key)
        self._close(TOO_LARGE)

    def _too_slow(self) -> None:
        self.factory.log_refusal("request from {address} cut ({limit}; {count} since the "
                                 "last report)", "limit", "web.request_timeout",
                                 self.host, self.key)
        self._close(TOO_SLOW)

    def _idle(self) -> None:
        self._timer = None
        self.loseConnection()

    def _close(self, answer: bytes) -> None:
        """Answer with a whole response of our own, close our side and throw away what
        still comes until the client closes, for at most ``LINGER`` seconds."""
        self._stop()
        self._discarding = True
        self.write(answer)
        half_close = getattr(self.transport, "loseWriteConnection", None)
        if half_close is not None:
            half_close()
        else:
            self.loseConnection()
        self._start(LINGER, self.abortConnection)

    def _start(self, seconds: float, then: Callable[[], object]) -> None:
        self._stop()
        self._timer = self.factory.clock.callLater(seconds, then)

    def _stop(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def connectionLost(self, reason: Any) -> None:
        self._stop()
        super().connectionLost(reason)


class GatedRequest(Request):
    """A request whose body stays in memory and within ``[web] max_body``, and that
    tells its connection when it has arrived whole."""

    _body = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        self.content = BytesIO()
        if length is not None and length > self.channel.site.max_body:
            self._refuse()

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._body += len(data)
        if self._body > self.channel.site.max_body:  # a chunked body past the cap
            self._refuse()
            return
        self.content.write(data)

    def _refuse(self) -> None:
        self._refused = True
        # No "100 Continue" after the refusal (the channel looks for Expect next).
        self.requestHeaders.removeHeader(b"expect")
        self._connection().refuse_body()

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if self._refused:  # the (short) body came in the same read: already answered
            return
        self._connection().request_read(self)
        super().requestReceived(command, path, version)

    def isSecure(self) -> bool:
        """Whether the request came over TLS (the HTTPS port, ``[web] tls``)."""
        connection = getattr(getattr(self, "channel", None), "transport", None)
        return bool(getattr(connection, "secure", False)) or super().isSecure()

    def _connection(self) -> GatedConnection:
        """The gate's wrapper around this request's channel (``WebGate`` makes the
        site's requests of this class, so there always is one)."""
        connection = self.channel.transport
        assert isinstance(connection, GatedConnection)
        return connection


def log_refused(request: Request, text: str, limit: str) -> None:
    """A ``limit`` event for ``request``, refused by ``limit`` (a live stream past its
    caps), through its connection's gate: at most one a minute per address and limit."""
    connection = getattr(getattr(request, "channel", None), "transport", None)
    if isinstance(connection, GatedConnection):
        connection.factory.log_refusal(text, "limit", limit, connection.host, connection.key)


def address_key(request: Request) -> str:
    """What per-address limits count ``request`` by: its connection's address group
    (the peer's address once the connection is gone)."""
    channel = getattr(request, "channel", None)
    connection = getattr(channel, "transport", None)
    if isinstance(connection, GatedConnection):
        return connection.key
    return str(getattr(request.getClientAddress(), "host", "") or "-")
