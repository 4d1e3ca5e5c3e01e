"""Bytes to lines and back; everything else happens in the session.

``FibsProtocol`` strips telnet negotiation, cuts lines at LF (CR LF works too), throws
away lines longer than the limit as they arrive (memory stays bounded whatever a
client sends), cleans each line to seven-bit text and hands it to its ``Session``.
It never sends telnet negotiation of its own except the echo switch the session asks
for around password prompts, as FIBS does.

Output is bounded too: the protocol registers itself as the producer of its own input.
When a client stops reading and the transport's send buffer fills (64 KiB), Twisted
pauses it; the protocol then stops reading from the socket and stops handling the lines
it already has, so a client sending ``who`` in a loop without reading cannot make the
server buffer without limit.

Before a connection gets a session, ``FibsFactory.refusal`` decides whether there is
room for it: per-address and global caps on connections (protocol/access.md).

What others make the server send is bounded by ``limits.max_output``: a connection
whose unsent output would pass it is cut off (its client is not reading; holding more
for it would only grow the server), and logged as a ``limit`` event.  Senders ask
``unsent()`` first and are told when their target is past half of the limit.

Input is bounded without losing a line: while the session's queue of typed-ahead lines
is full (it waits for the database), the protocol keeps the rest of the current read
and stops reading the socket until the session asks for more (``input_wanted``).
"""

from __future__ import annotations

import resource

from twisted.internet.abstract import FileDescriptor
from twisted.internet.tcp import Connection
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import (
    IAddress, IDelayedCall, IHandshakeListener, IPushProducer, IReactorTime, ISSLTransport,
    ITCPTransport)
from twisted.internet.protocol import Protocol, ServerFactory
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from fibsd.server.access import connection_caps, network
from fibsd.server.grace import end_all as end_graces
from fibsd.server.session import SERVER_FULL, Services, Session, TooLong
from fibsd.wire.input import OVERLONG, LineSplitter, TelnetFilter, clean_line

log = Logger()

DEFAULT_MAX_LINE = 2000
# Seconds a connection the server closes has to take its last lines (a refusal, a
# goodbye), then it is dropped: a client that reads nothing, or over TLS never finishes
# its handshake, would otherwise keep its file for ever (fibsd.server.ports counts it).
LINGER = 5.0
TOO_MANY_FROM_ADDRESS = "** Too many connections from your address. Please try again later."


