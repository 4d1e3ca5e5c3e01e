"""The PROXY protocol (v1 and v2) in front of the game: behind a load balancer such as
HAProxy (``send-proxy``), a connection starts with a header giving the client's own
address, and fibsd then counts, throttles, bans and shows that address instead of the
balancer's (``access.proxy_protocol``, protocol/access.md).

Twisted's ``twisted.protocols.haproxy.proxyEndpoint`` reads the same header but does
not fit a server that greets first: it connects the wrapped protocol at once, so the
banner would go out, and the per-address caps would count, before the header gave the
real address; it also waits for a header forever, closes a connection whose first read
is a few bytes short of the signature, and takes any text in a v1 header for an
address.  ``ProxyHeaderWrapper`` therefore holds the wrapped protocol back until a
complete, valid header has arrived (within ``access.login_timeout``, at most
``MAX_V1`` or ``MAX_V2`` bytes), and only the header's two formats are read with
Twisted's own parsers.

Only ever turn it on behind a balancer that adds the header to every connection and
that nobody else can reach around: anyone who can connect directly could claim any
address.
"""

from __future__ import annotations

import ipaddress
import struct
from typing import Any

from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IAddress, IDelayedCall, IProtocolFactory, IReactorTime
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.protocols.haproxy._exceptions import InvalidProxyHeader
from twisted.protocols.haproxy._v1parser import V1Parser
from twisted.protocols.haproxy._v2parser import V2Parser
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory
from twisted.python.failure import Failure
from zope.interface import directlyProvides, providedBy

from fibsd.server.access import RefusalLog

log = Logger()

V1_SIGNATURE = b"PROXY "
MAX_V1 = 107  # the v1 line's own limit, CR LF included (the PROXY protocol's spec)
# A v2 header may announce up to 64 KiB of extensions; HAProxy's (SSL details, unique
# id, authority, ALPN) take a few hundred bytes.  Anything longer is refused.
MAX_V2 = 4096
LIMIT = "access.proxy_protocol"


class BadHeader(Exception):
    """The connection did not start with a header fibsd accepts; the text says why."""


def read_header(data: bytes, peer: IAddress) -> tuple[IAddress, bytes] | None:
    """The client's address and the bytes after the header, or None: not complete yet.

    A LOCAL (v2) or UNKNOWN (v1) header, which a balancer sends for its own health
    checks, leaves the connection's own address (``peer``).

    >>> from twisted.internet.address import IPv4Address
    >>> balancer = IPv4Address("TCP", "10.0.0.2", 40000)
    >>> read_header(b"PROXY TCP4 203.0.113.9 10.0.0.1 56324 4321\\r\\nlogin", balancer)
    (IPv4Address(type='TCP', host='203.0.113.9', port=56324), b'login')
    >>> read_header(b"PROXY TCP4 203.0.", balancer) is None
    True
    >>> read_header(b"PROXY UNKNOWN\\r\\n", balancer)[0] is balancer
    True
    """
    if data.startswith(V2Parser.PREFIX):
        if len(data) < 16:
            return None
        size = 16 + struct.unpack("!H", data[14:16])[0]
        if size > MAX_V2:
            raise BadHeader(f"header longer than {MAX_V2} bytes")
        if len(data) < size:
            return None
        info, rest = _parsed(V2Parser.parse, data[:size]), data[size:]
    elif data.startswith(V1_SIGNATURE):
        end = data.find(b"\r\n", 0, MAX_V1)
        if end < 0:
            if len(data) >= MAX_V1:
                raise BadHeader(f"header longer than {MAX_V1} bytes")
            return None
        line, rest = data[:end], data[end + 2:]
        if line.split(b" ")[1] == V1Parser.UNKNOWN_PROTO:  # Twisted's parser wants more
            return peer, rest
        info = _parsed(V1Parser.parse, line)
    elif V2Parser.PREFIX.startswith(data) or V1_SIGNATURE.startswith(data):
        return None  # the first bytes of a signature: more to come
    else:
        raise BadHeader("no PROXY protocol header")
    source = info.source
    if source is None:
        return peer, rest
    if not isinstance(source, (IPv4Address, IPv6Address)) or source.type != "TCP":
        raise BadHeader("not a TCP client address")
    try:
        address = ipaddress.ip_address(source.host)
    except ValueError:
        raise BadHeader("not an IP address") from None
    if ((address.version == 4) != isinstance(source, IPv4Address)
            or getattr(address, "scope_id", None)  # "fe80::1%<any text>"
            or not 0 <= source.port < 65536):
        raise BadHeader("not an IP address")
    return type(source)("TCP", str(address), source.port), rest


