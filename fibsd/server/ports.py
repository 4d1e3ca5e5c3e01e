"""The game's listening sockets counted from accept to close, with a hard cap: what keeps
a burst of connections from taking the process's last file (protocol/access.md,
"Connection caps").

``FibsFactory.refusal`` decides by address who may stay, and a refused connection gets
its FIBS-style line.  But that connection keeps its file until the line is sent (the
next turn of the reactor at best; over TLS not before the handshake, and at most
``fibsd.server.protocol.LINGER`` seconds), a connection behind the PROXY protocol holds
one before anybody knows its address, and the reactor accepts connections in bursts of
a hundred and more per turn (Twisted's accept loop grows with the traffic).  A burst of
a few thousand connections then took the files faster than the refusals gave them
back: ``EMFILE``, and Twisted's log line for every socket it closed to recover.

So the sockets themselves are counted here, in the outermost factory of each game
listener (outside TLS and the PROXY header reader, whatever the address turns out to
be), plain and TLS together.  Once they reach the game's ``max_connections`` plus
``BUSY_AT_ONCE`` (refusals still being sent), a newcomer is closed inside the accept
itself, without a word and before it costs a turn of the reactor: the game ports never
hold more files than that, whatever arrives, and the refusals below it keep their line.
The web port (WebSockets included) has its own gate, fibsd.web.gate.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.interfaces import IAddress, IProtocolFactory
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory

from fibsd.server.access import RefusalLog, network

log = Logger()

# Sockets beyond the cap on connections: refusals whose line is on its way, connections
# waiting for their PROXY header or giving way to a newcomer.  Well below
# ``access.fd_reserve``, which leaves room for these, the web port's own (16) and the
# database's and the log's files.
BUSY_AT_ONCE = 16
LIMIT = "access.max_connections"


class GameSockets:
    """The open sockets of all game listeners; ``cap`` is the game's connection cap
    (``sessions.max_connections``) plus ``BUSY_AT_ONCE``."""

    def __init__(self, sessions: Any, refusals: RefusalLog) -> None:
        self.sessions = sessions  # the FibsFactory: its max_connections
        self.refusals = refusals
        self.open = 0

    @property
    def cap(self) -> int:
        return int(self.sessions.max_connections) + BUSY_AT_ONCE

    def counted(self, factory: IProtocolFactory) -> CountedFactory:
        """``factory`` (the game's, or TLS or the PROXY reader around it) as a listener's
        factory whose sockets count here."""
        return CountedFactory(factory, self)

    def closed_at_once(self, addr: IAddress) -> None:
        """A newcomer closed in the accept: one ``connection_refused`` event a minute
        per address at most, shared with the ordinary refusals of a full server."""
        host = str(getattr(addr, "host", "") or "-")
        count = self.refusals.due(LIMIT, network(host))
        if count is not None:
            log.info("connection from {address} refused ({limit}; {count} since the last "
                     "report)", event="connection_refused", limit=LIMIT, address=host,
                     count=count)


class CountedConnection(ProtocolWrapper):
    """One game socket; it counts while it is open."""

    factory: CountedFactory
    writes_through = True  # its bytes are the socket's (fibsd.server.protocol._send_now)


class CountedFactory(WrappingFactory):
    protocol = CountedConnection  # type: ignore[assignment]
    noisy = False

    def __init__(self, wrapped: IProtocolFactory, sockets: GameSockets) -> None:
        super().__init__(wrapped)
        self.sockets = sockets

    def buildProtocol(self, addr: IAddress) -> Protocol | None:
        """None (the port closes the socket at once) when the game's sockets are all
        taken."""
        if self.sockets.open >= self.sockets.cap:
            self.sockets.closed_at_once(addr)
            return None
        return super().buildProtocol(addr)

    def registerProtocol(self, p: ProtocolWrapper) -> None:
        self.sockets.open += 1

    def unregisterProtocol(self, p: ProtocolWrapper) -> None:
        self.sockets.open -= 1