@implementer(IPushProducer, IHandshakeListener)
class FibsProtocol(Protocol):
    factory: FibsFactory | None = None

    def __init__(self, services: Services, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.services = services
        self.session: Session | None = None
        self._telnet = TelnetFilter()
        self._lines = LineSplitter(max_line)
        # At most one read's worth; a list, as an empty deque costs 600 bytes per
        # connection (issue 26: memory per idle user).
        self._pending: list[str | TooLong] = []
        self._paused = False  # the transport's send buffer is full
        self._held = False  # the session's input queue is full
        self._handing = False  # inside _hand_over
        self._cut = False  # closed for passing limits.max_output
        # Over TLS the banner waits in the TLS layer until the handshake is done, and
        # the TLS layer pauses us meanwhile: the socket must go on being read, or the
        # handshake never ends.  No application line can arrive before it does.
        self._handshaking = False
        self._linger: IDelayedCall | None = None  # closing: the deadline to drop it
        self._socket: Connection | None = None  # written at once when idle (_send_now)

    def connectionMade(self) -> None:
        assert self.transport is not None
        host = _host(self.transport.getPeer())
        if self.factory is not None:
            refusal = self.factory.refusal(host)
            if refusal is not None:  # no session: one line, then the socket is freed
                self.transport.write(f"{refusal}\r\n".encode("ascii"))
                self._lose()
                return
            self.factory.connected(self, network(host))
        if ITCPTransport.providedBy(self.transport):
            # Nagle would hold a second write (a roll, then the opponent's move) until the
            # client's delayed ACK, about 40 ms, when the client has nothing to send between.
            self.transport.setTcpNoDelay(True)
        self._handshaking = ISSLTransport.providedBy(self.transport)
        self._socket = _plain_socket(self.transport)
        self.transport.registerProducer(self, True)  # type: ignore[attr-defined]
        self.session = Session(self.services, self, host)
        self.session.connection_made()

    def handshakeCompleted(self) -> None:
        self._handshaking = False

    def dataReceived(self, data: bytes) -> None:
        if self.session is None:  # refused: its one line is on its way out
            return
        for line in self._lines.feed(self._telnet.feed(data)):
            if line is OVERLONG:
                self._pending.append(TooLong(self._lines.max_length))
            else:
                assert isinstance(line, bytes)
                self._pending.append(clean_line(line))
        self._hand_over()

    def _hand_over(self) -> None:
        if self._handing:
            return  # the loop below goes on by itself
        self._handing = True
        try:
            while self._pending and not self._paused and self.session is not None:
                if not self.session.wants_input():
                    self._hold_input()
                    return
                self.session.line_received(self._pending.pop(0))
        finally:
            self._handing = False

    def _hold_input(self) -> None:
        """Stop reading the socket until the session has room for more lines."""
        if not self._held:
            self._held = True
            if not self._paused and self._open():
                self.transport.pauseProducing()  # type: ignore[union-attr]

    def input_wanted(self) -> None:
        """The session's queue has room again: hand over what waits, read on."""
        if not self._held:
            return
        self._held = False
        if not self._paused and self._open():
            self.transport.resumeProducing()  # type: ignore[union-attr]
        self._hand_over()

    def _open(self) -> bool:
        return self.transport is not None and not getattr(self.transport, "disconnecting", False)

    # --- IPushProducer: the transport's send buffer is full, or has room again --------

    def pauseProducing(self) -> None:
        self._paused = True
        if self.transport is not None and not self._handshaking:
            self.transport.pauseProducing()  # type: ignore[attr-defined]

    def resumeProducing(self) -> None:
        self._paused = False
        if self.transport is not None and not self._held:
            self.transport.resumeProducing()  # type: ignore[attr-defined]
        self._hand_over()

    def stopProducing(self) -> None:
        self._pending.clear()

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        if self._linger is not None and self._linger.active():
            self._linger.cancel()
        if self.session is not None:
            self.session.connection_lost()
        if self.factory is not None:
            self.factory.connection_ended(self)

    @property
    def logging_in(self) -> bool:
        """Connected but not (yet) a logged-in user."""
        return self.session is not None and self.session.user is None

    # --- fibsd.server.session.Connection ---------------------------------------------

    def write(self, data: bytes) -> None:
        if self.transport is None or self._cut:
            return
        limit = self.services.settings.limits.max_output
        unsent = self.unsent()
        if unsent + len(data) > limit:
            self._cut_off(limit)
            return
        if not unsent and self._socket is not None:
            data = _send_now(self._socket, data)
            if not data:
                return
        self.transport.write(data)

    def unsent(self) -> int:
        """Bytes written to this connection that its client has not taken yet."""
        if self._socket is not None:  # asked before every write: no walk down the layers
            return _held(self._socket)
        return _unsent(self.transport)

    def _cut_off(self, limit: int) -> None:
        self._cut = True
        self._pending.clear()
        user = self.session.user.name if self.session and self.session.user else None
        log.warn("output to {user} at {address} passed {bytes} bytes unsent; connection closed",
                 event="limit", limit="limits.max_output", bytes=limit, user=user,
                 address=self.session.host if self.session else None)
        if self.session is not None:
            self.session.cut_off()
        assert self.transport is not None
        self.transport.unregisterProducer()  # type: ignore[attr-defined]
        self.transport.abortConnection()  # type: ignore[attr-defined]  # drops the backlog

    def close(self) -> None:
        self._pending.clear()
        if self.transport is not None:
            self.transport.unregisterProducer()  # type: ignore[attr-defined]
            self._lose()

    def _lose(self) -> None:
        """Close once the last lines are sent, or after ``LINGER`` seconds regardless."""
        assert self.transport is not None
        self.transport.loseConnection()
        if self._linger is None:
            self._linger = self.services.clock.callLater(LINGER, self._drop)

    def _drop(self) -> None:
        if self.transport is not None:
            self.transport.abortConnection()  # type: ignore[attr-defined]


def _plain_socket(transport: object) -> Connection | None:
    """The TCP connection under ``transport`` when every layer between passes the bytes
    on as they are (``writes_through``: the socket counter, the PROXY header reader); None
    over TLS or WebSocket, whose layers must encode every byte, and for a test's
    in-memory transport."""
    while getattr(type(transport), "writes_through", False):
        transport = transport.transport  # type: ignore[attr-defined]
    return transport if isinstance(transport, Connection) else None


def _send_now(connection: Connection, data: bytes) -> bytes:
    """Send ``data`` on an idle socket at once; return what the kernel did not take
    (for Twisted's buffer).  Twisted's ``write`` buffers every write until the next
    poll: two ``epoll_ctl`` calls (writable on, then off) and a pass through the reactor
    per write (issue 26: benchmarks/README.md, round 3, step 1).  The session
    already joins an action's lines into one write per connection, so nothing is lost
    by not waiting for more; a lost connection is left for Twisted's own write to find."""
    if not connection.connected or connection.disconnecting:
        return data
    sent = connection.writeSomeData(data)
    return data[sent:] if isinstance(sent, int) else data


def _unsent(transport: object) -> int:
    """The bytes waiting in ``transport`` (or the socket transport it wraps, for TLS or a
    policies wrapper); an in-memory test transport counts what its client has not read."""
    while not isinstance(transport, FileDescriptor) and hasattr(transport, "transport"):
        transport = transport.transport
    if isinstance(transport, FileDescriptor):
        return _held(transport)
    value = getattr(transport, "value", None)  # twisted.internet.testing.StringTransport
    return len(value()) if callable(value) else 0


def _held(descriptor: FileDescriptor) -> int:
    """The bytes Twisted holds for a socket, not yet taken by the kernel."""
    return (len(descriptor.dataBuffer) - descriptor.offset  # type: ignore[attr-defined]
            + descriptor._tempDataLen)  # type: ignore[attr-defined]


def _host(address: IAddress) -> str:
    return str(getattr(address, "host", "") or "-")


class FibsFactory(ServerFactory):
    """Makes one protocol per connection and remembers them, to say goodbye at shutdown."""

    noisy = False  # fibsd logs its own startup line

    def __init__(self, services: Services, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.services = services
        self.max_line = max_line
        self.connections: set[FibsProtocol] = set()
        # Per address, its connections in the order they came (a dict keeps it).
        self._by_host: dict[str, dict[FibsProtocol, None]] = {}
        self.max_connections, _ = connection_caps(
            services.settings, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        self._closed: Deferred[None] | None = None

    def buildProtocol(self, addr: IAddress) -> FibsProtocol:
        protocol = FibsProtocol(self.services, self.max_line)
        protocol.factory = self
        return protocol

    def shutdown(self, clock: IReactorTime, grace: float = 5.0) -> Deferred[None]:
        """Tell every connection goodbye and close it; fires once all are gone (after
        ``grace`` seconds the stragglers that do not read their goodbye are aborted)."""
        self._closed = Deferred()
        self.services.lobby.stopping = True  # matches saved now were left by no one
        end_graces(self.services.lobby)  # held matches are saved as their drops
        for protocol in list(self.connections):
            if protocol.session is not None:
                protocol.session.shutdown()
        if not self.connections:
            self._closed.callback(None)
            return self._closed
        abort = clock.callLater(grace, self._abort_all)
        return self._closed.addBoth(_cancel_and_pass, abort)

    def _abort_all(self) -> None:
        for protocol in list(self.connections):
            if protocol.transport is not None:
                protocol.transport.abortConnection()  # type: ignore[attr-defined]

    def refusal(self, host: str) -> str | None:
        """The line that refuses a new connection from ``host``, or None to accept it.

        Connections are counted, not just accepted: below the open-file limit by
        ``access.fd_reserve``, so the listening socket can still accept (and refuse
        with a line), and the database and the logged-in users keep their files.
        Twisted's ``policies.LimitConnectionsByPeer`` counts every connection and
        closes without a word; here only connections not yet logged in count against
        an address, since a household or club behind one address may have many users.
        """
        key = network(host)  # an IPv6 subscriber's /64 counts as one address
        waiting = self._logging_in(key)
        if waiting >= self.services.settings.access.unauthenticated_per_address:
            limit, line = "access.unauthenticated_per_address", TOO_MANY_FROM_ADDRESS
        elif len(self.connections) >= self.max_connections and not self._make_room(waiting):
            limit, line = "access.max_connections", SERVER_FULL
        else:
            return None
        count = self.services.refusals.due(limit, key)
        if count is not None:  # at most one event a minute per address and limit
            log.info("connection from {address} refused ({limit}; {count} since the last "
                     "report)", event="connection_refused", limit=limit, address=host,
                     count=count)
        return line

    def _logging_in(self, host: str) -> int:
        return sum(1 for protocol in self._by_host.get(host, ()) if protocol.logging_in)

    def _make_room(self, waiting: int) -> bool:
        """A full server: the newcomer (whose address has ``waiting`` connections not
        logged in) takes the place of the oldest connection not logged in from the
        address that has most of them, if that is more than the newcomer's address
        would have.  So strangers holding connections open from a few dozen addresses
        cannot keep everyone else out; only logged-in users are never moved."""
        counts = {host: self._logging_in(host) for host in self._by_host}
        crowded = max(counts, key=counts.__getitem__, default=None)
        if crowded is None or counts[crowded] <= waiting + 1:
            return False
        oldest = next(p for p in self._by_host[crowded] if p.logging_in)
        self.connection_ended(oldest)  # its place is free now, whenever its socket closes
        if oldest.session is not None:
            oldest.session.make_way(SERVER_FULL)
        return True

    def connected(self, protocol: FibsProtocol, host: str) -> None:
        self.connections.add(protocol)
        self._by_host.setdefault(host, {})[protocol] = None

    def connection_ended(self, protocol: FibsProtocol) -> None:
        self.connections.discard(protocol)
        if protocol.session is not None:
            same_host = self._by_host.get(protocol.session.network)
            if same_host is not None:
                same_host.pop(protocol, None)
                if not same_host:
                    del self._by_host[protocol.session.network]
        if self._closed is not None and not self._closed.called and not self.connections:
            self._closed.callback(None)


def _cancel_and_pass(result: object, call: IDelayedCall) -> object:
    if call.active():
        call.cancel()
    return result