def _parsed(parse: Any, header: bytes) -> Any:
    try:
        return parse(header)
    except (InvalidProxyHeader, ValueError):  # ValueError: a v1 port that is no number
        raise BadHeader("malformed header") from None


class ProxyHeaderWrapper(ProtocolWrapper):
    """One connection: the header first, then the wrapped protocol, which sees the
    client's address in ``getPeer()`` and never a byte of the header."""

    factory: ProxyHeaderFactory
    writes_through = True  # its bytes are the socket's (fibsd.server.protocol._send_now)

    def __init__(self, factory: ProxyHeaderFactory, wrappedProtocol: Protocol) -> None:
        super().__init__(factory, wrappedProtocol)  # type: ignore[arg-type]
        self._buffer = b""
        self._peer: IAddress | None = None  # the header's address, once read
        self._deadline: IDelayedCall | None = None

    def makeConnection(self, transport: Any) -> None:
        # ProtocolWrapper.makeConnection, but the wrapped protocol waits for the header.
        directlyProvides(self, providedBy(transport))
        Protocol.makeConnection(self, transport)
        self.factory.registerProtocol(self)
        self._deadline = self.factory.clock.callLater(
            self.factory.timeout, self._refuse, "no header in time")

    def dataReceived(self, data: bytes) -> None:
        if self._peer is not None:
            self.wrappedProtocol.dataReceived(data)
            return
        if self.disconnecting:
            return
        self._buffer += data
        try:
            header = read_header(self._buffer, self.transport.getPeer())  # type: ignore[union-attr]
        except BadHeader as bad:
            self._refuse(str(bad))
            return
        if header is None:
            return
        self._peer, rest = header
        self._buffer = b""
        self._stop_deadline()
        self.wrappedProtocol.makeConnection(self)
        if rest and not self.disconnecting:
            self.wrappedProtocol.dataReceived(rest)

    def _refuse(self, reason: str) -> None:
        """Close without a word: what connected is no client of ours (or a broken
        balancer), and a line from us would only confuse it."""
        self._stop_deadline()
        self._buffer = b""
        address = getattr(self.transport.getPeer(), "host", "-")  # type: ignore[union-attr]
        count = self.factory.refusals.due(LIMIT, address)
        if count is not None:  # at most one event a minute per address
            log.info("connection from {address} refused ({limit}: {reason}; {count} since "
                     "the last report)", event="connection_refused", limit=LIMIT,
                     reason=reason, address=address, count=count)
        self.transport.abortConnection()  # type: ignore[union-attr]

    def _stop_deadline(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    @property
    def waiting(self) -> bool:
        """Connected, the header not read yet."""
        return self._peer is None and self.transport is not None

    def getPeer(self) -> IAddress:
        if self._peer is not None:
            return self._peer
        return self.transport.getPeer()  # type: ignore[union-attr]

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        self._stop_deadline()
        self.factory.unregisterProtocol(self)
        if self._peer is not None:  # the wrapped protocol was connected
            self.wrappedProtocol.connectionLost(reason)
        self.wrappedProtocol = None  # type: ignore[assignment]


class ProxyHeaderFactory(WrappingFactory):
    """Wraps the game's factory (or the TLS layer around it) for ``access.proxy_protocol``."""

    protocol = ProxyHeaderWrapper  # type: ignore[assignment]
    noisy = False

    def __init__(self, wrapped: IProtocolFactory, clock: IReactorTime, timeout: float,
                 refusals: RefusalLog) -> None:
        super().__init__(wrapped)
        self.clock = clock
        self.timeout = timeout
        self.refusals = refusals

    def close_waiting(self) -> None:
        """At shutdown: close the connections whose header has not come (the game's
        factory says goodbye to the others)."""
        for protocol in list(self.protocols):
            if protocol.waiting:
                protocol.transport.abortConnection()  # type: ignore[union-attr]
